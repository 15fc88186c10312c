// RUN: zeroc-opt %s --train-allocate | FileCheck %s

// Each allocation's category from what it is for: the receive buffers of
// an all-gather (gathered parameters) and of an all-reduce (gradient
// buckets); a pack's buffer that an all-reduce sends and a segment written
// through its views that a reduce-scatter sends (gradient buckets); a
// kernel's result that an all-gather sends, a read's copy and a plain
// result (activations); a category already there stays.

// CHECK-LABEL: func.func @categories(
// CHECK: %[[GATHERED:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<4xf32>
// CHECK: %[[CAST:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<2xf32>
// CHECK: %[[PACK:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<4xf32>
// CHECK: %[[REDUCED:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<4xf32>
// CHECK: %[[SEG:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: %[[KEPT:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<f32>
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  func.func @categories(%x: memref<2xf32>) -> memref<f32> attributes {train.planned} {
    %gathered = memref.alloc() : memref<4xf32>
    %cast = memref.alloc() : memref<2xf32>
    train.kernel ins(%x : memref<2xf32>) outs(%cast : memref<2xf32>) {
    ^bb0(%a: tensor<2xf32>):
      %r = train.relu %a : tensor<2xf32>
      train.yield %r : tensor<2xf32>
    }
    %g = train.collective_start all_gather %cast, %gathered on @dp payload = 4 : memref<2xf32>, memref<4xf32>
    train.collective_wait %g
    %pack = memref.alloc() : memref<4xf32>
    train.kernel ins(%x, %x : memref<2xf32>, memref<2xf32>) outs(%pack : memref<4xf32>) {
    ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
      %p = train.pack %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<4xf32>
      train.yield %p : tensor<4xf32>
    }
    %reduced = memref.alloc() : memref<4xf32>
    %ar = train.collective_start all_reduce %pack, %reduced on @dp payload = 4 : memref<4xf32>, memref<4xf32>
    train.collective_wait %ar
    %seg = memref.alloc() : memref<4xf32>
    %slot = memref.reinterpret_cast %seg to offset: [2], sizes: [2], strides: [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
    train.kernel ins(%x : memref<2xf32>) outs(%slot : memref<2xf32, strided<[1], offset: 2>>) {
    ^bb0(%a: tensor<2xf32>):
      %r = train.relu %a : tensor<2xf32>
      train.yield %r : tensor<2xf32>
    }
    %rank = train.rank on @dp
    %c2 = arith.constant 2 : index
    %off = arith.muli %rank, %c2 : index
    %mine = memref.reinterpret_cast %seg to offset: [%off], sizes: [2], strides: [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
    %s = train.collective_start reduce_scatter %seg, %mine on @dp payload = 4 : memref<4xf32>, memref<2xf32, strided<[1], offset: ?>>
    train.collective_wait %s
    %w = train.storage @w : memref<4xf32>
    %copy = memref.alloc() : memref<4xf32>
    memref.copy %w, %copy : memref<4xf32> to memref<4xf32>
    %kept = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<f32>
    train.kernel ins(%copy : memref<4xf32>) outs(%kept : memref<f32>) {
    ^bb0(%a: tensor<4xf32>):
      %r = train.sum %a dims = [0] : tensor<4xf32> -> tensor<f32>
      train.yield %r : tensor<f32>
    }
    return %kept : memref<f32>
  }
}
