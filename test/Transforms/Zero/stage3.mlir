// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1" | FileCheck %s

// Stage 3: parameters are sharded too. Each one (a bucket of one, with a
// 1-byte bucket size) is gathered before its first use in forward and
// released after its last; @w2, which backward needs again, is gathered
// again (stage3-flat.mlir: buckets of several parameters).
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.buffer @zero.flat3.params : tensor<12xf32> <parameters> members [@w1] offsets [0] shards = 2
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S1:.*]] = train.read @zero.flat3.params : tensor<6xf32>
// CHECK-NEXT: %[[F1:.*]] = train.all_gather_start %[[S1]] on @dp : tensor<6xf32> -> !train.future<tensor<12xf32>>
// CHECK-NEXT: %[[G1:.*]] = train.wait %[[F1]] : !train.future<tensor<12xf32>>
// CHECK-NEXT: %[[W1:.*]] = train.unpack %[[G1]] : tensor<12xf32> -> tensor<4x3xf32>
// CHECK-NEXT: train.matmul %{{.*}}, %[[W1]] transpose_rhs
// CHECK-NEXT: train.release %[[G1]] : tensor<12xf32>
// CHECK: %[[W2F:.*]] = train.unpack %{{.*}} : tensor<20xf32> -> tensor<5x4xf32>
// CHECK: train.matmul %{{.*}}, %[[W2F]] transpose_rhs
// CHECK: train.cross_entropy
// CHECK: train.cross_entropy_grad
// CHECK: train.read @zero.flat1.params : tensor<10xf32>
// CHECK-NEXT: train.all_gather_start
// CHECK-NEXT: train.wait
// CHECK-NEXT: %[[W2B:.*]] = train.unpack %{{.*}} : tensor<20xf32> -> tensor<5x4xf32>
// CHECK-NEXT: train.matmul %{{.*}}, %[[W2B]] : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: train.release
// The update writes the rank's shard of the parameter buffer.
// CHECK: %[[M:.*]] = train.read @zero.flat3.params : tensor<6xf32>
// CHECK: %[[U:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[M]]
// CHECK: train.write %[[U]] to @zero.flat3.params : tensor<6xf32>
// CHECK-NOT: all_gather
// CHECK: return
