// RUN: zeroc-opt %s --split-input-file --train-shard-optimizer | FileCheck %s

// train-shard-optimizer at its own input stage: the step after
// train-reduce-gradients at stage 1 (one bucket [@b, @w] of 2 shards of 5;
// the averaged shard is the reduce-scatter's scaled value), with
// train-optimizer's section: its learning rate, norm, clip coefficient
// and one SGD update per parameter (@w decays, @b does not).
// CHECK-LABEL: func.func @train_step
// CHECK: train.write %{{.*}} to @zero.flat0.grads : tensor<10xf32>
// CHECK-NEXT: %[[RS:.*]] = shard.reduce_scatter
// CHECK-NEXT: %[[G:.*]] = train.scale %[[RS]]
// The learning rate, the norm's sqrt and the clip coefficient are
// train-optimizer's, moved after the reduction; the norm is the shard's,
// summed over ranks.
// CHECK-NEXT: %[[LR:.*]] = train.lr_schedule %arg2 lr = 1.000000e-01 schedule = constant
// CHECK-NEXT: %[[SQ:.*]] = train.squared_norm %[[G]] : tensor<5xf32>
// CHECK-NEXT: train.reshape %[[SQ]]
// CHECK-NEXT: shard.all_reduce
// CHECK-NEXT: %[[N:.*]] = train.reshape
// CHECK-NEXT: %[[NORM:.*]] = train.sqrt %[[N]]
// CHECK-NEXT: %[[C:.*]] = train.clip_coef %[[N]] max_norm = 1.000000e+00
// CHECK-NEXT: %[[CG:.*]] = train.mul %[[G]], %[[C]] : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
// One update for the bucket's shard, decaying @w (elements 3 to 9).
// CHECK-NEXT: %[[P:.*]] = train.read @zero.flat0.params : tensor<10xf32>
// CHECK-NEXT: %[[PS:.*]] = shard.all_slice %[[P]] on @dp grid_axes = [0] slice_axis = 0 : tensor<10xf32> -> tensor<5xf32>
// CHECK-NEXT: %[[M:.*]] = train.read @zero.flat0.momentum_buffer : tensor<5xf32>
// CHECK-NEXT: %[[NP:.*]], %[[NM:.*]] = train.sgd_update %[[PS]], %[[CG]], %[[M]], %[[LR]] momentum = 9.000000e-01 weight_decay = 1.000000e-01 decay_ranges [3, 9] : tensor<5xf32>
// CHECK-NEXT: train.write %[[NM]] to @zero.flat0.momentum_buffer : tensor<5xf32>
// CHECK-NEXT: %[[ALL:.*]] = shard.all_gather %[[NP]] on @dp grid_axes = [0] gather_axis = 0 : tensor<5xf32> -> tensor<10xf32>
// CHECK-NEXT: train.write %[[ALL]] to @zero.flat0.params : tensor<10xf32>
// The per-parameter section is gone.
// CHECK-NEXT: return %{{.*}}, %[[NORM]]

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
    %5 = train.reshape %4 : tensor<f32> -> tensor<1xf32>
    %all_reduce = shard.all_reduce %5 on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
    %6 = train.scale %all_reduce by 5.000000e-01 : tensor<1xf32>
    %7 = train.reshape %6 : tensor<1xf32> -> tensor<f32>
    return %7 : tensor<f32>
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
    %6 = train.reshape %5 : tensor<f32> -> tensor<1xf32>
    %all_reduce = shard.all_reduce %6 on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
    %7 = train.scale %all_reduce by 5.000000e-01 : tensor<1xf32>
    %8 = train.reshape %7 : tensor<1xf32> -> tensor<f32>
    %9 = train.cross_entropy_grad %0, %4, %arg1 : (tensor<f32>, tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    %10 = train.sum %9 dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
    %11 = train.matmul %9, %arg0 transpose_lhs : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
    %12 = train.fill 0.000000e+00 : tensor<1xf32>
    %13 = train.pack %10, %11, %12 : tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32> -> tensor<10xf32>
    train.write %13 to @zero.flat0.grads : tensor<10xf32>
    %reduce_scatter = shard.reduce_scatter %13 on @dp grid_axes = [0] scatter_axis = 0 : tensor<10xf32> -> tensor<5xf32>
    %14 = train.scale %reduce_scatter by 5.000000e-01 : tensor<5xf32>
    %15 = train.lr_schedule %arg2 lr = 1.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>
    %16 = train.squared_norm %11 : tensor<3x2xf32> -> tensor<f32>
    %17 = train.squared_norm %10 : tensor<3xf32> -> tensor<f32>
    %18 = train.add %16, %17 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %19 = train.sqrt %18 : tensor<f32>
    %20 = train.clip_coef %18 max_norm = 1.000000e+00 : tensor<f32>
    %21 = train.mul %11, %20 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
    %22 = train.read @w : tensor<3x2xf32>
    %23 = train.read @w.momentum_buffer : tensor<3x2xf32>
    %new_param, %new_momentum_buffer = train.sgd_update %22, %21, %23, %15 momentum = 9.000000e-01 weight_decay = 1.000000e-01 : tensor<3x2xf32>
    train.write %new_momentum_buffer to @w.momentum_buffer : tensor<3x2xf32>
    train.write %new_param to @w : tensor<3x2xf32>
    %24 = train.mul %10, %20 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %25 = train.read @b : tensor<3xf32>
    %26 = train.read @b.momentum_buffer : tensor<3xf32>
    %new_param_0, %new_momentum_buffer_1 = train.sgd_update %25, %24, %26, %15 momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<3xf32>
    train.write %new_momentum_buffer_1 to @b.momentum_buffer : tensor<3xf32>
    train.write %new_param_0 to @b : tensor<3xf32>
    return %8, %19 : tensor<f32>, tensor<f32>
  }
}


