// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Sharded declarations: storage is a flat chunk of ceil(numel / shards).
// CHECK-LABEL: module @sharded
// CHECK:         train.param @w : tensor<65x48xbf16> init = normal std = 2.000000e-02 decay shards = 3
// CHECK:         train.state @w.master : tensor<65x48xf32> master of @w shards = 3
// CHECK:         train.state @w.grad : tensor<65x48xbf16> grad of @w shards = 3
// CHECK:         train.state @b.grad : tensor<7xf32> grad of @b{{$}}
// CHECK-LABEL:   func.func @reads
// CHECK:           train.read @w : tensor<1040xbf16>
// CHECK:           train.read @w.master : tensor<1040xf32>
// CHECK:           train.write %{{.*}} to @w.grad : tensor<1040xbf16>
module @sharded {
  train.param @w : tensor<65x48xbf16> init = normal std = 0.02 decay shards = 3
  train.state @w.master : tensor<65x48xf32> master of @w shards = 3
  train.state @w.grad : tensor<65x48xbf16> grad of @w shards = 3
  train.param @b : tensor<7xf32> init = zeros
  train.state @b.grad : tensor<7xf32> grad of @b
  func.func @reads() {
    %w = train.read @w : tensor<1040xbf16>
    %m = train.read @w.master : tensor<1040xf32>
    train.write %w to @w.grad : tensor<1040xbf16>
    return
  }
}

// Packing, rank-major: 2 ranks, 7 elements pad to 8 (chunks of 4), 6 to 6
// (chunks of 3): the buffer has 2 * (4 + 3) elements.
// CHECK-LABEL: func.func @packing
// CHECK:         %[[B:.*]] = train.pack %{{.*}}, %{{.*}} shards = 2 : tensor<7xf32>, tensor<2x3xf32> -> tensor<14xf32>
// CHECK:         train.unpack %[[B]] shards = 2 : tensor<14xf32> -> tensor<7xf32>, tensor<2x3xf32>
// CHECK:         train.unpack %{{.*}} shards = 1 : tensor<7xf32> -> tensor<4xf32>, tensor<3xf32>
func.func @packing(%a: tensor<7xf32>, %b: tensor<2x3xf32>, %seg: tensor<7xf32>) {
  %buf = train.pack %a, %b shards = 2 : tensor<7xf32>, tensor<2x3xf32> -> tensor<14xf32>
  %x, %y = train.unpack %buf shards = 2 : tensor<14xf32> -> tensor<7xf32>, tensor<2x3xf32>
  %s0, %s1 = train.unpack %seg shards = 1 : tensor<7xf32> -> tensor<4xf32>, tensor<3xf32>
  return
}

// Asynchronous collectives on a 1-D grid, waited where their result is
// needed, and the release of a gathered buffer.
// CHECK-LABEL: module @collectives
// CHECK:         %[[F1:.*]] = train.all_reduce_start %{{.*}} on @dp : tensor<12xf32> -> !train.future<tensor<12xf32>>
// CHECK:         train.wait %[[F1]] : !train.future<tensor<12xf32>>
// CHECK:         %[[F2:.*]] = train.reduce_scatter_start %{{.*}} on @dp : tensor<12xf32> -> !train.future<tensor<4xf32>>
// CHECK:         train.wait %[[F2]] : !train.future<tensor<4xf32>>
// CHECK:         %[[F3:.*]] = train.all_gather_start %{{.*}} on @dp : tensor<4xbf16> -> !train.future<tensor<12xbf16>>
// CHECK:         %[[G:.*]] = train.wait %[[F3]] : !train.future<tensor<12xbf16>>
// CHECK:         train.release %[[G]] : tensor<12xbf16>
module @collectives {
  shard.grid @dp(shape = 3)
  func.func @f(%x: tensor<12xf32>, %s: tensor<4xbf16>) {
    %f1 = train.all_reduce_start %x on @dp : tensor<12xf32> -> !train.future<tensor<12xf32>>
    %r1 = train.wait %f1 : !train.future<tensor<12xf32>>
    %f2 = train.reduce_scatter_start %x on @dp : tensor<12xf32> -> !train.future<tensor<4xf32>>
    %r2 = train.wait %f2 : !train.future<tensor<4xf32>>
    %f3 = train.all_gather_start %s on @dp : tensor<4xbf16> -> !train.future<tensor<12xbf16>>
    %g = train.wait %f3 : !train.future<tensor<12xbf16>>
    train.release %g : tensor<12xbf16>
    return
  }
}
