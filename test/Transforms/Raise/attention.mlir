// RUN: zeroc-opt %s --split-input-file --train-raise=families=attention | FileCheck %s

// GPT-2's attention written out: q @ k.transpose(-2, -1), / sqrt(D) as a
// division by a constant, the causal mask, softmax, @ v.
// CHECK-LABEL: func.func @causal_div
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @causal_div(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt = train.transpose %k [0, 1, 3, 2] : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = train.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %c = train.fill 4.0 : tensor<f32>
  %d = train.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %m = train.causal_mask %d : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Scales on q and on the scores multiply; transpose_rhs; no mask.
// CHECK-LABEL: func.func @scaled_q
// CHECK-NEXT: train.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 :
// CHECK-NOT: causal
// CHECK-NEXT: return
func.func @scaled_q(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %qs = train.scale %q by 0.5 : tensor<2x4x8x16xf32>
  %s = train.matmul %qs, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %c = train.fill 0.25 : tensor<1xf32>
  %d = train.mul %c, %s : (tensor<1xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Grouped-query attention with repeat_interleave's repetition of the 2
// key/value heads (unsqueeze, expand, reshape): train.attention's own
// grouping (query head h reads key/value head h / 2).
// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x2x8x16xf32>, %[[V:.*]]: tensor<2x2x8x16xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gqa(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %k5 = train.reshape %k : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %kb = train.broadcast %k5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = train.reshape %kb : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %v5 = train.reshape %v : tensor<2x2x8x16xf32> -> tensor<2x2x1x8x16xf32>
  %vb = train.broadcast %v5 : tensor<2x2x1x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %vr = train.reshape %vb : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %s = train.matmul %q, %kr transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %m = train.causal_mask %d : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %vr : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Rank 3 (torch.bmm over [B*H, T, D]) becomes one head.
// CHECK-LABEL: func.func @bmm
// CHECK: %[[Q4:.*]] = train.reshape %{{.*}} : tensor<6x8x16xf32> -> tensor<6x1x8x16xf32>
// CHECK: %[[A:.*]] = train.attention %[[Q4]], %{{.*}}, %{{.*}} causal scale = 2.500000e-01 : (tensor<6x1x8x16xf32>, tensor<6x1x8x16xf32>, tensor<6x1x8x16xf32>) -> tensor<6x1x8x16xf32>
// CHECK: train.reshape %[[A]] : tensor<6x1x8x16xf32> -> tensor<6x8x16xf32>
func.func @bmm(%q: tensor<6x8x16xf32>, %k: tensor<6x8x16xf32>, %v: tensor<6x8x16xf32>) -> tensor<6x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<6x8x16xf32>, tensor<6x8x16xf32>) -> tensor<6x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<6x8x8xf32>
  %m = train.causal_mask %d : tensor<6x8x8xf32>
  %p = train.softmax %m : tensor<6x8x8xf32>
  %y = train.matmul %p, %v : (tensor<6x8x8xf32>, tensor<6x8x16xf32>) -> tensor<6x8x16xf32>
  return %y : tensor<6x8x16xf32>
}

// -----

// Heads repeated with `repeat` (head h reads h % Hkv) are not GQA's
// grouping: the attention is raised over the repeated heads, which stay.
// CHECK-LABEL: func.func @tiled_heads
// CHECK: %[[K:.*]] = train.reshape %{{.*}} : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK: %[[V:.*]] = train.reshape %{{.*}} : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK: train.attention %{{.*}}, %[[K]], %[[V]] scale = 1.000000e+00 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
func.func @tiled_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %k5 = train.reshape %k : tensor<2x2x8x16xf32> -> tensor<2x1x2x8x16xf32>
  %kb = train.broadcast %k5 : tensor<2x1x2x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %kr = train.reshape %kb : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %v5 = train.reshape %v : tensor<2x2x8x16xf32> -> tensor<2x1x2x8x16xf32>
  %vb = train.broadcast %v5 : tensor<2x1x2x8x16xf32> -> tensor<2x2x2x8x16xf32>
  %vr = train.reshape %vb : tensor<2x2x2x8x16xf32> -> tensor<2x4x8x16xf32>
  %s = train.matmul %q, %kr transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %p = train.softmax %s : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %vr : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Near misses, left generic.
// k transposed on the wrong axes (heads and positions).
// CHECK-LABEL: func.func @wrong_axes
// CHECK-NOT: train.attention
// CHECK: train.softmax
func.func @wrong_axes(%q: tensor<2x8x8x8xf32>, %k: tensor<2x8x8x8xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32> {
  %kt = train.transpose %k [0, 2, 1, 3] : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %s = train.matmul %q, %kt : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %p = train.softmax %s : tensor<2x8x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %y : tensor<2x8x8x8xf32>
}

// -----

// A scale by a value computed at run time (not a constant), a negative
// scale, a dropout with p > 0, scores read twice.
// CHECK-LABEL: func.func @not_constant
// CHECK-NOT: train.attention
// CHECK: return
func.func @not_constant(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %t: tensor<f32>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.div %s, %t : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}
// CHECK-LABEL: func.func @negative_scale
// CHECK-NOT: train.attention
// CHECK: return
func.func @negative_scale(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by -0.25 : tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}
// A dropout of the probabilities becomes the attention's own
// (attention-dropout.mlir has more).
// CHECK-LABEL: func.func @dropout
// CHECK-NEXT: train.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 dropout = 1.000000e-01 seed = 1 :
// CHECK-NEXT: return
func.func @dropout(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %pd = train.dropout %p p = 1.000000e-01 seed = 1 : tensor<2x4x8x8xf32>
  %y = train.matmul %pd, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}
// CHECK-LABEL: func.func @scores_read_twice
// CHECK-NOT: train.attention
// CHECK: return
func.func @scores_read_twice(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y, %p : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}

// -----

// PyTorch 1.13's nn.MultiheadAttention over [B*H, T, D] (the heads merged
// into the batch): q scaled before the bmm, baddbmm with the additive
// [T, T] mask of nn.Transformer.generate_square_subsequent_mask (triu of
// -inf, diagonal 1), softmax, bmm with v: one head of train.attention.
// CHECK-LABEL: func.func @mha_bmm
// CHECK-SAME: (%[[Q:.*]]: tensor<6x4x8xf32>, %[[K:.*]]: tensor<6x4x8xf32>, %[[V:.*]]: tensor<6x4x8xf32>)
// CHECK: %[[Q4:.*]] = train.reshape %[[Q]] : tensor<6x4x8xf32> -> tensor<6x1x4x8xf32>
// CHECK: %[[A:.*]] = train.attention %[[Q4]], %{{.*}}, %{{.*}} causal scale = 0.35355339059327379 : (tensor<6x1x4x8xf32>, tensor<6x1x4x8xf32>, tensor<6x1x4x8xf32>) -> tensor<6x1x4x8xf32>
// CHECK: %[[Y:.*]] = train.reshape %[[A]] : tensor<6x1x4x8xf32> -> tensor<6x4x8xf32>
// CHECK-NOT: train.softmax
// CHECK: return %[[Y]]
func.func @mha_bmm(%q: tensor<6x4x8xf32>, %k: tensor<6x4x8xf32>, %v: tensor<6x4x8xf32>) -> tensor<6x4x8xf32> {
  %qs = train.scale %q by 0.35355339059327379 : tensor<6x4x8xf32>
  %full = train.fill 0xFFF0000000000000 : tensor<4x4xf32>
  %upper = train.triu %full diagonal = 1 : tensor<4x4xf32>
  %s = train.matmul %qs, %k transpose_rhs : (tensor<6x4x8xf32>, tensor<6x4x8xf32>) -> tensor<6x4x4xf32>
  %m = train.add %s, %upper : (tensor<6x4x4xf32>, tensor<4x4xf32>) -> tensor<6x4x4xf32>
  %p = train.softmax %m : tensor<6x4x4xf32>
  %y = train.matmul %p, %v : (tensor<6x4x4xf32>, tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  return %y : tensor<6x4x8xf32>
}

// -----

// Near misses of the merged-head form, left generic: an additive mask that
// also keeps the first diagonal above (triu diagonal = 2: not causal).
// CHECK-LABEL: func.func @mha_bmm_not_causal
// CHECK-NOT: train.attention
// CHECK: train.softmax
func.func @mha_bmm_not_causal(%q: tensor<6x4x8xf32>, %k: tensor<6x4x8xf32>, %v: tensor<6x4x8xf32>) -> tensor<6x4x8xf32> {
  %qs = train.scale %q by 0.35355339059327379 : tensor<6x4x8xf32>
  %full = train.fill 0xFFF0000000000000 : tensor<4x4xf32>
  %upper = train.triu %full diagonal = 2 : tensor<4x4xf32>
  %s = train.matmul %qs, %k transpose_rhs : (tensor<6x4x8xf32>, tensor<6x4x8xf32>) -> tensor<6x4x4xf32>
  %m = train.add %s, %upper : (tensor<6x4x4xf32>, tensor<4x4xf32>) -> tensor<6x4x4xf32>
  %p = train.softmax %m : tensor<6x4x4xf32>
  %y = train.matmul %p, %v : (tensor<6x4x4xf32>, tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  return %y : tensor<6x4x8xf32>
}

// -----

// q @ k with k not transposed (the positions of k contracted with the
// features of q, which have the same size here): not attention.
// CHECK-LABEL: func.func @mha_bmm_k_not_transposed
// CHECK-NOT: train.attention
// CHECK: train.softmax
func.func @mha_bmm_k_not_transposed(%q: tensor<6x4x4xf32>, %k: tensor<6x4x4xf32>, %v: tensor<6x4x4xf32>) -> tensor<6x4x4xf32> {
  %qs = train.scale %q by 0.5 : tensor<6x4x4xf32>
  %s = train.matmul %qs, %k : (tensor<6x4x4xf32>, tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %m = train.causal_mask %s : tensor<6x4x4xf32>
  %p = train.softmax %m : tensor<6x4x4xf32>
  %y = train.matmul %p, %v : (tensor<6x4x4xf32>, tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  return %y : tensor<6x4x4xf32>
}

// -----

// The scores' probabilities also returned (need_weights=True): the softmax
// is read twice, so the attention stays generic.
// CHECK-LABEL: func.func @mha_bmm_weights_read
// CHECK-NOT: train.attention
// CHECK: train.softmax
func.func @mha_bmm_weights_read(%q: tensor<6x4x8xf32>, %k: tensor<6x4x8xf32>, %v: tensor<6x4x8xf32>) -> (tensor<6x4x8xf32>, tensor<6x4x4xf32>) {
  %s = train.matmul %q, %k transpose_rhs : (tensor<6x4x8xf32>, tensor<6x4x8xf32>) -> tensor<6x4x4xf32>
  %m = train.causal_mask %s : tensor<6x4x4xf32>
  %p = train.softmax %m : tensor<6x4x4xf32>
  %y = train.matmul %p, %v : (tensor<6x4x4xf32>, tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  return %y, %p : tensor<6x4x8xf32>, tensor<6x4x4xf32>
}
