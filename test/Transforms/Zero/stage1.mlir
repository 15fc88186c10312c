// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-mixed-precision --train-autodiff --train-optimizer "--train-zero=stage=1 world-size=2 bucket-bytes=1000" | FileCheck %s

// Stage 1 (bf16): optimizer state (fp32 masters, moments) is sharded; the
// full local gradients stay in their (replicated) bucket buffer; one
// reduce-scatter hands each rank its contiguous gradient shard; the
// updated parameters come back with an all-gather into the parameter
// buffer. The members keep their names and logical shapes.
// CHECK: train.param @w1 : tensor<4x3xbf16> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.state @w1.master : tensor<4x3xf32> master of @w1{{$}}
// CHECK: train.state @w1.grad : tensor<4x3xbf16> grad of @w1{{$}}
// CHECK: train.buffer @zero.flat0.params : tensor<42xbf16> <parameters> members [@b2, @w2, @b1, @w1] offsets [0, 5, 25, 29]{{$}}
// CHECK-NEXT: train.buffer @zero.flat0.grads : tensor<42xbf16> <gradients> members [@b2.grad, @w2.grad, @b1.grad, @w1.grad] offsets [0, 5, 25, 29]{{$}}
// CHECK-NEXT: train.buffer @zero.flat0.master : tensor<42xf32> <optimizer_states> {{.*}} shards = 2
// CHECK-NEXT: train.buffer @zero.flat0.exp_avg : tensor<42xf32> <optimizer_states> {{.*}} shards = 2
// CHECK-NEXT: train.buffer @zero.flat0.exp_avg_sq : tensor<42xf32> <optimizer_states> {{.*}} shards = 2
// CHECK-LABEL: func.func @train_step
// One bucket: 4 gradients end to end, a zero tail to 42.
// CHECK: %[[B:.*]] = train.pack {{.*}} : tensor<5xbf16>, tensor<5x4xbf16>, tensor<4xbf16>, tensor<4x3xbf16>, tensor<1xbf16> -> tensor<42xbf16>
// CHECK-NEXT: train.write %[[B]] to @zero.flat0.grads : tensor<42xbf16>
// CHECK-NEXT: %[[S:.*]] = shard.reduce_scatter %[[B]] on @dp grid_axes = [0] scatter_axis = 0 : tensor<42xbf16> -> tensor<21xbf16>
// CHECK-NEXT: %[[A:.*]] = train.scale %[[S]] by 5.000000e-01 : tensor<21xbf16>
// The partial squared norms are summed over ranks before clipping.
// CHECK: train.squared_norm %[[A]] : tensor<21xbf16> -> tensor<f32>
// CHECK: %[[N:.*]] = shard.all_reduce %{{.*}} on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
// CHECK: train.clip_coef
// CHECK: %[[M:.*]] = train.read @zero.flat0.master : tensor<21xf32>
// CHECK: %[[NEW:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[M]], {{.*}} decay_ranges [5, 25, 29, 41] : tensor<21xf32>
// CHECK: train.write %[[NEW]] to @zero.flat0.master : tensor<21xf32>
// CHECK-NEXT: %[[R:.*]] = train.cast %[[NEW]] : tensor<21xf32> to tensor<21xbf16>
// CHECK-NEXT: %[[AG:.*]] = shard.all_gather %[[R]] on @dp grid_axes = [0] gather_axis = 0 : tensor<21xbf16> -> tensor<42xbf16>
// CHECK-NEXT: train.write %[[AG]] to @zero.flat0.params : tensor<42xbf16>
// CHECK-NOT: train.unpack
// CHECK: return
