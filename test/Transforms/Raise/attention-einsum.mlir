// RUN: zeroc-opt %s --split-input-file --train-raise=families=views,attention | FileCheck %s

// torch.einsum("bthd,bshd->bhts", q, k) / sqrt(D) masked by
// torch.where(tril, att, -inf), softmax, einsum("bhts,bshd->bthd", att, v),
// with the 2 key/value heads repeated by repeat_interleave(2, dim=2) (as
// the importer writes it for expand + reshape and for indexing by
// arange(2).repeat_interleave(2) too): each einsum a bmm between rank-5
// permutes and reshapes. After the views, grouped-query train.attention on
// the 2 unrepeated heads.
// CHECK-LABEL: func.func @einsum_gqa
// CHECK-SAME: (%[[QP:.*]]: tensor<2x8x16xf32>, %[[KVP:.*]]: tensor<2x8x16xf32>)
// CHECK-DAG: %[[KV:.*]]:2 = train.split %[[KVP]]
// CHECK-DAG: %[[Q4:.*]] = train.reshape %[[QP]] : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
// CHECK-DAG: %[[Q:.*]] = train.transpose %[[Q4]] [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
// CHECK-DAG: %[[K4:.*]] = train.reshape %[[KV]]#0 : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
// CHECK-DAG: %[[V4:.*]] = train.reshape %[[KV]]#1 : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
// CHECK-DAG: %[[K:.*]] = train.transpose %[[K4]] [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
// CHECK-DAG: %[[V:.*]] = train.transpose %[[V4]] [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
// CHECK: %[[Y:.*]] = train.attention %[[Q]], %[[K]], %[[V]] causal scale = 5.000000e-01 : (tensor<2x4x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> tensor<2x4x8x4xf32>
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[Y]] [0, 2, 1, 3] : tensor<2x4x8x4xf32> -> tensor<2x8x4x4xf32>
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[T]] : tensor<2x8x4x4xf32> -> tensor<2x8x4x4x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @einsum_gqa(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x16xf32>) -> tensor<2x8x4x4x1xf32> {
  %k0, %v0 = train.split %kvp dim = 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %k5 = train.reshape %k0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %kb = train.broadcast %k5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %v5 = train.reshape %v0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %vb = train.broadcast %v5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.5 : tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %d, %ninf : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}

// -----

// The same without repeated heads (4 key/value heads): multi-head
// train.attention.
// CHECK-LABEL: func.func @einsum_mha
// CHECK-SAME: (%[[QP:.*]]: tensor<2x8x16xf32>, %[[KVP:.*]]: tensor<2x8x32xf32>)
// CHECK-NOT: train.softmax
// CHECK: train.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 5.000000e-01 : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
// CHECK-NOT: train.matmul
// CHECK: return
func.func @einsum_mha(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x32xf32>) -> tensor<2x8x4x4x1xf32> {
  %kb, %vb = train.split %kvp dim = 2 : tensor<2x8x32xf32> -> tensor<2x8x16xf32>, tensor<2x8x16xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.5 : tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %d, %ninf : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}

// -----

// Near miss: the heads repeated the other way (`[:, :, None].expand(B, T,
// 2, 2, D).reshape(B, T, 4, D)`, torch's `repeat`: query head h reads
// key/value head h % 2, not h / 2) is no grouped-query attention, and the
// repeated k^T is no transpose: all of it stays generic.
// CHECK-LABEL: func.func @tiled
// CHECK-NOT: train.attention
// CHECK: train.broadcast %{{.*}} : tensor<2x1x2x4x8xf32> -> tensor<2x2x2x4x8xf32>
// CHECK: train.softmax
// CHECK: train.broadcast %{{.*}} : tensor<2x1x2x8x4xf32> -> tensor<2x2x2x8x4xf32>
// CHECK: return
func.func @tiled(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x16xf32>) -> tensor<2x8x4x4x1xf32> {
  %k0, %v0 = train.split %kvp dim = 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %k5 = train.reshape %k0 : tensor<2x8x8xf32> -> tensor<2x8x1x2x4xf32>
  %kb = train.broadcast %k5 : tensor<2x8x1x2x4xf32> -> tensor<2x8x2x2x4xf32>
  %v5 = train.reshape %v0 : tensor<2x8x8xf32> -> tensor<2x8x1x2x4xf32>
  %vb = train.broadcast %v5 : tensor<2x8x1x2x4xf32> -> tensor<2x8x2x2x4xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.5 : tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %d, %ninf : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}

// -----

// Near miss: a mask that also keeps the first diagonal above (tril with
// diagonal = 1): not causal, left generic.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: train.attention
// CHECK: train.select
// CHECK: train.softmax
// CHECK: return
func.func @not_causal(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x16xf32>) -> tensor<2x8x4x4x1xf32> {
  %k0, %v0 = train.split %kvp dim = 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %k5 = train.reshape %k0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %kb = train.broadcast %k5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %v5 = train.reshape %v0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %vb = train.broadcast %v5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.5 : tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 1 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %d, %ninf : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}

