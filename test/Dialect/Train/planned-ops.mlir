// RUN: zeroc-opt %s | FileCheck %s
// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s

// The planned form round-trips: train.fused on tensors, and the buffer ops
// (train.storage, train.kernel, train.collective_start/wait, train.rank,
// train.read_back, #train.host, #train.category).

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4x8xf32> init = zeros
  train.state @w.grad : tensor<4x8xf32> grad of @w
  train.param @b : tensor<8xf32> init = zeros
  train.state @b.grad : tensor<8xf32> grad of @b
  // CHECK: train.buffer @bucket : tensor<48xf32> <gradients> members [@w.grad, @b.grad] offsets [0, 40]
  train.buffer @bucket : tensor<48xf32> <gradients> members [@w.grad, @b.grad] offsets [0, 40]
  // A buffer sharded contiguously over the ranks: reads, writes and its
  // storage see this rank's 24 elements.
  train.state @w.exp_avg : tensor<4x8xf32> exp_avg of @w
  train.state @b.exp_avg : tensor<8xf32> exp_avg of @b
  // CHECK: train.buffer @moments : tensor<48xf32> <optimizer_states> members [@w.exp_avg, @b.exp_avg] offsets [0, 32] shards = 2
  train.buffer @moments : tensor<48xf32> <optimizer_states> members [@w.exp_avg, @b.exp_avg] offsets [0, 32] shards = 2

  // CHECK-LABEL: func.func @sharded_buffer
  // CHECK: train.read @moments : tensor<24xf32>
  // CHECK: train.write %{{.*}} to @moments : tensor<24xf32>
  // CHECK: train.storage @moments : memref<24xf32>
  func.func @sharded_buffer() {
    %m = train.read @moments : tensor<24xf32>
    train.write %m to @moments : tensor<24xf32>
    %s = train.storage @moments : memref<24xf32>
    return
  }

  // CHECK-LABEL: func.func @flat_storage
  // CHECK: train.storage @bucket : memref<48xf32>
  func.func @flat_storage() {
    %b = train.storage @bucket : memref<48xf32>
    return
  }

  // CHECK-LABEL: func.func @fused
  // CHECK: %[[Y:.*]] = train.fused %{{.*}}, %{{.*}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>):
  // CHECK-NEXT: %[[S:.*]] = train.add %[[A]], %[[B]]
  // CHECK-NEXT: %[[G:.*]] = train.gelu %[[S]] tanh
  // CHECK-NEXT: train.yield %[[G]] : tensor<2x8xf32>
  func.func @fused(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
    %y = train.fused %x, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>, %c: tensor<8xf32>):
      %s = train.add %a, %c : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
      %g = train.gelu %s tanh : tensor<2x8xf32>
      train.yield %g : tensor<2x8xf32>
    }
    return %y : tensor<2x8xf32>
  }

  // CHECK-LABEL: func.func @buffers
  // CHECK: %[[W:.*]] = train.storage @w : memref<4x8xf32>
  // CHECK: %[[OUT:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<2x4xf32>
  // CHECK: train.kernel ins(%{{.*}}, %[[W]] : memref<2x8xf32>, memref<4x8xf32>) outs(%[[OUT]] : memref<2x4xf32>) {
  // CHECK: train.matmul
  // CHECK: train.yield
  // CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [8], strides: [1] : memref<2x4xf32> to memref<8xf32>
  // CHECK: %[[R:.*]] = train.collective_start all_reduce %[[FLAT]], %[[FLAT]] on @dp payload = 8 : memref<8xf32>, memref<8xf32>
  // CHECK: train.collective_wait %[[R]]
  // CHECK: %[[RANK:.*]] = train.rank on @dp
  // CHECK: train.read_back %{{.*}}, %{{.*}} : memref<f32>, memref<f32, #train.host>
  // CHECK: memref.dealloc %[[OUT]]
  func.func @buffers(%x: memref<2x8xf32>, %loss: memref<f32, #train.host>) {
    %w = train.storage @w : memref<4x8xf32>
    %out = memref.alloc() {train.category = #train.category<activations>} : memref<2x4xf32>
    train.kernel ins(%x, %w : memref<2x8xf32>, memref<4x8xf32>) outs(%out : memref<2x4xf32>) {
    ^bb0(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>):
      %c = train.matmul %a, %b transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
      train.yield %c : tensor<2x4xf32>
    }
    %flat = memref.reinterpret_cast %out to offset: [0], sizes: [8], strides: [1] : memref<2x4xf32> to memref<8xf32>
    %r = train.collective_start all_reduce %flat, %flat on @dp payload = 8 : memref<8xf32>, memref<8xf32>
    train.collective_wait %r
    %rank = train.rank on @dp
    %l = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins(%flat : memref<8xf32>) outs(%l : memref<f32>) {
    ^bb0(%a: tensor<8xf32>):
      %m = train.mean %a dims = [0] : tensor<8xf32> -> tensor<f32>
      train.yield %m : tensor<f32>
    }
    train.read_back %l, %loss : memref<f32>, memref<f32, #train.host>
    memref.dealloc %out : memref<2x4xf32>
    memref.dealloc %l : memref<f32>
    return
  }
}
