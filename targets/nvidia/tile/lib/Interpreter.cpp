//===- Interpreter.cpp - Runs Tile IR kernels on the CPU ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the modules' bytecode, prepares each kernel once (a slot per SSA
// value, an instruction per operation; InterpreterInternal.h) and launches
// kernels: argument checks, then the tile blocks in order, x fastest
// (InterpreterOps.cpp runs them).
//
//===----------------------------------------------------------------------===//

#include "InterpreterInternal.h"
#include "pb/TileIR/Bytecode.h"
#include "pb/TileIR/TileIR.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::pb::tileir;
using namespace mlir::pb::tileir::interpreter;

static std::string debugString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

namespace {

/// Prepares one kernel's instructions.
class Preparer {
public:
  Preparer(llvm::StringRef module, Kernel &kernel)
      : module(module), kernel(kernel) {}

  llvm::Error prepare(EntryOp entry) {
    Block &block = entry.getBody().front();
    for (BlockArgument arg : block.getArguments()) {
      kernel.argSlots.push_back(define(arg));
      auto tile = dyn_cast<TileType>(arg.getType());
      bool isPointer = tile && tile.getRank() == 0 &&
                       isa<PointerType>(tile.getElementType());
      kernel.badArgTypes.push_back(isPointer ? Type() : arg.getType());
    }
    if (llvm::Error err = prepareBlock(block, kernel.body))
      return err;
    kernel.numSlots = slots.size();
    return llvm::Error::success();
  }

private:
  unsigned define(Value v) {
    unsigned slot = slots.size();
    slots[v] = slot;
    return slot;
  }
  unsigned use(Value v) { return slots.lookup(v); }

  /// The error for an operation (with `why` non-empty: in that form) the
  /// interpreter does not run.
  llvm::Error unsupported(Operation &op, const llvm::Twine &why) {
    std::string form = why.str();
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        ("module '" + module + "': kernel '" + kernel.name +
         "': " + op.getName().getStringRef() + (form.empty() ? "" : " ") +
         form + " is not implemented by the interpreter")
            .str());
  }

  /// Fills `in`'s result element type, count and width from a tile type.
  llvm::Error setTile(Operation &op, Instr &in, Type type) {
    auto tile = dyn_cast<TileType>(type);
    std::optional<Elem> elem =
        tile ? classify(tile.getElementType()) : std::nullopt;
    if (!elem)
      return unsupported(op, "on " + debugString(type));
    in.elem = *elem;
    in.numElements = tile.getNumElements();
    in.width = *elem == Elem::Ptr ? 2 : 1;
    in.shape.assign(tile.getShape().begin(), tile.getShape().end());
    return llvm::Error::success();
  }

  llvm::Error prepareConstant(ConstantOp op, Instr &in) {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return unsupported(*op, "with a non-dense value");
    in.constant.reserve(in.numElements);
    if (isFloat(in.elem)) {
      for (const llvm::APFloat &v : dense.getValues<llvm::APFloat>())
        in.constant.push_back(v.convertToDouble());
    } else if (in.elem != Elem::Ptr) {
      for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
        in.constant.push_back(in.elem == Elem::I1
                                  ? static_cast<double>(v.getZExtValue())
                                  : static_cast<double>(v.getSExtValue()));
    }
    if (static_cast<int64_t>(in.constant.size()) != in.numElements)
      return unsupported(*op, "with this value");
    roundAll(in.elem, in.constant);
    return llvm::Error::success();
  }

  llvm::Error prepareView(Operation &op, PartitionViewType type,
                          ViewAccess &view) {
    TensorViewType tensor = type.getTensorView();
    std::optional<Elem> elem = classify(tensor.getElementType());
    if (!elem || *elem == Elem::Ptr)
      return unsupported(op, "on a view of " +
                                 debugString(tensor.getElementType()));
    view.elem = *elem;
    view.elemBytes = byteSize(*elem);
    if (std::optional<PaddingValue> padding = type.getPaddingValue()) {
      switch (*padding) {
      case PaddingValue::zero:
        view.padding = 0.0;
        break;
      case PaddingValue::neg_zero:
        view.padding = -0.0;
        break;
      case PaddingValue::nan:
        view.padding = std::numeric_limits<double>::quiet_NaN();
        break;
      case PaddingValue::pos_inf:
        view.padding = std::numeric_limits<double>::infinity();
        break;
      case PaddingValue::neg_inf:
        view.padding = -std::numeric_limits<double>::infinity();
        break;
      }
    }
    int64_t last = 0; // the last element's offset, in elements
    bool overflow = false;
    for (auto [i, tileExtent] : llvm::enumerate(type.getTileShape())) {
      int64_t dim = type.getDimMap()[i];
      int64_t extent = tensor.getShape()[dim],
              stride = tensor.getStrides()[dim];
      view.tileShape.push_back(tileExtent);
      view.extent.push_back(extent);
      view.stride.push_back(stride);
      view.gridExtent.push_back(llvm::divideCeil(extent, tileExtent));
      view.numElements *= tileExtent;
      int64_t reach;
      overflow |= llvm::MulOverflow(extent - 1, stride, reach) ||
                  llvm::AddOverflow(last, reach, last);
    }
    int64_t bytes;
    overflow |= llvm::AddOverflow<int64_t>(last, 1, last) ||
                llvm::MulOverflow<int64_t>(last, view.elemBytes, bytes);
    view.spanBytes = overflow ? -1 : bytes;
    return llvm::Error::success();
  }

