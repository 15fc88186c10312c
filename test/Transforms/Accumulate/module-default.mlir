// RUN: zeroc-opt %s --train-accumulate | FileCheck %s
// RUN: zeroc-opt %s --train-accumulate | FileCheck %s --check-prefix=DROP
// RUN: zeroc-opt %s --train-accumulate | FileCheck %s --check-prefix=ADD
// RUN: zeroc-opt %s --train-accumulate=micro-batches=1 | FileCheck %s --check-prefix=ONE

// With micro-batches=0 (the default) the pass takes the module's
// train.micro_batches (the builders' --micro-batches); an explicit value
// wins. No data-parallel split: the dropout records ranks = 1.

// CHECK: train.grad_accum = 4 : i64
// CHECK-LABEL: func.func @loss_and_grads
// CHECK-COUNT-4: train.slice %{{.*}} offsets = [{{[0-9]}}, 0] strides = [1, 1] {train.micro_batch = {{[0-3]}} : i64} : tensor<8x3xf32> -> tensor<2x3xf32>
// The loss and the gradient, each summed over 4 micro-batches.
// ADD-COUNT-6: train.add {{.*}}train.accumulate
// ADD-NOT: train.add {{.*}}train.accumulate
// DROP: train.dropout %{{.*}} batch_dim = 0 ranks = 1 micro_batch = 3 micro_batches = 4 {train.micro_batch = 3 : i64} : tensor<2x3xf32>
// ONE-NOT: train.micro_batch =
// ONE-NOT: train.grad_accum

module attributes {train.micro_batches = 4 : i64} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @w : tensor<3xf32> init = normal std = 0.5 decay
  func.func @forward(%x: tensor<8x3xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3xf32>
    %m = train.mul %x, %w : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    %d = train.dropout %m p = 1.000000e-01 seed = 3 : tensor<8x3xf32>
    %loss = train.mean %d dims = [0, 1] : tensor<8x3xf32> -> tensor<f32>
    return %loss : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<8x3xf32>) -> (tensor<f32>, tensor<3xf32>) attributes {train.gradients = [@w]} {
    %w = train.read @w : tensor<3xf32>
    %m = train.mul %x, %w : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    %loss = train.mean %m dims = [0, 1] : tensor<8x3xf32> -> tensor<f32>
    %dw = train.fill 0.0 : tensor<3xf32>
    return %loss, %dw : tensor<f32>, tensor<3xf32>
  }
}
