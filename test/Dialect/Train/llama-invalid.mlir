// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the Llama ops' verifiers and shape rules
// (TrainLlamaShapes.cpp), one case per split.

//===----------------------------------------------------------------------===//
// train.rmsnorm, train.rmsnorm_grad
//===----------------------------------------------------------------------===//

func.func @rmsnorm_weight(%x: tensor<2x6xf32>, %w: tensor<5xf32>) {
  // expected-error @+1 {{'train.rmsnorm' op weight must have shape 6 (the last dimension of the input), got 5}}
  %0 = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<2x6xf32>, tensor<5xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @rmsnorm_rank(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.rmsnorm' op input must have rank >= 1 (the last dimension is normalized)}}
  %0 = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return
}

// -----

func.func @rmsnorm_eps(%x: tensor<2x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'train.rmsnorm' op eps must be finite and positive, got 0.000000e+00}}
  %0 = train.rmsnorm %x, %w eps = 0.0 : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @rmsnorm_weight_element(%x: tensor<2x6xf32>, %w: tensor<6xbf16>) {
  // expected-error @+1 {{'train.rmsnorm' op weight element type 'bf16' differs from input element type 'f32'}}
  %0 = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<2x6xf32>, tensor<6xbf16>) -> tensor<2x6xf32>
  return
}

// -----

func.func @rmsnorm_result(%x: tensor<2x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'train.rmsnorm' op result type 'tensor<2x6xbf16>' does not match the expected 'tensor<2x6xf32>'}}
  %0 = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xbf16>
  return
}

// -----

func.func @rmsnorm_dynamic(%x: tensor<?x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'train.rmsnorm' op operand #0 must have a static shape, got 'tensor<?x6xf32>'}}
  %0 = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<?x6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @rmsnorm_grad_grad(%g: tensor<3x6xf32>, %x: tensor<2x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'train.rmsnorm_grad' op grad type 'tensor<3x6xf32>' does not match the expected 'tensor<2x6xf32>'}}
  %0:2 = train.rmsnorm_grad %g, %x, %w eps = 1.0e-5 : (tensor<3x6xf32>, tensor<2x6xf32>, tensor<6xf32>) -> (tensor<2x6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @rmsnorm_grad_weight(%x: tensor<2x6xf32>, %w: tensor<2x6xf32>) {
  // expected-error @+1 {{'train.rmsnorm_grad' op weight must have shape 6 (the last dimension of the input), got 2x6}}
  %0:2 = train.rmsnorm_grad %x, %x, %w eps = 1.0e-5 : (tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @rmsnorm_grad_results(%x: tensor<2x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'train.rmsnorm_grad' op weight_grad type 'tensor<2x6xf32>' does not match the expected 'tensor<6xf32>'}}
  %0:2 = train.rmsnorm_grad %x, %x, %w eps = 1.0e-5 : (tensor<2x6xf32>, tensor<2x6xf32>, tensor<6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.rope
//===----------------------------------------------------------------------===//

func.func @rope_odd_head_dim(%x: tensor<2x5x7xf32>) {
  // expected-error @+1 {{'train.rope' op the head dimension (the input's last, 7) must be even: rotary embeddings rotate pairs of features}}
  %0 = train.rope %x theta = 10000.0 seq_dim = 1 interleaved : tensor<2x5x7xf32>
  return
}

// -----

func.func @rope_seq_dim_last(%x: tensor<2x5x8xf32>) {
  // expected-error @+1 {{'train.rope' op seq_dim 2 must be a dimension of the input other than the last (0 to 1)}}
  %0 = train.rope %x theta = 10000.0 seq_dim = 2 interleaved : tensor<2x5x8xf32>
  return
}

// -----

func.func @rope_seq_dim_negative(%x: tensor<2x5x8xf32>) {
  // expected-error @+1 {{'train.rope' op seq_dim -1 must be a dimension of the input other than the last (0 to 1)}}
  %0 = train.rope %x theta = 10000.0 seq_dim = -1 rotate_half : tensor<2x5x8xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'train.rope' op input must have rank >= 2 (positions and the head dimension), got 8}}
  %0 = train.rope %x theta = 10000.0 seq_dim = 0 rotate_half : tensor<8xf32>
  return
}

// -----

func.func @rope_theta(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{'train.rope' op theta must be finite and positive, got -1.000000e+00}}
  %0 = train.rope %x theta = -1.0 seq_dim = 0 rotate_half : tensor<5x8xf32>
  return
}

