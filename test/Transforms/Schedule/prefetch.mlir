// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1" --train-schedule | FileCheck %s

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
