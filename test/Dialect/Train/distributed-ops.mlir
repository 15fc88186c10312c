// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Packing: the tensors end to end (a bucket, or a rank's segment split
// into its parts).
// CHECK-LABEL: func.func @packing
// CHECK:         %[[B:.*]] = train.pack %{{.*}}, %{{.*}} : tensor<7xf32>, tensor<2x3xf32> -> tensor<13xf32>
// CHECK:         train.unpack %[[B]] : tensor<13xf32> -> tensor<7xf32>, tensor<2x3xf32>
// CHECK:         train.unpack %{{.*}} : tensor<7xf32> -> tensor<4xf32>, tensor<3xf32>
func.func @packing(%a: tensor<7xf32>, %b: tensor<2x3xf32>, %seg: tensor<7xf32>) {
  %buf = train.pack %a, %b : tensor<7xf32>, tensor<2x3xf32> -> tensor<13xf32>
  %x, %y = train.unpack %buf : tensor<13xf32> -> tensor<7xf32>, tensor<2x3xf32>
  %s0, %s1 = train.unpack %seg : tensor<7xf32> -> tensor<4xf32>, tensor<3xf32>
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