  llvm::Error prepareOp(Operation &op, Instr &in) {
    using llvm::Error;
    if (auto c = dyn_cast<ConstantOp>(op)) {
      in.opcode = Opcode::Constant;
      if (Error err = setTile(op, in, c.getType()))
        return err;
      return prepareConstant(c, in);
    }
    if (isa<MakeTokenOp>(op)) {
      in.opcode = Opcode::MakeToken;
      return Error::success();
    }
    if (isa<GetTileBlockIdOp, GetNumTileBlocksOp>(op)) {
      in.opcode =
          isa<GetTileBlockIdOp>(op) ? Opcode::BlockId : Opcode::NumBlocks;
      return Error::success();
    }
    if (isa<MakeTensorViewOp, MakePartitionViewOp>(op)) {
      in.opcode = Opcode::Copy;
      return Error::success();
    }
    if (auto load = dyn_cast<LoadViewTkoOp>(op)) {
      in.opcode = Opcode::Load;
      in.operands = {use(load.getView())};
      for (Value v : load.getIndex())
        in.index.push_back(use(v));
      if (Error err = setTile(op, in, load.getResult().getType()))
        return err;
      return prepareView(op, load.getView().getType(), in.view);
    }
    if (auto store = dyn_cast<StoreViewTkoOp>(op)) {
      in.opcode = Opcode::Store;
      in.operands = {use(store.getTile()), use(store.getView())};
      for (Value v : store.getIndex())
        in.index.push_back(use(v));
      if (Error err = setTile(op, in, store.getTile().getType()))
        return err;
      return prepareView(op, store.getView().getType(), in.view);
    }
    if (auto mma = dyn_cast<MmaFOp>(op)) {
      in.opcode = Opcode::MmaF;
      if (Error err = setTile(op, in, mma.getType()))
        return err;
      auto lhs = cast<TileType>(mma.getLhs().getType()).getShape();
      auto rhs = cast<TileType>(mma.getRhs().getType()).getShape();
      size_t rank = lhs.size();
      in.batch = rank == 3 ? lhs[0] : 1;
      in.m = lhs[rank - 2];
      in.k = lhs[rank - 1];
      in.n = rhs[rank - 1];
      return Error::success();
    }
    if (auto forOp = dyn_cast<ForOp>(op)) {
      in.opcode = Opcode::For;
      return prepareRegion(forOp.getBody().front(), in);
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      in.opcode = Opcode::Reduce;
      auto type = cast<TileType>(reduce.getOperands()[0].getType());
      if (Error err = setTile(op, in, type))
        return err;
      if (!isFloat(in.elem))
        return unsupported(op, "on " + debugString(type));
      in.shape.assign(type.getShape().begin(), type.getShape().end());
      in.reduceDim = reduce.getDim();
      for (Attribute identity : reduce.getIdentities())
        in.constant.push_back(
            cast<FloatAttr>(identity).getValue().convertToDouble());
      return prepareRegion(reduce.getBody().front(), in);
    }
    if (isa<IotaOp>(op)) {
      in.opcode = Opcode::Iota;
      return setTile(op, in, op.getResult(0).getType());
    }
    if (auto cmp = dyn_cast<CmpIOp>(op)) {
      in.opcode = Opcode::CmpI;
      in.predicate = static_cast<unsigned>(cmp.getComparisonPredicate());
      return setTile(op, in, cmp.getType());
    }
    if (isa<ReshapeOp>(op)) {
      in.opcode = Opcode::Copy;
      return Error::success();
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      in.opcode = Opcode::Broadcast;
      if (Error err = setTile(op, in, broadcast.getType()))
        return err;
      auto from = cast<TileType>(broadcast.getSource().getType()).getShape();
      in.sourceStrides.resize(from.size());
      int64_t stride = 1;
      for (int64_t d = from.size() - 1; d >= 0; --d) {
        in.sourceStrides[d] = from[d] == 1 ? 0 : stride;
        stride *= from[d];
      }
      return Error::success();
    }
    if (isa<AddIOp, MulIOp, DivIOp, RemIOp>(op)) {
      in.opcode = isa<AddIOp>(op)   ? Opcode::AddI
                  : isa<MulIOp>(op) ? Opcode::MulI
                  : isa<DivIOp>(op) ? Opcode::DivI
                                    : Opcode::RemI;
      if (Error err = setTile(op, in, op.getResult(0).getType()))
        return err;
      if (isFloat(in.elem) || in.elem == Elem::Ptr || in.elem == Elem::I1)
        return unsupported(op, "on " + debugString(op.getResult(0).getType()));
      return Error::success();
    }
    if (auto offset = dyn_cast<OffsetOp>(op)) {
      in.opcode = Opcode::Offset;
      if (Error err = setTile(op, in, offset.getType()))
        return err;
      auto pointer =
          cast<PointerType>(cast<TileType>(offset.getType()).getElementType());
      std::optional<Elem> pointee = classify(pointer.getPointeeType());
      if (in.numElements != 1 || !pointee || *pointee == Elem::Ptr)
        return unsupported(op, "on " + debugString(offset.getType()));
      in.pointeeBytes = byteSize(*pointee);
      return Error::success();
    }
    if (auto cmp = dyn_cast<CmpFOp>(op)) {
      in.opcode = Opcode::CmpF;
      in.predicate = static_cast<unsigned>(cmp.getComparisonPredicate());
      in.ordered = cmp.getComparisonOrdering() == ComparisonOrdering::ordered;
      if (Error err = setTile(op, in, cmp.getType()))
        return err;
      if (!isFloat(*classify(
              cast<TileType>(cmp.getLhs().getType()).getElementType())))
        return unsupported(op, "on " + debugString(cmp.getLhs().getType()));
      return Error::success();
    }
    if (isa<MaxFOp, MinFOp>(op)) {
      in.opcode = isa<MaxFOp>(op) ? Opcode::MaxF : Opcode::MinF;
      in.ordered = op.hasAttr("propagate_nan");
      if (Error err = setTile(op, in, op.getResult(0).getType()))
        return err;
      if (!isFloat(in.elem))
        return unsupported(op, "on " + debugString(op.getResult(0).getType()));
      return Error::success();
    }
    std::optional<Opcode> opcode =
        llvm::TypeSwitch<Operation *, std::optional<Opcode>>(&op)
            .Case([](AbsFOp) { return Opcode::AbsF; })
            .Case([](FmaOp) { return Opcode::Fma; })
            .Case([](SelectOp) { return Opcode::Select; })
            .Case([](AddFOp) { return Opcode::AddF; })
            .Case([](SubFOp) { return Opcode::SubF; })
            .Case([](MulFOp) { return Opcode::MulF; })
            .Case([](DivFOp) { return Opcode::DivF; })
            .Case([](NegFOp) { return Opcode::NegF; })
            .Case([](ExpOp) { return Opcode::Exp; })
            .Case([](LogOp) { return Opcode::Log; })
            .Case([](TanHOp) { return Opcode::TanH; })
            .Case([](SqrtOp) { return Opcode::Sqrt; })
            .Case([](RsqrtOp) { return Opcode::Rsqrt; })
            .Case([](FToFOp) { return Opcode::FToF; })
            .Default([](Operation *) { return std::nullopt; });
    if (!opcode)
      return unsupported(op, "");
    in.opcode = *opcode;
    if (Error err = setTile(op, in, op.getResult(0).getType()))
      return err;
    if (!isFloat(in.elem))
      return unsupported(op, "on " + debugString(op.getResult(0).getType()));
    return Error::success();
  }

