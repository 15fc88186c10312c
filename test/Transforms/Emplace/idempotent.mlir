// RUN: zeroc-opt %s --train-emplace -split-input-file | FileCheck %s
// RUN: zeroc-opt %s --train-emplace --train-emplace -split-input-file | FileCheck %s

// train-emplace replaces the decisions an op already carries (an earlier
// run, hand-written IR) instead of adding to them: once or twice, the
// decisions are the pass's own.

// Stage 0's bucket (as placement.mlir's @bucket) with a stale decision on
// the pack: input 2 (%gc, also used by the loss) is not placed.

// CHECK-LABEL: func.func @stale_pack(
// CHECK: train.pack {{.*}} {train.emplace = array<i64: 0, 1>, train.into = @zero.flat0.grads}
// CHECK: train.write %{{.*}} to @zero.flat0.grads {train.emplace = array<i64: 0>}
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<8xf32> init = zeros
  train.param @b : tensor<2xf32> init = zeros
  train.param @c : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<8xf32> grad of @w
  train.state @b.grad : tensor<2xf32> grad of @b
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<14xf32> <gradients> members [@w.grad, @b.grad, @c.grad] offsets [0, 8, 10]
  func.func @stale_pack(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<f32> {
    %mm = train.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %gw = train.reshape %mm : tensor<2x4xf32> -> tensor<8xf32>
    %gb = train.fill 1.0 : tensor<2xf32>
    %gc = train.fill 3.0 : tensor<4xf32>
    %l = train.mean %gc dims = [0] : tensor<4xf32> -> tensor<f32>
    %p = train.pack %gw, %gb, %gc {train.emplace = array<i64: 2>} : tensor<8xf32>, tensor<2xf32>, tensor<4xf32> -> tensor<14xf32>
    %f = train.all_reduce_start %p on @dp : tensor<14xf32> -> !train.future<tensor<14xf32>>
    %r = train.wait %f : !train.future<tensor<14xf32>>
    %a = train.scale %r by 0.5 : tensor<14xf32>
    train.write %a to @zero.flat0.grads : tensor<14xf32>
    return %l : tensor<f32>
  }
}

// -----

// A bucket whose buffer is read before its write (placement.mlir's
// @accumulating) is not the buffer: the stale train.into and train.emplace
// are dropped, nothing is placed.

// CHECK-LABEL: func.func @stale_accumulating(
// CHECK-NOT: train.into
// CHECK-NOT: train.emplace
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @c : tensor<4xf32> init = zeros
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<4xf32> <gradients> members [@c.grad] offsets [0]
  func.func @stale_accumulating(%x: tensor<4xf32>) -> tensor<4xf32> {
    %old = train.read @c.grad : tensor<4xf32>
    %g = train.add %old, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %p = train.pack %g {train.emplace = array<i64: 0>, train.into = @zero.flat0.grads} : tensor<4xf32> -> tensor<4xf32>
    %f = train.all_reduce_start %p on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    train.write %r to @zero.flat0.grads {train.emplace = array<i64: 0>} : tensor<4xf32>
    return %old : tensor<4xf32>
  }
}
