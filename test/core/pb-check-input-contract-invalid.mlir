// RUN: pb-opt %s --split-input-file --pb-check-input-contract --verify-diagnostics

// expected-error @+1 {{argument 0 of 'dynamic' has a dynamic shape (tensor<?x4xf32>); only static shapes are supported}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of 'complex' has element type complex<f32>, which is not supported}}
func.func @complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 of 'scalar' has type f32; only statically shaped ranked tensors are supported}}
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

func.func @dynamic_inside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = arith.constant 3 : index
  // expected-error @+1 {{op 'tensor.empty' result has a dynamic shape (tensor<?xf32>); only static shapes are supported}}
  %e = tensor.empty(%n) : tensor<?xf32>
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'ext' has no body; external functions are not supported}}
func.func private @ext(%x: tensor<4xf32>) -> tensor<4xf32>
