//===- BytecodeReader.cpp - Tile IR bytecode to operations ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads what BytecodeWriter.cpp writes (the round-trip tests compare the
// two), so that an artifact's kernels can be inspected and interpreted from
// their bytecode alone. Every read is bounds-checked: a malformed buffer is
// an error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "BytecodeFormat.h"
#include "pb/TileIR/Bytecode.h"
#include "pb/TileIR/TileIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pb::tileir;
using namespace mlir::pb::tileir::bytecode;

Type bytecode::getSimpleType(uint8_t code, MLIRContext *context) {
  Builder b(context);
  switch (code) {
  case kI1:
    return b.getI1Type();
  case kI8:
    return b.getI8Type();
  case kI16:
    return b.getI16Type();
  case kI32:
    return b.getI32Type();
  case kI64:
    return b.getI64Type();
  case kF16:
    return b.getF16Type();
  case kBF16:
    return b.getBF16Type();
  case kF32:
    return b.getF32Type();
  case kTF32:
    return b.getTF32Type();
  case kF64:
    return b.getF64Type();
  case kF8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kF8E5M2:
    return b.getType<Float8E5M2Type>();
  case kTokenType:
    return TokenType::get(context);
  default:
    return {};
  }
}

std::optional<uint8_t> bytecode::getSimpleTypeCode(Type type) {
  // The inverse of getSimpleType.
  static constexpr uint8_t kCodes[] = {
      kI1,  kI8,   kI16, kI32,      kI64,    kF16,      kBF16,
      kF32, kTF32, kF64, kF8E4M3FN, kF8E5M2, kTokenType};
  for (uint8_t code : kCodes)
    if (getSimpleType(code, type.getContext()) == type)
      return code;
  return std::nullopt;
}

namespace {

/// A bounds-checked cursor over bytes; the first failure sticks.
class Cursor {
public:
  Cursor(llvm::StringRef bytes, size_t base = 0) : bytes(bytes), base(base) {}
  bool ok() const { return !failed; }
  bool atEnd() const { return pos >= bytes.size(); }
  size_t offset() const { return base + pos; }

  uint8_t byte() {
    if (pos >= bytes.size())
      return fail(), 0;
    return static_cast<uint8_t>(bytes[pos++]);
  }
  uint64_t varint() {
    uint64_t result = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      if (failed)
        return 0;
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80))
        return result;
    }
    return fail(), 0;
  }
  uint64_t littleEndian(unsigned n) {
    uint64_t result = 0;
    for (unsigned i = 0; i < n; ++i)
      result |= static_cast<uint64_t>(byte()) << (8 * i);
    return result;
  }
  SmallVector<int64_t> intList(unsigned width) {
    uint64_t n = varint();
    SmallVector<int64_t> values;
    if (n > bytes.size())
      return fail(), values;
    for (uint64_t i = 0; i < n && ok(); ++i) {
      uint64_t v = littleEndian(width);
      // Sign-extend.
      if (width < 8 && (v >> (8 * width - 1)) & 1)
        v |= ~0ULL << (8 * width);
      values.push_back(static_cast<int64_t>(v));
    }
    return values;
  }
  llvm::StringRef take(uint64_t n) {
    if (n > bytes.size() - pos)
      return fail(), llvm::StringRef();
    llvm::StringRef result = bytes.substr(pos, n);
    pos += n;
    return result;
  }
  /// Skips the filler up to an absolute multiple of `alignment`.
  void align(uint64_t alignment) {
    if (alignment == 0)
      return fail();
    while ((base + pos) % alignment)
      byte();
  }
  void fail() { failed = true; }

private:
  llvm::StringRef bytes;
  size_t base;
  size_t pos = 0;
  bool failed = false;
};

