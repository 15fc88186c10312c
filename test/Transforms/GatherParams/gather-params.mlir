// RUN: zeroc-opt %s --split-input-file --train-gather-params | FileCheck %s
// RUN: zeroc-opt %s --split-input-file --train-gather-params | FileCheck %s --check-prefix=BELOW3

// train-gather-params at its own input stage: the step train-shard-states
// left at stage 3 on 2 ranks (one parameter buffer [@b, @w] of 2 shards
// of 5). Forward's reads of @b and @w become views of the bucket's
// gathered buffer, released after their last use; in @train_step the
// loss splits forward from backward (backward reads no parameter here)
// and train-optimizer's section keeps its own reads.
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[S:.*]] = train.read @zero.flat0.params : tensor<5xf32>
// CHECK-NEXT: %[[F:.*]] = train.all_gather_start %[[S]] on @dp : tensor<5xf32> -> !train.future<tensor<10xf32>>
// CHECK-NEXT: %[[G:.*]] = train.wait %[[F]]
// CHECK-NEXT: %[[U:.*]]:3 = train.unpack %[[G]] : tensor<10xf32> -> tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32>
// CHECK-NEXT: train.matmul %arg0, %[[U]]#1
// CHECK-NEXT: train.add %{{.*}}, %[[U]]#0
// CHECK-NEXT: train.release %[[G]] : tensor<10xf32>
// CHECK-NEXT: train.cross_entropy
// CHECK-LABEL: func.func @train_step
// CHECK: train.all_gather_start
// CHECK: train.release
// CHECK-NEXT: train.cross_entropy
// CHECK-NOT: train.all_gather_start
// CHECK: train.lr_schedule
// CHECK: %[[W:.*]] = train.read @w : tensor<3x2xf32>
// CHECK: train.sgd_update %[[W]]

module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 1.000000e-01 momentum = 9.000000e-01 weight_decay = 1.000000e-01 grad_clip = 1.000000e+00
  train.param @w : tensor<3x2xf32> init = normal std = 5.000000e-01 decay
  train.state @w.momentum_buffer : tensor<3x2xf32> momentum_buffer of @w
  train.state @w.grad : tensor<3x2xf32> grad of @w
  train.param @b : tensor<3xf32> init = zeros
  train.state @b.momentum_buffer : tensor<3xf32> momentum_buffer of @b
  train.state @b.grad : tensor<3xf32> grad of @b
  func.func @forward(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %0 = train.read @w : tensor<3x2xf32>
    %1 = train.read @b : tensor<3xf32>
    %2 = train.matmul %arg0, %0 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %3 = train.add %2, %1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %4 = train.cross_entropy %3, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  train.buffer @zero.flat0.params : tensor<10xf32> <parameters> members [@b, @w] offsets [0, 3] shards = 2
  train.buffer @zero.flat0.grads : tensor<10xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3] shards = 2
  train.buffer @zero.flat0.momentum_buffer : tensor<10xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3] shards = 2
  func.func @train_step(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>, %arg2: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@w, @b], train.step} {
    %0 = train.fill 1.000000e+00 : tensor<f32>
    %1 = train.read @w : tensor<3x2xf32>
    %2 = train.read @b : tensor<3xf32>
    %3 = train.matmul %arg0, %1 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %4 = train.add %3, %2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %5 = train.cross_entropy %4, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    %6 = train.cross_entropy_grad %0, %4, %arg1 : (tensor<f32>, tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    %7 = train.sum %6 dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
    %8 = train.matmul %6, %arg0 transpose_lhs : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
    %9 = train.lr_schedule %arg2 lr = 1.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>
    %10 = train.squared_norm %8 : tensor<3x2xf32> -> tensor<f32>
    %11 = train.squared_norm %7 : tensor<3xf32> -> tensor<f32>
    %12 = train.add %10, %11 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %13 = train.sqrt %12 : tensor<f32>
    %14 = train.clip_coef %12 max_norm = 1.000000e+00 : tensor<f32>
    %15 = train.mul %8, %14 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
    %16 = train.read @w : tensor<3x2xf32>
    %17 = train.read @w.momentum_buffer : tensor<3x2xf32>
    %new_param, %new_momentum_buffer = train.sgd_update %16, %15, %17, %9 momentum = 9.000000e-01 weight_decay = 1.000000e-01 : tensor<3x2xf32>
    train.write %new_momentum_buffer to @w.momentum_buffer : tensor<3x2xf32>
    train.write %new_param to @w : tensor<3x2xf32>
    %18 = train.mul %7, %14 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %19 = train.read @b : tensor<3xf32>
    %20 = train.read @b.momentum_buffer : tensor<3xf32>
    %new_param_0, %new_momentum_buffer_1 = train.sgd_update %19, %18, %20, %9 momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<3xf32>
    train.write %new_momentum_buffer_1 to @b.momentum_buffer : tensor<3xf32>
    train.write %new_param_0 to @b : tensor<3xf32>
    return %5, %13 : tensor<f32>, tensor<f32>
  }
}


