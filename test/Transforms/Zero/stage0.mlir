// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=0 world-size=2 bucket-bytes=64" | FileCheck %s

// Stage 0: gradients are bucketed in the order backward produces them
// (the last layer first) and averaged with one all-reduce per bucket into
// the bucket's gradient buffer; every rank runs one optimizer update per
// bucket over whole buffers (no padding, no shards): parameters, moments,
// gradients in the same layout as stages 1-3.
// CHECK: module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 0 : i64}
// CHECK: shard.grid @dp(shape = 2)
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.state @w1.exp_avg : tensor<4x3xf32> exp_avg of @w1{{$}}
// CHECK: train.state @w1.grad : tensor<4x3xf32> grad of @w1{{$}}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<3x3xf32>
// CHECK: %[[L:.*]] = train.cross_entropy
// CHECK: %[[L1:.*]] = train.reshape %[[L]] : tensor<f32> -> tensor<1xf32>
// CHECK: shard.all_reduce %[[L1]] on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
// The bucket buffers, declared before the step, none of them sharded.
// CHECK: train.buffer @zero.flat0.params : tensor<25xf32> <parameters> members [@b2, @w2] offsets [0, 5]{{$}}
// CHECK-NEXT: train.buffer @zero.flat0.grads : tensor<25xf32> <gradients> members [@b2.grad, @w2.grad] offsets [0, 5]{{$}}
// CHECK-NEXT: train.buffer @zero.flat0.exp_avg : tensor<25xf32> <optimizer_states> members [@b2.exp_avg, @w2.exp_avg] offsets [0, 5]{{$}}
// CHECK-NEXT: train.buffer @zero.flat0.exp_avg_sq : tensor<25xf32> <optimizer_states> members [@b2.exp_avg_sq, @w2.exp_avg_sq] offsets [0, 5]{{$}}
// CHECK-NEXT: train.buffer @zero.flat1.params : tensor<16xf32> <parameters> members [@b1, @w1] offsets [0, 4]{{$}}
// CHECK-NEXT: train.buffer @zero.flat1.grads : tensor<16xf32> <gradients> members [@b1.grad, @w1.grad] offsets [0, 4]{{$}}
// CHECK-NEXT: train.buffer @zero.flat1.exp_avg : tensor<16xf32> <optimizer_states> members [@b1.exp_avg, @w1.exp_avg] offsets [0, 4]{{$}}
// CHECK-NEXT: train.buffer @zero.flat1.exp_avg_sq : tensor<16xf32> <optimizer_states> members [@b1.exp_avg_sq, @w1.exp_avg_sq] offsets [0, 4]{{$}}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%{{.*}}: tensor<3x3xf32>, %{{.*}}: tensor<3xi32>, %[[STEP:.*]]: tensor<i64>)
// The loss is averaged right after it is computed.
// CHECK: %[[LOSS:.*]] = train.cross_entropy
// CHECK: %[[LR:.*]] = shard.all_reduce %{{.*}} on @dp grid_axes = [0] : tensor<1xf32> -> tensor<1xf32>
// CHECK: train.scale %[[LR]] by 5.000000e-01
// First bucket: the output layer's bias and weight (5 + 20 floats = 100 bytes).
// CHECK: %[[B1:.*]] = train.pack %[[DB2:.*]], %[[DW2:.*]] : tensor<5xf32>, tensor<5x4xf32> -> tensor<25xf32>
// CHECK-NEXT: %[[R1:.*]] = shard.all_reduce %[[B1]] on @dp grid_axes = [0] : tensor<25xf32> -> tensor<25xf32>
// CHECK-NEXT: %[[A1:.*]] = train.scale %[[R1]] by 5.000000e-01 : tensor<25xf32>
// CHECK-NEXT: train.write %[[A1]] to @zero.flat0.grads : tensor<25xf32>
// Second bucket: the first layer.
// CHECK: train.pack {{.*}} : tensor<4xf32>, tensor<4x3xf32> -> tensor<16xf32>
// CHECK-NEXT: shard.all_reduce
// CHECK-NEXT: train.scale
// CHECK-NEXT: train.write %{{.*}} to @zero.flat1.grads : tensor<16xf32>
// The optimizer reads the averaged gradient buffers whole: the norm is the
// rank's own (no collective), and one update per bucket, with weight decay
// on the weights' ranges, the same ranges on every rank (`replicated`).
// CHECK: %[[G0:.*]] = train.read @zero.flat0.grads : tensor<25xf32>
// CHECK-NEXT: %[[G1:.*]] = train.read @zero.flat1.grads : tensor<16xf32>
// CHECK-NEXT: train.lr_schedule %[[STEP]]
// CHECK-NEXT: train.squared_norm %[[G0]] : tensor<25xf32> -> tensor<f32>
// CHECK-NEXT: train.squared_norm %[[G1]] : tensor<16xf32> -> tensor<f32>
// CHECK-NOT: {{shard\.|train.unpack}}
// CHECK: train.read @zero.flat0.params : tensor<25xf32>
// CHECK: train.adamw_update {{.*}} decay_ranges [5, 25] replicated : tensor<25xf32>
// CHECK: train.write %{{.*}} to @zero.flat0.params : tensor<25xf32>
// CHECK-NOT: shard.
// CHECK: train.adamw_update {{.*}} decay_ranges [4, 16] replicated : tensor<16xf32>
// CHECK: train.write %{{.*}} to @zero.flat1.params : tensor<16xf32>
// CHECK-NOT: {{shard\.|train.unpack}}
// CHECK: return
