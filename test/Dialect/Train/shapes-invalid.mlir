// RUN: zeroc-opt %s -split-input-file -verify-diagnostics
//
// Every train op, with or without a verifier of its own, takes and gives
// tensors of static shape whose dimensions are all at least 1 and whose
// element count is at most 2^48 (the ShapeChecked trait): an empty tensor
// used to pass the verifiers and then divide by zero in train-autodiff,
// train-logits and the emitter, and a count that overflows int64 used to
// compile into an executable that aborted at its first step.

// expected-error @+1 {{'train.param' op type of @w has a zero-sized dimension, got 'tensor<0x8xf32>'; train ops need every dimension to be at least 1}}
train.param @w : tensor<0x8xf32> init = zeros

// -----

// 2^32 x 2^32 elements: 2^64 overflows int64.
// expected-error @+1 {{'train.param' op type of @w has more than 2^48 elements, got 'tensor<4294967296x4294967296xf32>'; zeroc's tensors are limited to 2^48 elements}}
train.param @w : tensor<4294967296x4294967296xf32> init = zeros

// -----

// 2^49 elements, which fit int64 but not zeroc's limit.
// expected-error @+1 {{'train.param' op type of @w has more than 2^48 elements}}
train.param @w : tensor<562949953421312xf32> init = ones

// -----

// 2^48 elements exactly are fine (the op is only declared, never run).
train.param @w : tensor<16777216x16777216xf32> init = zeros

// -----

module {
  train.param @w : tensor<4xf32> init = zeros
  // expected-error @+1 {{'train.state' op type of @w.m has a zero-sized dimension, got 'tensor<0xf32>'}}
  train.state @w.m : tensor<0xf32> exp_avg of @w
}

// -----

// Token ids of a zero-length sequence.
func.func @tokens(%t: tensor<6x0xi32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{'train.embedding' op operand #1 has a zero-sized dimension, got 'tensor<6x0xi32>'}}
  %x = train.embedding %w[%t] : (tensor<16x8xf32>, tensor<6x0xi32>) -> tensor<6x0x8xf32>
  return
}

// -----

// A vocabulary of 0.
func.func @vocab(%logits: tensor<4x0xf32>, %t: tensor<4xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op operand #0 has a zero-sized dimension, got 'tensor<4x0xf32>'}}
  %l = train.cross_entropy %logits, %t : (tensor<4x0xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

// A batch of 0.
func.func @batch(%x: tensor<0x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.matmul' op operand #0 has a zero-sized dimension, got 'tensor<0x8xf32>'}}
  %y = train.matmul %x, %w transpose_rhs : (tensor<0x8xf32>, tensor<4x8xf32>) -> tensor<0x4xf32>
  return
}

// -----

// Ops without a verifier of their own are checked too.
func.func @gelu(%x: tensor<3x0xf32>) {
  // expected-error @+1 {{'train.gelu' op operand #0 has a zero-sized dimension, got 'tensor<3x0xf32>'}}
  %y = train.gelu %x tanh : tensor<3x0xf32>
  return
}

// -----

func.func @fill() {
  // expected-error @+1 {{'train.fill' op result #0 has a zero-sized dimension, got 'tensor<0xf32>'}}
  %y = train.fill 1.0 : tensor<0xf32>
  return
}

// -----

func.func @dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{'train.sqrt' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %y = train.sqrt %x : tensor<?xf32>
  return
}

// -----

func.func @huge_fill() {
  // expected-error @+1 {{'train.fill' op result #0 has more than 2^48 elements, got 'tensor<281474976710657xf32>'}}
  %y = train.fill 1.0 : tensor<281474976710657xf32>
  return
}

// -----

// A pack whose buffer would overflow: the tensors end to end.
func.func @pack_overflow(%a: tensor<200000000000000xf32>) {
  // expected-error @+1 {{'train.pack' op the packed buffer would have more than 2^48 elements}}
  %b = train.pack %a, %a : tensor<200000000000000xf32>, tensor<200000000000000xf32> -> tensor<4xf32>
  return
}

// -----

func.func @unpack_overflow(%b: tensor<4xf32>) {
  // expected-error @+1 {{'train.unpack' op the packed buffer would have more than 2^48 elements}}
  %x, %y = train.unpack %b : tensor<4xf32> -> tensor<200000000000000xf32>, tensor<200000000000000xf32>
  return
}

// -----

module {
  shard.grid @dp(shape = 0)
  func.func @empty_grid(%b: tensor<4xf32>) {
    // expected-error @+1 {{'train.all_reduce_start' op the grid @dp must have between 1 and 2^24 ranks, got 0}}
    %f = train.all_reduce_start %b on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    return
  }
}
