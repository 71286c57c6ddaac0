//===- TileIRDialect.cpp - The CUDA Tile IR dialect -----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/TileIR/TileIR.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::pb::tileir;

#include "pb/TileIR/TileIRDialect.cpp.inc"
#include "pb/TileIR/TileIREnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "pb/TileIR/TileIRTypes.cpp.inc"

#define GET_OP_CLASSES
#include "pb/TileIR/TileIR.cpp.inc"

void TileIRDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "pb/TileIR/TileIRTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "pb/TileIR/TileIR.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// Element types of tiles and views: the specification's integers and
/// floats, and pointers (tiles only).
static bool isNumericElement(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return intType.isSignless() &&
           llvm::is_contained(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                              intType.getWidth());
  return isa<Float16Type, BFloat16Type, Float32Type, FloatTF32Type, Float64Type,
             Float8E4M3FNType, Float8E5M2Type>(type);
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  for (int64_t d : shape)
    printer << d << "x";
}

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return TileType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), shape, elementType);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getShape());
  printer << getElementType() << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  for (int64_t d : shape)
    if (d <= 0 || !llvm::isPowerOf2_64(d))
      return emitError() << "tile extents must be powers of two, got " << d;
  if (!isNumericElement(elementType) && !isa<PointerType>(elementType))
    return emitError() << "unsupported tile element type " << elementType;
  return success();
}

Type TensorViewType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape, strides;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("strides") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square,
          [&] { return parser.parseInteger(strides.emplace_back()); }) ||
      parser.parseGreater())
    return {};
  return TensorViewType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), shape, elementType, strides);
}

void TensorViewType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getShape());
  printer << getElementType() << ", strides=[";
  llvm::interleave(getStrides(), printer, ",");
  printer << "]>";
}

LogicalResult
TensorViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> shape, Type elementType,
                       ArrayRef<int64_t> strides) {
  if (!isNumericElement(elementType))
    return emitError() << "unsupported tensor view element type "
                       << elementType;
  if (shape.size() != strides.size())
    return emitError() << "tensor view has " << shape.size() << " extents but "
                       << strides.size() << " strides";
  for (auto [d, s] : llvm::zip(shape, strides))
    if (d <= 0 || s <= 0)
      return emitError() << "tensor view extents and strides must be "
                            "positive (tileiras takes no broadcast by a "
                            "stride of 0)";
  return success();
}

static bool isIdentity(ArrayRef<int64_t> dimMap) {
  for (auto [i, d] : llvm::enumerate(dimMap))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

Type PartitionViewType::parse(AsmParser &parser) {
  SmallVector<int64_t> tileShape, dimMap;
  TensorViewType view;
  std::optional<PaddingValue> padding;
  if (parser.parseLess() || parser.parseKeyword("tile") ||
      parser.parseEqual() || parser.parseLParen() ||
      parser.parseDimensionList(tileShape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false) ||
      parser.parseRParen() || parser.parseComma() || parser.parseType(view))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return {};
    if (keyword == "dim_map") {
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            return parser.parseInteger(dimMap.emplace_back());
          }))
        return {};
    } else if (keyword == "padding_value") {
      StringRef value;
      if (parser.parseKeyword(&value))
        return {};
      padding = symbolizePaddingValue(value);
      if (!padding) {
        parser.emitError(parser.getCurrentLocation(), "unknown padding value ")
            << value;
        return {};
      }
    } else {
      parser.emitError(parser.getCurrentLocation(),
                       "expected dim_map or padding_value");
      return {};
    }
  }
  if (dimMap.empty())
    for (size_t i = 0; i < tileShape.size(); ++i)
      dimMap.push_back(i);
  if (parser.parseGreater())
    return {};
  return PartitionViewType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), tileShape, view, dimMap, padding);
}

void PartitionViewType::print(AsmPrinter &printer) const {
  printer << "<tile=(";
  llvm::interleave(getTileShape(), printer, "x");
  printer << "), " << getTensorView();
  if (!isIdentity(getDimMap())) {
    printer << ", dim_map=[";
    llvm::interleave(getDimMap(), printer, ",");
    printer << "]";
  }
  if (getPaddingValue())
    printer << ", padding_value=" << stringifyPaddingValue(*getPaddingValue());
  printer << ">";
}

