// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize | FileCheck %s

// Stages 2-3: the bucket a rank reduce-scatters (a pack in
// no buffer) is allocated before its first gradient, and each gradient
// used only by the pack is computed into its slot, through a reshape too,
// the padding as well: the pack copies nothing. A gradient with another
// use (%c, also returned) is copied into its slot. The reduce-scatter
// leaves the rank's shard at its slot of the segment.

// CHECK-LABEL: func.func @segment(
// CHECK: %[[SEG:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<10xf32>
// CHECK-NEXT: %[[S0:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [0], sizes: [1, 3], strides: [3, 1]
// CHECK-NEXT: train.kernel ins(%{{.*}} : memref<1x3xf32>) outs(%[[S0]] : memref<1x3xf32>)
// CHECK: %[[S1:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [3], sizes: [2], strides: [1]
// CHECK-NEXT: train.kernel ins(%{{.*}} : memref<2xf32>) outs(%[[S1]] : memref<2xf32, strided<[1], offset: 3>>)
// CHECK: %[[C:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: %[[PAD:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [9], sizes: [1], strides: [1]
// CHECK-NEXT: train.kernel ins() outs(%[[PAD]] : memref<1xf32, strided<[1], offset: 9>>)
// CHECK: %[[S2:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [5], sizes: [4], strides: [1]
// CHECK-NEXT: memref.copy %[[C]], %[[S2]]
// CHECK: %[[MINE:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [%{{.*}}], sizes: [5], strides: [1]
// CHECK-NEXT: train.collective_start reduce_scatter %[[SEG]], %[[MINE]] on @dp payload = 10
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  func.func @segment(%x: tensor<1x3xf32>, %y: tensor<2xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
    %w = train.scale %x by 2.0 : tensor<1x3xf32>
    %wf = train.reshape %w : tensor<1x3xf32> -> tensor<3xf32>
    %b = train.scale %y by 3.0 : tensor<2xf32>
    %c = train.scale %z by 4.0 : tensor<4xf32>
    %pad = train.fill 0.0 : tensor<1xf32>
    %p = train.pack %wf, %b, %c, %pad : tensor<3xf32>, tensor<2xf32>, tensor<4xf32>, tensor<1xf32> -> tensor<10xf32>
    %f = train.reduce_scatter_start %p on @dp : tensor<10xf32> -> !train.future<tensor<5xf32>>
    %g = train.wait %f : !train.future<tensor<5xf32>>
    return %c, %g : tensor<4xf32>, tensor<5xf32>
  }
}
