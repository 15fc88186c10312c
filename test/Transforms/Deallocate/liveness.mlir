// RUN: zeroc-opt %s --train-deallocate | FileCheck %s

// Each allocation is freed right after its last use, through its views;
// a collective's buffers live until its wait; frees behind one op come in
// allocation order; host out-parameters and state buffers are not freed.

module attributes {train.world_size = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<8xf32> init = zeros
  // CHECK-LABEL: func.func @f
  func.func @f(%x: memref<8xf32>, %out: memref<f32, #train.host>) attributes {train.planned} {
    // CHECK: %[[A:.*]] = memref.alloc
    %a = memref.alloc() {train.category = #train.category<activations>} : memref<8xf32>
    // CHECK: %[[B:.*]] = memref.alloc
    %b = memref.alloc() {train.category = #train.category<activations>} : memref<8xf32>
    %w = train.storage @w : memref<8xf32>
    train.kernel ins(%x, %w : memref<8xf32>, memref<8xf32>) outs(%a, %b : memref<8xf32>, memref<8xf32>) {
    ^bb0(%p: tensor<8xf32>, %q: tensor<8xf32>):
      %s = train.fused %p, %q : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%u: tensor<8xf32>, %v: tensor<8xf32>):
        %t = train.add %u, %v : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
        train.yield %t : tensor<8xf32>
      }
      train.yield %s, %s : tensor<8xf32>, tensor<8xf32>
    }
    // CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[A]]
    %view = memref.reinterpret_cast %a to offset: [4], sizes: [4], strides: [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    // CHECK: %[[R:.*]] = memref.alloc
    %recv = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<8xf32>
    // CHECK: %[[REQ:.*]] = train.collective_start all_reduce %[[B]], %[[R]]
    %req = train.collective_start all_reduce %b, %recv on @dp payload = 8 : memref<8xf32>, memref<8xf32>
    // CHECK: %[[L:.*]] = memref.alloc
    %l = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    // CHECK: train.kernel ins(%[[VIEW]]
    train.kernel ins(%view : memref<4xf32, strided<[1], offset: 4>>) outs(%l : memref<f32>) {
    ^bb0(%p: tensor<4xf32>):
      %s = train.sum %p dims = [0] : tensor<4xf32> -> tensor<f32>
      train.yield %s : tensor<f32>
    }
    // The view was the last use of %a; %b is the collective's, until the wait.
    // CHECK: train.yield
    // CHECK-NEXT: }
    // CHECK-NEXT: memref.dealloc %[[A]]
    // CHECK-NEXT: train.collective_wait %[[REQ]]
    // CHECK-NEXT: memref.dealloc %[[B]]
    // CHECK-NEXT: memref.dealloc %[[R]]
    train.collective_wait %req
    // CHECK-NEXT: train.read_back %[[L]]
    // CHECK-NEXT: memref.dealloc %[[L]]
    // CHECK-NEXT: return
    train.read_back %l, %out : memref<f32>, memref<f32, #train.host>
    return
  }
}
