// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=2 world-size=2 flat-buffers=0 bucket-bytes=64" | FileCheck %s
// The per-tensor layout (flat-buffers=0); the flat one, the default, is
// flat-buffers.mlir's.

// Stage 2: as stage 1, but only the gradient shard is kept: no full
// gradient buffer, the shard is written to a sharded one. f32 parameters
// are their own master: each rank cuts its shard out with shard.all_slice.
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.state @w1.exp_avg : tensor<4x3xf32> exp_avg of @w1 shards = 2
// CHECK: train.state @w1.grad : tensor<4x3xf32> grad of @w1 shards = 2
// CHECK-NOT: train.state @w1.master
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: train.write %{{.*}} to @w2.grad : tensor<5x4xf32>
// CHECK: %[[B:.*]] = train.pack %{{.*}}, %{{.*}} shards = 2 : tensor<5xf32>, tensor<5x4xf32> -> tensor<26xf32>
// CHECK: shard.reduce_scatter %[[B]] {{.*}} : tensor<26xf32> -> tensor<13xf32>
// CHECK: %[[G:.*]]:2 = train.unpack %{{.*}} shards = 1 : tensor<13xf32> -> tensor<3xf32>, tensor<10xf32>
// CHECK: train.write %[[G]]#1 to @w2.grad : tensor<10xf32>
// CHECK: train.read @w1.grad : tensor<6xf32>
// CHECK: %[[W:.*]] = train.read @w1 : tensor<4x3xf32>
// CHECK: %[[FLAT:.*]] = train.pack %[[W]] shards = 2 : tensor<4x3xf32> -> tensor<12xf32>
// CHECK: %[[MINE:.*]] = shard.all_slice %[[FLAT]] on @dp grid_axes = [0] slice_axis = 0 : tensor<12xf32> -> tensor<6xf32>
// CHECK: train.adamw_update %[[MINE]], {{.*}} : tensor<6xf32>
// CHECK: shard.all_gather
