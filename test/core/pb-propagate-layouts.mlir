// RUN: pb-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pb-propagate-layouts),canonicalize)' | FileCheck %s
// RUN: pb-opt %s --split-input-file --pb-explain --pass-pipeline='builtin.module(func.func(pb-propagate-layouts))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// A batch norm that reads an NHWC result and writes NCHW produces NHWC
// instead (loops reordered, every input read in order); the padding after
// it is rebuilt channels-last and the transpose in front of the next
// NHWC consumer reads it in order, which canonicalization then erases.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @bn_pad_transpose
// CHECK: %[[BN:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x4x4x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[FILL]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[BN]] : tensor<1x4x4x8xf32>) outs(%[[SLICE]]
// CHECK: %[[PAD:.*]] = tensor.insert_slice %[[COPY]] into %[[FILL]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[PAD]] : tensor<1x6x6x8xf32>
func.func @bn_pad_transpose(%conv: tensor<1x4x4x8xf32>, %scale: tensor<8xf32>)
    -> tensor<1x6x6x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %bn = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %scale : tensor<1x4x4x8xf32>, tensor<8xf32>)
      outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    %r = arith.maximumf %m, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x4x4xf32>
  %pe = tensor.empty() : tensor<1x8x6x6xf32>
  %pf = linalg.fill ins(%z : f32) outs(%pe : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %ps = tensor.extract_slice %pf[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x6x6xf32> to tensor<1x8x4x4xf32>
  %pc = linalg.copy ins(%bn : tensor<1x8x4x4xf32>) outs(%ps : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %pad = tensor.insert_slice %pc into %pf[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x8x6x6xf32>
  %te = tensor.empty() : tensor<1x6x6x8xf32>
  %t = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, c, h, w)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%pad : tensor<1x8x6x6xf32>) outs(%te : tensor<1x6x6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x6x6x8xf32>
  return %t : tensor<1x6x6x8xf32>
}

// -----

// Max pooling (generalized) over a channels-last input produces
// channels-last with its window loops before the channel loop, which stays
// innermost and parallel.
// CHECK-LABEL: func.func @pool
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x3x3x8xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x8x3x3xf32>)
func.func @pool(%x: tensor<1x7x7x8xf32>) -> tensor<1x8x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x7x7x8xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x7x7xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %pe = tensor.empty() : tensor<1x8x3x3xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%relu, %w : tensor<1x8x7x7xf32>, tensor<3x3xf32>) outs(%pf : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %oe = tensor.empty() : tensor<1x8x3x3xf32>
  %o = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<1x8x3x3xf32>) outs(%oe : tensor<1x8x3x3xf32>) {
  ^bb0(%v: f32, %o2: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x3x3xf32>
  return %o : tensor<1x8x3x3xf32>
}

// -----

// A pooling whose result is copied into a concatenation (DenseNet's first
// dense block): the pooling is produced channels-last and the copy into the
// NCHW concatenation becomes a generic that reads it transposed; the other
// piece is copied as it was.
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 1]); 0 generic, 0 padding and 0 reshaped users read it through permuted maps, 1 copies transpose it
// CHECK-LABEL: func.func @concat
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x3x3x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x12x3x3xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 8, 3, 3]
// CHECK: %[[T:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<1x3x3x8xf32>) outs(%[[S]] : tensor<1x8x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: tensor.insert_slice %[[T]] into %[[E]]
// CHECK: linalg.copy
func.func @concat(%x: tensor<1x7x7x8xf32>, %y: tensor<1x4x3x3xf32>) -> tensor<1x12x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x7x7x8xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x7x7xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %pe = tensor.empty() : tensor<1x8x3x3xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%relu, %w : tensor<1x8x7x7xf32>, tensor<3x3xf32>) outs(%pf : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %ce = tensor.empty() : tensor<1x12x3x3xf32>
  %s0 = tensor.extract_slice %ce[0, 0, 0, 0] [1, 8, 3, 3] [1, 1, 1, 1] : tensor<1x12x3x3xf32> to tensor<1x8x3x3xf32>
  %c0 = linalg.copy ins(%p : tensor<1x8x3x3xf32>) outs(%s0 : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %i0 = tensor.insert_slice %c0 into %ce[0, 0, 0, 0] [1, 8, 3, 3] [1, 1, 1, 1] : tensor<1x8x3x3xf32> into tensor<1x12x3x3xf32>
  %s1 = tensor.extract_slice %i0[0, 8, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x12x3x3xf32> to tensor<1x4x3x3xf32>
  %c1 = linalg.copy ins(%y : tensor<1x4x3x3xf32>) outs(%s1 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 8, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x4x3x3xf32> into tensor<1x12x3x3xf32>
  return %i1 : tensor<1x12x3x3xf32>
}

// -----

// Most pieces of a concatenation arrive channels-last (two ReLUs of NHWC
// values) and its reader is a generic: the concatenation is built
// channels-last, those pieces are plain copies into it, the NCHW piece is
// copied transposed, and the reader takes the permutation into its map (it
// keeps writing NCHW: the function returns its result).
// EXPLAIN: layout: concatenation of 3 pieces built in their order (permutation [0, 2, 3, 1]); 1 generic, 0 padding and 0 reshaped users read it through permuted maps, 0 copies transpose it
// CHECK-LABEL: func.func @concat_relayout
// (canonicalize folds the plain copies into the insert_slices.)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x3x3x12xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[E]][0, 0, 0, 0] [1, 3, 3, 4]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 4] [1, 3, 3, 4]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 8] [1, 3, 3, 4]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x3x3xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>)
// CHECK: %[[C:.*]] = tensor.insert_slice %{{.*}}[0, 0, 0, 8] [1, 3, 3, 4]
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<1x3x3x12xf32>) outs(%{{.*}} : tensor<1x12x3x3xf32>)
// CHECK-NOT: linalg.copy
func.func @concat_relayout(%a: tensor<1x3x3x4xf32>, %b: tensor<1x3x3x4xf32>,
                           %c: tensor<1x4x3x3xf32>) -> tensor<1x12x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %ra = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x3x3x4xf32>) outs(%e : tensor<1x4x3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x4x3x3xf32>
  %rb = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x3x3x4xf32>) outs(%e : tensor<1x4x3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x4x3x3xf32>
  %ce = tensor.empty() : tensor<1x12x3x3xf32>
  %s0 = tensor.extract_slice %ce[0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x12x3x3xf32> to tensor<1x4x3x3xf32>
  %c0 = linalg.copy ins(%ra : tensor<1x4x3x3xf32>) outs(%s0 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %i0 = tensor.insert_slice %c0 into %ce[0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x4x3x3xf32> into tensor<1x12x3x3xf32>
  %s1 = tensor.extract_slice %i0[0, 4, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x12x3x3xf32> to tensor<1x4x3x3xf32>
  %c1 = linalg.copy ins(%rb : tensor<1x4x3x3xf32>) outs(%s1 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 4, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x4x3x3xf32> into tensor<1x12x3x3xf32>
  %s2 = tensor.extract_slice %i1[0, 8, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x12x3x3xf32> to tensor<1x4x3x3xf32>
  %c2 = linalg.copy ins(%c : tensor<1x4x3x3xf32>) outs(%s2 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %i2 = tensor.insert_slice %c2 into %i1[0, 8, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : tensor<1x4x3x3xf32> into tensor<1x12x3x3xf32>
  %oe = tensor.empty() : tensor<1x12x3x3xf32>
  %o = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%i2 : tensor<1x12x3x3xf32>) outs(%oe : tensor<1x12x3x3xf32>) {
  ^bb0(%v: f32, %o2: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x12x3x3xf32>
  return %o : tensor<1x12x3x3xf32>
}

// -----

// A result the function returns keeps its layout (no transpose is added).
// CHECK-LABEL: func.func @returned
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8x4x4xf32>)
func.func @returned(%conv: tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// A squeeze-excitation block as the torch frontend emits it: the activation
// reads an NHWC convolution result through a unit-dimension expand_shape
// and writes (n, c, 1, h, w); the mean reads it in that order; the scale
// multiply reads it through a collapse_shape and an expand_shape that only
// move unit dimensions and writes channels-last again. The activation is
// produced channels-last, the multiply reads it without the reshapes (only
// a collapse of its leading unit dimensions is left) and writes the 4-D
// result directly (its trailing unit loops are dropped), and the mean's
// channel loop moves innermost so that it reads the activation contiguously.
// CHECK-LABEL: func.func @se_reshapes
// CHECK: %[[ACT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x4x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[ACT]] : tensor<1x1x4x4x8xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[ACT]] {{\[}}[0, 1, 2], [3], [4]]
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[FLAT]], %{{.*}} : tensor<4x4x8xf32>, tensor<1x8xf32>) outs(%{{.*}} : tensor<1x4x4x8xf32>)
func.func @se_reshapes(%conv: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %z = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %conv [[0], [1, 2], [3], [4]] output_shape [1, 1, 4, 4, 8] : tensor<1x4x4x8xf32> into tensor<1x1x4x4x8xf32>
  %e = tensor.empty() : tensor<1x8x1x4x4xf32>
  %act = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, u, h, w, c)>,
                       affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%xe : tensor<1x1x4x4x8xf32>) outs(%e : tensor<1x8x1x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x1x4x4xf32>
  %se = tensor.empty() : tensor<1x8xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<1x8xf32>) -> tensor<1x8xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>,
                       affine_map<(n, c, u, h, w) -> (n, c)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%act : tensor<1x8x1x4x4xf32>) outs(%sf : tensor<1x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %c = tensor.collapse_shape %act [[0, 1], [2, 3], [4]] : tensor<1x8x1x4x4xf32> into tensor<8x4x4xf32>
  %x6 = tensor.expand_shape %c [[0, 1, 2, 3], [4], [5]] output_shape [1, 8, 1, 1, 4, 4] : tensor<8x4x4xf32> into tensor<1x8x1x1x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x8x1x1xf32>
  %mul = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c, u, v) -> (n, c, u, v, h, w)>,
                       affine_map<(n, h, w, c, u, v) -> (n, c)>,
                       affine_map<(n, h, w, c, u, v) -> (n, h, w, c, u, v)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x6, %sum : tensor<1x8x1x1x4x4xf32>, tensor<1x8xf32>) outs(%e2 : tensor<1x4x4x8x1x1xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x8x1x1xf32>
  %r = tensor.collapse_shape %mul [[0], [1], [2], [3, 4, 5]] : tensor<1x4x4x8x1x1xf32> into tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

// The activation of @se_reshapes, read through an expand_shape that adds a
// unit dimension which only the reduction's loop `g` indexes (a batch-8
// squeeze-excitation mean in this form), as does `u` once the activation's
// own unit dimension is read as a constant 0: reading the activation
// directly would drop both loops from every operand (an invalid generic),
// so the activation is produced channels-last and the reduction reads it
// with two trailing unit dimensions indexed by `g` and `u`. Its channel
// loop then moves innermost: it walks the activation along its rows.
// EXPLAIN: layout: 1 reductions walk their input along its rows (a parallel loop moved innermost)
// CHECK: #[[READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, 0, d3, d4, d5, d1, d2)>
// CHECK-LABEL: func.func @unit_loop_only_in_reshape
// CHECK: %[[ACT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x1x4x4x8xf32>)
// CHECK: %[[UNITS:.*]] = tensor.expand_shape %[[ACT]] {{\[\[}}0], [1], [2], [3], [4, 5, 6]] output_shape [2, 1, 4, 4, 8, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[READ]], #{{.*}}], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel"]} ins(%[[UNITS]] : tensor<2x1x4x4x8x1x1xf32>)
func.func @unit_loop_only_in_reshape(%conv: tensor<2x4x4x8xf32>) -> tensor<2x8xf32> {
  %z = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %conv [[0], [1, 2], [3], [4]] output_shape [2, 1, 4, 4, 8] : tensor<2x4x4x8xf32> into tensor<2x1x4x4x8xf32>
  %e = tensor.empty() : tensor<2x8x1x4x4xf32>
  %act = linalg.generic {
      indexing_maps = [affine_map<(n, c, u, h, w) -> (n, u, h, w, c)>,
                       affine_map<(n, c, u, h, w) -> (n, c, u, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%xe : tensor<2x1x4x4x8xf32>) outs(%e : tensor<2x8x1x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %z : f32
    linalg.yield %r : f32
  } -> tensor<2x8x1x4x4xf32>
  %x6 = tensor.expand_shape %act [[0], [1, 2], [3], [4], [5]] output_shape [2, 8, 1, 1, 4, 4] : tensor<2x8x1x4x4xf32> into tensor<2x8x1x1x4x4xf32>
  %se = tensor.empty() : tensor<2x8xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(n, c, g, u, h, w) -> (n, c, g, u, h, w)>,
                       affine_map<(n, c, g, u, h, w) -> (n, c)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x6 : tensor<2x8x1x1x4x4xf32>) outs(%sf : tensor<2x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  return %sum : tensor<2x8xf32>
}

// -----

// A sum over the rows of a matrix (a column reduction, as a mean over H and
// W of a channels-last map is): the column loop moves innermost, so that
// each row is read contiguously into a row of accumulators; the row
// reduction's loops stay (its innermost loop walks its input's rows).
// EXPLAIN: layout: 1 reductions walk their input along its rows (a parallel loop moved innermost)
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<64x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x32xf32>)
func.func @column_sum(%x: tensor<64x32xf32>) -> (tensor<32xf32>, tensor<64xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %cols = linalg.generic {
      indexing_maps = [affine_map<(c, r) -> (r, c)>, affine_map<(c, r) -> (c)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%f : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
  %rows = linalg.generic {
      indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%f2 : tensor<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %cols, %rows : tensor<32xf32>, tensor<64xf32>
}

// -----

// A result read by a padding (for the next convolution), by a copy into a
// slice of a concatenation and by an op the pass does not understand (a
// return): the batch norm produces channels-last, the padding is rebuilt
// channels-last, the copy transposes, and the other
// use (the return) reads one transpose of the new result at its boundary.
// (A result with both a padding and a copy among its users made the pass
// read the erased copy again while it rebuilt the padding: a crash on
// MobileViT and Inception-v3.)
// EXPLAIN: layout: result produced in its inputs' order (permutation [0, 2, 3, 1]); 1 generic, 1 padding and 0 reshaped users read it through permuted maps, 1 copies transpose it, 1 other uses read it transposed back
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-LABEL: func.func @pad_copy_and_others
// CHECK: %[[BN:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK: %[[OLD:.*]] = linalg.generic {indexing_maps = [#[[BACK]], #[[ID4]]]{{.*}} ins(%[[BN]] : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[FILL]][0, 1, 1, 0] [1, 4, 4, 8]
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[BN]] : tensor<1x4x4x8xf32>) outs(%[[SLICE]]
// CHECK: %[[PAD:.*]] = tensor.insert_slice %[[COPY]] into %[[FILL]][0, 1, 1, 0]
// CHECK: %[[PIECE:.*]] = linalg.generic {indexing_maps = [#[[BACK]], #[[ID4]]]{{.*}} ins(%[[BN]] : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>)
// CHECK: %[[CAT1:.*]] = tensor.insert_slice %[[PIECE]] into %{{.*}}[0, 0, 0, 0] [1, 8, 4, 4]
// CHECK: %[[CAT:.*]] = tensor.insert_slice %{{.*}} into %[[CAT1]][0, 8, 0, 0] [1, 8, 4, 4]
// CHECK: return %[[PAD]], %[[CAT]], %[[OLD]]
func.func @pad_copy_and_others(%conv: tensor<1x4x4x8xf32>, %scale: tensor<8xf32>,
                               %other: tensor<1x8x4x4xf32>)
    -> (tensor<1x6x6x8xf32>, tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %bn = linalg.generic {
      indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>,
                       affine_map<(n, c, h, w) -> (c)>,
                       affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %scale : tensor<1x4x4x8xf32>, tensor<8xf32>)
      outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x8x4x4xf32>
  %pe = tensor.empty() : tensor<1x8x6x6xf32>
  %pf = linalg.fill ins(%z : f32) outs(%pe : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %ps = tensor.extract_slice %pf[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x6x6xf32> to tensor<1x8x4x4xf32>
  %pc = linalg.copy ins(%bn : tensor<1x8x4x4xf32>) outs(%ps : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %pad = tensor.insert_slice %pc into %pf[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x8x6x6xf32>
  %te = tensor.empty() : tensor<1x6x6x8xf32>
  %t = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, c) -> (n, c, h, w)>,
                       affine_map<(n, h, w, c) -> (n, h, w, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%pad : tensor<1x8x6x6xf32>) outs(%te : tensor<1x6x6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x6x6x8xf32>
  %ce = tensor.empty() : tensor<1x16x4x4xf32>
  %cs = tensor.extract_slice %ce[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x16x4x4xf32> to tensor<1x8x4x4xf32>
  %cc = linalg.copy ins(%bn : tensor<1x8x4x4xf32>) outs(%cs : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c1 = tensor.insert_slice %cc into %ce[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  %cs2 = tensor.extract_slice %c1[0, 8, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x16x4x4xf32> to tensor<1x8x4x4xf32>
  %cc2 = linalg.copy ins(%other : tensor<1x8x4x4xf32>) outs(%cs2 : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %cat = tensor.insert_slice %cc2 into %c1[0, 8, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x16x4x4xf32>
  return %t, %cat, %bn : tensor<1x6x6x8xf32>, tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>
}
