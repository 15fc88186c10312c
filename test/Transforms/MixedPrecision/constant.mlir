// RUN: zeroc-opt %s --train-mixed-precision | FileCheck %s

// f32 tensor constants of the forward function become bf16 (rounded to
// nearest even: 1/3 becomes 0.333984375).
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 3.339840e-01, 3.000000e+00]> : tensor<3xbf16>
// CHECK: train.mul %[[C]], %{{.*}} : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<3xf32> init = ones
  func.func @forward() -> tensor<f32> attributes {train.forward} {
    %x = arith.constant dense<[1.0, 0.3333333333, 3.0]> : tensor<3xf32>
    %w = train.read @w : tensor<3xf32>
    %y = train.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %l = train.mean %y dims = [0] : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