class Reader {
public:
  Reader(MLIRContext *context, Location loc) : context(context), loc(loc) {}
  OwningOpRef<mlir::ModuleOp> read(llvm::StringRef bytes);

private:
  InFlightDiagnostic error(const llvm::Twine &message) {
    return emitError(loc) << "Tile IR bytecode: " << message;
  }
  LogicalResult readTable(llvm::StringRef section, unsigned indexBytes,
                          size_t sectionOffset,
                          std::vector<llvm::StringRef> &items);
  Type getType(uint64_t id);
  Type readType(Cursor &c) { return getType(c.varint()); }
  Value getValue(uint64_t id) {
    return id < values.size() ? values[id] : Value();
  }
  LogicalResult readBlock(Cursor &c, uint64_t numOps, OpBuilder &b);
  LogicalResult readOp(Cursor &c, OpBuilder &b);
  void define(ValueRange results) {
    for (Value v : results) {
      if (values.size() <= nextValueId)
        values.resize(nextValueId + 1);
      values[nextValueId++] = v;
    }
  }

  MLIRContext *context;
  Location loc;
  std::vector<llvm::StringRef> strings, typeItems, constantItems;
  DenseMap<uint64_t, Type> typeCache;
  std::vector<Value> values;
  unsigned nextValueId = 0;
};

} // namespace

LogicalResult Reader::readTable(llvm::StringRef section, unsigned indexBytes,
                                size_t sectionOffset,
                                std::vector<llvm::StringRef> &items) {
  Cursor c(section, sectionOffset);
  uint64_t n = c.varint();
  if (!c.ok() || n > section.size())
    return error("malformed table");
  c.align(indexBytes);
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < n; ++i)
    offsets.push_back(c.littleEndian(indexBytes));
  if (!c.ok())
    return error("truncated table");
  size_t dataStart = c.offset() - sectionOffset;
  llvm::StringRef data = section.drop_front(dataStart);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t end = i + 1 < n ? offsets[i + 1] : data.size();
    if (offsets[i] > end || end > data.size())
      return error("table offsets out of order");
    items.push_back(data.slice(offsets[i], end));
  }
  return success();
}

Type Reader::getType(uint64_t id) {
  if (id >= typeItems.size())
    return {};
  if (Type cached = typeCache.lookup(id))
    return cached;
  Cursor c(typeItems[id]);
  uint8_t code = c.byte();
  Type type = getSimpleType(code, context);
  auto diag = [&] { return error("malformed type"); };
  switch (code) {
  case kPointerType: {
    if (c.varint() != 0)
      return {}; // pointer attributes are not read
    Type pointee = readType(c);
    if (pointee)
      type = PointerType::get(context, pointee);
    break;
  }
  case kTileType: {
    Type element = readType(c);
    SmallVector<int64_t> shape = c.intList(8);
    if (element && c.ok())
      type = TileType::getChecked(diag, context, ArrayRef<int64_t>(shape),
                                  element);
    break;
  }
  case kTensorViewType: {
    if (c.varint() != 0)
      return {};
    Type element = readType(c);
    SmallVector<int64_t> shape = c.intList(8), strides = c.intList(8);
    if (element && c.ok())
      type = TensorViewType::getChecked(diag, context, ArrayRef<int64_t>(shape),
                                        element, ArrayRef<int64_t>(strides));
    break;
  }
  case kPartitionViewType: {
    uint64_t flags = c.varint();
    if (flags & ~1ULL)
      return {};
    SmallVector<int64_t> tileShape = c.intList(4);
    auto view = dyn_cast_or_null<TensorViewType>(readType(c));
    SmallVector<int64_t> dimMap = c.intList(4);
    std::optional<PaddingValue> padding;
    if (flags & 1) {
      padding = symbolizePaddingValue(c.byte());
      if (!padding)
        return {};
    }
    if (view && c.ok())
      type = PartitionViewType::getChecked(diag, context,
                                           ArrayRef<int64_t>(tileShape), view,
                                           ArrayRef<int64_t>(dimMap), padding);
    break;
  }
  case kFunctionType: {
    SmallVector<Type> inputs, results;
    for (SmallVector<Type> *list : {&inputs, &results}) {
      uint64_t n = c.varint();
      for (uint64_t i = 0; i < n && c.ok(); ++i)
        list->push_back(readType(c));
    }
    if (c.ok() && llvm::all_of(inputs, [](Type t) { return bool(t); }) &&
        llvm::all_of(results, [](Type t) { return bool(t); }))
      type = FunctionType::get(context, inputs, results);
    break;
  }
  default:
    break;
  }
  if (!c.ok() || !c.atEnd())
    return {};
  if (type)
    typeCache[id] = type;
  return type;
}

