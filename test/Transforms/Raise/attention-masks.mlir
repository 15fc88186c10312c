// RUN: zeroc-opt %s --split-input-file --train-raise=families=attention | FileCheck %s

// nanoGPT's masked_fill(bias[:, :, :T, :T] == 0, -inf) with the buffer
// torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8), for T = 4.
// CHECK-LABEL: func.func @masked_fill
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x4x8xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x4x8xf32>)
// CHECK: %[[Y:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 0.35355339059327379 :
// CHECK-NEXT: return %[[Y]]
func.func @masked_fill(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %bias = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %b = train.slice %bias offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<1x1x8x8xf32> -> tensor<1x1x4x4xf32>
  %bb = train.broadcast %b : tensor<1x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %zero = train.fill 0.0 : tensor<2x2x4x4xf32>
  %c = train.compare %bb, %zero eq : tensor<2x2x4x4xf32>
  %kt = train.transpose %k [0, 1, 3, 2] : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = train.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %d = train.scale %s by 0.35355339059327379 : tensor<2x2x4x4xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x2x4x4xf32>
  %m = train.select %c, %ninf, %d : tensor<2x2x4x4xf32>
  %p = train.softmax %m : tensor<2x2x4x4xf32>
  %y = train.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// torch.where(tril, att, -inf) and an additive triu(-inf, 1) mask.
// CHECK-LABEL: func.func @where_and_additive
// CHECK-COUNT-2: train.attention {{.*}} causal scale = 5.000000e-01
// CHECK-NOT: train.softmax
func.func @where_and_additive(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %ones = train.fill 1.0 : tensor<4x4xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<4x4xf32>
  %keep = train.broadcast %tril : tensor<4x4xf32> -> tensor<1x2x4x4xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<1x2x4x4xf32>
  %s = train.matmul %q, %k transpose_rhs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %d = train.scale %s by 0.5 : tensor<1x2x4x4xf32>
  %m = train.select %keep, %d, %ninf : tensor<1x2x4x4xf32>
  %p = train.softmax %m : tensor<1x2x4x4xf32>
  %y = train.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %full = train.fill 0xFFF0000000000000 : tensor<4x4xf32>
  %upper = train.triu %full diagonal = 1 : tensor<4x4xf32>
  %s2 = train.matmul %q, %k transpose_rhs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %d2 = train.scale %s2 by 0.5 : tensor<1x2x4x4xf32>
  %m2 = train.add %d2, %upper : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = train.softmax %m2 : tensor<1x2x4x4xf32>
  %y2 = train.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y, %y2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Near misses, left generic: a mask that also keeps the first diagonal
// above (tril diagonal = 1: not causal), and an additive mask of -1e4 (a
// wrong constant) instead of -inf.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: train.attention
// CHECK: return
func.func @not_causal(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %ones = train.fill 1.0 : tensor<4x4xf32>
  %tril = train.tril %ones diagonal = 1 : tensor<4x4xf32>
  %keep = train.broadcast %tril : tensor<4x4xf32> -> tensor<1x2x4x4xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<1x2x4x4xf32>
  %s = train.matmul %q, %k transpose_rhs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %m = train.select %keep, %s, %ninf : tensor<1x2x4x4xf32>
  %p = train.softmax %m : tensor<1x2x4x4xf32>
  %y = train.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @finite_mask
// CHECK-NOT: train.attention
// CHECK: return
func.func @finite_mask(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %full = train.fill -1.0e4 : tensor<4x4xf32>
  %upper = train.triu %full diagonal = 1 : tensor<4x4xf32>
  %s = train.matmul %q, %k transpose_rhs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %m = train.add %s, %upper : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = train.softmax %m : tensor<1x2x4x4xf32>
  %y = train.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