// -----

func.func @rope_scaling_count(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{'train.rope' op scaling must be [factor] (linear) or [factor, low_freq_factor, high_freq_factor, original_max_position_embeddings] (llama3), got 2 values}}
  %0 = train.rope %x theta = 1.0 seq_dim = 0 rotate_half scaling = [8.0, 1.0] : tensor<5x8xf32>
  return
}

// -----

func.func @rope_scaling_factor(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{'train.rope' op scaling factor must be finite and positive, got 0.000000e+00}}
  %0 = train.rope %x theta = 1.0 seq_dim = 0 rotate_half scaling = [0.0] : tensor<5x8xf32>
  return
}

// -----

func.func @rope_scaling_original(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{'train.rope' op scaling original_max_position_embeddings must be finite and positive, got -8.192000e+03}}
  %0 = train.rope %x theta = 1.0 seq_dim = 0 rotate_half scaling = [8.0, 1.0, 4.0, -8192.0] : tensor<5x8xf32>
  return
}

// -----

func.func @rope_scaling_bands(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{'train.rope' op scaling low_freq_factor 4.000000e+00 must be smaller than high_freq_factor 1.000000e+00}}
  %0 = train.rope %x theta = 1.0 seq_dim = 0 rotate_half scaling = [8.0, 4.0, 1.0, 8192.0] : tensor<5x8xf32>
  return
}

// -----

func.func @rope_style(%x: tensor<5x8xf32>) {
  // expected-error @+1 {{custom op 'train.rope' expected string or keyword containing one of the following enum values for attribute 'style' [interleaved, rotate_half]}}
  %0 = train.rope %x theta = 1.0 seq_dim = 0 neox : tensor<5x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.slice, train.slice_grad
//===----------------------------------------------------------------------===//

func.func @slice_out_of_bounds(%x: tensor<1x16x8xf32>) {
  // expected-error @+1 {{'train.slice' op slice out of bounds in dimension 1: 17 elements from offset 0 with stride 1 do not fit in the input's 16}}
  %0 = train.slice %x offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x16x8xf32> -> tensor<1x17x8xf32>
  return
}

// -----

func.func @slice_offset_out_of_bounds(%x: tensor<1x16x8xf32>) {
  // expected-error @+1 {{'train.slice' op slice out of bounds in dimension 2: 1 elements from offset 8 with stride 1 do not fit in the input's 8}}
  %0 = train.slice %x offsets = [0, 0, 8] strides = [1, 1, 1] : tensor<1x16x8xf32> -> tensor<1x16x1xf32>
  return
}

// -----

func.func @slice_stride_out_of_bounds(%x: tensor<1x16x8xf32>) {
  // expected-error @+1 {{'train.slice' op slice out of bounds in dimension 1: 6 elements from offset 1 with stride 3 do not fit in the input's 16}}
  %0 = train.slice %x offsets = [0, 1, 0] strides = [1, 3, 1] : tensor<1x16x8xf32> -> tensor<1x6x8xf32>
  return
}

// -----

func.func @slice_huge_stride(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.slice' op slice out of bounds in dimension 0: 2 elements from offset 0 with stride 9223372036854775807 do not fit in the input's 4}}
  %0 = train.slice %x offsets = [0] strides = [9223372036854775807] : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_negative_offset(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.slice' op dimension 0: offset -1 must be non-negative, stride 1 positive and size 2 non-negative}}
  %0 = train.slice %x offsets = [-1, 0] strides = [1, 1] : tensor<4x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.slice' op dimension 1: offset 0 must be non-negative, stride 0 positive and size 4 non-negative}}
  %0 = train.slice %x offsets = [0, 0] strides = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_rank(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.slice' op offsets (1), strides (2) and the result's shape (2) must each have one entry per dimension of the input (rank 2)}}
  %0 = train.slice %x offsets = [0] strides = [1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_element(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.slice' op element type changes from 'f32' to 'bf16'}}
  %0 = train.slice %x offsets = [0, 0] strides = [1, 1] : tensor<4x4xf32> -> tensor<2x4xbf16>
  return
}

// -----

func.func @slice_grad_out_of_bounds(%g: tensor<1x17x8xf32>) {
  // expected-error @+1 {{'train.slice_grad' op slice out of bounds in dimension 1: 17 elements from offset 0 with stride 1 do not fit in the input's 16}}
  %0 = train.slice_grad %g offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x17x8xf32> -> tensor<1x16x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.dropout
//===----------------------------------------------------------------------===//

func.func @dropout_micro_batch_alone(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op micro_batch and micro_batches go together (the micro-batch train-accumulate records)}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 ranks = 2 micro_batch = 1 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_micro_batch_no_split(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op micro_batch needs batch_dim and ranks (the batch split it is a micro-batch of)}}
  %0 = train.dropout %x p = 0.1 seed = 0 micro_batch = 0 micro_batches = 2 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_micro_batches_zero(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op micro_batches must be positive, got 0}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 ranks = 2 micro_batch = 0 micro_batches = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_micro_batch_out_of_range(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op micro_batch 2 is out of range for micro_batches = 2}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 ranks = 2 micro_batch = 2 micro_batches = 2 : tensor<4x4xf32>
  return
}