/// A constant's bytes (one element for a splat) as the tile type's dense
/// attribute.
static DenseElementsAttr getConstant(TileType tile, llvm::StringRef data) {
  Type element = tile.getElementType();
  if (!element.isIntOrFloat())
    return {};
  unsigned width = element.getIntOrFloatBitWidth();
  unsigned bytes = std::max<unsigned>(1, width / 8);
  auto tensorType = RankedTensorType::get(tile.getShape(), element);
  int64_t count = data.size() / bytes;
  if (data.size() % bytes || (count != 1 && count != tile.getNumElements()))
    return {};
  SmallVector<APInt> bits;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (unsigned j = 0; j < bytes; ++j)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(data[i * bytes + j]))
           << (8 * j);
    bits.push_back(
        APInt(width, v & (width == 64 ? ~0ULL : ((1ULL << width) - 1))));
  }
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> floats;
    for (const APInt &b : bits)
      floats.push_back(APFloat(floatType.getFloatSemantics(), b));
    if (count == 1)
      return DenseElementsAttr::get(tensorType, floats.front());
    return DenseElementsAttr::get(tensorType, floats);
  }
  if (count == 1)
    return DenseElementsAttr::get(tensorType, bits.front());
  return DenseElementsAttr::get(tensorType, bits);
}

LogicalResult Reader::readBlock(Cursor &c, uint64_t numOps, OpBuilder &b) {
  for (uint64_t i = 0; i < numOps; ++i)
    if (failed(readOp(c, b)))
      return failure();
  return success();
}

