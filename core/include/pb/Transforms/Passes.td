//===- Passes.td - PolyBlocks core passes ------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_TRANSFORMS_PASSES_TD
#define PB_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Core passes (keep alphabetical)
//===----------------------------------------------------------------------===//

def PBAttachTargetPass : Pass<"pb-attach-target", "ModuleOp"> {
  let summary = "Attach #pb.target to the module";
  let description = [{
    Resolves `target` against the registry generated from the chips' .td
    files and attaches it to the module as `pb.target`. Host-resolved names
    (`cpu-host`) are resolved against the running CPU and the concrete chip
    is attached, so the IR states what it was compiled for. `pb-opt
    --target=NAME` runs this pass before any other.

    Before (with `target=nvidia-sm90`):
    ```mlir
    module {}
    ```
    After:
    ```mlir
    module attributes {pb.target = #pb.target<"nvidia-sm90">} {}
    ```
    A module that already names a different target is an error.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"",
           "registered target name (see pb-opt --list-targets)">,
  ];
  let dependentDialects = ["::mlir::pb::PBDialect"];
}

def PBAffineFusionPass : Pass<"pb-affine-fusion", "func::FuncOp"> {
  let summary = "Producer-consumer and sibling fusion of affine nests, sized "
                "by the target's memory";
  let description = [{
    Stage S3. Runs upstream's slicing-based affine loop fusion
    (`affine-loop-fusion`) with its local-buffer threshold and fast memory
    space taken from the target: a fused nest may keep a private buffer only
    while it fits the chip's innermost on-chip buffer level (its scratchpad
    if it has one, else its innermost cache), instead of upstream's fixed
    defaults. With `--pb-explain` it reports the figures it used and how
    many nests remain.

    Before: a matmul nest followed by a bias+relu nest over a temporary.
    After: one nest; the temporary is gone or shrunk to a private buffer.
  }];
  let options = [
    Option<"computeTolerance", "compute-tolerance", "double", "0.30",
           "extra redundant computation fusion may add (fraction)">,
    Option<"maxNests", "max-nests", "unsigned", "128",
           "functions with more sibling loop nests in one block are not "
           "fused: "
           "upstream fusion's dependence-path search over them takes "
           "minutes (densenet121: over 100 s)">,
    Option<"maxDependencePaths", "max-dependence-paths", "uint64_t", "100000",
           "functions with a block of more dependence paths between its "
           "loop nests are not fused: upstream fusion's dependence-path "
           "search walks them one by one">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PBCheckInputContractPass : Pass<"pb-check-input-contract", "ModuleOp"> {
  let summary = "Reject input outside the input contract, naming the op";
  let description = [{
    The first pass of every compilation through the C API and pb-compile
    (DESIGN.md section 3). Accepts a module of `func.func` whose arguments
    and results are ranked tensors of f16, bf16, f32, f64, i1, i8, i16, i32
    or i64, and whose bodies use only the `func`, `linalg`, `tensor`,
    `arith` and `math` dialects on such tensors and scalars. Arguments may
    also be `index` scalars: the entry's sizes, given at run time. A
    dynamic dimension (`?`) of an argument or result must say which size
    argument holds it: the attribute `pb.dim_args` (`array<i64>`, one per
    dimension) gives that argument's position for each dynamic dimension
    and -1 for each static one (docs/DynamicShapes.md). Anything else is an
    error at the offending op that names it and the reason (a dynamic
    dimension no size argument gives, unsupported element type, dialect
    outside the contract), so that no later stage sees input it was not
    written for.

      func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32>
      // error: argument 0 of 'f' has a dynamic shape (tensor<?x4xf32>)
      // but no pb.dim_args ...
      func.func @g(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                   %n: index)
          -> (tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>})
      // accepted: dimension 0 of %x and of the result is %n

    A result may carry `pb.in_place = n : i64`: it is the new value of
    argument n (a KV cache that the function updates), which must be a
    tensor of the result's type and sizes that no other result updates
    (pb/Transforms/InPlace.h).
  }];
}

def PBBindDimsPass : Pass<"pb-bind-dims", "func::FuncOp"> {
  let summary = "Replace the dynamic dimensions of a function's arguments "
                "by the size arguments that hold them";
  let description = [{
    Stages S1 and S2. A `tensor.dim` or `memref.dim` of a function argument
    whose dimension is dynamic and named by the argument's `pb.dim_args`
    (pb-check-input-contract) becomes the size argument it names, so that
    every size the code computes is an expression of the entry's sizes and
    equal sizes are one SSA value (loops over them fuse, their bounds
    compare equal). Runs first in S1, and in S2 after bufferization, whose
    out-parameters keep their results' `pb.dim_args`.

      func.func @f(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>},
                   %n: index) {
        %d = tensor.dim %x, %c0 : tensor<?x4xf32>
        %e = tensor.empty(%d) : tensor<?x4xf32>
      ->
        %e = tensor.empty(%n) : tensor<?x4xf32>

    A `pb.dim_args` that does not fit its argument (rank, a position that is
    no `index` argument, a size for a static dimension) is an error.
  }];
}

def PBWriteResultsInPlacePass
    : Pass<"pb-write-results-in-place", "func::FuncOp"> {
  let summary = "Compute a result of run-time size in its out-parameter, "
                "not in an allocation copied there";
  let description = [{
    Stage S2, after `buffer-results-to-out-params` and pb-bind-dims.
    Upstream's pass makes each result an out-parameter; with
    `hoist-static-allocs` a statically shaped result's allocation becomes
    the out-parameter itself, but one of run-time size stays an allocation
    that a `memref.copy` copies into the out-parameter at the end: a whole
    extra write and read of the result. Here such an allocation, in the
    function's entry block, whose sizes are the out-parameter's (the size
    arguments its `pb.dim_args` names) and whose last use is that copy, is
    replaced by the out-parameter, which nothing else uses, and the copy
    goes.

      %a = memref.alloc(%n) : memref<?x4xf32>
      ... writes %a ...
      memref.copy %a, %out : memref<?x4xf32> to memref<?x4xf32>
      ->
      ... writes %out ...

    An out-parameter whose result updates an argument in place
    (`pb.in_place`, which it inherits from its result; the caller passes
    the argument's buffer for both) is left unwritten: where bufferization
    wrote the update into the argument's buffer, the copy of the argument
    to the out-parameter goes; where it computed the update elsewhere (the
    old value is read afterwards), the out-parameter's uses move to a new
    allocation, copied into the argument at the end of the function.
  }];
}

def PBConvToChannelsLastPass
    : Pass<"pb-conv-to-channels-last", "func::FuncOp"> {
  let summary = "Rewrite NCHW/FCHW convolutions as NHWC/HWCF ones between "
                "transposes";
  let description = [{
    Stage S1. A `linalg.conv_2d_nchw_fchw` becomes
    `linalg.conv_2d_nhwc_hwcf` on transposed operands, its result
    transposed back. In the channels-last form the output channels are the
    innermost dimension of the filter and of the result, which is what the
    matrix-unit mapping of S3 needs (vector loads along N); elementwise
    fusion then folds the transposes into the neighbouring elementwise ops,
    so a chain of convolutions and activations mostly stays channels-last.

      %r = linalg.conv_2d_nchw_fchw ins(%x, %w) outs(%o)
      ->
      %x2 = linalg.transpose ins(%x) permutation = [0, 2, 3, 1]
      %w2 = linalg.transpose ins(%w) permutation = [2, 3, 1, 0]
      %o2 = linalg.transpose ins(%o) permutation = [0, 2, 3, 1]
      %r2 = linalg.conv_2d_nhwc_hwcf ins(%x2, %w2) outs(%o2)
      %r = linalg.transpose ins(%r2) permutation = [0, 3, 1, 2]

    On chips whose matrix units are per thread (CPUs), the contraction's
    kernel packs the filter itself and can read it in any layout: a filter
    that is not a constant is then left FCHW and the convolution becomes a
    multiply-accumulate `linalg.generic` over (n, oh, ow, f, kh, kw, c)
    whose filter map is (f, c, kh, kw), so that a model whose weights are
    arguments pays no weight transpose per call. Constant filters (frozen
    models) are still transposed, a transpose S1 folds at compile time.

    A depthwise `linalg.conv_2d_ngchw_gfchw` (one input and one output
    channel per group: PyTorch's groups == channels, as in MobileNet and
    EfficientNet) becomes a channels-last generic over (n, oh, ow, kh, kw,
    c) with the channel loop innermost and parallel (vectorized), the filter
    read in place and its input and result transposed around it, which
    elementwise fusion and pb-propagate-layouts fold into the neighbours.
    A grouped one with more than one channel per group (ResNeXt, RegNet)
    becomes a multiply-accumulate generic over (n, oh, ow, g, f, kh, kw, c)
    reading the input as (n, h, w, g, c) and writing (n, oh, ow, g, f),
    transposed around it the same way: per group a GEMM whose N (the
    group's output channels) is innermost, which pb-map-matrix-units runs
    as one batched micro-kernel over the groups. Its filter is read in
    place (g, f, c, kh, kw) under the same rule as above, else transposed
    to (g, kh, kw, c, f).
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def PBHoistInvariantsPass : Pass<"pb-hoist-invariants", "func::FuncOp"> {
  let summary = "Compute a generic's subexpressions that vary with few of "
                "its loops once per value";
  let description = [{
    Stage S1, after elementwise fusion. A subexpression of a
    `linalg.generic`'s body that depends on a strict subset of its loops
    (through the indexing maps of the inputs it reads, or linalg.index) and
    holds an expensive op (a division, a remainder, any math op) becomes a
    generic of its own over those loops; the original reads its result as
    a new input, broadcast along the other loops. Done when the original
    would compute each value at least 8 times. A batch norm in inference
    then takes 1 / sqrt(var + eps) once per channel instead of once per
    element of the feature map. The arithmetic is unchanged (no
    reassociation): results are bitwise the same.

    ```mlir
    %y = linalg.generic {indexing_maps = [(n, h, w, c) -> (n, h, w, c),
                                          (n, h, w, c) -> (c), ...]}
           ins(%x, %var : ...) outs(...) {
      %s = arith.addf %v, %eps ; %r = math.sqrt %s ; %i = arith.divf %one, %r
      %d = arith.subf %in, %m ; %o = arith.mulf %d, %i ...
    ->
    %inv = linalg.generic {indexing_maps = [(c) -> (c), (c) -> (c)]}
             ins(%var : tensor<32xf32>) outs(%e : tensor<32xf32>) {
      %s = arith.addf %v, %eps ; %r = math.sqrt %s ; %i = arith.divf %one, %r
    %y = linalg.generic {... (n, h, w, c) -> (c)} ins(%x, ..., %inv) ... {
      %d = arith.subf %in, %m ; %o = arith.mulf %d, %i ...
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def PBFoldTransposesPass : Pass<"pb-fold-transposes", "func::FuncOp"> {
  let summary = "Fold a transpose of B into the matmul that reads it, on "
                "chips with matrix units";
  let description = [{
    Stage S1, after elementwise fusion. On chips with matrix units (GPU
    tensor cores read B either as (k, n) or (n, k); a CPU micro-kernel's
    packing reads (n, k) in lanes x lanes squares transposed in
    registers), a `linalg.matmul` or `linalg.batch_matmul` whose B
    is a `linalg.transpose` of its last two dimensions becomes a
    `linalg.generic` reading the transpose's input with the swapped map;
    the transpose disappears when nothing else uses it (a linear layer's
    weight no longer transposed on every call).

    ```mlir
    %t = linalg.transpose ins(%w : tensor<96x64xf32>) outs(%e) permutation = [1, 0]
    %c = linalg.matmul ins(%x, %t : ...) outs(%acc : ...)
    ->
    %c = linalg.generic {indexing_maps = [(m, n, k) -> (m, k),
                                          (m, n, k) -> (n, k),
                                          (m, n, k) -> (m, n)], ...}
           ins(%x, %w : ...) outs(%acc : ...)
    ```
    Other chips (CPUs, whose micro-kernel wants N innermost in B) are left
    unchanged.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def PBPropagateLayoutsPass : Pass<"pb-propagate-layouts", "func::FuncOp"> {
  let summary = "Produce each elementwise or pooling result in the layout "
                "its inputs have, so that layouts flow between convolutions";
  let description = [{
    Stage S1, after elementwise fusion. A `linalg.generic` whose result is
    indexed by its leading loops in order (parallel; reductions such as a
    pooling window after them) but whose inputs are mostly read through one
    permutation of those loops is a transpose in disguise: after
    pb-conv-to-channels-last, a batch norm that reads an NHWC convolution
    result and writes NCHW. When some user of its result reads it as a
    generic input, pads it (the fill + extract_slice + copy +
    insert_slice of the frontends) for such users, or reshapes it for
    non-convolution generics with collapse_shape / expand_shape ops that
    only add or drop unit dimensions (the frontends' squeeze-excitation
    views; those generics then read it directly, and a reduction over it
    gets the loop along its innermost dimension innermost), the generic
    produces its result in its inputs' order instead, with its loops
    reordered to match, and the permutation moves into the users' indexing
    maps (the
    padding is rebuilt in the new order). A result written with trailing
    unit dimensions that only collapse_shapes read, merging them away,
    loses those loops (upstream dropUnitDims), so that its innermost loop
    walks it contiguously. Applied from the top down, a
    CNN's activations stay channels-last from its first convolution to its
    last consumer. Pooling ops (`linalg.pooling_nchw_max/sum`) are
    generalized first so that they take part. The propagation is total:
    any other use of the result (an op the pass does not know, a return, a
    reshape that merges dimensions, another op's init) reads one transpose
    of the new result back to the old layout, at its boundary; a result
    with no use that reads the new layout directly keeps its layout, and
    so does a generic with an index body. `--pb-explain` reports each
    change and the generics that still read an operand transposed.

    ```mlir
    %bn = linalg.generic {indexing_maps = [(n, c, h, w) -> (n, h, w, c),
                                           (n, c, h, w) -> (n, c, h, w)]}
            ins(%conv : tensor<1x8x8x64xf32>) -> tensor<1x64x8x8xf32>
    %y = linalg.generic {indexing_maps = [(i, j, k, l) -> (i, j, k, l), ...]}
            ins(%bn : tensor<1x64x8x8xf32>) ...
    ->
    %bn = linalg.generic {indexing_maps = [(n, h, w, c) -> (n, h, w, c),
                                           (n, h, w, c) -> (n, h, w, c)]}
            ins(%conv : tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32>
    %y = linalg.generic {indexing_maps = [(i, j, k, l) -> (i, k, l, j), ...]}
            ins(%bn : tensor<1x8x8x64xf32>) ...
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def PBFoldViewsPass : Pass<"pb-fold-views", "func::FuncOp"> {
  let summary = "Fold static subviews and expand_shapes into the affine "
                "accesses that go through them";
  let description = [{
    Stage S2, after the lowering to affine loops. An `affine.load` or
    `affine.store` whose memref is a static `memref.subview` (rank-reducing
    or not) or `memref.expand_shape` of a buffer with the identity layout
    accesses that buffer instead, the view composed into its map; views of
    views fold in turn, and views left unused are erased. Upstream's
    `fold-memref-alias-ops` leaves affine accesses alone. S3 then sees
    plain buffers: the vectorizer no longer skips the strided accesses of
    padding copies, and fusion's dependence analysis, which compares
    buffers by SSA value, sees every access of a buffer.
    `memref.collapse_shape` views are kept: their indices would need
    floordiv/mod, which the affine vectorizer cannot prove contiguous.

    ```mlir
    %s = memref.subview %a[0, 1, 1, 0] [1, 56, 56, 64] [1, 1, 1, 1]
    affine.store %v, %s[0, %i, %j, %c]
    ->
    affine.store %v, %a[0, %i + 1, %j + 1, %c]
    ```
  }];
  let dependentDialects = ["affine::AffineDialect", "memref::MemRefDialect"];
}

def PBDecomposeAggregatesPass
    : InterfacePass<"pb-decompose-aggregates", "mlir::FunctionOpInterface"> {
  let summary = "Decompose composite linalg ops into their primitive ops";
  let description = [{
    Stage S1. Rewrites every op implementing linalg's
    `AggregatedOpInterface` (for example `linalg.softmax`) into the ops it
    stands for (a max reduction, a subtract-exp, a sum reduction and a
    divide), so that later stages fuse and tile them like any other
    elementwise or reduction kernel.

    Before:
    ```mlir
    %y = linalg.softmax dimension(1) ins(%x : tensor<2x16xf32>)
                                     outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
    ```
    After: `linalg.generic` reductions and elementwise ops, no
    `linalg.softmax`. An aggregate op that fails to decompose is an error.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PBFuseReductionsPass : Pass<"pb-fuse-reductions", "func::FuncOp"> {
  let summary = "Fuse the nests of a row-wise computation (softmax, "
                "layernorm) at their common parallel row loops";
  let description = [{
    Stage S3, before `pb-affine-fusion`: the paper's reduce-reduce fusion
    on loops. Consecutive top-level nests are fused at their leading loops
    ("the band") when those loops have the same constant bounds, are
    parallel in each nest, and every buffer one nest writes and the other
    accesses is subscripted, in all their accesses, by band loop k's index
    alone at one position (views folded to the base buffer): iterations of
    the band then touch disjoint rows, and fusion keeps the order of the
    accesses within a row. Loops that run once are promoted first. Pure ops
    and allocations between the nests move above the fused nest;
    deallocations of buffers the next nest does not access stay after it;
    any other op ends the run.

    Before: fill max; reduce max over j; exp(x - max); fill sum; reduce sum
    over j; divide, six nests over rows i.
    After: one nest over i whose body holds the six inner loops over j.
  }];
  let dependentDialects = ["affine::AffineDialect", "memref::MemRefDialect"];
}

def PBPromoteAccumulatorsPass
    : Pass<"pb-promote-accumulators", "func::FuncOp"> {
  let summary = "Carry reductions accumulated in memory through loop "
                "iteration arguments";
  let description = [{
    Stage S3. In a loop whose body loads and stores one element of a buffer
    at a subscript that does not change with the loop (a row's running
    maximum or sum), and accesses that buffer nowhere else, the element is
    loaded once before the loop, carried through an `iter_args` value and
    stored once after it; inner loops first, so a reduction over several
    loops is carried through all of them. The upstream vectorizer
    vectorizes such loops as reductions; through memory it cannot.

    ```mlir
    affine.for %j = 0 to 1024 {
      %a = affine.load %m[%i]
      %v = arith.maximumf %a, %x
      affine.store %v, %m[%i]
    }
    ->
    %a0 = affine.load %m[%i]
    %r = affine.for %j = 0 to 1024 iter_args(%a = %a0) -> (f32) {
      %v = arith.maximumf %a, %x
      affine.yield %v : f32
    }
    affine.store %r, %m[%i]
    ```
  }];
  let dependentDialects = ["affine::AffineDialect"];
}

def PBFuseElementwisePass : Pass<"pb-fuse-elementwise"> {
  let summary = "Fuse elementwise producers into consumers, keeping contractions";
  let description = [{
    Stage S1. Upstream's elementwise fusion, reshape folding by expansion and
    linalg constant folding (the patterns of linalg-fuse-elementwise-ops),
    with a cost function that keeps multiply-accumulate ops intact: a
    producer that computes something is not fused into a contraction
    (q * scale stays apart from q @ k^T, which S3 then maps onto the matrix
    units); producers that only move data (transposes, broadcasts) still
    fuse. A producer with several uses is never fused, as upstream.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def PBFuseAttentionPass : Pass<"pb-fuse-attention", "func::FuncOp"> {
  let summary = "Compute q @ k^T, the softmax and @ v per block of rows, in "
                "one parallel loop";
  let description = [{
    Stage S2, before bufferization: attention fusion. A contraction `o = p @
    v` whose `p` is computed from another contraction `s = q @ k^T` by
    linalg.generic ops (at least one of them a reduction: the softmax) and
    reshapes, none of them used elsewhere, is tiled with upstream's
    tile-and-fuse (TilingInterface) into an `scf.forall` over its batch loops
    and blocks of its rows; the ops from `s` to `p`, and the fills they
    start from, are computed inside it for the block's rows only, all keys at
    once. The scores and the softmax's intermediates are then blocks of
    rows x keys, never written whole to memory.

    The block holds as many rows as half the per-core cache (the target's
    second-smallest cache level) keeps with a row of scores and one of
    probabilities, and at most so many that the loop has eight tasks (core
    counts are known at run time only). Only on targets whose thread-scope
    matrix units take the element type: the contractions then become
    micro-kernels that run inside a task (pb-map-matrix-units).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "affine::AffineDialect",
                           "arith::ArithDialect"];
}

def PBPadInPlacePass : Pass<"pb-pad-in-place", "func::FuncOp"> {
  let summary = "Write padded tensors in place and fill only their border";
  let description = [{
    Stage S2, before bufferization. The frontends pad a tensor by filling
    the whole padded tensor, copying the value into a slice of it and
    inserting the slice back, which bufferizes to two passes over the padded
    buffer (every padded convolution input, on every call). For each such
    insert:
    - when the copied value is the only use of a linalg op's result and the
      op does not read its destination, the op writes the slice itself and
      the copy goes;
    - the padded tensor gets its own `tensor.empty`, and only its border is
      filled: one `linalg.fill` per padded side, on disjoint slices, since
      the insert overwrites the interior and nothing reads it before.
    Pads of one shape that CSE left sharing the fill and the slice of its
    interior first get a slice each.

      %f = linalg.fill ins(%z) outs(%e : tensor<6x6xf32>)
      %s = tensor.extract_slice %f[1, 1] [4, 4] [1, 1]
      %x = linalg.generic ... outs(%e2 : tensor<4x4xf32>)
      %c = linalg.copy ins(%x) outs(%s)
      %p = tensor.insert_slice %c into %f[1, 1] [4, 4] [1, 1]
      ->
      %e = tensor.empty() : tensor<6x6xf32>
      (fills of the slices [0, 0] [1, 6], [5, 0] [1, 6], [1, 0] [4, 1] and
       [1, 5] [4, 1], inserted into %e in turn: %b)
      %s = tensor.extract_slice %b[1, 1] [4, 4] [1, 1]
      %x = linalg.generic ... outs(%s)
      %p = tensor.insert_slice %x into %b[1, 1] [4, 4] [1, 1]
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def PBGroupRowKernelsPass : Pass<"pb-group-row-kernels", "func::FuncOp"> {
  let summary = "Keep softmax-like runs of row-wise linalg ops whole for a "
                "tile-level code generator";
  let description = [{
    Stage S2, on buffers, before pb-lower-to-affine, in pipelines whose
    target generates tile-level code (`codegen=tile-ir`). Each run of
    linalg ops over the same rows (reductions along the innermost loop,
    the elementwise ops before, between and after them, the fills of their
    accumulators; only allocations, deallocations and views between them)
    becomes a row kernel: its ops get `pb.row_kernel = <id>`, which
    pb-lower-to-affine keeps as linalg ops, and the target's S4 emits each
    kernel as one tile kernel. Runs whose rows, rounded up to a power of
    two, exceed `max-row-elements`, and the epilogues of contractions, stay
    loops.

      %m = max over rows of %x ; %e = exp(%x - %m) ; %s = sum of %e ;
      %y = %e / %s
      ->  the same four linalg ops, each {pb.row_kernel = 0}
  }];
  let options = [
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"4096",
           "Longest row (rounded up to a power of two) a kernel may hold">,
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def PBCloneFillsPass : Pass<"pb-clone-fills", "func::FuncOp"> {
  let summary = "Give every use of a linalg.fill its own fill";
  let description = [{
    Stage S2, before bufferization. A `linalg.fill` on tensors with several
    uses (CSE merges the identical zero accumulators of a model's layers)
    is cloned, with its `tensor.empty` destination, in front of every use
    but the first. Uses through a slice (the extract_slice and
    insert_slice of a padded tensor) stay on the fill, so that they
    bufferize into one buffer; the other uses then all get clones. Shared, the bufferizer filled one buffer and copied it
    into a fresh one for every writer, and S3 saw a copy before each
    contraction instead of the fill that `pb-map-matrix-units` folds into
    the micro-kernel. (With one destination for all clones, every layer's
    contraction wrote one buffer in place, and its epilogue could no longer
    be fused.)

      %f = linalg.fill ins(%z) outs(%e)
      %a = linalg.matmul ins(...) outs(%f)
      %b = linalg.matmul ins(...) outs(%f)
      ->
      %f = linalg.fill ins(%z) outs(%e)
      %a = linalg.matmul ins(...) outs(%f)
      %e2 = tensor.empty()
      %f2 = linalg.fill ins(%z) outs(%e2)
      %b = linalg.matmul ins(...) outs(%f2)
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def PBDistinctResultsPass : Pass<"pb-distinct-results", "func::FuncOp"> {
  let summary = "Give every result of an entry its own tensor";
  let description = [{
    Stage S2, before bufferization. When a public function returns the
    same tensor at several positions, every repeat becomes a `linalg.copy`
    into a fresh tensor, so that each result has its own buffer: results
    become caller-owned out-params, one per position.

      return %r, %r
      ->
      %e = tensor.empty()
      %c = linalg.copy ins(%r) outs(%e)
      return %r, %c
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def PBDumpStagePass : Pass<"pb-dump-stage", "ModuleOp"> {
  let summary = "Write the module to a file (stage dumps)";
  let description = [{
    Writes the module, verified, to `file` in the textual form pb-opt reads
    back. `pb-opt --pb-dump-after-stage=DIR` inserts one after each stage of
    `--pb-pipeline`, writing `DIR/<n>-<stage>.mlir`. A file that cannot be
    written is an error.
  }];
  let options = [
    Option<"file", "file", "std::string", "", "output file">,
  ];
}

def PBEmulateBF16Pass : Pass<"pb-emulate-bf16"> {
  let summary = "Compute bf16 arithmetic in f32 and convert to bf16 with "
                "integer operations";
  let description = [{
    Stage S4 of the CPU pipeline, and the `host` reference lowering. x86
    has no bf16 arithmetic: LLVM's back end computes a bf16 `fadd`,
    `fmul` or `llvm.sqrt` in f32 and rounds the result back with a call to
    compiler-rt's `__truncsfbf2` (from f64: `__truncdfbf2`; from f64 to
    f16, which F16C cannot convert, and for an f16 fma, which LLVM computes
    in f64: `__truncdfhf2`), which nothing need define where a CPU artifact
    is loaded. After this pass LLVM has no such conversion to make:

    - every arith and math op that computes on bf16 (scalars, vectors,
      tensors; `arith.select`, bitcasts and constants only move bits and
      stay), and the vector dialect's contractions, reductions and
      `vector.fma`, computes in f32 between an `arith.extf` of its operands
      and an `arith.truncf` of its results (upstream's
      `arith-emulate-unsupported-floats`, here also applied to the math
      dialect, its conversions not marked `contract`, which would let
      extf(truncf(x)) fold): each op's result is rounded to bf16 to nearest
      even as the program says (a named linalg op whose body this changes,
      a bf16 `linalg.matmul` left to S4 by `pipeline=reference`, first
      becomes a `linalg.generic`);
    - a `math.fma` or `vector.fma` on f16 computes in f64 (as LLVM would:
      the product is exact), its result truncated to f16 as below;
    - an `arith.truncf` from f64 to f16 or bf16 rounds to f32 to odd
      (toward zero, the last bit set when inexact), then to nearest even:
      one correct rounding, not two;
    - `arith.extf` from bf16 to f32 and `arith.truncf` from f32 to bf16
      become integer operations (upstream's `arith-expand{include-bf16}`:
      a shift; a rounding bias to nearest even, NaNs to a quiet NaN).

    IR with no bf16 value, no such truncation and no f16 fma is left
    untouched (other f16 arithmetic stays: LLVM computes it in f32 and F16C
    converts in hardware).

      %s = arith.addf %a, %b : vector<32xbf16>
      ->  %x = arith.extf %a ...  %y = arith.extf %b ...  (shifts)
          %t = arith.addf %x, %y : vector<32xf32>
          %s = arith.truncf %t ...                        (a rounding bias)
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect"];
}

def PBBF16MemoryAsI16Pass : Pass<"pb-bf16-memory-as-i16"> {
  let summary = "Masked and gathered bf16 vector accesses and bf16 lane "
                "insertions as i16 ones";
  let description = [{
    Stage S4 of the CPU pipeline, last, on the LLVM dialect. A masked load,
    masked store, gather or scatter of a bf16 vector (a
    `vector.transfer_read` past a buffer's end, a masked tail), and an
    insertelement or extractelement of a bf16 lane (a transfer_read
    unrolled lane by lane), is made on i16 lanes with bitcasts around it:
    the bits are the same. x86 without AVX512-BF16 has no bf16 vector type; LLVM
    scalarizes such an access element by element and rebuilds the vector
    through f32, rounding each element back with a call to compiler-rt's
    `__truncsfbf2`, which nothing need define where a CPU artifact is
    loaded (pb-emulate-bf16 leaves no such rounding in the arithmetic).

      %v = llvm.intr.masked.load %p, %m, %z {alignment = 2 : i32}
          : (!llvm.ptr, vector<8xi1>, vector<8xbf16>) -> vector<8xbf16>
      ->  %zi = llvm.bitcast %z : vector<8xbf16> to vector<8xi16>
          %vi = llvm.intr.masked.load %p, %m, %zi ... -> vector<8xi16>
          %v = llvm.bitcast %vi : vector<8xi16> to vector<8xbf16>
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def PBApproximateMathPass : Pass<"pb-approximate-math"> {
  let summary = "Replace f32 transcendental functions by polynomial "
                "approximations";
  let description = [{
    Stage S4, first pass of the CPU and NVIDIA pipelines. Rewrites f32
    `math.exp`, `math.expm1`, `math.log`, `math.log1p`, `math.log2`,
    `math.tanh`, `math.erf` and `math.atan` (scalars and vectors) into
    arithmetic (upstream's polynomial approximations, accurate to a few
    ulp): on CPUs they stay in vector registers instead of becoming one libm
    call per element; in GPU kernels they do not call libdevice
    (`__nv_expf`, ...), so the PTX does not depend on where the CUDA
    toolkit is installed. It works on any op: the CPU S4 runs it per
    kernel function, in parallel.

      %y = math.exp %x : vector<16xf32>
      ->  range reduction, a polynomial, an exponent bit trick (arith ops)
  }];
  let dependentDialects = ["arith::ArithDialect", "vector::VectorDialect",
                           "math::MathDialect"];
}

def PBLowerToAffinePass : Pass<"pb-lower-to-affine", "func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to affine loop nests, keeping "
                "contractions for S3";
  let description = [{
    Stage S2. Rewrites every linalg op on memrefs into an affine loop nest
    (upstream `linalgOpToAffineLoops`), except contractions (matmul, batch
    matmul and generic ops with a multiply-accumulate body), which stay
    linalg ops so that S3 can map them onto the target's matrix units with
    their operands' roles still known. S3 lowers whatever it does not map.
    `memref.copy` becomes a loop nest too (between strided views it would
    otherwise be a call into MLIR's runner library).

      linalg.fill ins(%z) outs(%c)            ->  affine.for ... affine.store
      linalg.matmul ins(%a, %b) outs(%c)      ->  unchanged

    With `contractions=1` (S3, after pb-map-matrix-units) contractions and
    their epilogues are lowered too, except those tagged `pb.matrix_unit`,
    which stay for the target's S4. The ops of row kernels
    (`pb.row_kernel`, pb-group-row-kernels) always stay for S4.
  }];
  let options = [
    Option<"contractions", "contractions", "bool", /*default=*/"false",
           "Also lower contractions not tagged pb.matrix_unit">,
  ];
  let dependentDialects = ["affine::AffineDialect"];
}

def PBMapMatrixUnitsPass : Pass<"pb-map-matrix-units", "ModuleOp"> {
  let summary = "Map contractions onto the target's thread-scope matrix "
                "units as packed, register-tiled micro-kernels";
  let description = [{
    Stage S3. For each linalg contraction on memrefs with one M, one N and
    one K dimension (plus batch dimensions) whose element types match a
    thread-scope matrix unit of the target lowered as a vector outer
    product (a broadcast-FMA register tile on CPUs), generates the
    Goto/BLIS algorithm with every size taken from the target's tables:

    * register tile MR x NR: NR is two unit widths (vector registers); MR
      is as many rows as keep the accumulators within 3/4 of the register
      file, the rest holding B's vectors and A's broadcast;
    * KC: the K extent of a packed B micro-panel (KC x NR) that fits half
      of the innermost cache; MC: the rows of a packed A block (MC x KC)
      that fit half of the next cache; NC: the columns of a packed B panel
      that fit half of the outermost cache;
    * B panels are packed (zero-padded) in parallel, A blocks are packed by
      each thread, and the MC loop is a parallel loop marked with the
      compute level below the root (cores);
    * the micro-kernel keeps MR x NR/lanes accumulators in vector registers
      across the K loop: per k, NR/lanes vector loads of B, MR broadcasts
      of A and MR x NR/lanes FMAs. The accumulators start at zero; C's tile
      is prefetched before the K loop and added after it;
    * a nest that fills all of C with one value right before the
      contraction (S2's form of linalg.fill) is removed: the first K block
      adds the value to the accumulators and stores without reading C;
    * a B that is a constant (a `memref.global constant` with a dense
      initial value, read through `memref.get_global` and reshapes: a
      frozen model's weights) is packed at compile time into a new constant
      global laid out as the micro-kernel reads it (N blocks x K blocks x
      panels x KC x NR, zero past N's and K's edges); the code packs no B
      and the original global is erased when nothing else reads it
      (`pack-constants=0` packs at run time instead). It is a module pass
      for this: it adds globals.

    An f32 contraction of static sizes with at most half the register
    tile's rows (a decode step's x @ W, a batch-1 classifier), no batch or
    outer K loop longer than one and plain indices runs instead as a
    matrix-vector product that reads B once, in place (Gemv.cpp): where
    B's rows run along N, K split into the tasks, each reading its rows of
    B whole into its own sums, added into C after them (panels of columns
    with M x V sums in registers for a short K or inside a task); groups
    of B's rows where they run along K (x @ W^T: vectors of A's and B's rows, one vector of partial
    sums per pair of rows, reduced across its lanes at the end).

    Contractions it cannot map (no matching unit, a layout whose N is not
    C's innermost dimension, an extent smaller than the register tile) are
    left alone; `--pb-explain` says why. Runs before the remaining linalg
    ops are lowered to affine loops.

    On targets whose matrix units are subgroup-scope (a GPU warp's mma) or
    warpgroup-scope (several warps issuing one unit together), a contraction with C indexed (batch, M..., N), B (batch, K..., N) or
    (batch, N, K...), A by the batch loops then any affine function of the
    M and K loops ending with B's last K loop (matmuls; channels-last
    convolutions as implicit GEMMs), identity layouts, and
    element types of such a unit (f32 only with `allow-tf32`, or for
    convolution ops `allow-tf32-convolutions`, on a tf32 unit; the unit accumulates in f32 while C may be f16/bf16) is not
    lowered here: it is tagged `pb.matrix_unit = "<unit>"` for S4, which
    builds the kernel. The unit is the chip's largest (M x N x K) of those
    scopes for the element types; `warpgroup-units=0` leaves warpgroup-scope
    units out (S4 also falls back to the warp-level units of the same types
    when a warpgroup unit cannot take the operands). On the host the tagged op is an ordinary
    linalg op (the reference lowering runs it as loops).
  }];
  let options = [
    Option<"allowTF32", "allow-tf32", "bool", /*default=*/"false",
           "Map f32 contractions onto tf32 units">,
    Option<"allowTF32Convolutions", "allow-tf32-convolutions", "bool",
           /*default=*/"false",
           "Map f32 convolutions (linalg convolution ops) onto tf32 units">,
    Option<"warpgroupUnits", "warpgroup-units", "bool", /*default=*/"true",
           "Consider warpgroup-scope matrix units">,
    Option<"packConstants", "pack-constants", "bool", /*default=*/"true",
           "Pack constant B operands at compile time">,
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect"];
}

def PBMarkInputsReadOnlyPass
    : Pass<"pb-mark-inputs-read-only", "func::FuncOp"> {
  let summary = "Forbid bufferization from writing into entry arguments";
  let description = [{
    Stage S2, before one-shot bufferization. Marks every tensor argument of
    a public function `bufferization.writable = false`: the caller owns its
    inputs (a framework's tensors, passed by pointer) and must find them
    unchanged. Without it, bufferization may reuse an input's buffer for a
    result computed in place (a matmul accumulating into its `outs` tensor
    when that tensor is an argument).

      func.func @f(%c: tensor<4xf32>)
      ->
      func.func @f(%c: tensor<4xf32> {bufferization.writable = false})

    An argument that a result updates in place (the result's `pb.in_place`
    names it: a KV cache) is marked writable instead, so that the update
    may be written into its buffer (pb-write-results-in-place).
  }];
}

def PBMarkParallelPass : Pass<"pb-mark-parallel", "func::FuncOp"> {
  let summary = "Turn parallel affine loops into affine.parallel and mark "
                "the hardware level each maps to";
  let description = [{
    Stage S3. Converts parallel `affine.for` loops to `affine.parallel`
    (upstream's parallelization analysis) and marks each outermost one with
    `pb.level`, the outermost parallel compute level of the target (a grid
    of blocks on GPUs, cores on CPUs); S4 maps it. When that level is cores,
    a top-level nest whose buffers together fit the innermost cache of one
    core stays serial: a fork and join of threads costs more than it runs.
    On chips whose tasks run threads (a Lane level: GPU blocks), the loops
    inside keep or get `pb.parallel` for S4's thread mapping, a loop that
    gathers (non-affine loads from buffers it does not write) counts as
    parallel when its affine accesses are, and an intra-tile loop (bounds
    from the grid IVs, constant trip count) may join the grid loop as a
    0-based dimension.

    After (on a CPU target):
    ```mlir
    affine.parallel (%i) = (0) to (256) { ... } {pb.level = "Core"}
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
}

def PBMultiLevelTilingPass : Pass<"pb-tile", "func::FuncOp"> {
  let summary = "Tile loop bands with sizes derived from the target's "
                "memory levels";
  let description = [{
    Stage S3. For every outermost perfectly nested band, picks one tile
    size per memory level the target lists between registers and main
    memory (caches on CPUs; scratchpad and L2 on GPUs), outer levels first:
    the largest power of two (a multiple of the vector length for the
    innermost loop) whose tile footprint, summed over the distinct memrefs
    the band touches, fits `occupancy` of the level's capacity. The band is
    then tiled once per level. On chips without a scratchpad, a band that
    streams its memrefs (each access uses every band loop, the innermost
    one in its last subscript) and whose other memrefs fit the innermost
    level is not tiled: no tile would keep anything in a cache, and tiles
    would cut its innermost, vectorized loop short. `--pb-explain` prints
    sizes and footprints.
  }];
  let options = [
    Option<"occupancy", "occupancy", "double", "0.5",
           "fraction of a level's capacity a tile may fill">,
    Option<"maxLevels", "max-levels", "unsigned", "2",
           "most memory levels to tile for">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
}

def PBPromoteToScratchpadPass
    : Pass<"pb-promote-to-scratchpad", "func::FuncOp"> {
  let summary = "Copy tiles that a block reuses into the scratchpad level";
  let description = [{
    Stage S3, after pb-mark-parallel. On targets with a scratchpad memory
    level (GPU shared memory), inside every compute-level parallel loop:
    for each statement, the tiles of buffers it only reads (affine loads,
    plain buffers) and reads more often than they have elements are copied
    into new buffers before the statement, which then reads the copies
    (upstream's `generateCopyForMemRegion`). When the tiles exceed
    `occupancy` of the scratchpad's capacity and the statement is a serial
    loop (a matmul's K tile loop), the statements of its body are tried
    instead. Rows whose size is a multiple of the scratchpad's banks x bank
    width are padded by one vector of the chip against bank conflicts. The
    buffers carry `pb.scratchpad`; each copy is one flat loop over the
    tile (innermost dimension fastest) marked `pb.parallel`, which the GPU
    S4 spreads over a block's threads with a barrier after it.

    After (a 64 x 64 block tile of C += A x B, one K tile):
    ```mlir
    affine.for %k = 0 to 1024 step 64 {
      %a = memref.alloc() {pb.scratchpad} : memref<64x68xf32>
      affine.for %e = 0 to 4096 {
        %v = affine.load %A[%e floordiv 64 + %i0, %e mod 64 + %k]
        affine.store %v, %a[%e floordiv 64, %e mod 64]
      } {pb.parallel}
      ...
      affine.for ... { ... affine.load %a[%i - %i0, %kk - %k] ... }
    }
    ```
    Targets without a scratchpad level are left unchanged.
  }];
  let options = [
    Option<"occupancy", "occupancy", "double", "0.5",
           "fraction of the scratchpad the promoted tiles may fill">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PBOutlineKernelsPass : Pass<"pb-outline-kernels", "ModuleOp"> {
  let summary = "Each loop nest of an entry its own function, identical "
                "ones compiled once";
  let description = [{
    The first step of a target's S4. Every loop nest (`affine.for`,
    `affine.parallel`, `scf.for`, `scf.parallel`: the GEMM and convolution
    micro-kernels are scf loops) at the top level of a function's body
    without results becomes a private function that the function calls:
    the buffers and scalars the nest uses from outside become its arguments
    (in the order of their first use), constants are copied in. Nests whose
    functions print the same (same ops, shapes, element types, attributes
    and signature) share one function, named after a hash of that text
    (`@kernel_<16 hex digits>`), so that the same kernel has the same name
    in every module and S5 can cache it. A model's repeated layers (BERT's
    12 encoder layers, a ResNet's identical blocks) thus give one kernel
    each, lowered and compiled once.

    A nest that uses a buffer whose type has a dynamic size, offset or
    stride stays in place (kernels take bare pointers). `--pb-explain`
    reports, per module, the kernels before and after deduplication.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PBKernelSitesPass : Pass<"pb-kernel-sites", "ModuleOp"> {
  let summary = "Each kernel call's work and roofline estimate, and with "
                "`profile` its measured time";
  let description = [{
    A step of the CPU's S4, after `pb-outline-kernels`. Every call of a
    kernel (a function that pass outlined, `pb.kernel`) from another
    function is a site, numbered in order through the module. Each site's
    work is counted as for a GPU launch (floating-point operations per
    element type, bytes of the buffers it touches, trip counts from the
    loops) and estimated with the chip's per-core figures from its .td:
    max(bytes / main-memory bandwidth, FLOPs / peak) over the cores the call
    uses (all of them, `cores`, when the kernel has a parallel loop; one
    otherwise), plus the chip's launch overhead for a parallel call (the
    fork and join). The sites are recorded on the module as
    `pb.kernel_sites` (entry, kernel, source location, work, estimate),
    which S5 puts into the artifact's metadata ("estimate"). It is a model,
    not a measurement.

    With `profile`, each call is bracketed by calls of
    `__pb_profile_now` and `__pb_profile_add` (the CPU support library),
    which add the call's wall-clock time and count to the site's counters;
    the runtime reads them back (`pbExecutableReadProfile`).
  }];
  let options = [
    Option<"profile", "profile", "bool", "false",
           "time every kernel call at run time">,
    Option<"cores", "cores", "int64_t", "0",
           "cores a parallel call uses in the estimate (0: the compiling "
           "machine's physical cores)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def PBStripAnnotationsPass : Pass<"pb-strip-annotations", "ModuleOp"> {
  let summary = "Remove pb attributes, leaving upstream-only IR";
  let description = [{
    Removes `pb.target` and every `pb.*` attribute (such as `pb.level`)
    from the module and the ops in it, so that tools without the pb
    dialect (mlir-runner, mlir-translate) read the result. The last step of
    `pb-lower-to-host`. Attributes named in `keep` stay (the NVIDIA S4
    keeps `pb.launch_work` for S5's estimate).
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "Names of pb attributes to leave in place">
  ];
}

def PBRegisterAccumulatorsPass
    : Pass<"pb-register-accumulators", "func::FuncOp"> {
  let summary = "Vector accumulators carried in registers across the "
                "reduction loops around them";
  let description = [{
    Stage S3, after pb-vectorize. A vector loop (a step of one vector) that
    reads and writes a block of a buffer at its own induction variable
    (`acc[.., c]`, indices otherwise invariant) inside reduction loops that
    do not index that block (a depthwise convolution's or a pooling
    window's taps, the rows of a sum over H and W) moves outside them,
    unrolled and jammed by the most vectors up to the chip's chains in
    flight (FMA latency x vector issue, from the .td) that divide its trip
    count; each block is read once before the reduction loops, carried
    through their iter_args and written once after them. Its iterations
    touch disjoint blocks and every other buffer in it is only read, so the
    move keeps every value's order of accumulation.

    ```mlir
    affine.for %kh = 0 to 3 {
      affine.for %c = 0 to 32 step 16 {
        %a = vector.transfer_read %acc[%i, %c] ...
        %x = vector.transfer_read %in[%i + %kh, %c] ...
        %s = arith.addf %a, %x : vector<16xf32>
        vector.transfer_write %s, %acc[%i, %c] ...
      }
    }
    // becomes (2 chains)
    affine.for %c = 0 to 32 step 32 {
      %a0 = vector.transfer_read %acc[%i, %c] ...
      %a1 = vector.transfer_read %acc[%i, %c + 16] ...
      %r:2 = affine.for %kh = 0 to 3 iter_args(%s0 = %a0, %s1 = %a1) ...
      vector.transfer_write %r#0, %acc[%i, %c] ...
      vector.transfer_write %r#1, %acc[%i, %c + 16] ...
    }
    ```
  }];
  let dependentDialects = ["affine::AffineDialect", "vector::VectorDialect"];
}

def PBInterleaveReductionsPass
    : Pass<"pb-interleave-reductions", "func::FuncOp"> {
  let summary = "Reductions as independent partial accumulators and trees";
  let description = [{
    Stage S3, after pb-vectorize (left out of `pipeline=reference`).
    An innermost affine.for whose iter_args are all reductions
    (`affine::getSupportedReductions`) and that carries fewer independent
    chains than the chip keeps in flight (the latency of its thread-scope
    vector FMA unit times the vector operations it starts per cycle, both
    from the .td) is unrolled by the missing power-of-two factor that
    divides its trip count, with one partial accumulator per copy; the
    partials are combined after the loop in a tree. Every
    `vector.reduction` of 2^n lanes becomes n halvings (two
    `vector.shuffle`s and one vector operation each) instead of an ordered
    chain of scalar steps. Floating-point sums and products are
    reassociated, as vectorization already does.

    Before and after (4 chains in flight):
    ```mlir
    %m = affine.for %j = 0 to 1024 step 16 iter_args(%a = %init) {
      %v = vector.transfer_read %x[%i, %j], %pad : memref<..>, vector<16xf32>
      %n = arith.maxnumf %v, %a : vector<16xf32>
      affine.yield %n : vector<16xf32>
    }
    // becomes
    %m:4 = affine.for %j = 0 to 1024 step 64
        iter_args(%a0 = %init, %a1 = %nan, %a2 = %nan, %a3 = %nan) {
      ... four copies, at %j, %j + 16, %j + 32, %j + 48 ...
    }
    // maxnumf(maxnumf(%m#0, %m#1), maxnumf(%m#2, %m#3))
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def PBHoistReciprocalsPass : Pass<"pb-hoist-reciprocals", "func::FuncOp"> {
  let summary = "Divide by a loop-invariant divisor as a multiplication by "
                "its reciprocal";
  let description = [{
    Stage S3, after pb-vectorize (left out of `pipeline=reference`). An
    `arith.divf` inside a loop that may run more than once, whose divisor
    is defined outside that loop (a softmax row's sum), becomes an
    `arith.mulf` by the divisor's reciprocal, computed once right after the
    divisor. The result differs by at most one rounding from the quotient
    (as with LLVM's `arcp`); a divisor below the smallest normal number
    gives an infinite reciprocal.

    Before and after:
    ```mlir
    affine.for %j = 0 to 1024 step 16 {
      %q = arith.divf %x, %sum : vector<16xf32>
    }
    // becomes
    %r = arith.divf %one, %sum : vector<16xf32>
    affine.for %j = 0 to 1024 step 16 {
      %q = arith.mulf %x, %r : vector<16xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PBVectorizePass : Pass<"pb-vectorize", "func::FuncOp"> {
  let summary = "Vectorize innermost loops to the target's vector width";
  let description = [{
    Stage S3. Runs upstream's affine super-vectorizer with a virtual vector
    of `VectorWidthBits / element bits` lanes for the narrowest element
    type in the function, as the target's table states, and vectorizes
    reductions too.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // PB_TRANSFORMS_PASSES_TD
