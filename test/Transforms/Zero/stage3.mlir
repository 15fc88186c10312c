// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1 flat-buffers=0" | FileCheck %s

// Stage 3: parameters are sharded too. Each one (a group of one, with a
// 1-byte bucket) is gathered before its first use in forward and released
// after its last; @w2, which backward needs again, is gathered again.
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay shards = 2
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S1:.*]] = train.read @w1 : tensor<6xf32>
// CHECK: %[[P1:.*]] = train.pack %[[S1]] shards = 1 : tensor<6xf32> -> tensor<6xf32>
// CHECK: %[[F1:.*]] = train.all_gather_start %[[P1]] on @dp : tensor<6xf32> -> !train.future<tensor<12xf32>>
// CHECK: %[[G1:.*]] = train.wait %[[F1]] : !train.future<tensor<12xf32>>
// CHECK: %[[W1:.*]] = train.unpack %[[G1]] shards = 2 : tensor<12xf32> -> tensor<4x3xf32>
// CHECK: train.matmul %{{.*}}, %[[W1]] transpose_rhs
// CHECK: train.release %[[G1]] : tensor<12xf32>
// CHECK: %[[W2F:.*]] = train.unpack %{{.*}} shards = 2 : tensor<20xf32> -> tensor<5x4xf32>
// CHECK: train.matmul %{{.*}}, %[[W2F]] transpose_rhs
// CHECK: train.cross_entropy
// CHECK: train.cross_entropy_grad
// CHECK: train.read @w2 : tensor<10xf32>
// CHECK: train.all_gather_start
// CHECK: %[[W2B:.*]] = train.unpack %{{.*}} shards = 2 : tensor<20xf32> -> tensor<5x4xf32>
// CHECK: train.matmul %{{.*}}, %[[W2B]] : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK: train.release
// The update writes the rank's shard of the parameter.
// CHECK: %[[M:.*]] = train.read @w1 : tensor<6xf32>
// CHECK: %[[U:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[M]]
// CHECK: train.write %[[U]] to @w1 : tensor<6xf32>
// CHECK-NOT: all_gather
// CHECK: return
