// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=64" | FileCheck %s
// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-accumulate=micro-batches=3 --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=64" > %t.k3.mlir
// RUN: FileCheck %s --check-prefix=K3 < %t.k3.mlir
// RUN: FileCheck %s --check-prefix=K3RS < %t.k3.mlir

// Stage 3 in the flat layout (the default): the parameter buffers are
// sharded like the others (shards = 2 on the buffer; the members keep
// their names and shapes, and no shards of their own).
// CHECK: train.param @w1 : tensor<4x3xf32> init = normal std = 5.000000e-01 decay{{$}}
// CHECK: train.buffer @zero.flat0.params : tensor<26xf32> <parameters> members [@b2, @w2] offsets [0, 5] shards = 2
// CHECK-NEXT: train.buffer @zero.flat0.grads : tensor<26xf32> <gradients> members [@b2.grad, @w2.grad] offsets [0, 5] shards = 2
// CHECK: train.buffer @zero.flat1.params : tensor<16xf32> <parameters> members [@b1, @w1] offsets [0, 4] shards = 2
// CHECK-LABEL: func.func @train_step
// Before a bucket's first use, the rank's shard of its parameter buffer
// is gathered whole; its members (and the padding) are views of the
// gathered buffer (an unpack), released after the last use.
// CHECK: %[[S1:.*]] = train.read @zero.flat1.params : tensor<8xf32>
// CHECK-NEXT: %[[F1:.*]] = train.all_gather_start %[[S1]] on @dp : tensor<8xf32> -> !train.future<tensor<16xf32>>
// CHECK-NEXT: %[[G1:.*]] = train.wait %[[F1]]
// CHECK-NEXT: %[[V1:.*]]:2 = train.unpack %[[G1]] : tensor<16xf32> -> tensor<4xf32>, tensor<4x3xf32>
// CHECK-NEXT: train.matmul %{{.*}}, %[[V1]]#1 transpose_rhs
// CHECK: train.release %[[G1]] : tensor<16xf32>
// The last bucket of forward is the first of backward: one gather serves
// both (it is not gathered again while its forward gather is live).
// CHECK: %[[S0:.*]] = train.read @zero.flat0.params : tensor<13xf32>
// CHECK-NEXT: %[[F0:.*]] = train.all_gather_start %[[S0]]
// CHECK-NEXT: %[[G0:.*]] = train.wait %[[F0]]
// CHECK-NEXT: %[[V0:.*]]:3 = train.unpack %[[G0]] : tensor<26xf32> -> tensor<5xf32>, tensor<5x4xf32>, tensor<1xf32>
// CHECK: train.cross_entropy_grad
// CHECK-NOT: train.all_gather_start
// CHECK: train.matmul %{{.*}}, %[[V0]]#1 :
// CHECK-NEXT: train.release %[[G0]] : tensor<26xf32>
// Gradients: reduce-scattered per bucket into the sharded gradient buffer.
// CHECK: shard.reduce_scatter %{{.*}} on @dp grid_axes = [0] scatter_axis = 0 : tensor<26xf32> -> tensor<13xf32>
// CHECK: train.write %{{.*}} to @zero.flat0.grads : tensor<13xf32>
// One update per bucket shard, on the parameter buffer's own shard, and no
// all-gather after it: the shard is the parameters' storage.
// CHECK: %[[P0:.*]] = train.read @zero.flat0.params : tensor<13xf32>
// CHECK: %[[U0:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[P0]], {{.*}} decay_ranges [5, 25] : tensor<13xf32>
// CHECK: train.write %[[U0]] to @zero.flat0.params : tensor<13xf32>
// CHECK-NOT: all_gather
// CHECK: return

// Three micro-batches: each one's forward and backward gather the buckets
// (the last forward bucket kept into its backward), and each one's
// gradient bucket is reduce-scattered and summed into the sharded buffer.
// K3-LABEL: func.func @train_step
// K3-COUNT-6: train.all_gather_start
// K3-NOT: train.all_gather_start
// K3: return
// K3RS-LABEL: func.func @train_step
// K3RS-COUNT-6: shard.reduce_scatter
// K3RS-NOT: shard.reduce_scatter
// K3RS: return