// -----

// Stage 3: the gradient shard read from its buffer, the update in place
// on the rank's parameter shard, no gather.
// CHECK-LABEL: func.func @train_step
// CHECK: train.write %{{.*}} to @zero.flat0.grads : tensor<5xf32>
// CHECK: %[[G3:.*]] = train.read @zero.flat0.grads : tensor<5xf32>
// CHECK-NEXT: train.lr_schedule
// CHECK: %[[P3:.*]] = train.read @zero.flat0.params : tensor<5xf32>
// CHECK-NEXT: train.read @zero.flat0.momentum_buffer : tensor<5xf32>
// CHECK-NEXT: %[[NP3:.*]], %{{.*}} = train.sgd_update %[[P3]]
// CHECK-NEXT: train.write
// CHECK-NEXT: train.write %[[NP3]] to @zero.flat0.params : tensor<5xf32>
// CHECK-NEXT: return
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
    %0 = train.read @zero.flat0.params : tensor<5xf32>
    %1 = train.all_gather_start %0 on @dp : tensor<5xf32> -> !train.future<tensor<10xf32>>
    %2 = train.wait %1 : !train.future<tensor<10xf32>>
    %3:3 = train.unpack %2 : tensor<10xf32> -> tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32>
    %4 = train.matmul %arg0, %3#1 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %5 = train.add %4, %3#0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    train.release %2 : tensor<10xf32>
    %6 = train.cross_entropy %5, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    %7 = train.reshape %6 : tensor<f32> -> tensor<1xf32>
    %all_reduce = shard.all_reduce %7 on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
    %8 = train.scale %all_reduce by 5.000000e-01 : tensor<1xf32>
    %9 = train.reshape %8 : tensor<1xf32> -> tensor<f32>
    return %9 : tensor<f32>
  }
  train.buffer @zero.flat0.params : tensor<10xf32> <parameters> members [@b, @w] offsets [0, 3] shards = 2
  train.buffer @zero.flat0.grads : tensor<10xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3] shards = 2
  train.buffer @zero.flat0.momentum_buffer : tensor<10xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3] shards = 2
  func.func @train_step(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>, %arg2: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@w, @b], train.step} {
    %0 = train.fill 1.000000e+00 : tensor<f32>
    %1 = train.read @zero.flat0.params : tensor<5xf32>
    %2 = train.all_gather_start %1 on @dp : tensor<5xf32> -> !train.future<tensor<10xf32>>
    %3 = train.wait %2 : !train.future<tensor<10xf32>>
    %4:3 = train.unpack %3 : tensor<10xf32> -> tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32>
    %5 = train.matmul %arg0, %4#1 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %6 = train.add %5, %4#0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    train.release %3 : tensor<10xf32>
    %7 = train.cross_entropy %6, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    %8 = train.reshape %7 : tensor<f32> -> tensor<1xf32>
    %all_reduce = shard.all_reduce %8 on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
    %9 = train.scale %all_reduce by 5.000000e-01 : tensor<1xf32>
    %10 = train.reshape %9 : tensor<1xf32> -> tensor<f32>
    %11 = train.cross_entropy_grad %0, %6, %arg1 : (tensor<f32>, tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    %12 = train.sum %11 dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
    %13 = train.matmul %11, %arg0 transpose_lhs : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
    %14 = train.fill 0.000000e+00 : tensor<1xf32>
    %15 = train.pack %12, %13, %14 : tensor<3xf32>, tensor<3x2xf32>, tensor<1xf32> -> tensor<10xf32>
    %reduce_scatter = shard.reduce_scatter %15 on @dp grid_axes = [0] scatter_axis = 0 : tensor<10xf32> -> tensor<5xf32>
    %16 = train.scale %reduce_scatter by 5.000000e-01 : tensor<5xf32>
    train.write %16 to @zero.flat0.grads : tensor<5xf32>
    %17 = train.lr_schedule %arg2 lr = 1.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>
    %18 = train.squared_norm %13 : tensor<3x2xf32> -> tensor<f32>
    %19 = train.squared_norm %12 : tensor<3xf32> -> tensor<f32>
    %20 = train.add %18, %19 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %21 = train.sqrt %20 : tensor<f32>
    %22 = train.clip_coef %20 max_norm = 1.000000e+00 : tensor<f32>
    %23 = train.mul %13, %22 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
    %24 = train.read @w : tensor<3x2xf32>
    %25 = train.read @w.momentum_buffer : tensor<3x2xf32>
    %new_param, %new_momentum_buffer = train.sgd_update %24, %23, %25, %17 momentum = 9.000000e-01 weight_decay = 1.000000e-01 : tensor<3x2xf32>
    train.write %new_momentum_buffer to @w.momentum_buffer : tensor<3x2xf32>
    train.write %new_param to @w : tensor<3x2xf32>
    %26 = train.mul %12, %22 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %27 = train.read @b : tensor<3xf32>
    %28 = train.read @b.momentum_buffer : tensor<3xf32>
    %new_param_0, %new_momentum_buffer_1 = train.sgd_update %27, %26, %28, %17 momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<3xf32>
    train.write %new_momentum_buffer_1 to @b.momentum_buffer : tensor<3xf32>
    train.write %new_param_0 to @b : tensor<3xf32>
    return %10, %21 : tensor<f32>, tensor<f32>
  }
}

