// RUN: zeroc-opt %s --split-input-file --train-raise=families=attention | FileCheck %s

// Hugging Face's torch.matmul(attn_weights, value_states) with value_states
// repeat_kv'ed: ATen runs it as a bmm on [B*H, T, S] and [B*H, S, D], the
// expanded values reshaped straight to [B*H, S, D]. The heads are unmerged
// for the product, then the attention (grouped-query, 2 key/value heads for
// 4 query heads) is raised.
// CHECK-LABEL: func.func @hf_merged_pv
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x2x8x16xf32>, %[[V:.*]]: tensor<2x2x8x16xf32>)
// CHECK: %[[A:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: %[[M:.*]] = train.reshape %[[A]] : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
// CHECK-NEXT: %[[O:.*]] = train.reshape %[[M]] : tensor<8x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @hf_merged_pv(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %k5 = train.reshape %k : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %ke = train.broadcast %k5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = train.reshape %ke : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %v5 = train.reshape %v : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %ve = train.broadcast %v5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %s = train.matmul %q, %kr transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %m = train.causal_mask %d : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p3 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<8x8x8xf32>
  %v3 = train.reshape %ve : tensor<2x2x2x8x16xf32> -> tensor<8x8x16xf32>
  %o3 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o = train.reshape %o3 : tensor<8x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Near-miss: the probabilities merged with another grouping ([B*H, T, S]
// from a [B, T, H, S] tensor is not what the bmm of the heads reads): the
// product stays as it is.
// CHECK-LABEL: func.func @merged_other_order
// CHECK-NOT: train.attention
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<8x8x8xf32>, tensor<8x8x16xf32>)
func.func @merged_other_order(%s: tensor<2x8x4x8xf32>, %v: tensor<8x8x16xf32>) -> tensor<8x8x16xf32> {
  %p = train.softmax %s : tensor<2x8x4x8xf32>
  %p3 = train.reshape %p : tensor<2x8x4x8xf32> -> tensor<8x8x8xf32>
  %o3 = train.matmul %p3, %v : (tensor<8x8x8xf32>, tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  return %o3 : tensor<8x8x16xf32>
}