LogicalResult
PartitionViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<int64_t> tileShape, TensorViewType view,
                          ArrayRef<int64_t> dimMap,
                          std::optional<PaddingValue> paddingValue) {
  if (tileShape.size() != view.getShape().size())
    return emitError() << "partition view tile of rank " << tileShape.size()
                       << " over a tensor view of rank "
                       << view.getShape().size();
  for (int64_t d : tileShape)
    if (d <= 0 || !llvm::isPowerOf2_64(d))
      return emitError() << "tile extents must be powers of two, got " << d;
  SmallVector<bool> seen(dimMap.size(), false);
  if (dimMap.size() != tileShape.size())
    return emitError() << "dim_map must name every dimension once";
  for (int64_t d : dimMap) {
    if (d < 0 || d >= static_cast<int64_t>(dimMap.size()) || seen[d])
      return emitError() << "dim_map must be a permutation";
    seen[d] = true;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

void mlir::pb::tileir::ModuleOp::build(OpBuilder &builder,
                                       OperationState &state, StringRef name) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addRegion()->emplaceBlock();
}

LogicalResult LaunchOp::verify() {
  ArrayRef<int64_t> grid = getGrid();
  if (grid.size() != 3 || llvm::any_of(grid, [](int64_t n) {
        return n <= 0 || n > std::numeric_limits<int32_t>::max();
      }))
    return emitOpError("grid must be three positive i32 extents");
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto entry = symbolTable.lookupNearestSymbolFrom<EntryOp>(*this, getKernel());
  if (!entry)
    return emitOpError("kernel ") << getKernel() << " is no tileir.entry";
  if (entry.getFunctionType().getNumInputs() != getArgs().size())
    return emitOpError("passes ")
           << getArgs().size() << " buffers to a kernel of "
           << entry.getFunctionType().getNumInputs() << " arguments";
  for (auto [type, arg] :
       llvm::zip(entry.getFunctionType().getInputs(), getArgs())) {
    auto pointer = dyn_cast<PointerType>(cast<TileType>(type).getElementType());
    if (!pointer || pointer.getPointeeType() !=
                        cast<MemRefType>(arg.getType()).getElementType())
      return emitOpError("buffer of type ")
             << arg.getType() << " passed for kernel argument " << type;
  }
  return success();
}

ParseResult EntryOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> args,
                      ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(args, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void EntryOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult EntryOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError("a kernel returns no values");
  for (Type type : getFunctionType().getInputs()) {
    auto tile = dyn_cast<TileType>(type);
    if (!tile || tile.getRank() != 0)
      return emitOpError("kernel arguments must be scalar tiles, got ") << type;
  }
  return success();
}

LogicalResult ConstantOp::verify() {
  auto tile = cast<TileType>(getResult().getType());
  auto value = cast<ShapedType>(getValue().getType());
  if (value.getElementType() != tile.getElementType() ||
      value.getShape() != tile.getShape())
    return emitOpError("value of type ")
           << value << " does not match the result " << tile;
  return success();
}

LogicalResult MakeTensorViewOp::verify() {
  auto base = cast<TileType>(getBase().getType());
  auto pointer = dyn_cast<PointerType>(base.getElementType());
  if (base.getRank() != 0 || !pointer)
    return emitOpError("base must be a scalar pointer tile");
  if (pointer.getPointeeType() != getResult().getType().getElementType())
    return emitOpError("pointer to ")
           << pointer.getPointeeType() << " viewed as "
           << getResult().getType().getElementType();
  return success();
}

LogicalResult MakePartitionViewOp::verify() {
  if (getResult().getType().getTensorView() != getTensorView().getType())
    return emitOpError("result partitions another tensor view type");
  return success();
}

static LogicalResult verifyViewAccess(Operation *op, PartitionViewType view,
                                      TileType tile, size_t numIndices) {
  if (numIndices != view.getTileShape().size())
    return op->emitOpError("expects ")
           << view.getTileShape().size() << " indices, got " << numIndices;
  if (tile != view.getTileType())
    return op->emitOpError("tile type ")
           << tile << " does not match the view's tiles " << view.getTileType();
  return success();
}

LogicalResult LoadViewTkoOp::verify() {
  return verifyViewAccess(*this, getView().getType(),
                          cast<TileType>(getResult().getType()),
                          getIndex().size());
}

LogicalResult StoreViewTkoOp::verify() {
  return verifyViewAccess(*this, getView().getType(),
                          cast<TileType>(getTile().getType()),
                          getIndex().size());
}

LogicalResult MmaFOp::verify() {
  auto lhs = cast<TileType>(getLhs().getType());
  auto rhs = cast<TileType>(getRhs().getType());
  auto acc = cast<TileType>(getAcc().getType());
  int64_t rank = acc.getRank();
  if (rank < 2 || rank > 3 || lhs.getRank() != rank || rhs.getRank() != rank)
    return emitOpError("operands must be 2-d (or 3-d, batched) tiles");
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape(), c = acc.getShape();
  if (a[rank - 2] != c[rank - 2] || b[rank - 1] != c[rank - 1] ||
      a[rank - 1] != b[rank - 2] ||
      (rank == 3 && (a[0] != c[0] || b[0] != c[0])))
    return emitOpError("shapes do not form MxK x KxN -> MxN");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("lhs and rhs element types differ");
  Type in = lhs.getElementType(), out = acc.getElementType();
  bool ok =
      (isa<Float16Type>(in) && isa<Float16Type, Float32Type>(out)) ||
      (isa<BFloat16Type, FloatTF32Type, Float8E4M3FNType, Float8E5M2Type>(in) &&
       isa<Float32Type>(out)) ||
      (isa<Float32Type>(in) && isa<Float32Type>(out)) ||
      (isa<Float64Type>(in) && isa<Float64Type>(out));
  if (!ok)
    return emitOpError("no tensor-core form for ")
           << in << " inputs accumulating in " << out;
  return success();
}

void ForOp::build(OpBuilder &builder, OperationState &state, Value lowerBound,
                  Value upperBound, Value step, ValueRange initValues) {
  state.addOperands({lowerBound, upperBound, step});
  state.addOperands(initValues);
  state.addTypes(initValues.getTypes());
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(lowerBound.getType(), state.location);
  for (Value v : initValues)
    block->addArgument(v.getType(), state.location);
  if (initValues.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    ContinueOp::create(builder, state.location);
  }
}

// %r = tileir.for %iv = %lb to %ub step %s iter_values(%a = %x) -> (types)
ParseResult ForOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lb) || parser.parseKeyword("to") ||
      parser.parseOperand(ub) || parser.parseKeyword("step") ||
      parser.parseOperand(step) || parser.parseColon() ||
      parser.parseType(iv.type))
    return failure();
  SmallVector<OpAsmParser::Argument> args{iv};
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  if (succeeded(parser.parseOptionalKeyword("iter_values"))) {
    if (parser.parseAssignmentList(args, inits) || parser.parseArrow() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren, [&] {
          return parser.parseType(result.types.emplace_back());
        }))
      return failure();
    if (args.size() != result.types.size() + 1)
      return parser.emitError(parser.getNameLoc(),
                              "iter_values and result types differ in count");
    for (auto [arg, type] : llvm::zip(llvm::drop_begin(args), result.types))
      arg.type = type;
  }
  if (parser.resolveOperands({lb, ub, step}, iv.type, result.operands) ||
      parser.resolveOperands(inits, result.types, parser.getNameLoc(),
                             result.operands))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  ForOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return parser.parseOptionalAttrDict(result.attributes);
}

