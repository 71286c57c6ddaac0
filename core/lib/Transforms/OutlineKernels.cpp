//===- OutlineKernels.cpp - Loop nests as functions, identical ones shared
//-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each top-level loop nest of a function becomes a private function that
// the function calls; kernels whose bodies and signatures print the same
// are then merged, so that S4 and S5 lower and compile each distinct kernel
// once. Printing is the structural comparison: the printer writes every
// op, type and attribute (locations left out) and numbers values in order,
// so two kernels print the same exactly when they are the same code.
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBOUTLINEKERNELSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

/// Whether a kernel can take `type` as an argument: kernels are called with
/// bare pointers (upstream's own test of that convention), so a buffer
/// also needs a static shape and the default memory space.
static bool isKernelArgumentType(Type type) {
  if (type.isIntOrIndexOrFloat() || isa<VectorType>(type))
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && !memref.getMemorySpace() &&
         LLVMTypeConverter::canConvertToBarePtr(memref);
}

/// Whether `value`, used inside `nest`, is copied into the kernel rather
/// than passed: constants, so that kernels that differ only in where their
/// constants were defined are the same, and stay foldable.
static bool isCopiedIn(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

/// The type a kernel argument of `type` is passed as: scalars and vectors
/// of 16-bit floats as the integers of their bits. x86's calling convention
/// passes bf16 values through f32, and LLVM rounds them back with
/// compiler-rt's __truncsfbf2, which nothing defines where a CPU artifact is
/// loaded; passing the bits moves them unchanged.
static Type getPassedType(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (!isa<BFloat16Type, Float16Type>(element) || isa<MemRefType>(type))
    return type;
  Type i16 = IntegerType::get(type.getContext(), 16);
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(i16);
  return i16;
}

namespace {
struct Capture {
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
};
} // namespace

/// The values `nest` uses from outside itself, in order of first use, or
/// failure where one cannot be a kernel argument.
static FailureOr<Capture> captureValues(Operation *nest) {
  llvm::SetVector<Value> arguments;
  llvm::SetVector<Operation *> constants;
  bool ok = true;
  nest->walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (nest->isAncestor(operand.getParentRegion()->getParentOp()))
        continue;
      if (isCopiedIn(operand)) {
        constants.insert(operand.getDefiningOp());
        continue;
      }
      if (!isKernelArgumentType(operand.getType()))
        ok = false;
      arguments.insert(operand);
    }
  });
  if (!ok)
    return failure();
  return Capture{arguments.takeVector(), constants.takeVector()};
}

/// The text that identifies `kernel`'s code: its printed form, under the
/// name "kernel" that every new kernel has until it is inserted.
static std::string getStructuralKey(func::FuncOp kernel) {
  std::string key;
  llvm::raw_string_ostream os(key);
  kernel->print(os, OpPrintingFlags().useLocalScope());
  return key;
}

/// A new private function "kernel" (not in any block) that runs `nest`.
static func::FuncOp buildKernel(Operation *nest, const Capture &capture) {
  Location loc = nest->getLoc();
  SmallVector<Type> types;
  for (Value value : capture.arguments)
    types.push_back(getPassedType(value.getType()));
  OpBuilder builder(nest->getContext());
  auto kernel = func::FuncOp::create(builder, loc, "kernel",
                                     builder.getFunctionType(types, {}));
  kernel.setPrivate();
  Block *body = kernel.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [value, argument] :
       llvm::zip_equal(capture.arguments, body->getArguments())) {
    Value inside = argument;
    if (argument.getType() != value.getType())
      inside =
          arith::BitcastOp::create(builder, loc, value.getType(), argument);
    mapping.map(value, inside);
  }
  for (Operation *constant : capture.constants)
    builder.clone(*constant, mapping);
  builder.clone(*nest, mapping);
  func::ReturnOp::create(builder, loc);
  return kernel;
}

namespace {
class PBOutlineKernelsPass
    : public pb::impl::PBOutlineKernelsPassBase<PBOutlineKernelsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());

    // The kernel of each distinct code, by its printed form.
    llvm::StringMap<func::FuncOp> kernelsByKey;
    unsigned outlined = 0, kept = 0;
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      Operation *last = function; // New kernels follow their function.
      for (Block &block : function.getBody()) {
        SmallVector<Operation *> nests;
        for (Operation &op : block)
          if (isa<affine::AffineForOp, affine::AffineParallelOp, scf::ForOp,
                  scf::ParallelOp>(op) &&
              op.getNumResults() == 0)
            nests.push_back(&op);
        for (Operation *nest : nests) {
          FailureOr<Capture> capture = captureValues(nest);
          if (failed(capture)) {
            ++kept;
            continue;
          }
          func::FuncOp kernel = buildKernel(nest, *capture);
          std::string key = getStructuralKey(kernel);
          auto [it, inserted] = kernelsByKey.try_emplace(key, kernel);
          if (inserted) {
            // Named after its code, so that the same kernel has the same
            // name in every module (S5 caches kernels by their code; a
            // clash of names is renamed, never merged).
            kernel.setSymName(
                llvm::formatv("kernel_{0:x-16}", llvm::xxh3_64bits(key)).str());
            kernel->setAttr(pb::PBDialect::kKernelAttrName,
                            UnitAttr::get(kernel.getContext()));
            symbols.insert(kernel, std::next(last->getIterator()));
            last = kernel;
          } else {
            kernel.erase();
          }
          OpBuilder builder(nest);
          SmallVector<Value> passed;
          for (Value value : capture->arguments) {
            Type type = getPassedType(value.getType());
            passed.push_back(type == value.getType()
                                 ? value
                                 : arith::BitcastOp::create(
                                       builder, nest->getLoc(), type, value));
          }
          func::CallOp::create(builder, nest->getLoc(), it->second, passed);
          nest->erase();
          ++outlined;
        }
      }
    }

    if (outlined || kept)
      pb::explain(module, llvm::Twine(outlined) + " kernels outlined, " +
                              llvm::Twine(kernelsByKey.size()) +
                              " distinct after deduplication; " +
                              llvm::Twine(kept) +
                              " loop nests left in place (a buffer with a "
                              "dynamic size, offset or stride)");
  }
};
} // namespace
