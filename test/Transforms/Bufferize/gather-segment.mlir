// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize | FileCheck %s

// Stages 1-2: the segment a rank sends to the all-gather of its updated
// parameters (a pack with shards = 1) is allocated before its first part,
// and each part used only by the pack is computed into its slot, through a
// reshape too: the pack copies nothing. A part with another use (%c, also
// returned) is copied into its slot.

// CHECK-LABEL: func.func @segment(
// CHECK: %[[SEG:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<9xf32>
// CHECK-NEXT: %[[S0:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [0], sizes: [1, 3], strides: [3, 1]
// CHECK-NEXT: train.kernel ins(%{{.*}} : memref<1x3xf32>) outs(%[[S0]] : memref<1x3xf32>)
// CHECK: %[[S1:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [3], sizes: [2], strides: [1]
// CHECK-NEXT: train.kernel ins(%{{.*}} : memref<2xf32>) outs(%[[S1]] : memref<2xf32, strided<[1], offset: 3>>)
// CHECK: %[[C:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: %[[S2:.*]] = memref.reinterpret_cast %[[SEG]] to offset: [5], sizes: [4], strides: [1]
// CHECK-NEXT: memref.copy %[[C]], %[[S2]]
// CHECK-NEXT: %[[G:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<18xf32>
// CHECK-NEXT: train.collective_start all_gather %[[SEG]], %[[G]] on @dp payload = 17
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<2x3xf32> init = zeros
  train.param @b : tensor<3xf32> init = zeros
  train.param @c : tensor<8xf32> init = zeros
  func.func @segment(%x: tensor<1x3xf32>, %y: tensor<2xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %w = train.scale %x by 2.0 : tensor<1x3xf32>
    %wf = train.reshape %w : tensor<1x3xf32> -> tensor<3xf32>
    %b = train.scale %y by 3.0 : tensor<2xf32>
    %c = train.scale %z by 4.0 : tensor<4xf32>
    %p = train.pack %wf, %b, %c shards = 1 : tensor<3xf32>, tensor<2xf32>, tensor<4xf32> -> tensor<9xf32>
    %f = train.all_gather_start %p on @dp : tensor<9xf32> -> !train.future<tensor<18xf32>>
    %g = train.wait %f : !train.future<tensor<18xf32>>
    %u:3 = train.unpack %g shards = 2 : tensor<18xf32> -> tensor<2x3xf32>, tensor<3xf32>, tensor<8xf32>
    train.write %u#0 to @w : tensor<2x3xf32>
    train.write %u#1 to @b : tensor<3xf32>
    train.write %u#2 to @c : tensor<8xf32>
    return %c : tensor<4xf32>
  }
}
