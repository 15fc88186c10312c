// RUN: zeroc-opt %s "--train-shard-states=stage=0 world-size=2" | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s "--train-shard-states=stage=1 world-size=2" | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s "--train-shard-states=stage=3 world-size=2" | FileCheck %s --check-prefix=S3

// train-shard-states at its own input stage: a step as train-optimizer
// writes it (one SGD update per parameter) with the bucket
// train-assign-buckets decided, [@b, @w] (3 + 6 elements). The pass
// declares the bucket's buffers, sharded as the stage says, the grid and
// the stage; the step itself is unchanged.

// Stage 0: whole buffers, no padding.
// S0: module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 0 : i64}
// S0-NEXT: shard.grid @dp(shape = 2)
// S0: train.state @w.grad : tensor<3x2xf32> grad of @w
// S0: train.buffer @zero.flat0.params : tensor<9xf32> <parameters> members [@b, @w] offsets [0, 3]{{$}}
// S0-NEXT: train.buffer @zero.flat0.grads : tensor<9xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3]{{$}}
// S0-NEXT: train.buffer @zero.flat0.momentum_buffer : tensor<9xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3]{{$}}
// S0-NOT: train.buffer
// S0: train.sgd_update
// S0-NOT: shard.

// Stage 1: padded to 2 shards of 5; the moments sharded, the parameters
// and gradients whole.
// S1: train.buffer @zero.flat0.params : tensor<10xf32> <parameters> members [@b, @w] offsets [0, 3]{{$}}
// S1-NEXT: train.buffer @zero.flat0.grads : tensor<10xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3]{{$}}
// S1-NEXT: train.buffer @zero.flat0.momentum_buffer : tensor<10xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3] shards = 2

// Stage 3: everything sharded.
// S3: train.buffer @zero.flat0.params : tensor<10xf32> <parameters> members [@b, @w] offsets [0, 3] shards = 2
// S3-NEXT: train.buffer @zero.flat0.grads : tensor<10xf32> <gradients> members [@b.grad, @w.grad] offsets [0, 3] shards = 2
// S3-NEXT: train.buffer @zero.flat0.momentum_buffer : tensor<10xf32> <optimizer_states> members [@b.momentum_buffer, @w.momentum_buffer] offsets [0, 3] shards = 2
// S3: %{{.*}} = train.read @w : tensor<3x2xf32>

module attributes {train.batch_split = 2 : i64, train.buckets = [[@b, @w]]} {
  train.optimizer sgd lr = 1.000000e-01 momentum = 9.000000e-01 weight_decay = 1.000000e-01 grad_clip = 1.000000e+00
  train.param @w : tensor<3x2xf32> init = normal std = 5.000000e-01 decay
  train.state @w.momentum_buffer : tensor<3x2xf32> momentum_buffer of @w
  train.param @b : tensor<3xf32> init = zeros
  train.state @b.momentum_buffer : tensor<3xf32> momentum_buffer of @b
  func.func @forward(%arg0: tensor<2x2xf32>, %arg1: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %0 = train.read @w : tensor<3x2xf32>
    %1 = train.read @b : tensor<3xf32>
    %2 = train.matmul %arg0, %0 transpose_rhs : (tensor<2x2xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    %3 = train.add %2, %1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %4 = train.cross_entropy %3, %arg1 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
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

