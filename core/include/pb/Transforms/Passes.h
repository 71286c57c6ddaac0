//===- Passes.h - PolyBlocks core passes --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_PASSES_H
#define PB_TRANSFORMS_PASSES_H

#include "pb/Dialect/PBDialect.h"
#include "pb/Target/TargetDesc.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pb {

#define GEN_PASS_DECL
#include "pb/Transforms/Passes.h.inc"

/// Whether passes report their decisions (pb-opt --pb-explain).
void setExplainEnabled(bool enabled);
bool isExplainEnabled();
/// Reports one decision of a pass as a remark on `op` when explaining.
void explain(Operation *op, const llvm::Twine &message);

/// Registers the stage pipelines pb-s1, pb-s2, pb-s3 and pb-lower-to-host.
void registerPBPipelines();

/// Whether `op` is a reduction computing c += a * b over two inputs and one
/// init (matmuls, batch matmuls, convolutions, their generic forms): the
/// ops S3 may map onto matrix units, which S2 therefore keeps as linalg.
/// With `allowExtensions`, also the mixed-precision form that widens a and
/// b to the accumulator's type first (arith.extf / arith.extsi: f16 x f16
/// -> f32, i8 x i8 -> i32), which GPU matrix units take as it is.
bool isMultiplyAccumulate(linalg::LinalgOp op, bool allowExtensions = false);

/// The elementwise linalg.generic that S3 may fuse into the final stores of
/// the multiply-accumulate op `mac` (a bias, an activation), or null. It must
/// follow `mac`, with only statements independent of `mac` between them
/// (not touching its result, not writing its inputs: allocations, a batch
/// norm's reshaped parameters, a residual branch, the fill of a padded
/// tensor's border), to be moved before it. It reads `mac`'s result buffer
/// with an identity map and writes a buffer of the same shape (a view with
/// unit innermost stride: a padded tensor's interior). Unless the epilogue
/// overwrites that result in place (later readers then see its values),
/// nothing else may read the result, and it must be a temporary: an
/// allocation or a reshape of one. With `permuted` (kernels that store
/// element by element, GPU tensor-core kernels), the epilogue may read the
/// result and write its output through permutations of its loops (a
/// convolution's NHWC result normalized into an NCHW output), into a buffer
/// with the identity layout.
linalg::GenericOp findFusableEpilogue(linalg::LinalgOp mac,
                                      bool permuted = false);

/// Core counts are known only at run time: a kernel's parallel loop is cut
/// into at least this many tasks, so that every core gets work and the load
/// balances (pb-map-matrix-units' GEMMs, pb-fuse-attention's blocks).
constexpr int64_t kMinParallelBlocks = 8;

/// The thread-scope, vector-outer-product unit of `chip` (a vector FMA of a
/// CPU core) for these element types with the most lanes, or null: what
/// pb-map-matrix-units builds its micro-kernels from. With `maxLanes`, the
/// one with the most lanes not above it where there is one (8 output
/// channels per group on a chip with 16- and 8-lane FMAs: the 8-lane one).
const MatrixUnitDesc *findThreadScopeUnit(const ChipDesc &chip, ElementType a,
                                          ElementType b, ElementType c,
                                          int64_t maxLanes = 0);

/// The independent accumulation chains that keep `chip`'s vector unit
/// busy: the latency of its thread-scope vector FMA times the vector
/// operations it starts per cycle (peak f32 vector GFLOP/s over lanes x 2 x
/// clock). 1 when the chip states no such unit.
int64_t getChainsInFlight(const ChipDesc &chip);

/// Whether `chip` has matrix units that S4 builds whole kernels around
/// (subgroup- or warpgroup-scope: GPU tensor cores), whose stores take
/// epilogues through permutations (findFusableEpilogue's `permuted`).
bool hasCooperativeMatrixUnits(const ChipDesc &chip);