void ForOp::print(OpAsmPrinter &printer) {
  printer << " " << getInductionVar() << " = " << getLowerBound() << " to "
          << getUpperBound() << " step " << getStep() << " : "
          << getInductionVar().getType();
  if (!getInitValues().empty()) {
    printer << " iter_values(";
    llvm::interleaveComma(llvm::zip(getRegionIterArgs(), getInitValues()),
                          printer, [&](auto pair) {
                            printer << std::get<0>(pair) << " = "
                                    << std::get<1>(pair);
                          });
    printer << ") -> (" << getResultTypes() << ")";
  }
  printer << " ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/!getInitValues().empty());
  printer.printOptionalAttrDict((*this)->getAttrs());
}

LogicalResult ForOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInitValues().size() + 1)
    return emitOpError("body takes the induction variable and one value per "
                       "initial value");
  for (auto [arg, init, res] :
       llvm::zip(getRegionIterArgs(), getInitValues(), getResults()))
    if (arg.getType() != init.getType() || res.getType() != init.getType())
      return emitOpError("carried values change type");
  auto cont = cast<ContinueOp>(block.getTerminator());
  if (cont.getOperands().getTypes() != getResultTypes())
    return emitOpError("continue's operands do not match the results");
  return success();
}

LogicalResult FToFOp::verify() {
  auto from = cast<TileType>(getSource().getType());
  auto to = cast<TileType>(getResult().getType());
  if (from.getShape() != to.getShape() ||
      !isa<FloatType>(from.getElementType()) ||
      !isa<FloatType>(to.getElementType()))
    return emitOpError("converts a float tile to a float tile of its shape");
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto from = cast<TileType>(getSource().getType());
  auto to = cast<TileType>(getResult().getType());
  if (from.getElementType() != to.getElementType() ||
      from.getRank() != to.getRank())
    return emitOpError("keeps the rank and element type");
  for (auto [a, b] : llvm::zip(from.getShape(), to.getShape()))
    if (a != b && a != 1)
      return emitOpError("only extents of 1 are broadcast");
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto from = cast<TileType>(getSource().getType());
  auto to = cast<TileType>(getResult().getType());
  if (from.getElementType() != to.getElementType() ||
      from.getNumElements() != to.getNumElements())
    return emitOpError("keeps the element type and count");
  return success();
}

