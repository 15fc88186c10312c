// RUN: zeroc-opt %s --train-data-parallel=world-size=4 | FileCheck %s

// Dropout records where its input sits in the global batch (the batch
// dimension, here moved by a transpose, and the number of ranks), so that
// its mask does not depend on the split; a slice that takes the batch whole
// follows it; slices and dropouts of parameters keep their types; rope and
// rmsnorm follow their operands.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x5x4xf32>, %{{.*}}: tensor<2x5xi32>)
// CHECK: train.slice %{{.*}} offsets = [0, 1, 0] strides = [1, 1, 1] : tensor<2x5x4xf32> -> tensor<2x3x4xf32>
// CHECK: train.slice %{{.*}} offsets = [0, 0] strides = [1, 1] : tensor<9x4xf32> -> tensor<3x4xf32>
// CHECK: train.rmsnorm {{.*}} -> tensor<2x3x4xf32>
// CHECK: train.rope %{{.*}} theta = 1.000000e+04 seq_dim = 1 rotate_half : tensor<2x3x2x2xf32>
// CHECK: train.transpose %{{.*}} [1, 0, 2, 3] : tensor<2x3x2x2xf32> -> tensor<3x2x2x2xf32>
// CHECK: train.dropout %{{.*}} p = 1.000000e-01 seed = 4 batch_dim = 1 ranks = 4 : tensor<3x2x2x2xf32>
// CHECK: train.dropout %{{.*}} p = 5.000000e-01 seed = 5 : tensor<9x4xf32>
// CHECK: train.mean %{{.*}} dims = [0, 1, 2] : tensor<2x3x9xf32> -> tensor<f32>
module {
  train.param @pos : tensor<9x4xf32> init = normal std = 1.0
  train.param @g : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<8x5x4xf32>, %y: tensor<8x5xi32>) -> tensor<f32> attributes {train.forward} {
    %s = train.slice %x offsets = [0, 1, 0] strides = [1, 1, 1] : tensor<8x5x4xf32> -> tensor<8x3x4xf32>
    %pos = train.read @pos : tensor<9x4xf32>
    %p = train.slice %pos offsets = [0, 0] strides = [1, 1] : tensor<9x4xf32> -> tensor<3x4xf32>
    %a = train.add %s, %p : (tensor<8x3x4xf32>, tensor<3x4xf32>) -> tensor<8x3x4xf32>
    %g = train.read @g : tensor<4xf32>
    %n = train.rmsnorm %a, %g eps = 1.0e-5 : (tensor<8x3x4xf32>, tensor<4xf32>) -> tensor<8x3x4xf32>
    %h = train.reshape %n : tensor<8x3x4xf32> -> tensor<8x3x2x2xf32>
    %r = train.rope %h theta = 10000.0 seq_dim = 1 rotate_half : tensor<8x3x2x2xf32>
    %t = train.transpose %r [1, 0, 2, 3] : tensor<8x3x2x2xf32> -> tensor<3x8x2x2xf32>
    %d = train.dropout %t p = 0.1 seed = 4 : tensor<3x8x2x2xf32>
    %dp = train.dropout %pos p = 0.5 seed = 5 : tensor<9x4xf32>
    %u = train.transpose %d [1, 0, 2, 3] : tensor<3x8x2x2xf32> -> tensor<8x3x2x2xf32>
    %v = train.reshape %u : tensor<8x3x2x2xf32> -> tensor<8x3x4xf32>
    %w = train.matmul %v, %dp transpose_rhs : (tensor<8x3x4xf32>, tensor<9x4xf32>) -> tensor<8x3x9xf32>
    %ys = train.slice %w offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<8x3x9xf32> -> tensor<8x3x9xf32>
    %yy = train.reshape %ys : tensor<8x3x9xf32> -> tensor<8x27xf32>
    %z = train.reshape %yy : tensor<8x27xf32> -> tensor<8x3x9xf32>
    %l = train.mean %z dims = [0, 1, 2] : tensor<8x3x9xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

