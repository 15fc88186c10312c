// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=3 world-size=2 bucket-bytes=1" --train-schedule | FileCheck %s

// Stage 3: the read of bucket i + 1's parameter shard and its gather start
// right after bucket i's gather has arrived (prefetch by one bucket), so it
// overlaps that bucket's computation; the first backward gather starts
// during forward.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[F1:.*]] = train.all_gather_start %{{.*}} : tensor<6xf32> -> !train.future<tensor<12xf32>>
// CHECK-NEXT: %[[G1:.*]] = train.wait %[[F1]]
// CHECK-NEXT: train.read @zero.flat2.params : tensor<2xf32>
// CHECK-NEXT: %[[F2:.*]] = train.all_gather_start %{{.*}} : tensor<2xf32> -> !train.future<tensor<4xf32>>
// CHECK: train.matmul %arg0
// CHECK: train.release %[[G1]]
// CHECK-NEXT: %[[G2:.*]] = train.wait %[[F2]]
// CHECK-NEXT: train.read @zero.flat1.params : tensor<10xf32>
// CHECK-NEXT: train.all_gather_start
// The backward gather of @w2's bucket starts before the loss is computed.
// CHECK: train.read @zero.flat1.params : tensor<10xf32>
// CHECK-NEXT: %[[FB:.*]] = train.all_gather_start %{{.*}} : tensor<10xf32> -> !train.future<tensor<20xf32>>
// CHECK: train.cross_entropy
// CHECK: train.cross_entropy_grad
// CHECK: %[[GB:.*]] = train.wait %[[FB]]
// CHECK: train.release %[[GB]]
