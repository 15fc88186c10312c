// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the verifiers and type rules of TrainGenericOps.td
// and of train.embedding's padding_idx, one case per split.

//===----------------------------------------------------------------------===//
// train.amax
//===----------------------------------------------------------------------===//

func.func @amax_dim_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.amax' op dimension 2 is out of range for rank 2}}
  %0 = train.amax %x dims = [2] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @amax_dim_twice(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.amax' op dimension 1 is listed twice}}
  %0 = train.amax %x dims = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @amax_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.amax' op result type 'tensor<8xf32>' does not match the expected 'tensor<4xf32>'}}
  %0 = train.amax %x dims = [1] : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @amax_result_element(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{'train.amax' op result type 'tensor<4xf32>' does not match the expected 'tensor<4xbf16>'}}
  %0 = train.amax %x dims = [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return
}

// -----

func.func @amax_int(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'train.amax' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = train.amax %x dims = [1] : tensor<4x8xi32> -> tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.amax_grad
//===----------------------------------------------------------------------===//

func.func @amax_grad_dims(%dy: tensor<4xf32>, %x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.amax_grad' op dimension 3 is out of range for rank 2}}
  %0 = train.amax_grad %dy, %x, %dy dims = [3] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @amax_grad_grad(%dy: tensor<8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'train.amax_grad' op grad type 'tensor<8xf32>' must be the input reduced over dims ('tensor<4xf32>')}}
  %0 = train.amax_grad %dy, %x, %y dims = [1] : (tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @amax_grad_output(%dy: tensor<4xf32>, %x: tensor<4x8xf32>, %y: tensor<4xbf16>) {
  // expected-error @+1 {{'train.amax_grad' op output type 'tensor<4xbf16>' must be the input reduced over dims ('tensor<4xf32>')}}
  %0 = train.amax_grad %dy, %x, %y dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xbf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @amax_grad_result(%dy: tensor<4xf32>, %x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.amax_grad' op result type 'tensor<4x8xbf16>' must be the input's type 'tensor<4x8xf32>'}}
  %0 = train.amax_grad %dy, %x, %dy dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.var
//===----------------------------------------------------------------------===//

func.func @var_dim_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.var' op dimension -1 is out of range for rank 2}}
  %0 = train.var %x dims = [-1] correction = 1 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @var_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.var' op result type 'tensor<4x1xf32>' does not match the expected 'tensor<4xf32>'}}
  %0 = train.var %x dims = [1] correction = 1 : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @var_negative_correction(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.var' op correction must be non-negative, got -1}}
  %0 = train.var %x dims = [1] correction = -1 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @var_no_freedom(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.var' op correction 8 leaves no degree of freedom: the input's reduced dimensions hold 8 element(s), which must exceed it}}
  %0 = train.var %x dims = [1] correction = 8 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @var_no_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.var' op correction 1 leaves no degree of freedom: the input's reduced dimensions hold 1 element(s), which must exceed it}}
  %0 = train.var %x dims = [] correction = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.log_softmax
//===----------------------------------------------------------------------===//

func.func @log_softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'train.log_softmax' op input must have rank >= 1 (the last dimension is normalized)}}
  %0 = train.log_softmax %x : tensor<f32>
  return
}

// -----

func.func @log_softmax_types(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.log_softmax' op requires the same type for all operands and results}}
  %0 = "train.log_softmax"(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.gather
//===----------------------------------------------------------------------===//

func.func @gather_scalar(%x: tensor<f32>, %i: tensor<i32>) {
  // expected-error @+1 {{'train.gather' op input must have rank >= 1}}
  %0 = train.gather %x[%i] dim = 0 : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @gather_dim(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather' op dimension 2 is out of range for the input's rank 2}}
  %0 = train.gather %x[%i] dim = 2 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @gather_rank(%x: tensor<4x8xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'train.gather' op index has rank 1 but the input has rank 2 (torch.gather's rule: equal ranks)}}
  %0 = train.gather %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_index_size(%x: tensor<4x8xf32>, %i: tensor<5x1xi32>) {
  // expected-error @+1 {{'train.gather' op index dimension 0 of size 5 exceeds the input's size 4 (only dimension 1 may be larger)}}
  %0 = train.gather %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<5x1xi32>) -> tensor<5x1xf32>
  return
}

// -----

func.func @gather_result(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather' op result type 'tensor<4x8xf32>' does not match the expected 'tensor<4x1xf32>'}}
  %0 = train.gather %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gather_float_index(%x: tensor<4x8xf32>, %i: tensor<4x1xf32>) {
  // expected-error @+1 {{'train.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x1xf32>'}}
  %0 = train.gather %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.gather_grad
//===----------------------------------------------------------------------===//

func.func @gather_grad_dim(%dy: tensor<4x1xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather_grad' op dimension -1 is out of range for the result's rank 2}}
  %0 = train.gather_grad %dy[%i] dim = -1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gather_grad_rank(%dy: tensor<4x1xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather_grad' op index has rank 2 but the result has rank 3 (torch.gather's rule: equal ranks)}}
  %0 = train.gather_grad %dy[%i] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8x2xf32>
  return
}

// -----

func.func @gather_grad_index_size(%dy: tensor<4x1xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather_grad' op index dimension 0 of size 4 exceeds the result's size 2 (only dimension 1 may be larger)}}
  %0 = train.gather_grad %dy[%i] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @gather_grad_shape(%dy: tensor<4x2xf32>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather_grad' op grad shape 4x2 must equal the index shape 4x1}}
  %0 = train.gather_grad %dy[%i] dim = 1 : (tensor<4x2xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gather_grad_element(%dy: tensor<4x1xbf16>, %i: tensor<4x1xi32>) {
  // expected-error @+1 {{'train.gather_grad' op grad element type 'bf16' differs from the result's 'f32'}}
  %0 = train.gather_grad %dy[%i] dim = 1 : (tensor<4x1xbf16>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding and train.embedding_grad: padding_idx
//===----------------------------------------------------------------------===//

func.func @embedding_padding_range(%table: tensor<65x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding' op padding_idx 65 is not a row of the table: it must be in [0, 65)}}
  %0 = train.embedding %table[%ids] padding_idx = 65 : (tensor<65x48xf32>, tensor<12xi32>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_padding_negative(%table: tensor<65x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding' op padding_idx -1 is not a row of the table: it must be in [0, 65)}}
  %0 = train.embedding %table[%ids] padding_idx = -1 : (tensor<65x48xf32>, tensor<12xi32>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_grad_padding_range(%dy: tensor<12x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding_grad' op padding_idx 70 is not a row of the table: it must be in [0, 65)}}
  %0 = train.embedding_grad %dy[%ids] padding_idx = 70 : (tensor<12x48xf32>, tensor<12xi32>) -> tensor<65x48xf32>
  return
}