LogicalResult Reader::readOp(Cursor &c, OpBuilder &b) {
  size_t at = c.offset();
  uint64_t code = c.varint();
  OperationState state(loc, "");
  auto fail = [&](const llvm::Twine &what) {
    return error(
        llvm::formatv("{0} (opcode {1} at byte {2})", what.str(), code, at)
            .str());
  };
  auto type = [&]() -> Type {
    Type t = readType(c);
    if (!t)
      c.fail();
    return t;
  };
  auto operand = [&] {
    Value v = getValue(c.varint());
    if (!v)
      c.fail();
    state.operands.push_back(v);
  };
  auto operands = [&](uint64_t n) {
    if (n > 4096)
      return c.fail();
    for (uint64_t i = 0; i < n && c.ok(); ++i)
      operand();
  };
  auto types = [&] {
    uint64_t n = c.varint();
    for (uint64_t i = 0; i < n && c.ok() && n < 4096; ++i)
      state.types.push_back(type());
  };
  auto expect = [&](uint64_t want) {
    if (c.varint() != want)
      c.fail();
  };
  auto rounding = [&](RoundingMode want) {
    if (c.byte() != static_cast<uint8_t>(want))
      c.fail();
  };
  auto name = [&](llvm::StringRef opName) {
    state.name = OperationName(("tileir." + opName).str(), context);
  };
  auto binary = [&](llvm::StringRef opName) {
    name(opName);
    state.types.push_back(type());
    expect(0);
    rounding(RoundingMode::nearest_even);
    operands(2);
  };
  auto minMax = [&](llvm::StringRef opName) {
    name(opName);
    state.types.push_back(type());
    uint64_t flags = c.varint();
    if (flags > 1)
      c.fail(); // flush to zero is not read
    if (flags)
      state.addAttribute("propagate_nan", b.getUnitAttr());
    operands(2);
  };
  auto unary = [&](llvm::StringRef opName, llvm::function_ref<void()> mid) {
    name(opName);
    state.types.push_back(type());
    mid();
    operands(1);
  };
  auto none = [] {};
  auto viewAccess = [&](llvm::StringRef opName, bool store) {
    name(opName);
    types();
    uint64_t flags = c.varint();
    if (flags & ~4ULL)
      c.fail(); // memory scopes and hints are not read
    if (c.byte() != 0)
      c.fail(); // weak ordering only
    SmallVector<int64_t> inBounds = c.intList(1);
    if (store)
      operand();
    operand();
    uint64_t n = c.varint();
    operands(n);
    bool token = flags & 4;
    if (token)
      operand();
    if (inBounds.size() != n ||
        llvm::any_of(inBounds, [](int64_t v) { return v != 0; }))
      c.fail();
    state.addAttribute(
        "operandSegmentSizes",
        b.getDenseI32ArrayAttr(
            store ? ArrayRef<int32_t>{1, 1, int32_t(n), token ? 1 : 0}
                  : ArrayRef<int32_t>{1, int32_t(n), token ? 1 : 0}));
  };

  // One region of one block, read after the operation's other parts.
  Region *regionBody = nullptr;
  auto region = [&] {
    expect(1);
    if (c.byte() != 1)
      c.fail();
    regionBody = state.addRegion();
  };
  switch (code) {
  case kMakeToken:
    name("make_token");
    state.types.push_back(type());
    break;
  case kConstant: {
    name("constant");
    auto tile = dyn_cast_or_null<TileType>(type());
    uint64_t id = c.varint();
    if (!tile || id >= constantItems.size())
      return fail("malformed constant");
    Cursor item(constantItems[id]);
    uint64_t n = item.varint();
    DenseElementsAttr value;
    if (item.ok())
      value = getConstant(tile, item.take(n));
    if (!value || !item.ok())
      return fail("malformed constant data");
    state.types.push_back(tile);
    state.addAttribute("value", value);
    break;
  }
  case kGetTileBlockId:
  case kGetNumTileBlocks:
    name(code == kGetTileBlockId ? "get_tile_block_id" : "get_num_tile_blocks");
    for (int i = 0; i < 3; ++i)
      state.types.push_back(type());
    break;
  case kMakeTensorView:
    name("make_tensor_view");
    types();
    operand();
    expect(0);
    expect(0); // dynamic extents and strides are not read
    break;
  case kMakePartitionView:
    unary("make_partition_view", none);
    break;
  case kLoadViewTko:
    viewAccess("load_view_tko", /*store=*/false);
    break;
  case kStoreViewTko:
    viewAccess("store_view_tko", /*store=*/true);
    break;
  case kMmaF:
    name("mmaf");
    state.types.push_back(type());
    expect(0);
    operands(3);
    break;
  case kFor: {
    name("for");
    types();
    expect(0);
    operands(c.varint());
    region();
    break;
  }
  case kReduce: {
    name("reduce");
    types();
    uint64_t dim = c.varint();
    uint64_t n = c.varint();
    SmallVector<Attribute> identities;
    for (uint64_t i = 0; i < n && c.ok() && n < 4096; ++i) {
      if (c.byte() != static_cast<uint8_t>(kFloatAttrTag))
        return fail("a reduce identity that is not a float");
      auto floatType = dyn_cast_or_null<FloatType>(type());
      if (!floatType)
        return fail("a reduce identity of no float type");
      unsigned width = floatType.getWidth();
      uint64_t bits = width <= 8 ? c.byte() : c.varint() >> 1;
      if (width > 32 || bits >> width)
        return fail("a reduce identity out of its type's range");
      identities.push_back(
          FloatAttr::get(floatType, APFloat(floatType.getFloatSemantics(),
                                            APInt(width, bits))));
    }
    state.addAttribute("dim", b.getI32IntegerAttr(static_cast<int32_t>(dim)));
    state.addAttribute("identities", b.getArrayAttr(identities));
    operands(c.varint());
    region();
    break;
  }
  case kIota:
    name("iota");
    state.types.push_back(type());
    break;
  case kLog:
    unary("log", none);
    break;
  case kCmpI: {
    name("cmpi");
    state.types.push_back(type());
    std::optional<ComparisonPredicate> predicate =
        symbolizeComparisonPredicate(c.byte());
    if (!predicate)
      return fail("unknown comparison");
    if (c.byte() != 1)
      c.fail(); // signed only
    state.addAttribute("comparison_predicate",
                       ComparisonPredicateAttr::get(context, *predicate));
    operands(2);
    break;
  }
  case kContinue:
  case kReturn:
  case kYield:
    name(code == kContinue ? "continue" : code == kReturn ? "return" : "yield");
    expect(0);
    operands(c.varint());
    break;
  case kAddF:
    binary("addf");
    break;
  case kSubF:
    binary("subf");
    break;
  case kMulF:
    binary("mulf");
    break;
  case kDivF:
    binary("divf");
    break;
  case kMaxF:
    minMax("maxf");
    break;
  case kMinF:
    minMax("minf");
    break;
  case kNegF:
    unary("negf", none);
    break;
  case kAbsF:
    unary("absf", none);
    break;
  case kFma:
    name("fma");
    state.types.push_back(type());
    expect(0);
    rounding(RoundingMode::nearest_even);
    operands(3);
    break;
  case kCmpF: {
    name("cmpf");
    state.types.push_back(type());
    std::optional<ComparisonPredicate> predicate =
        symbolizeComparisonPredicate(c.byte());
    std::optional<ComparisonOrdering> ordering =
        symbolizeComparisonOrdering(c.byte());
    if (!predicate || !ordering)
      return fail("unknown comparison");
    state.addAttribute("comparison_predicate",
                       ComparisonPredicateAttr::get(context, *predicate));
    state.addAttribute("comparison_ordering",
                       ComparisonOrderingAttr::get(context, *ordering));
    operands(2);
    break;
  }
  case kAddI:
  case kMulI:
    name(code == kAddI ? "addi" : "muli");
    state.types.push_back(type());
    if (c.byte() != 0)
      c.fail(); // overflow flags are not read
    operands(2);
    break;
  case kDivI:
  case kRemI:
    name(code == kDivI ? "divi" : "remi");
    state.types.push_back(type());
    if (c.byte() != 1)
      c.fail(); // signed only
    if (code == kDivI)
      rounding(RoundingMode::zero);
    operands(2);
    break;
  case kOffset:
    name("offset");
    state.types.push_back(type());
    operands(2);
    break;
  case kSelect:
    name("select");
    state.types.push_back(type());
    operands(3);
    break;
  case kExp:
    unary("exp", [&] { rounding(RoundingMode::full); });
    break;
  case kTanH:
    unary("tanh", [&] { rounding(RoundingMode::full); });
    break;
  case kSqrt:
    unary("sqrt", [&] {
      expect(0);
      rounding(RoundingMode::nearest_even);
    });
    break;
  case kRsqrt:
    unary("rsqrt", [&] { expect(0); });
    break;
  case kFToF:
    unary("ftof", [&] { rounding(RoundingMode::nearest_even); });
    break;
  case kBroadcast:
    unary("broadcast", none);
    break;
  case kReshape:
    unary("reshape", none);
    break;
  default:
    return fail("unknown opcode");
  }
  if (!c.ok())
    return fail("malformed or unsupported operation");
  if (llvm::any_of(state.types, [](Type t) { return !t; }))
    return fail("unknown type");

  if (regionBody) {
    SmallVector<Type> argTypes;
    uint64_t n = c.varint();
    for (uint64_t i = 0; i < n && c.ok() && n < 4096; ++i)
      argTypes.push_back(type());
    uint64_t numOps = c.varint();
    if (!c.ok())
      return fail("malformed region");
    Block *block = new Block();
    regionBody->push_back(block);
    unsigned saved = nextValueId;
    for (Type t : argTypes)
      define(block->addArgument(t, loc));
    OpBuilder inner(context);
    inner.setInsertionPointToEnd(block);
    if (failed(readBlock(c, numOps, inner)))
      return failure();
    nextValueId = saved;
  }
  Operation *op = b.create(state);
  define(op->getResults());
  return success();
}

