// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1 flat-buffers=0" --train-schedule | FileCheck %s
// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1" --train-schedule | FileCheck %s --check-prefix=FLAT

// The flat layout (the default): the read of bucket i + 1's parameter
// shard and its gather start right after bucket i's gather has arrived.
// FLAT-LABEL: func.func @train_step
// FLAT: %[[F1:.*]] = train.all_gather_start %{{.*}} : tensor<6xf32> -> !train.future<tensor<12xf32>>
// FLAT-NEXT: %[[G1:.*]] = train.wait %[[F1]]
// FLAT-NEXT: train.read @zero.flat2.params : tensor<2xf32>
// FLAT-NEXT: %[[F2:.*]] = train.all_gather_start %{{.*}} : tensor<2xf32> -> !train.future<tensor<4xf32>>
// FLAT: train.matmul %arg0
// FLAT: train.release %[[G1]]
// FLAT-NEXT: %[[G2:.*]] = train.wait %[[F2]]
// FLAT-NEXT: train.read @zero.flat1.params : tensor<10xf32>
// FLAT-NEXT: train.all_gather_start
// The backward gather of @w2's bucket starts before the loss is computed.
// FLAT: train.read @zero.flat1.params : tensor<10xf32>
// FLAT-NEXT: %[[FB:.*]] = train.all_gather_start %{{.*}} : tensor<10xf32> -> !train.future<tensor<20xf32>>
// FLAT: train.cross_entropy
// FLAT: train.cross_entropy_grad
// FLAT: %[[GB:.*]] = train.wait %[[FB]]
// FLAT: train.release %[[GB]]

// The per-tensor layout (flat-buffers=0):

// Stage 3: the gather of each parameter group starts as soon as the group
// before it has arrived (prefetch by one group), so it overlaps that
// group's computation; the first backward gather starts during forward.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[F1:.*]] = train.all_gather_start %{{.*}} : tensor<6xf32> -> !train.future<tensor<12xf32>>
// CHECK-NEXT: %[[G1:.*]] = train.wait %[[F1]]
// CHECK-NEXT: train.read @b1 : tensor<2xf32>
// CHECK-NEXT: train.pack
// CHECK-NEXT: %[[F2:.*]] = train.all_gather_start %{{.*}} : tensor<2xf32> -> !train.future<tensor<4xf32>>
// CHECK: train.matmul %arg0
// CHECK: train.release %[[G1]]
// CHECK-NEXT: %[[G2:.*]] = train.wait %[[F2]]
// The backward gather of @w2 (its second one) starts before the loss is
// computed.
// CHECK: train.read @w2 : tensor<10xf32>
// CHECK: train.all_gather_start %{{.*}} : tensor<10xf32> -> !train.future<tensor<20xf32>>
// CHECK: train.read @w2 : tensor<10xf32>
// CHECK: %[[FB:.*]] = train.all_gather_start %{{.*}} : tensor<10xf32> -> !train.future<tensor<20xf32>>
// CHECK: train.cross_entropy
// CHECK: train.cross_entropy_grad
// CHECK: %[[GB:.*]] = train.wait %[[FB]]
// CHECK: train.release %[[GB]]