// -----

// Without the / sqrt(D): raised with scale 1, not train.attention's
// default 1/sqrt(D).
// CHECK-LABEL: func.func @no_scale
// CHECK: train.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 1.000000e+00 : (tensor<2x4x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>)
// CHECK-NOT: train.softmax
// CHECK: return
func.func @no_scale(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x16xf32>) -> tensor<2x8x4x4x1xf32> {
  %k0, %v0 = train.split %kvp dim = 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %k5 = train.reshape %k0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %kb = train.broadcast %k5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %v5 = train.reshape %v0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %vb = train.broadcast %v5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %s, %ninf : tensor<2x4x8x8xf32>
  %p = train.softmax %m : tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}

// -----

// Near miss: softmax over the query axis (att.softmax(-2), imported as a
// softmax between two transposes): left generic.
// CHECK-LABEL: func.func @softmax_axis
// CHECK-NOT: train.attention
// CHECK: train.softmax
// CHECK: return
func.func @softmax_axis(%qp: tensor<2x8x16xf32>, %kvp: tensor<2x8x16xf32>) -> tensor<2x8x4x4x1xf32> {
  %k0, %v0 = train.split %kvp dim = 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %k5 = train.reshape %k0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %kb = train.broadcast %k5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %v5 = train.reshape %v0 : tensor<2x8x8xf32> -> tensor<2x8x2x1x4xf32>
  %vb = train.broadcast %v5 : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
  %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
  %k5r = train.reshape %kb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %kt = train.transpose %k5r [0, 2, 4, 1, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x1x8x4xf32>
  %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %kt2 = train.transpose %kt [0, 1, 4, 3, 2] : tensor<2x4x1x8x4xf32> -> tensor<2x4x4x8x1xf32>
  %k3 = train.reshape %kt2 : tensor<2x4x4x8x1xf32> -> tensor<8x4x8xf32>
  %bmm = train.matmul %q3, %k3 : (tensor<8x8x4xf32>, tensor<8x4x8xf32>) -> tensor<8x8x8xf32>
  %s5 = train.reshape %bmm : tensor<8x8x8xf32> -> tensor<2x4x8x1x8xf32>
  %s5t = train.transpose %s5 [0, 1, 2, 4, 3] : tensor<2x4x8x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %s = train.reshape %s5t : tensor<2x4x8x8x1xf32> -> tensor<2x4x8x8xf32>
  %d = train.scale %s by 0.5 : tensor<2x4x8x8xf32>
  %ninf = train.fill 0xFFF0000000000000 : tensor<2x4x8x8xf32>
  %ones = train.fill 1.0 : tensor<8x8xf32>
  %tril = train.tril %ones diagonal = 0 : tensor<8x8xf32>
  %keep4 = train.reshape %tril : tensor<8x8xf32> -> tensor<1x1x8x8xf32>
  %keep = train.broadcast %keep4 : tensor<1x1x8x8xf32> -> tensor<2x4x8x8xf32>
  %m = train.select %keep, %d, %ninf : tensor<2x4x8x8xf32>
  %mt = train.transpose %m [0, 1, 3, 2] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %pt = train.softmax %mt : tensor<2x4x8x8xf32>
  %p = train.transpose %pt [0, 1, 3, 2] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p5 = train.reshape %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8x1xf32>
  %pt5 = train.transpose %p5 [0, 2, 1, 4, 3] : tensor<2x4x8x8x1xf32> -> tensor<2x8x4x1x8xf32>
  %v5r = train.reshape %vb : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4x1xf32>
  %vt = train.transpose %v5r [0, 4, 2, 3, 1] : tensor<2x8x4x4x1xf32> -> tensor<2x1x4x4x8xf32>
  %pt6 = train.transpose %pt5 [0, 2, 1, 4, 3] : tensor<2x8x4x1x8xf32> -> tensor<2x4x8x8x1xf32>
  %p3 = train.reshape %pt6 : tensor<2x4x8x8x1xf32> -> tensor<8x8x8xf32>
  %vt2 = train.transpose %vt [0, 2, 4, 3, 1] : tensor<2x1x4x4x8xf32> -> tensor<2x4x8x4x1xf32>
  %v3 = train.reshape %vt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
  %bmm1 = train.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x4xf32>) -> tensor<8x8x4xf32>
  %y5 = train.reshape %bmm1 : tensor<8x8x4xf32> -> tensor<2x4x8x1x4xf32>
  %y = train.transpose %y5 [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %y : tensor<2x8x4x4x1xf32>
}