OwningOpRef<mlir::ModuleOp> Reader::read(llvm::StringRef bytes) {
  Cursor c(bytes);
  llvm::StringRef magic = c.take(sizeof(kMagic));
  if (!c.ok() || magic != llvm::StringRef(kMagic, sizeof(kMagic)))
    return error("not Tile IR bytecode (bad magic number)"), nullptr;
  unsigned major = c.byte(), minor = c.byte();
  unsigned tag = c.littleEndian(2);
  if (!c.ok())
    return error("truncated header"), nullptr;
  if (major != kBytecodeVersion.major || minor != kBytecodeVersion.minor ||
      tag != kBytecodeVersion.tag)
    return error(llvm::formatv("version {0}.{1}.{2} is not supported (reads "
                               "{3}.{4}.{5})",
                               major, minor, tag, kBytecodeVersion.major,
                               kBytecodeVersion.minor, kBytecodeVersion.tag)
                     .str()),
           nullptr;

  llvm::StringRef sections[kNumSections];
  size_t offsets[kNumSections] = {};
  while (true) {
    uint8_t id = c.byte();
    if (!c.ok())
      return error("no end-of-bytecode marker"), nullptr;
    if (id == kEndOfBytecode)
      break;
    uint8_t section = id & ~kSectionAligned;
    uint64_t length = c.varint();
    if (id & kSectionAligned)
      c.align(c.varint());
    size_t offset = c.offset();
    llvm::StringRef contents = c.take(length);
    if (!c.ok() || section == kEndOfBytecode || section >= kNumSections)
      return error("malformed or truncated section"), nullptr;
    sections[section] = contents;
    offsets[section] = offset;
  }
  if (failed(readTable(sections[kStringSection], 4, offsets[kStringSection],
                       strings)) ||
      failed(readTable(sections[kTypeSection], 4, offsets[kTypeSection],
                       typeItems)) ||
      failed(readTable(sections[kConstantSection], 8, offsets[kConstantSection],
                       constantItems)))
    return nullptr;

  OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  OpBuilder b(context);
  b.setInsertionPointToEnd(module->getBody());
  Cursor f(sections[kFuncSection], offsets[kFuncSection]);
  uint64_t numFunctions = f.varint();
  for (uint64_t i = 0; i < numFunctions && f.ok(); ++i) {
    uint64_t nameId = f.varint();
    auto signature = dyn_cast_or_null<FunctionType>(getType(f.varint()));
    uint8_t flags = f.byte();
    (void)f.varint(); // debug information index
    if (!f.ok() || nameId >= strings.size() || !signature)
      return error("malformed function header"), nullptr;
    if (flags != static_cast<uint8_t>(kFunctionIsEntry))
      return error("only entry functions without hints are read"), nullptr;
    uint64_t length = f.varint();
    size_t bodyOffset = f.offset();
    llvm::StringRef body = f.take(length);
    if (!f.ok())
      return error("truncated function"), nullptr;
    auto entry = EntryOp::create(b, loc, strings[nameId], signature,
                                 ArrayAttr(), ArrayAttr());
    Block *block = new Block();
    entry.getBody().push_back(block);
    values.clear();
    nextValueId = 0;
    for (Type t : signature.getInputs())
      define(block->addArgument(t, loc));
    OpBuilder inner(context);
    inner.setInsertionPointToEnd(block);
    Cursor ops(body, bodyOffset);
    while (!ops.atEnd())
      if (failed(readOp(ops, inner)))
        return nullptr;
  }
  if (!f.ok())
    return error("malformed function section"), nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<mlir::ModuleOp>
mlir::pb::tileir::readBytecode(llvm::StringRef bytes, MLIRContext *context,
                               Location loc) {
  context->getOrLoadDialect<TileIRDialect>();
  return Reader(context, loc).read(bytes);
}
