// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize -split-input-file | FileCheck %s

// Stage 0's gradient bucket, the train.buffer train-zero declared (the
// grad states its members): the pack all-reduced, averaged and written to
// the buffer is the buffer. Each gradient is computed into its slice
// (through a reshape too), the all-reduce runs in place on the buffer, the
// averaging in place, and the pack and the write leave no copy. A
// gradient that is not the pack's only use is copied into its slice.

// CHECK: train.buffer @zero.flat0.grads : tensor<14xf32> <gradients> members [@w.grad, @b.grad, @c.grad] offsets [0, 8, 10]
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: memref.alloc() {train.category = #train.category<gradient_buckets>}
// CHECK: %[[B:.*]] = train.storage @zero.flat0.grads : memref<14xf32>
// CHECK: %[[GW:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [2, 4], strides: [4, 1] : memref<14xf32> to memref<2x4xf32>
// CHECK: train.kernel ins({{.*}}) outs(%[[GW]] : memref<2x4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.matmul
// CHECK: %[[GB:.*]] = memref.reinterpret_cast %[[B]] to offset: [8], sizes: [2], strides: [1] : memref<14xf32> to memref<2xf32, strided<[1], offset: 8>>
// CHECK: train.kernel ins() outs(%[[GB]] : memref<2xf32, strided<[1], offset: 8>>)
// CHECK-NEXT: train.fused
// CHECK: %[[GC:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: %[[SC:.*]] = memref.reinterpret_cast %[[B]] to offset: [10], sizes: [4], strides: [1]
// CHECK-NEXT: memref.copy %[[GC]], %[[SC]]
// CHECK-NEXT: %[[R:.*]] = train.collective_start all_reduce %[[B]], %[[B]] on @dp payload = 14 : memref<14xf32>, memref<14xf32>
// CHECK-NEXT: train.collective_wait %[[R]]
// CHECK-NEXT: train.kernel ins(%[[B]] : memref<14xf32>) outs(%[[B]] : memref<14xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.fused
// CHECK-NOT: memref.copy
// CHECK: train.storage @w.grad : memref<8xf32>
// CHECK: train.adamw_update
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<8xf32> init = zeros
  train.param @b : tensor<2xf32> init = zeros
  train.param @c : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<8xf32> grad of @w
  train.state @b.grad : tensor<2xf32> grad of @b
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<14xf32> <gradients> members [@w.grad, @b.grad, @c.grad] offsets [0, 8, 10]
  train.state @w.exp_avg : tensor<8xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<8xf32> exp_avg_sq of @w
  func.func @train_step(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>, %t: tensor<2x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %mm = train.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %gw = train.reshape %mm : tensor<2x4xf32> -> tensor<8xf32>
    %one = train.fill 1.0 : tensor<2xf32>
    %gb = train.scale %one by 2.0 : tensor<2xf32>
    %gc = train.fill 3.0 : tensor<4xf32>
    %l = train.mean %gc dims = [0] : tensor<4xf32> -> tensor<f32>
    %p = train.pack %gw, %gb, %gc : tensor<8xf32>, tensor<2xf32>, tensor<4xf32> -> tensor<14xf32>
    %f = train.all_reduce_start %p on @dp : tensor<14xf32> -> !train.future<tensor<14xf32>>
    %r = train.wait %f : !train.future<tensor<14xf32>>
    %a = train.scale %r by 0.5 : tensor<14xf32>
    train.write %a to @zero.flat0.grads : tensor<14xf32>
    %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
    %g = train.read @w.grad : tensor<8xf32>
    %m = train.read @w.exp_avg : tensor<8xf32>
    %v = train.read @w.exp_avg_sq : tensor<8xf32>
    %w = train.read @w : tensor<8xf32>
    %p1, %m1, %v1 = train.adamw_update %w, %g, %m, %v, %lr, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.0 : tensor<8xf32>
    train.write %p1 to @w : tensor<8xf32>
    train.write %m1 to @w.exp_avg : tensor<8xf32>
    train.write %v1 to @w.exp_avg_sq : tensor<8xf32>
    return %l, %l : tensor<f32>, tensor<f32>
  }
}

// -----

// A bucket whose buffer is read before the bucket writes it (a member
// accumulated) is not the buffer: the pack is a gradient-bucket allocation,
// the all-reduce receives into another, and the write copies.

// CHECK-LABEL: func.func @accumulating(
// CHECK: memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<4xf32>
// CHECK: train.collective_start all_reduce
// CHECK: memref.copy
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @c : tensor<4xf32> init = zeros
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<4xf32> <gradients> members [@c.grad] offsets [0]
  func.func @accumulating(%x: tensor<4xf32>) -> tensor<4xf32> {
    %old = train.read @c.grad : tensor<4xf32>
    %gc = train.add %old, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %p = train.pack %gc : tensor<4xf32> -> tensor<4xf32>
    %f = train.all_reduce_start %p on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    train.write %r to @zero.flat0.grads : tensor<4xf32>
    return %old : tensor<4xf32>
  }
}