/// Whether `chip` has matrix units whose operands are narrower than their
/// accumulator (tensor cores; a CPU's f32 FMA fed bf16 or f16 operands that
/// the micro-kernel widens as it packs them): mixed-precision contractions
/// (f16 x f16 -> f32 through arith.extf in the body) are theirs too.
bool hasMixedPrecisionMatrixUnits(const ChipDesc &chip);

/// A row kernel (pb-group-row-kernels): linalg ops on buffers over the same
/// rows, reductions along the row and elementwise ops, in program order,
/// and their shape: the outer loops' extents other than 1 (`{1}` when all
/// are 1: one row), then the row's length.
struct RowKernel {
  llvm::SmallVector<Operation *> ops;
  llvm::SmallVector<int64_t> outer;
  int64_t row = 0;
};

/// A row kernel's reduction: `value` (computed in the body from the
/// inputs) folded into the accumulator by `combiner`.
struct RowReduction {
  enum class Kind { Add, Mul, Max, Min };
  Kind kind;
  Operation *combiner;
  Value value;
};

/// The reduction of `op` when it folds its one init along its last loop
/// by one add, multiply, maximum or minimum, else nothing.
std::optional<RowReduction> getRowReduction(linalg::GenericOp op);

/// Whether the generic `op` of `kernel` runs along the row (a reduction, or
/// elementwise over the rows) rather than over one value per row.
bool isFullRowOp(linalg::GenericOp op, const RowKernel &kernel);

/// For `operand` of an op of `kernel`: per dimension of its buffer, the
/// kernel dimension it runs along (0 to outer.size() - 1 the outer ones,
/// outer.size() the row), or -1 where it is only ever indexed by 0 (a unit
/// dimension, or one along a loop of extent 1); nothing for other
/// indexings.
std::optional<llvm::SmallVector<int64_t>>
getRowKernelDims(linalg::LinalgOp op, OpOperand &operand,
                 const RowKernel &kernel);

/// Checks that `ops` (linalg.fill and linalg.generic ops, in program order)
/// form a row kernel, and its shape; `why` otherwise.
FailureOr<RowKernel> analyzeRowKernel(ArrayRef<Operation *> ops,
                                      std::string &why);

/// The row kernels among the ops of `block` whose rows, rounded up to a
/// power of two, hold at most `maxRowElements` elements; the `excluded`
/// ops join none.
llvm::SmallVector<RowKernel>
findRowKernels(Block &block, int64_t maxRowElements,
               const llvm::SmallPtrSetImpl<Operation *> &excluded);

/// The loop positions of `map`'s results when every result is a plain loop
/// index (an operand indexed (d2, d0) gives {2, 0}), else nothing.
std::optional<llvm::SmallVector<unsigned>> getPlainDims(AffineMap map);

/// The buffer that `value` is a view of (through expand/collapse_shape,
/// subview, cast and other view-like ops), or `value` itself.
Value getBaseBuffer(Value value);

/// The store of `outer` when it is a fill nest: one loop per dimension of
/// the stored buffer (static shape, identity layout), each over all of it
/// with step 1, around a single identity-map store of a value defined
/// outside the nest (S2's form of a linalg.fill); null otherwise.
affine::AffineStoreOp matchFillNest(affine::AffineForOp outer);

/// Whether the only memory effects inside `root` are those of affine loads
/// and stores, and allocations: nothing else can touch a buffer that an
/// analysis of those accesses reasons about.
bool hasOnlyAffineMemoryEffects(Operation *root);

/// Carries each (read, write) pair of `accesses`, a read of one loop-
/// invariant element (or vector) directly in `loop`'s body and a later
/// write of the same element whose stored value is its first operand
/// (affine.load/store, vector.transfer_read/write), through a new iter_args
/// value of `loop`: the read is cloned before the loop, the write after it
/// with the loop's result. `loop` is replaced by the new loop.
LogicalResult
carryThroughIterArgs(RewriterBase &rewriter, affine::AffineForOp &loop,
                     ArrayRef<std::pair<Operation *, Operation *>> accesses);

