// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize -split-input-file | FileCheck %s

// Stages 1-2: the unpack of the gathered parameters (shards > 1) writes
// each part straight into the parameter its write names, when no read of
// that parameter is live at the unpack: no unpacked copy, no memref.copy.
// A part whose parameter is still read keeps its buffer and the copy.

// CHECK-LABEL: func.func @gather(
// CHECK: %[[G:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<10xf32>
// CHECK: train.collective_start all_gather %{{.*}}, %[[G]]
// CHECK: train.collective_wait
// CHECK-NEXT: %[[W:.*]] = train.storage @w : memref<2x3xf32>
// CHECK-NEXT: %[[B:.*]] = train.storage @b : memref<3xf32>
// CHECK-NEXT: train.kernel ins(%[[G]] : memref<10xf32>) outs(%[[W]], %[[B]] : memref<2x3xf32>, memref<3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.unpack
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<2x3xf32> init = zeros
  train.param @b : tensor<3xf32> init = zeros
  func.func @gather(%x: tensor<5xf32>) -> tensor<2x3xf32> {
    %r = train.read @w : tensor<2x3xf32>
    %y = train.scale %r by 2.0 : tensor<2x3xf32>
    %p = train.pack %x shards = 1 : tensor<5xf32> -> tensor<5xf32>
    %f = train.all_gather_start %p on @dp : tensor<5xf32> -> !train.future<tensor<10xf32>>
    %g = train.wait %f : !train.future<tensor<10xf32>>
    %u:2 = train.unpack %g shards = 2 : tensor<10xf32> -> tensor<2x3xf32>, tensor<3xf32>
    train.write %u#0 to @w : tensor<2x3xf32>
    train.write %u#1 to @b : tensor<3xf32>
    return %y : tensor<2x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @still_read(
// CHECK: %[[G:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<10xf32>
// CHECK: train.collective_wait
// CHECK-NEXT: %[[W:.*]] = train.storage @w : memref<2x3xf32>
// CHECK-NEXT: %[[U:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<3xf32>
// CHECK-NEXT: train.kernel ins(%[[G]] : memref<10xf32>) outs(%[[W]], %[[U]] : memref<2x3xf32>, memref<3xf32>)
// CHECK: %[[B:.*]] = train.storage @b : memref<3xf32>
// CHECK-NEXT: memref.copy %[[U]], %[[B]]
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<2x3xf32> init = zeros
  train.param @b : tensor<3xf32> init = zeros
  func.func @still_read(%x: tensor<5xf32>) -> tensor<3xf32> {
    %r = train.read @b : tensor<3xf32>
    %p = train.pack %x shards = 1 : tensor<5xf32> -> tensor<5xf32>
    %f = train.all_gather_start %p on @dp : tensor<5xf32> -> !train.future<tensor<10xf32>>
    %g = train.wait %f : !train.future<tensor<10xf32>>
    %u:2 = train.unpack %g shards = 2 : tensor<10xf32> -> tensor<2x3xf32>, tensor<3xf32>
    %y = train.scale %r by 2.0 : tensor<3xf32>
    train.write %u#0 to @w : tensor<2x3xf32>
    train.write %u#1 to @b : tensor<3xf32>
    return %y : tensor<3xf32>
  }
}
