// RUN: zeroc-opt %s --split-input-file --train-reduce-gradients | FileCheck %s

// train-reduce-gradients at its own input stage: the step train-shard-states
// left (one bucket [@b, @w] on 2 ranks), train-optimizer's section still
// reading the per-parameter gradients. The losses of @forward and
// @train_step become means over ranks.
// CHECK-LABEL: func.func @forward
// CHECK: %[[L:.*]] = train.cross_entropy
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[L]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT: %[[A:.*]] = shard.all_reduce %[[R]] on @dp
// CHECK-NEXT: %[[S:.*]] = train.scale %[[A]] by 5.000000e-01
// CHECK-NEXT: %[[M:.*]] = train.reshape %[[S]] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT: return %[[M]]

// Stage 2: right after backward's last gradient of the bucket, the
// gradients packed end to end with a zero tail (9 elements padded to 10),
// reduce-scattered, averaged, written to the sharded gradient buffer.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[LOSS:.*]] = train.cross_entropy
// CHECK-NEXT: train.reshape %[[LOSS]]
// CHECK-NEXT: shard.all_reduce
// CHECK-NEXT: train.scale
// CHECK-NEXT: %[[GLOBAL:.*]] = train.reshape
// CHECK: %[[GB:.*]] = train.sum
// CHECK-NEXT: %[[GW:.*]] = train.matmul
// CHECK-NEXT: %[[PAD:.*]] = train.fill 0.000000e+00 : tensor<1xf32>
// CHECK-NEXT: %[[P:.*]] = train.pack %[[GB]], %[[GW]], %[[PAD]] : tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32> -> tensor<10xf32>
// CHECK-NEXT: %[[RS:.*]] = shard.reduce_scatter %[[P]] on @dp grid_axes = [0] scatter_axis = 0 : tensor<10xf32> -> tensor<5xf32>
// CHECK-NEXT: %[[AV:.*]] = train.scale %[[RS]] by 5.000000e-01 : tensor<5xf32>
// CHECK-NEXT: train.write %[[AV]] to @zero.flat0.grads : tensor<5xf32>
// The optimizer section is left to train-shard-optimizer.
// CHECK-NEXT: train.lr_schedule
// CHECK: train.squared_norm %[[GW]]
// CHECK: %[[NORM:.*]] = train.sqrt
// CHECK: return %[[GLOBAL]], %[[NORM]]

module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
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

// Stage 0: the whole bucket (9 elements, no padding) all-reduced,
// averaged into the gradient buffer.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[P0:.*]] = train.pack %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x2xf32> -> tensor<9xf32>
// CHECK-NEXT: %[[AR:.*]] = shard.all_reduce %[[P0]] on @dp grid_axes = [0] : tensor<9xf32> -> tensor<9xf32>
// CHECK-NEXT: %[[AV0:.*]] = train.scale %[[AR]] by 5.000000e-01 : tensor<9xf32>
// CHECK-NEXT: train.write %[[AV0]] to @zero.flat0.grads : tensor<9xf32>
// CHECK-NOT: shard.reduce_scatter
// CHECK: return
module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
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
  train.buffer @zero.flat0.params : tensor<9xf32> <parameters> members [@b, @w] offsets [0, 3]
  train.buffer @zero.flat0.grads : tensor<9xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3]
  train.buffer @zero.flat0.momentum_buffer : tensor<9xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3]
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