LogicalResult CmpFOp::verify() {
  auto in = cast<TileType>(getLhs().getType());
  auto out = cast<TileType>(getResult().getType());
  if (!isa<FloatType>(in.getElementType()) || in.getShape() != out.getShape() ||
      !out.getElementType().isSignlessInteger(1))
    return emitOpError("compares float tiles into an i1 tile of their shape");
  return success();
}

LogicalResult SelectOp::verify() {
  auto cond = cast<TileType>(getCond().getType());
  auto result = cast<TileType>(getResult().getType());
  if (!cond.getElementType().isSignlessInteger(1) ||
      cond.getShape() != result.getShape())
    return emitOpError("selects with an i1 tile of the result's shape");
  return success();
}

LogicalResult OffsetOp::verify() {
  auto ptr = cast<TileType>(getPtr().getType());
  auto offset = cast<TileType>(getOffset().getType());
  if (!isa<PointerType>(ptr.getElementType()) ||
      !isa<IntegerType>(offset.getElementType()) ||
      ptr.getShape() != offset.getShape())
    return emitOpError("advances a pointer tile by an integer tile of its "
                       "shape");
  return success();
}

LogicalResult CmpIOp::verify() {
  auto in = cast<TileType>(getLhs().getType());
  auto out = cast<TileType>(getResult().getType());
  if (!isa<IntegerType>(in.getElementType()) ||
      in.getShape() != out.getShape() ||
      !out.getElementType().isSignlessInteger(1))
    return emitOpError("compares integer tiles into an i1 tile of their "
                       "shape");
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = cast<TileType>(getResult().getType());
  if (type.getRank() != 1 || !isa<IntegerType>(type.getElementType()))
    return emitOpError("makes a 1-d integer tile");
  return success();
}

LogicalResult ReduceOp::verify() {
  unsigned n = getOperands().size();
  if (n == 0 || getResults().size() != n || getIdentities().size() != n)
    return emitOpError("takes one identity and gives one result per operand");
  Block &block = getBody().front();
  if (block.getNumArguments() != 2 * n)
    return emitOpError("combines two rank-0 tiles per operand");
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getOperands().size() != n)
    return emitOpError("yields one value per operand");
  for (unsigned i = 0; i < n; ++i) {
    auto in = cast<TileType>(getOperands()[i].getType());
    auto out = cast<TileType>(getResults()[i].getType());
    int64_t dim = getDim();
    if (dim < 0 || dim >= in.getRank())
      return emitOpError("reduces a dimension the operand does not have");
    SmallVector<int64_t> shape(in.getShape());
    shape.erase(shape.begin() + dim);
    if (out.getElementType() != in.getElementType() ||
        out.getShape() != ArrayRef<int64_t>(shape))
      return emitOpError("result ")
             << i << " is not operand " << i << " without dimension " << dim;
    Type scalar = TileType::get(getContext(), {}, in.getElementType());
    if (block.getArgument(i).getType() != scalar ||
        block.getArgument(n + i).getType() != scalar ||
        yield.getOperands()[i].getType() != scalar)
      return emitOpError("the combiner's values of operand ")
             << i << " are not " << scalar;
    auto identity = dyn_cast<FloatAttr>(getIdentities()[i]);
    if (!identity || identity.getType() != in.getElementType())
      return emitOpError("identity ")
             << i << " is not a float of the operand's element type";
  }
  return success();
}
