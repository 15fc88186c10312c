// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=2 world-size=2 bucket-bytes=64" | FileCheck %s

// Stage 2: as stage 1, but only the gradient shard is kept: no full
// gradient buffer, the shard is written to a sharded one. f32 parameters
// are their own master: each rank cuts its shard of the parameter buffer
// out with shard.all_slice.
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.state @w1.exp_avg : tensor<4x3xf32> exp_avg of @w1{{$}}
// CHECK: train.state @w1.grad : tensor<4x3xf32> grad of @w1{{$}}
// CHECK-NOT: train.state @w1.master
// CHECK: train.buffer @zero.flat1.grads : tensor<16xf32> <gradients> members [@b1.grad, @w1.grad] offsets [0, 4] shards = 2
// CHECK-NEXT: train.buffer @zero.flat1.exp_avg : tensor<16xf32> <optimizer_states> members [@b1.exp_avg, @w1.exp_avg] offsets [0, 4] shards = 2
// CHECK-NOT: master
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: train.write %{{.*}} to @w2.grad
// CHECK: %[[B:.*]] = train.pack %{{.*}}, %{{.*}}, %{{.*}} : tensor<5xf32>, tensor<5x4xf32>, tensor<1xf32> -> tensor<26xf32>
// CHECK-NEXT: %[[RS:.*]] = shard.reduce_scatter %[[B]] {{.*}} : tensor<26xf32> -> tensor<13xf32>
// CHECK-NEXT: %[[G:.*]] = train.scale %[[RS]] by 5.000000e-01 : tensor<13xf32>
// CHECK-NEXT: train.write %[[G]] to @zero.flat0.grads : tensor<13xf32>
// CHECK: train.read @zero.flat1.grads : tensor<8xf32>
// CHECK: %[[W:.*]] = train.read @zero.flat1.params : tensor<16xf32>
// CHECK-NEXT: %[[MINE:.*]] = shard.all_slice %[[W]] on @dp grid_axes = [0] slice_axis = 0 : tensor<16xf32> -> tensor<8xf32>
// CHECK: train.adamw_update %[[MINE]], {{.*}} : tensor<8xf32>
// CHECK: shard.all_gather
// CHECK-NOT: train.unpack
// CHECK: return
