// RUN: zeroc-opt %s --train-defer-gathers | FileCheck %s

// The planned form, one fp32 bucket: its update (here an add) wrote the
// rank's slot of @zero.flat0.params; the in-place all-gather that ends the
// step moves to its top, waited right before the kernel that first reads
// the bucket's member @w; a new planned @gather_params gathers it.
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  train.buffer @zero.flat0.params : tensor<4xf32> <parameters> members [@w] offsets [0]
  func.func @train_step(%x: memref<4xf32>, %y: memref<2xf32>) attributes {train.planned, train.step} {
    train.kernel ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%a: tensor<4xf32>):
      %s = train.relu %a : tensor<4xf32>
      train.yield %s : tensor<4xf32>
    }
    %w = train.storage @w : memref<4xf32>
    train.kernel ins(%x, %w : memref<4xf32>, memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %s = train.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      train.yield %s : tensor<4xf32>
    }
    %r = train.rank on @dp
    %p = train.storage @zero.flat0.params : memref<4xf32>
    %c2 = arith.constant 2 : index
    %o = arith.muli %r, %c2 : index
    %slot = memref.reinterpret_cast %p to offset: [%o], sizes: [2], strides: [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
    train.kernel ins(%slot, %y : memref<2xf32, strided<[1], offset: ?>>, memref<2xf32>) outs(%slot : memref<2xf32, strided<[1], offset: ?>>) {
    ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
      %s = train.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      train.yield %s : tensor<2xf32>
    }
    %g = train.collective_start all_gather %slot, %p on @dp payload = 4 : memref<2xf32, strided<[1], offset: ?>>, memref<4xf32>
    train.collective_wait %g
    return
  }
}

// CHECK-LABEL: func.func @train_step
// CHECK-NEXT: %[[R:.*]] = train.rank on @dp
// CHECK-NEXT: %[[P:.*]] = train.storage @zero.flat0.params : memref<4xf32>
// CHECK-NEXT: %[[C:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[O:.*]] = arith.muli %[[R]], %[[C]] : index
// CHECK-NEXT: %[[S:.*]] = memref.reinterpret_cast %[[P]] to offset: [%[[O]]], sizes: [2], strides: [1]
// CHECK-NEXT: %[[G:.*]] = train.collective_start all_gather %[[S]], %[[P]] on @dp payload = 4
// CHECK-NEXT: train.kernel
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.relu
// CHECK: train.storage @w
// CHECK-NEXT: train.collective_wait %[[G]]
// CHECK-NEXT: train.kernel
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NOT: train.collective
// CHECK: return

// CHECK-LABEL: func.func @gather_params() attributes {train.planned} {
// CHECK-NEXT: %[[GP:.*]] = train.storage @zero.flat0.params : memref<4xf32>
// CHECK-NEXT: %[[GR:.*]] = train.rank on @dp
// CHECK-NEXT: arith.constant 2
// CHECK-NEXT: arith.muli %[[GR]]
// CHECK-NEXT: %[[GS:.*]] = memref.reinterpret_cast %[[GP]]
// CHECK-NEXT: %[[GG:.*]] = train.collective_start all_gather %[[GS]], %[[GP]] on @dp payload = 4
// CHECK-NEXT: train.collective_wait %[[GG]]
// CHECK-NEXT: return
