// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=2 world-size=2 bucket-bytes=1" --train-schedule=max-in-flight=2 | FileCheck %s

// Stage 2 with one gradient per bucket and at most two buckets in flight:
// each reduce-scatter starts as soon as its bucket is packed, and its wait
// (with the averaging and storing that follow it) moves down to the start
// of the bucket two places behind it. The loss all-reduce starts right
// after the loss and is waited for at the very end.
// CHECK-LABEL: func.func @train_step
// CHECK: train.cross_entropy
// CHECK: %[[LOSS:.*]] = train.all_reduce_start %{{.*}} on @dp : tensor<1xf32> -> !train.future<tensor<1xf32>>
// CHECK: %[[B0:.*]] = train.pack %{{.*}}, %{{.*}} : tensor<5xf32>, tensor<1xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[F0:.*]] = train.reduce_scatter_start %[[B0]]
// CHECK: %[[B1:.*]] = train.pack %{{.*}} : tensor<5x4xf32> -> tensor<20xf32>
// CHECK-NEXT: %[[F1:.*]] = train.reduce_scatter_start %[[B1]]
// Backward goes on while two buckets are in flight.
// CHECK-NEXT: train.relu_grad
// CHECK: %[[B2:.*]] = train.pack %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[W0:.*]] = train.wait %[[F0]] : !train.future<tensor<3xf32>>
// CHECK-NEXT: %[[A0:.*]] = train.scale %[[W0]] by 5.000000e-01
// CHECK-NEXT: train.write %[[A0]] to @zero.flat0.grads
// CHECK-NEXT: %[[F2:.*]] = train.reduce_scatter_start %[[B2]]
// CHECK: %[[W1:.*]] = train.wait %[[F1]] : !train.future<tensor<10xf32>>
// CHECK: train.reduce_scatter_start
// Each bucket's updated parameter shard starts its all-gather right after
// the bucket's update, so the gather overlaps the updates that follow; at
// most two gathers are in flight: gather i is waited for and written
// right before gather i + 2 starts, and the last two at the end of the
// step, where the loss is waited for too.
// CHECK: train.adamw_update
// CHECK: %[[G0:.*]] = train.all_gather_start
// CHECK: train.adamw_update
// CHECK: %[[G1:.*]] = train.all_gather_start
// CHECK: train.adamw_update
// CHECK: train.wait %[[G0]]
// CHECK-NEXT: train.write %{{.*}} to @zero.flat0.params : tensor<6xf32>
// CHECK-NEXT: %[[G2:.*]] = train.all_gather_start
// CHECK: train.adamw_update
// CHECK: train.wait %[[G1]]
// CHECK-NEXT: train.write %{{.*}} to @zero.flat1.params : tensor<20xf32>
// CHECK-NEXT: %[[G3:.*]] = train.all_gather_start
// CHECK: train.wait %[[LOSS]]
// CHECK: train.wait %[[G2]]
// CHECK-NEXT: train.write %{{.*}} to @zero.flat2.params : tensor<4xf32>
// CHECK-NEXT: train.wait %[[G3]]
// CHECK-NEXT: train.write %{{.*}} to @zero.flat3.params : tensor<12xf32>
// CHECK-NEXT: return