/// Rewrites `exprs`, indices into `view`, into indices into the view's
/// source, and returns the source; fails, leaving `exprs` alone, unless
/// `view` is a static memref.subview of a buffer with the identity layout,
/// a static memref.expand_shape, or a static memref.collapse_shape whose
/// groups each merge one dimension with unit ones (pb-fold-views).
FailureOr<Value> foldViewIndices(Operation *view,
                                 llvm::SmallVectorImpl<AffineExpr> &exprs);

/// The values of `map`'s results at `operands`: the operand itself for a
/// plain dimension, else an affine.apply of that result (a convolution's
/// oh * stride + kh).
llvm::SmallVector<Value> applyIndexingMap(OpBuilder &b, Location loc,
                                          AffineMap map, ValueRange operands);

/// The target-table element type of an MLIR scalar type (f32, f16, bf16,
/// f64, i8, i32), else nothing.
std::optional<ElementType> getTargetElementType(Type type);

/// Adds stage `stage` ("s1", "s2", "s3" or "host") to `pm`; false for an
/// unknown stage name.
/// Ablation switches of the stage pipelines (DESIGN.md section 1).
struct PipelineOptions {
  /// Fusion in S3 (pb-fuse-reductions and pb-affine-fusion).
  bool fusion = true;
  /// pb-fuse-reductions (reduce-reduce fusion of row-wise nests), when
  /// `fusion` is on.
  bool reduceFusion = true;
  /// Matrix-unit mapping of contractions in S3.
  bool matrixUnits = true;
  /// f32 contractions may run on tf32 matrix units (10-bit mantissa
  /// products, f32 accumulation), as PyTorch's allow_tf32 permits.
  bool allowTF32 = false;
  /// f32 convolutions (only) may run on tf32 matrix units, as PyTorch's
  /// torch.backends.cudnn.allow_tf32 permits.
  bool allowTF32Convolutions = false;
  /// Matrix units issued by several subgroups together (warpgroups) may be
  /// chosen; off, only warp-level units are.
  bool warpgroupUnits = true;
  /// Constant B operands of contractions (a frozen model's weights) are
  /// packed at compile time (pb-map-matrix-units).
  bool packConstants = true;
  /// The rewrites of S1 and S2 that only make the code faster
  /// (pb-hoist-invariants, pb-pad-in-place); off in the reference
  /// pipeline, so that its results check them.
  bool optionalRewrites = true;
  /// GPU back ends keep each kernel module's IR as it is before the
  /// vendor's lowering to its LLVM dialect (NVIDIA: a `pb.emulation_ir`
  /// string on every gpu.module, which S5 moves into the payload), so that
  /// the runtime can run the kernels on the CPU through an emulator. Off
  /// in pb-opt's S4 output unless asked for; on in pbCompile's artifacts.
  bool emulationIR = false;
  /// CPU back ends time every kernel call at run time (pb-kernel-sites'
  /// `profile`); the runtime reads the counters back.
  bool profile = false;
  /// NVIDIA code generation: "ptx" (S4 maps S3's loops to threads; PTX
  /// and ptxas) or "tile-ir" (contraction kernels as CUDA Tile IR,
  /// assembled by tileiras; the rest as "ptx", docs/TileIR.md).
  std::string codegen = "ptx";
};

/// The stage names addStagePipeline knows, in pipeline order.
llvm::ArrayRef<llvm::StringRef> getStageNames();
bool isKnownStage(llvm::StringRef stage);

/// Adds the passes of `stage` (s1, s2, s3, s4 or host) to `pm`. s4 is the
/// chip vendor's own and needs `chip`; it fails when no backend of that
/// vendor is built in. Fails on unknown stages.
LogicalResult addStagePipeline(OpPassManager &pm, llvm::StringRef stage,
                               const ChipDesc *chip = nullptr,
                               const PipelineOptions &options = {});

#define GEN_PASS_REGISTRATION
#include "pb/Transforms/Passes.h.inc"

} // namespace mlir::pb

#endif // PB_TRANSFORMS_PASSES_H
