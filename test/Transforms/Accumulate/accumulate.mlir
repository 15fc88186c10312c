// RUN: zeroc-opt %s --train-accumulate=micro-batches=2 | FileCheck %s
// RUN: zeroc-opt %s --train-accumulate=micro-batches=1 | FileCheck %s --check-prefix=ONE
// RUN: zeroc-opt %s --train-accumulate | FileCheck %s --check-prefix=ONE

// The input stage of train-accumulate: a module whose batch is split over 2
// ranks (train-data-parallel), differentiated (train-autodiff). The rank's
// batch of 4 rows becomes 2 micro-batches of 2: each slices the batch,
// runs the micro-batch program (its loss scaled by 1/2, so is its
// gradient) and adds its loss and gradient to the running totals.

// CHECK-LABEL: module attributes {train.batch_split = 2 : i64, train.grad_accum = 2 : i64}
// @forward (evaluation) keeps the rank's batch.
// CHECK: func.func @forward(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4xi32>)
// CHECK:   train.dropout %{{.*}} batch_dim = 0 ranks = 2 : tensor<4x3xf32>
// CHECK: func.func @loss_and_grads(%[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<4xi32>) -> (tensor<f32>, tensor<5x3xf32>) attributes {train.gradients = [@w]}
// CHECK: %[[X0:.*]] = train.slice %[[X]] offsets = [0, 0] strides = [1, 1] {train.micro_batch = 0 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[Y0:.*]] = train.slice %[[Y]] offsets = [0] strides = [1] {train.micro_batch = 0 : i64} : tensor<4xi32> -> tensor<2xi32>
// CHECK: %[[W0:.*]] = train.read @w {train.micro_batch = 0 : i64}
// CHECK: %[[D0:.*]] = train.dropout %[[X0]] p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 micro_batch = 0 micro_batches = 2 {train.micro_batch = 0 : i64} : tensor<2x3xf32>
// CHECK: %[[Z0:.*]] = train.matmul %[[D0]], %[[W0]] transpose_rhs {train.micro_batch = 0 : i64}
// CHECK: %[[CE0:.*]] = train.cross_entropy %[[Z0]], %[[Y0]] {train.micro_batch = 0 : i64}
// CHECK: %[[L0:.*]] = train.scale %[[CE0]] by 5.000000e-01 {train.micro_batch = 0 : i64} : tensor<f32>
// CHECK: %[[G0:.*]] = train.matmul %{{.*}}, %[[D0]] transpose_lhs {train.micro_batch = 0 : i64} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK: %[[X1:.*]] = train.slice %[[X]] offsets = [2, 0] strides = [1, 1] {train.micro_batch = 1 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[Y1:.*]] = train.slice %[[Y]] offsets = [2] strides = [1] {train.micro_batch = 1 : i64} : tensor<4xi32> -> tensor<2xi32>
// CHECK: %[[D1:.*]] = train.dropout %[[X1]] p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 2 {train.micro_batch = 1 : i64}
// CHECK: %[[L1:.*]] = train.scale %{{.*}} by 5.000000e-01 {train.micro_batch = 1 : i64} : tensor<f32>
// CHECK-NEXT: %[[L:.*]] = train.add %[[L0]], %[[L1]] {train.accumulate, train.micro_batch = 1 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[G1:.*]] = train.matmul %{{.*}}, %[[D1]] transpose_lhs {train.micro_batch = 1 : i64}
// CHECK-NEXT: %[[G:.*]] = train.add %[[G0]], %[[G1]] {train.accumulate, train.micro_batch = 1 : i64} : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: return %[[L]], %[[G]] : tensor<f32>, tensor<5x3xf32>

// With one micro-batch (or none asked for) the pass changes nothing.
// ONE-NOT: train.grad_accum
// ONE-NOT: train.micro_batch
// ONE-NOT: train.slice

module attributes {train.batch_split = 2 : i64} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @w : tensor<5x3xf32> init = normal std = 0.5 decay
  func.func @forward(%x: tensor<4x3xf32>, %y: tensor<4xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<5x3xf32>
    %h = train.dropout %x p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : tensor<4x3xf32>
    %l = train.matmul %h, %w transpose_rhs : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    %loss = train.cross_entropy %l, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<4x3xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<5x3xf32>) attributes {train.gradients = [@w]} {
    %one = train.fill 1.000000e+00 : tensor<f32>
    %w = train.read @w : tensor<5x3xf32>
    %h = train.dropout %x p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : tensor<4x3xf32>
    %l = train.matmul %h, %w transpose_rhs : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    %loss = train.cross_entropy %l, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>
    %dl = train.cross_entropy_grad %one, %l, %y : (tensor<f32>, tensor<4x5xf32>, tensor<4xi32>) -> tensor<4x5xf32>
    %dw = train.matmul %dl, %h transpose_lhs : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
    return %loss, %dw : tensor<f32>, tensor<5x3xf32>
  }
}
