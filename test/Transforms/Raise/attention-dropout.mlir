// RUN: zeroc-opt %s --split-input-file --train-raise=families=attention | FileCheck %s

// Dropout of the probabilities (nn.MultiheadAttention(dropout=p),
// F.dropout(att) in nanoGPT) becomes train.attention's own dropout: the
// same p and seed (and step, batch split, micro-batch when recorded), so
// the same mask.
// CHECK-LABEL: func.func @dropout_probs
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 dropout = 1.000000e-01 seed = 7 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @dropout_probs(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %m = train.causal_mask %d : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %pd = train.dropout %p p = 0.1 seed = 7 : tensor<2x4x8x8xf32>
  %y = train.matmul %pd, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// A dropout that already has its step and batch split keeps them.
// CHECK-LABEL: func.func @dropout_recorded
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[STEP:.*]]: tensor<i64>)
// CHECK-NEXT: train.attention %[[Q]], %[[K]], %[[V]], %[[STEP]] scale = 2.500000e-01 dropout = 5.000000e-01 seed = 2 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 3 :
func.func @dropout_recorded(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %step: tensor<i64>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %pd = train.dropout %p, %step p = 0.5 seed = 2 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 3 : tensor<2x4x8x8xf32>
  %y = train.matmul %pd, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Rank 3 (torch.bmm over [B*H, T, D], nn.MultiheadAttention): the
// [N, T, S] probabilities' dropout is that of the one-head [N, 1, T, S]
// (the same element positions).
// CHECK-LABEL: func.func @bmm_dropout
// CHECK: %[[A:.*]] = train.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 dropout = 1.000000e-01 seed = 0 : (tensor<6x1x8x16xf32>, tensor<6x1x8x16xf32>, tensor<6x1x8x16xf32>) -> tensor<6x1x8x16xf32>
// CHECK: train.reshape %[[A]] : tensor<6x1x8x16xf32> -> tensor<6x8x16xf32>
// CHECK-NOT: train.dropout
func.func @bmm_dropout(%q: tensor<6x8x16xf32>, %k: tensor<6x8x16xf32>, %v: tensor<6x8x16xf32>) -> tensor<6x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<6x8x16xf32>, tensor<6x8x16xf32>) -> tensor<6x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<6x8x8xf32>
  %p = train.softmax %d : tensor<6x8x8xf32>
  %pd = train.dropout %p p = 0.1 seed = 0 : tensor<6x8x8xf32>
  %y = train.matmul %pd, %v : (tensor<6x8x8xf32>, tensor<6x8x16xf32>) -> tensor<6x8x16xf32>
  return %y : tensor<6x8x16xf32>
}

// -----

// Near-miss: dropout of the scores before the softmax is another
// computation; nothing is raised.
// CHECK-LABEL: func.func @dropout_scores
// CHECK-NOT: train.attention
// CHECK: train.dropout
// CHECK: train.softmax
// CHECK-NOT: train.attention
func.func @dropout_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %sd = train.dropout %d p = 0.1 seed = 7 : tensor<2x4x8x8xf32>
  %p = train.softmax %sd : tensor<2x4x8x8xf32>
  %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Near-miss: the dropped probabilities are also used elsewhere (returned):
// the dropout stays, and so does the generic attention.
// CHECK-LABEL: func.func @dropout_shared
// CHECK-NOT: train.attention
// CHECK: train.dropout
// CHECK-NOT: train.attention
func.func @dropout_shared(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %s = train.matmul %q, %k transpose_rhs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.25 : tensor<2x4x8x8xf32>
  %p = train.softmax %d : tensor<2x4x8x8xf32>
  %pd = train.dropout %p p = 0.1 seed = 7 : tensor<2x4x8x8xf32>
  %y = train.matmul %pd, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y, %pd : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}
