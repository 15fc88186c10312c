// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-mixed-precision --train-autodiff --train-optimizer "--train-zero=stage=1 world-size=2 flat-buffers=0 bucket-bytes=1000" | FileCheck %s
// The per-tensor layout (flat-buffers=0); the flat one, the default, is
// flat-buffers.mlir's.

// Stage 1 (bf16): optimizer state is sharded; the full local gradient stays
// in its buffer; one reduce-scatter hands each rank its gradient shards; the
// updated parameters come back with an all-gather.
// CHECK: train.param @w1 : tensor<4x3xbf16> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.state @w1.master : tensor<4x3xf32> master of @w1 shards = 2
// CHECK: train.state @w1.exp_avg : tensor<4x3xf32> exp_avg of @w1 shards = 2
// CHECK: train.state @w1.exp_avg_sq : tensor<4x3xf32> exp_avg_sq of @w1 shards = 2
// CHECK: train.state @w1.grad : tensor<4x3xbf16> grad of @w1{{$}}
// CHECK-LABEL: func.func @train_step
// One bucket: 4 gradients, rank-major, each padded to 2 chunks.
// CHECK: train.write %{{.*}} to @w1.grad : tensor<4x3xbf16>
// CHECK: %[[B:.*]] = train.pack {{.*}} shards = 2 : {{.*}} -> tensor<42xbf16>
// CHECK: %[[S:.*]] = shard.reduce_scatter %[[B]] on @dp grid_axes = [0] scatter_axis = 0 : tensor<42xbf16> -> tensor<21xbf16>
// CHECK: %[[A:.*]] = train.scale %[[S]] by 5.000000e-01 : tensor<21xbf16>
// CHECK: %[[G:.*]]:4 = train.unpack %[[A]] shards = 1 : tensor<21xbf16> -> tensor<3xbf16>, tensor<10xbf16>, tensor<2xbf16>, tensor<6xbf16>
// The partial squared norms are summed over ranks before clipping.
// CHECK: train.squared_norm %[[G]]#3 : tensor<6xbf16> -> tensor<f32>
// CHECK: %[[N:.*]] = shard.all_reduce %{{.*}} on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
// CHECK: train.clip_coef
// CHECK: %[[M:.*]] = train.read @w1.master : tensor<6xf32>
// CHECK: train.adamw_update %[[M]], {{.*}} : tensor<6xf32>
// CHECK: train.write %{{.*}} to @w1.master : tensor<6xf32>
// CHECK: %[[P:.*]] = train.pack {{.*}} shards = 1 : tensor<6xbf16>, tensor<2xbf16>, tensor<10xbf16>, tensor<3xbf16> -> tensor<21xbf16>
// CHECK: %[[AG:.*]] = shard.all_gather %[[P]] on @dp grid_axes = [0] gather_axis = 0 : tensor<21xbf16> -> tensor<42xbf16>
// CHECK: %[[F:.*]]:4 = train.unpack %[[AG]] shards = 2 : tensor<42xbf16> -> tensor<4x3xbf16>, tensor<4xbf16>, tensor<5x4xbf16>, tensor<5xbf16>
// CHECK: train.write %[[F]]#0 to @w1 : tensor<4x3xbf16>
