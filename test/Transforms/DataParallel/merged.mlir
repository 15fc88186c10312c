// RUN: zeroc-opt %s --split-input-file --train-data-parallel=world-size=2 | FileCheck %s
// RUN: zeroc-opt %s --split-input-file --train-batch-size=global-batch=6 | FileCheck %s --check-prefix=SIX

// The batch followed through dimensions it is merged into, as
// factor-based sharding propagation follows a sharded axis. This is the
// attention of PyTorch 1.13's nn.MultiheadAttention ([T, B, C] layout,
// heads merged into the batch as [T, B*H, D], the batch the major factor),
// then its output projection over [T*B, C] (the batch after the major
// factor T: rows t*B + b) and the split back to [T, B, C]. Each rank (B/2
// examples) holds the same places of every merged dimension: B*H = 8
// becomes 4, T*B = 16 becomes 8.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x4x8xf32>)
// CHECK: train.transpose %{{.*}} [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
// CHECK: train.reshape %{{.*}} : tensor<4x2x8xf32> -> tensor<4x4x4xf32>
// CHECK: train.transpose %{{.*}} [1, 0, 2] : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// CHECK: train.scale %{{.*}} by 5.000000e-01 : tensor<4x4x4xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK: train.causal_mask %{{.*}} : tensor<4x4x4xf32>
// CHECK: train.softmax %{{.*}} : tensor<4x4x4xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK: train.transpose %{{.*}} [1, 0, 2] : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// CHECK: train.reshape %{{.*}} : tensor<4x4x4xf32> -> tensor<8x8xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
// CHECK: train.reshape %{{.*}} : tensor<8x8xf32> -> tensor<4x2x8xf32>
// CHECK: train.transpose %{{.*}} [1, 0, 2] : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: train.mean %{{.*}} dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
// A new global batch of 6 follows the same dimensions: B*H = 12, T*B = 24.
// SIX-LABEL: func.func @forward
// SIX-SAME: (%{{.*}}: tensor<6x4x8xf32>)
// SIX: train.reshape %{{.*}} : tensor<4x6x8xf32> -> tensor<4x12x4xf32>
// SIX: train.softmax %{{.*}} : tensor<12x4x4xf32>
// SIX: train.reshape %{{.*}} : tensor<4x12x4xf32> -> tensor<24x8xf32>
// SIX: train.reshape %{{.*}} : tensor<24x8xf32> -> tensor<4x6x8xf32>
// SIX: train.mean %{{.*}} dims = [0, 1, 2] : tensor<6x4x8xf32> -> tensor<f32>
module {
  train.param @w : tensor<8x8xf32> init = zeros
  train.param @b : tensor<8xf32> init = zeros
  func.func @forward(%x: tensor<4x4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0, 2] : tensor<4x4x8xf32> -> tensor<4x4x8xf32>
    %m = train.reshape %t : tensor<4x4x8xf32> -> tensor<4x8x4xf32>
    %q = train.transpose %m [1, 0, 2] : tensor<4x8x4xf32> -> tensor<8x4x4xf32>
    %s = train.scale %q by 0.5 : tensor<8x4x4xf32>
    %a = train.matmul %s, %q transpose_rhs : (tensor<8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
    %c = train.causal_mask %a : tensor<8x4x4xf32>
    %p = train.softmax %c : tensor<8x4x4xf32>
    %o = train.matmul %p, %q : (tensor<8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
    %ot = train.transpose %o [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
    %r = train.reshape %ot : tensor<4x8x4xf32> -> tensor<16x8xf32>
    %w = train.read @w : tensor<8x8xf32>
    %y = train.matmul %r, %w transpose_rhs : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    %b = train.read @b : tensor<8xf32>
    %yb = train.add %y, %b : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16x8xf32>
    %v = train.reshape %yb : tensor<16x8xf32> -> tensor<4x4x8xf32>
    %u = train.transpose %v [1, 0, 2] : tensor<4x4x8xf32> -> tensor<4x4x8xf32>
    %z = train.add %x, %u : (tensor<4x4x8xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
    %l = train.mean %z dims = [0, 1, 2] : tensor<4x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// [B, H, T, D] merged into [B*H, T, D] (a 3-D attention) and split back;
// a reshape that cuts the batch into a leading part that still divides
// ([B*T] = [4*6] as [2, 12]: a rank holds one of the 2 rows) and merges it
// again; a mean over a merged dimension (a local mean).
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x2x3x4xf32>)
// CHECK: train.reshape %{{.*}} : tensor<2x2x3x4xf32> -> tensor<4x3x4xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<4x3x4xf32>, tensor<4x3x4xf32>) -> tensor<4x3x3xf32>
// CHECK: train.reshape %{{.*}} : tensor<4x3x3xf32> -> tensor<2x2x3x3xf32>
// CHECK: train.reshape %{{.*}} : tensor<2x2x3x3xf32> -> tensor<1x36xf32>
// CHECK: train.reshape %{{.*}} : tensor<1x36xf32> -> tensor<36xf32>
// CHECK: train.mean %{{.*}} dims = [0] : tensor<36xf32> -> tensor<f32>
// SIX-LABEL: func.func @forward
// SIX-SAME: (%{{.*}}: tensor<6x2x3x4xf32>)
// SIX: train.reshape %{{.*}} : tensor<6x2x3x4xf32> -> tensor<12x3x4xf32>
// SIX: train.reshape %{{.*}} : tensor<6x2x3x3xf32> -> tensor<3x36xf32>
// SIX: train.reshape %{{.*}} : tensor<3x36xf32> -> tensor<108xf32>
module {
  func.func @forward(%x: tensor<4x2x3x4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.reshape %x : tensor<4x2x3x4xf32> -> tensor<8x3x4xf32>
    %a = train.matmul %m, %m transpose_rhs : (tensor<8x3x4xf32>, tensor<8x3x4xf32>) -> tensor<8x3x3xf32>
    %s = train.reshape %a : tensor<8x3x3xf32> -> tensor<4x2x3x3xf32>
    %c = train.reshape %s : tensor<4x2x3x3xf32> -> tensor<2x36xf32>
    %f = train.reshape %c : tensor<2x36xf32> -> tensor<72xf32>
    %l = train.mean %f dims = [0] : tensor<72xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