// -----

func.func @slice_element_type(%t: tensor<4x7xi32>) {
  // expected-error @+1 {{'train.slice' op element type changes from 'i32' to 'f32'}}
  %0 = train.slice %t offsets = [0, 0] strides = [1, 1] : tensor<4x7xi32> -> tensor<2x7xf32>
  return
}

// -----

func.func @dropout_p_one(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op p must be in [0, 1), got 1.000000e+00}}
  %0 = train.dropout %x p = 1.0 seed = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_p_negative(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op p must be in [0, 1), got -1.000000e-01}}
  %0 = train.dropout %x p = -0.1 seed = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_p_nan(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op p must be in [0, 1), got nan}}
  %0 = train.dropout %x p = 0x7FF8000000000000 seed = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_batch_without_ranks(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op batch_dim and ranks go together (the batch split train-data-parallel records)}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_batch_dim(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op batch_dim 2 is out of range for rank 2}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 2 ranks = 2 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_ranks(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.dropout' op ranks must be positive, got 0}}
  %0 = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 ranks = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @dropout_step_type(%x: tensor<4x4xf32>, %s: tensor<i32>) {
  // expected-error @+1 {{'train.dropout' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = "train.dropout"(%x, %s) {p = 0.1 : f64, seed = 0 : i64} : (tensor<4x4xf32>, tensor<i32>) -> tensor<4x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Grouped-query attention
//===----------------------------------------------------------------------===//

func.func @gqa_heads(%q: tensor<2x4x5x8xf32>, %k: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query heads (4) must be a multiple of key/value heads (3) for grouped-query attention}}
  %0 = train.attention %q, %k, %k causal scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> tensor<2x4x5x8xf32>
  return
}

// -----

func.func @gqa_more_kv_heads(%q: tensor<2x2x5x8xf32>, %k: tensor<2x4x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query heads (2) must be a multiple of key/value heads (4) for grouped-query attention}}
  %0 = train.attention %q, %k, %k causal scale = 0.25 : (tensor<2x2x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x2x5x8xf32>
  return
}

// -----

func.func @gqa_grad_heads(%q: tensor<2x4x5x8xf32>, %k: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op query heads (4) must be a multiple of key/value heads (3) for grouped-query attention}}
  %0:3 = train.attention_grad %q, %q, %k, %k scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>)
  return
}

// -----

func.func @gqa_grad_results(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op result #1 type 'tensor<2x4x5x8xf32>' does not match the expected 'tensor<2x2x5x8xf32>'}}
  %0:3 = train.attention_grad %q, %q, %k, %k scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>)
  return
}