  /// A for's or reduce's body: its block arguments, its operations and
  /// the terminator's operands.
  llvm::Error prepareRegion(Block &block, Instr &in) {
    for (BlockArgument arg : block.getArguments())
      in.bodyArgs.push_back(define(arg));
    if (llvm::Error err = prepareBlock(block, in.body))
      return err;
    for (Value v : block.getTerminator()->getOperands())
      in.yields.push_back(use(v));
    return llvm::Error::success();
  }

  llvm::Error prepareBlock(Block &block, std::vector<Instr> &out) {
    for (Operation &op : block) {
      if (isa<ReturnOp, ContinueOp, YieldOp>(op))
        continue;
      Instr in;
      in.op = &op;
      for (Value v : op.getOperands())
        in.operands.push_back(use(v));
      if (llvm::Error err = prepareOp(op, in))
        return err;
      // Results are defined after the operands and the body (a loop's
      // results are not visible inside it).
      for (Value v : op.getResults())
        in.results.push_back(define(v));
      out.push_back(std::move(in));
    }
    return llvm::Error::success();
  }

  llvm::StringRef module;
  Kernel &kernel;
  llvm::DenseMap<Value, unsigned> slots;
};

} // namespace

//===----------------------------------------------------------------------===//
// TileProgram
//===----------------------------------------------------------------------===//

