// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize | FileCheck %s

// Views are reinterpret_casts of their source's buffer at the offset they
// read: an unpack's parts, a reshape, a rank's slice (offset = rank * size,
// from train.rank), and a wait's value (the collective's receive buffer).
// Collectives get their payload and the buffers their category.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %{{.*}}: memref<1x4xi32>, %{{.*}}: memref<1x4xi32>, %[[OUT:.*]]: memref<f32, #train.host>)
// CHECK: %[[RANK:.*]] = train.rank on @dp
// CHECK: %[[SEND:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<10xf32>
// CHECK: train.pack
// CHECK: %[[RECV:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<10xf32>
// CHECK: %[[REQ:.*]] = train.collective_start all_reduce %[[SEND]], %[[RECV]] on @dp payload = 10 : memref<10xf32>, memref<10xf32>
// CHECK: train.collective_wait %[[REQ]]
// CHECK: memref.reinterpret_cast %[[RECV]] to offset: [0], sizes: [8], strides: [1] : memref<10xf32> to memref<8xf32>
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[RECV]] to offset: [8], sizes: [2], strides: [1] : memref<10xf32> to memref<2xf32, strided<[1], offset: 8>>
// CHECK: %[[M:.*]] = memref.reinterpret_cast %[[RECV]] to offset: [0], sizes: [4, 2], strides: [2, 1] : memref<10xf32> to memref<4x2xf32>
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[RANK]], %[[C4]] : index
// CHECK: %[[SLICE:.*]] = memref.reinterpret_cast %[[RECV]] to offset: [%[[OFF]]], sizes: [4], strides: [1] : memref<10xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK: train.kernel ins(%[[M]] : memref<4x2xf32>)
// CHECK: train.kernel ins(%[[SLICE]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK: train.kernel ins(%[[B]] : memref<2xf32, strided<[1], offset: 8>>)
// CHECK: train.read_back %{{.*}}, %[[OUT]]
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4x2xf32> init = zeros
  train.param @b : tensor<2xf32> init = zeros
  func.func @forward(%tokens: tensor<1x4xi32>, %targets: tensor<1x4xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4x2xf32>
    %b = train.read @b : tensor<2xf32>
    %p = train.pack %w, %b : tensor<4x2xf32>, tensor<2xf32> -> tensor<10xf32>
    %f = train.all_reduce_start %p on @dp : tensor<10xf32> -> !train.future<tensor<10xf32>>
    %r = train.wait %f : !train.future<tensor<10xf32>>
    %u:2 = train.unpack %r : tensor<10xf32> -> tensor<8xf32>, tensor<2xf32>
    %m = train.reshape %u#0 : tensor<8xf32> -> tensor<4x2xf32>
    %slice = shard.all_slice %u#0 on @dp grid_axes = [0] slice_axis = 0 : tensor<8xf32> -> tensor<4xf32>
    %s1 = train.sum %m dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
    %s2 = train.sum %slice dims = [0] : tensor<4xf32> -> tensor<f32>
    %s3 = train.sum %u#1 dims = [0] : tensor<2xf32> -> tensor<f32>
    %a = train.add %s1, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %l = train.add %a, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
