// RUN: zeroc-opt %s --train-bufferize-ops | FileCheck %s

// train-bufferize-ops alone executes the decisions written in the IR and
// makes none of its own: here, by hand, the bucket's pack is its buffer
// with input 0 computed into its slice (input 1 is copied there), the
// bucket's write is no copy, the read of @w copies though nothing writes
// @w (train.copy), and the read of @v, which is written while live, is
// its storage (no train.copy) -- the write is a copy into that storage.
// The allocations have no memory category (train-allocate's).

// CHECK-LABEL: func.func @decided(
// CHECK: %[[W:.*]] = train.storage @w : memref<4xf32>
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[W]], %[[COPY]]
// CHECK-NEXT: %[[V:.*]] = train.storage @v : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = train.storage @grads : memref<8xf32>
// CHECK-NEXT: %[[S0:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [4]
// CHECK-NEXT: train.kernel ins(%[[COPY]] : memref<4xf32>) outs(%[[S0]] : memref<4xf32>)
// CHECK: %[[G1:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: train.kernel ins(%[[V]] : memref<4xf32>) outs(%[[G1]] : memref<4xf32>)
// CHECK: %[[SLOT:.*]] = memref.reinterpret_cast %[[B]] to offset: [4]
// CHECK-NEXT: memref.copy %[[G1]], %[[SLOT]]
// CHECK-NEXT: %[[R:.*]] = train.collective_start all_reduce %[[B]], %[[B]] on @dp payload = 8
// CHECK-NEXT: train.collective_wait %[[R]]
// CHECK-NEXT: %[[V2:.*]] = train.storage @v : memref<4xf32>
// CHECK-NEXT: memref.copy %arg0, %[[V2]]
// CHECK-NEXT: memref.alloc() : memref<f32>
// CHECK-NEXT: train.kernel ins(%[[V]] : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  train.param @v : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<4xf32> grad of @w
  train.state @v.grad : tensor<4xf32> grad of @v
  train.buffer @grads : tensor<8xf32> <gradients> members [@w.grad, @v.grad] offsets [0, 4]
  func.func @decided(%x: tensor<4xf32>) -> tensor<f32> {
    %w = train.read @w {train.copy} : tensor<4xf32>
    %v = train.read @v : tensor<4xf32>
    %g0 = train.relu %w : tensor<4xf32>
    %g1 = train.relu %v : tensor<4xf32>
    %p = train.pack %g0, %g1 {train.emplace = array<i64: 0>, train.into = @grads} : tensor<4xf32>, tensor<4xf32> -> tensor<8xf32>
    %f = train.all_reduce_start %p on @dp : tensor<8xf32> -> !train.future<tensor<8xf32>>
    %r = train.wait %f : !train.future<tensor<8xf32>>
    train.write %r to @grads {train.emplace = array<i64: 0>} : tensor<8xf32>
    train.write %x to @v : tensor<4xf32>
    %s = train.sum %v dims = [0] : tensor<4xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}
