// RUN: zeroc-opt %s "--train-shard-states=stage=0 world-size=2" --train-reduce-gradients | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s "--train-shard-states=stage=2 world-size=2" --train-reduce-gradients | FileCheck %s --check-prefix=S2

// train-shard-states and train-reduce-gradients at their own input stage:
// a step as train-optimizer writes it (by hand, the optimizer section cut
// short: train-shard-optimizer is not run), with the buckets
// train-assign-buckets decided in train.buckets. Here they are not backward's order (which would be
// [[@b2, @w2, @w1, @b1]]): the buffers follow the attribute, which
// train-shard-states reads, never recomputes, and removes.
// S0: module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 0 : i64}
// S0-DAG: train.buffer @zero.flat0.grads : tensor<17xf32> <gradients> members [@w1.grad, @b2.grad] offsets [0, 12]{{$}}
// S0-DAG: train.buffer @zero.flat1.grads : tensor<24xf32> <gradients> members [@w2.grad, @b1.grad] offsets [0, 20]{{$}}
// S0-LABEL: func.func @train_step
// S0: train.pack %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<5xf32> -> tensor<17xf32>
// S0: train.pack %{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<4xf32> -> tensor<24xf32>

// Stage 2 pads each bucket to 2 shards (17 to 18 elements).
// S2-NOT: train.buckets
// S2: train.buffer @zero.flat0.params : tensor<18xf32> <parameters> members [@w1, @b2] offsets [0, 12]{{$}}
// S2: train.buffer @zero.flat1.params : tensor<24xf32> <parameters> members [@w2, @b1] offsets [0, 20]{{$}}
// S2-LABEL: func.func @train_step
// S2: shard.reduce_scatter {{.*}} : tensor<18xf32> -> tensor<9xf32>
// S2: shard.reduce_scatter {{.*}} : tensor<24xf32> -> tensor<12xf32>
module attributes {train.batch_split = 2 : i64, train.buckets = [[@w1, @b2], [@w2, @b1]]} {
  train.optimizer sgd lr = 0.1 momentum = 0.9
  train.param @w1 : tensor<4x3xf32> init = zeros
  train.param @b1 : tensor<4xf32> init = zeros
  train.param @w2 : tensor<5x4xf32> init = zeros
  train.param @b2 : tensor<5xf32> init = zeros
  func.func @train_step(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w1, @b1, @w2, @b2]} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    %db2 = train.fill 1.0 : tensor<5xf32>
    %dw2 = train.fill 1.0 : tensor<5x4xf32>
    %dw1 = train.fill 1.0 : tensor<4x3xf32>
    %db1 = train.fill 1.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n1 = train.squared_norm %dw1 : tensor<4x3xf32> -> tensor<f32>
    %n2 = train.squared_norm %db1 : tensor<4xf32> -> tensor<f32>
    %n3 = train.squared_norm %dw2 : tensor<5x4xf32> -> tensor<f32>
    %n4 = train.squared_norm %db2 : tensor<5xf32> -> tensor<f32>
    %n = train.add %n1, %n2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}