// -----

// Below stage 3 the parameters are whole on every rank: nothing changes.
// BELOW3: train.zero_stage = 1
// BELOW3-NOT: train.all_gather_start
// BELOW3: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 1.000000e-01 momentum = 9.000000e-01 weight_decay = 1.000000e-01 grad_clip = 1.000000e+00
  train.param @w : tensor<3x2xf32> init = normal std = 5.000000e-01 decay
  train.state @w.momentum_buffer : tensor<3x2xf32> momentum_buffer of @w
  train.state @w.grad : tensor<3x2xf32> grad of @w
  train.param @b : tensor<3xf32> init = zeros
  train.state @b.momentum_buffer : tensor<3xf32> momentum_buffer of @b
  train.state @b.grad : tensor<3xf32> grad of @b
  func.func @forward(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %0 = train.read @w : tensor<3x2xf32>
    %1 = train.read @b : tensor<3xf32>
    %2 = train.matmul %arg0, %0 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %3 = train.add %2, %1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %4 = train.cross_entropy %3, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  train.buffer @zero.flat0.params : tensor<10xf32> <parameters> members [@b, @w] offsets [0, 3]
  train.buffer @zero.flat0.grads : tensor<10xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3]
  train.buffer @zero.flat0.momentum_buffer : tensor<10xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3] shards = 2
  func.func @train_step(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>, %arg2: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@w, @b], train.step} {
    %0 = train.fill 1.000000e+00 : tensor<f32>
    %1 = train.read @w : tensor<3x2xf32>
    %2 = train.read @b : tensor<3xf32>
    %3 = train.matmul %arg0, %1 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %4 = train.add %3, %2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %5 = train.cross_entropy %4, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    %6 = train.cross_entropy_grad %0, %4, %arg1 : (tensor<f32>, tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    %7 = train.sum %6 dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
    %8 = train.matmul %6, %arg0 transpose_lhs : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
    %9 = train.lr_schedule %arg2 lr = 1.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>
    %10 = train.squared_norm %8 : tensor<3x2xf32> -> tensor<f32>
    %11 = train.squared_norm %7 : tensor<3xf32> -> tensor<f32>
    %12 = train.add %10, %11 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %13 = train.sqrt %12 : tensor<f32>
    %14 = train.clip_coef %12 max_norm = 1.000000e+00 : tensor<f32>
    %15 = train.mul %8, %14 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
    %16 = train.read @w : tensor<3x2xf32>
    %17 = train.read @w.momentum_buffer : tensor<3x2xf32>
    %new_param, %new_momentum_buffer = train.sgd_update %16, %15, %17, %9 momentum = 9.000000e-01 weight_decay = 1.000000e-01 : tensor<3x2xf32>
    train.write %new_momentum_buffer to @w.momentum_buffer : tensor<3x2xf32>
    train.write %new_param to @w : tensor<3x2xf32>
    %18 = train.mul %7, %14 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %19 = train.read @b : tensor<3xf32>
    %20 = train.read @b.momentum_buffer : tensor<3xf32>
    %new_param_0, %new_momentum_buffer_1 = train.sgd_update %19, %18, %20, %9 momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<3xf32>
    train.write %new_momentum_buffer_1 to @b.momentum_buffer : tensor<3xf32>
    train.write %new_param_0 to @b : tensor<3xf32>
    return %5, %13 : tensor<f32>, tensor<f32>
  }
}