struct TileProgram::Impl {
  Impl() : context(MLIRContext::Threading::DISABLED) {
    context.getOrLoadDialect<TileIRDialect>();
  }

  struct Module {
    OwningOpRef<mlir::ModuleOp> op;
    llvm::StringMap<Kernel> kernels;
  };

  MLIRContext context;
  llvm::StringMap<Module> modules;
};

TileProgram::TileProgram(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}

TileProgram::~TileProgram() = default;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

llvm::Expected<std::unique_ptr<TileProgram>> TileProgram::create(
    llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> modules) {
  auto impl = std::make_unique<Impl>();
  MLIRContext *context = &impl->context;
  for (auto [name, bytes] : modules) {
    if (impl->modules.count(name))
      return makeError("module '" + name + "' is given twice");
    std::string diagnostic;
    OwningOpRef<mlir::ModuleOp> module;
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
        if (diagnostic.empty())
          diagnostic = diag.str();
        return success();
      });
      module = readBytecode(bytes, context,
                            NameLoc::get(StringAttr::get(context, name)));
    }
    if (!module)
      return makeError("module '" + name +
                       "': cannot read its bytecode: " + diagnostic);
    Impl::Module &entry = impl->modules[name];
    llvm::SmallVector<EntryOp> kernelOps;
    module->walk([&](EntryOp op) { kernelOps.push_back(op); });
    for (EntryOp kernelOp : kernelOps) {
      auto [it, inserted] = entry.kernels.try_emplace(kernelOp.getSymName());
      if (!inserted)
        return makeError("module '" + name + "': kernel '" +
                         kernelOp.getSymName() + "' is defined twice");
      Kernel &kernel = it->second;
      kernel.name = kernelOp.getSymName().str();
      if (llvm::Error err = Preparer(name, kernel).prepare(kernelOp))
        return std::move(err);
    }
    entry.op = std::move(module);
  }
  return std::unique_ptr<TileProgram>(new TileProgram(std::move(impl)));
}

llvm::Error TileProgram::launch(llvm::StringRef module, llvm::StringRef kernel,
                                const unsigned grid[3],
                                llvm::ArrayRef<InterpreterBuffer> buffers) {
  auto moduleIt = impl->modules.find(module);
  if (moduleIt == impl->modules.end())
    return makeError("no module '" + module + "'");
  auto kernelIt = moduleIt->second.kernels.find(kernel);
  if (kernelIt == moduleIt->second.kernels.end())
    return makeError("module '" + module + "' has no kernel '" + kernel + "'");
  const Kernel &k = kernelIt->second;
  std::string prefix = ("kernel '" + kernel + "'").str();
  for (unsigned i = 0; i < 3; ++i)
    if (grid[i] == 0 ||
        grid[i] > static_cast<unsigned>(std::numeric_limits<int32_t>::max()))
      return makeError(prefix + ": grid extent " + llvm::Twine(grid[i]) +
                       " is not in [1, 2^31 - 1]");
  if (buffers.size() != k.argSlots.size())
    return makeError(prefix + " takes " + llvm::Twine(k.argSlots.size()) +
                     " arguments, got " + llvm::Twine(buffers.size()) +
                     " buffers");
  for (auto [i, type] : llvm::enumerate(k.badArgTypes)) {
    if (type)
      return makeError(prefix + ": argument " + llvm::Twine(i) + " is " +
                       debugString(type) + ", not a pointer tile");
    if (!buffers[i].data && buffers[i].bytes)
      return makeError(prefix + ": buffer " + llvm::Twine(i) +
                       " is null but has " + llvm::Twine(buffers[i].bytes) +
                       " bytes");
  }
  Executor executor(k, grid, buffers);
  for (unsigned z = 0; z < grid[2]; ++z)
    for (unsigned y = 0; y < grid[1]; ++y)
      for (unsigned x = 0; x < grid[0]; ++x)
        if (!executor.runBlock(x, y, z))
          return makeError(prefix + ", tile block (" + llvm::Twine(x) + ", " +
                           llvm::Twine(y) + ", " + llvm::Twine(z) +
                           "): " + executor.error);
  return llvm::Error::success();
}
