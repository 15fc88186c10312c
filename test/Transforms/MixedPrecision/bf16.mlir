// RUN: zeroc-opt %s --train-mixed-precision | FileCheck %s

// Parameters and activations become bf16; the loss stays f32, and so does
// what is computed from it alone.
// CHECK: train.param @w : tensor<3x4xbf16> init = normal std = 2.000000e-02 decay
// CHECK: train.param @g : tensor<4xbf16> init = ones
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x5xi32>, %{{.*}}: tensor<2x5xi32>) -> tensor<f32>
// CHECK: train.read @w : tensor<3x4xbf16>
// CHECK: train.embedding {{.*}} -> tensor<2x5x4xbf16>
// CHECK: train.layernorm {{.*}} -> tensor<2x5x4xbf16>
// CHECK: train.gelu %{{.*}} tanh : tensor<2x5x4xbf16>
// CHECK: train.matmul {{.*}} -> tensor<2x5x3xbf16>
// CHECK: train.cross_entropy {{.*}} : (tensor<2x5x3xbf16>, tensor<2x5xi32>) -> tensor<f32>
// CHECK: train.scale %{{.*}} by 2.000000e+00 : tensor<f32>
module {
  train.param @w : tensor<3x4xf32> init = normal std = 0.02 decay
  train.param @g : tensor<4xf32> init = ones
  train.param @b : tensor<4xf32> init = zeros
  func.func @forward(%t: tensor<2x5xi32>, %y: tensor<2x5xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x4xf32>
    %e = train.embedding %w[%t] : (tensor<3x4xf32>, tensor<2x5xi32>) -> tensor<2x5x4xf32>
    %g = train.read @g : tensor<4xf32>
    %b = train.read @b : tensor<4xf32>
    %n = train.layernorm %e, %g, %b eps = 1.0e-05 : (tensor<2x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
    %a = train.gelu %n tanh : tensor<2x5x4xf32>
    %l = train.matmul %a, %w transpose_rhs : (tensor<2x5x4xf32>, tensor<3x4xf32>) -> tensor<2x5x3xf32>
    %loss = train.cross_entropy %l, %y : (tensor<2x5x3xf32>, tensor<2x5xi32>) -> tensor<f32>
    %twice = train.scale %loss by 2.0 : tensor<f32>
    return %twice : tensor<f32>
  }
}
