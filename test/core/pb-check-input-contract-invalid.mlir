// RUN: pb-opt %s --split-input-file --pb-check-input-contract --verify-diagnostics

// expected-error @+1 {{argument 0 of 'dynamic' has a dynamic shape but no pb.dim_args naming the size arguments of its dynamic dimensions}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 of 'dynamic_result' has a dynamic shape but no pb.dim_args}}
func.func @dynamic_result(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>}, %n: index) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{argument 0 of 'not_a_size' has a pb.dim_args whose element 0 (1) is no position of an index argument of 'not_a_size'}}
func.func @not_a_size(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1, -1>}, %y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of 'static_named' has a pb.dim_args naming argument 1 for its static dimension 1 (-1 expected)}}
func.func @static_named(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1, 1>}, %n: index) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of 'wrong_rank' has a pb.dim_args of 1 elements for 2 dimensions}}
func.func @wrong_rank(%x: tensor<?x4xf32> {pb.dim_args = array<i64: 1>}, %n: index) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 1 of 'float_size' has type f32; only ranked tensors and index sizes are supported}}
func.func @float_size(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of 'complex' has element type complex<f32>, which is not supported}}
func.func @complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 of 'scalar' has type f32; only ranked tensors and index sizes are supported}}
func.func @scalar(%x: tensor<4xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}

// -----

func.func @scf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{op 'scf.for' is outside the input contract: only the func, linalg, tensor, arith and math dialects are accepted}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    scf.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'ext' has no body; external functions are not supported}}
func.func private @ext(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// expected-error @+1 {{result 0 of 'in_place_type' updates argument 0 (pb.in_place), whose type is not the result's}}
func.func @in_place_type(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<8xf32> {pb.in_place = 0 : i64}) {
  return %y : tensor<8xf32>
}

// -----

// expected-error @+1 {{result 0 of 'in_place_range' has a pb.in_place that is no argument position}}
func.func @in_place_range(%x: tensor<4xf32>) -> (tensor<4xf32> {pb.in_place = 1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 1 of 'in_place_twice' updates argument 0 (pb.in_place), which an earlier result updates}}
func.func @in_place_twice(%x: tensor<4xf32>) -> (tensor<4xf32> {pb.in_place = 0 : i64}, tensor<4xf32> {pb.in_place = 0 : i64}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
