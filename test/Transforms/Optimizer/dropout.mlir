// RUN: zeroc-opt %s --train-autodiff --train-optimizer | FileCheck %s

// train-optimizer gives every dropout of the training step its %step (the
// forward's and the backward's: the same mask, recomputed); @forward's
// stays step-less, the identity of evaluation.
// CHECK-LABEL: func.func @forward(
// CHECK: train.dropout %{{.*}} p = 2.500000e-01 seed = 1 : tensor<3x4xf32>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {
// CHECK: train.dropout %{{.*}}, %[[STEP]] p = 2.500000e-01 seed = 1 : tensor<3x4xf32>
// CHECK: train.dropout %{{.*}}, %[[STEP]] p = 2.500000e-01 seed = 1 : tensor<3x4xf32>
// CHECK: train.adamw_update
module {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<3x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
    %d = train.dropout %y p = 0.25 seed = 1 : tensor<3x4xf32>
    %l = train.mean %d dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
