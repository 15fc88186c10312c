// RUN: zeroc-opt %s --split-input-file --train-data-parallel=world-size=2 | FileCheck %s

// The batch axis is followed, not assumed leading (issue 31's model:
// `qkv.permute(2, 0, 3, 1, 4)`, then `q, k, v = qkv[0], qkv[1], qkv[2]`):
// after the permutation the batch is dimension 1, the split along
// dimension 0 keeps it, and the reshape that drops the leading 1 finds it
// whole again.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x4x24xf32>)
// CHECK: train.reshape %{{.*}} : tensor<2x4x24xf32> -> tensor<2x4x3x2x4xf32>
// CHECK: train.transpose %{{.*}} [2, 0, 3, 1, 4] : tensor<2x4x3x2x4xf32> -> tensor<3x2x2x4x4xf32>
// CHECK: train.split %{{.*}} dim = 0 : tensor<3x2x2x4x4xf32> -> tensor<1x2x2x4x4xf32>, tensor<1x2x2x4x4xf32>, tensor<1x2x2x4x4xf32>
// CHECK: train.reshape %{{.*}} : tensor<1x2x2x4x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: train.attention {{.*}} -> tensor<2x2x4x4xf32>
// CHECK: train.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
// CHECK: train.reshape %{{.*}} : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
// CHECK: train.mean %{{.*}} dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
module {
  func.func @forward(%x: tensor<4x4x24xf32>) -> tensor<f32> attributes {train.forward} {
    %r = train.reshape %x : tensor<4x4x24xf32> -> tensor<4x4x3x2x4xf32>
    %p = train.transpose %r [2, 0, 3, 1, 4] : tensor<4x4x3x2x4xf32> -> tensor<3x4x2x4x4xf32>
    %q1, %k1, %v1 = train.split %p dim = 0 : tensor<3x4x2x4x4xf32> -> tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32>
    %q = train.reshape %q1 : tensor<1x4x2x4x4xf32> -> tensor<4x2x4x4xf32>
    %k = train.reshape %k1 : tensor<1x4x2x4x4xf32> -> tensor<4x2x4x4xf32>
    %v = train.reshape %v1 : tensor<1x4x2x4x4xf32> -> tensor<4x2x4x4xf32>
    %a = train.attention %q, %k, %v causal scale = 0.5 : (tensor<4x2x4x4xf32>, tensor<4x2x4x4xf32>, tensor<4x2x4x4xf32>) -> tensor<4x2x4x4xf32>
    %t = train.transpose %a [0, 2, 1, 3] : tensor<4x2x4x4xf32> -> tensor<4x4x2x4xf32>
    %y = train.reshape %t : tensor<4x4x2x4xf32> -> tensor<4x4x8xf32>
    %l = train.mean %y dims = [0, 1, 2] : tensor<4x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A batch moved off the lead (a [T, B, C] layout, as nn.MultiheadAttention's
// default), a reshape that merges it with the dimensions after it and one
// that cuts them apart again, a broadcast that prepends a dimension (the
// batch moves right), a mean over the other dimensions, a matmul whose
// right operand carries the batch in its columns, an add that lines both
// up.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x3x8xf32>, %{{.*}}: tensor<2x8xf32>)
// CHECK: train.transpose %{{.*}} [1, 0, 2] : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
// CHECK: train.reshape %{{.*}} : tensor<3x2x8xf32> -> tensor<3x16xf32>
// CHECK: train.reshape %{{.*}} : tensor<3x16xf32> -> tensor<3x2x8xf32>
// CHECK: train.broadcast %{{.*}} : tensor<3x2x8xf32> -> tensor<5x3x2x8xf32>
// CHECK: train.mean %{{.*}} dims = [0, 3] : tensor<5x3x2x8xf32> -> tensor<3x2xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<3x8xf32>, tensor<2x8xf32>) -> tensor<3x2xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
module {
  func.func @forward(%x: tensor<4x3x8xf32>, %c: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0, 2] : tensor<4x3x8xf32> -> tensor<3x4x8xf32>
    %m = train.reshape %t : tensor<3x4x8xf32> -> tensor<3x32xf32>
    %b = train.reshape %m : tensor<3x32xf32> -> tensor<3x4x8xf32>
    %h = train.broadcast %b : tensor<3x4x8xf32> -> tensor<5x3x4x8xf32>
    %s = train.mean %h dims = [0, 3] : tensor<5x3x4x8xf32> -> tensor<3x4xf32>
    %w = train.fill 1.0 : tensor<3x8xf32>
    %z = train.matmul %w, %c transpose_rhs : (tensor<3x8xf32>, tensor<4x8xf32>) -> tensor<3x4xf32>
    %y = train.add %s, %z : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
