// RUN: zeroc-opt %s --train-defer-gathers=max-in-flight=2 | FileCheck %s
// RUN: zeroc-opt %s --train-defer-gathers=max-in-flight=1 | FileCheck %s --check-prefix=ONE

// Stage 1, bf16 parameters in two buckets (@w1 in flat1, @w2 in flat0) and
// one f32 bucket (@w3 in flat2, no master): the end-of-step gathers of the
// bf16 buckets move to the top of the step, each waited right before the
// bucket's first read; the f32 bucket's updated shard lives only in the
// rank's slot of its parameter buffer, so on the tensor form its gather
// stays at the end (the planned run defers it: in-place.test).

module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w1 : tensor<4xbf16> init = zeros
  train.state @w1.master : tensor<4xf32> master of @w1
  train.param @w2 : tensor<6xbf16> init = zeros
  train.state @w2.master : tensor<6xf32> master of @w2
  train.param @w3 : tensor<2xf32> init = zeros
  train.buffer @zero.flat0.params : tensor<6xbf16> <parameters> members [@w2] offsets [0]
  train.buffer @zero.flat0.master : tensor<6xf32> <optimizer_states> members [@w2.master] offsets [0] shards = 2
  train.buffer @zero.flat1.params : tensor<4xbf16> <parameters> members [@w1] offsets [0]
  train.buffer @zero.flat1.master : tensor<4xf32> <optimizer_states> members [@w1.master] offsets [0] shards = 2
  train.buffer @zero.flat2.params : tensor<2xf32> <parameters> members [@w3] offsets [0]
  func.func @train_step(%x: tensor<4xbf16>, %y: tensor<6xbf16>, %g0: tensor<3xf32>, %g1: tensor<2xf32>, %g2: tensor<1xf32>) -> tensor<4xbf16> attributes {train.step} {
    %a = train.relu %x : tensor<4xbf16>
    %w1 = train.read @w1 : tensor<4xbf16>
    %b = train.add %a, %w1 : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
    %c = train.relu %y : tensor<6xbf16>
    %w2 = train.read @w2 : tensor<6xbf16>
    %d = train.add %c, %w2 : (tensor<6xbf16>, tensor<6xbf16>) -> tensor<6xbf16>
    %w3 = train.read @zero.flat2.params : tensor<2xf32>
    %m0 = train.read @zero.flat0.master : tensor<3xf32>
    %n0 = train.add %m0, %g0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    train.write %n0 to @zero.flat0.master : tensor<3xf32>
    %c0 = train.cast %n0 : tensor<3xf32> to tensor<3xbf16>
    %f0 = train.all_gather_start %c0 on @dp : tensor<3xbf16> -> !train.future<tensor<6xbf16>>
    %m1 = train.read @zero.flat1.master : tensor<2xf32>
    %n1 = train.add %m1, %g1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    train.write %n1 to @zero.flat1.master : tensor<2xf32>
    %c1 = train.cast %n1 : tensor<2xf32> to tensor<2xbf16>
    %f1 = train.all_gather_start %c1 on @dp : tensor<2xbf16> -> !train.future<tensor<4xbf16>>
    %s2 = shard.all_slice %w3 on @dp grid_axes = [0] slice_axis = 0 : tensor<2xf32> -> tensor<1xf32>
    %n2 = train.add %s2, %g2 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %f2 = train.all_gather_start %n2 on @dp : tensor<1xf32> -> !train.future<tensor<2xf32>>
    %r0 = train.wait %f0 : !train.future<tensor<6xbf16>>
    train.write %r0 to @zero.flat0.params : tensor<6xbf16>
    %r1 = train.wait %f1 : !train.future<tensor<4xbf16>>
    train.write %r1 to @zero.flat1.params : tensor<4xbf16>
    %r2 = train.wait %f2 : !train.future<tensor<2xf32>>
    train.write %r2 to @zero.flat2.params : tensor<2xf32>
    return %b : tensor<4xbf16>
  }
}

// Both gathers start at the top, in the order of their buckets' first use
// (flat1's @w1 is read first); each is waited and written right before
// that use.
// CHECK-LABEL: func.func @train_step
// CHECK-NEXT: %[[M1:.*]] = train.read @zero.flat1.master : tensor<2xf32>
// CHECK-NEXT: %[[C1:.*]] = train.cast %[[M1]] : tensor<2xf32> to tensor<2xbf16>
// CHECK-NEXT: %[[F1:.*]] = train.all_gather_start %[[C1]] on @dp : tensor<2xbf16> -> !train.future<tensor<4xbf16>>
// CHECK-NEXT: %[[M0:.*]] = train.read @zero.flat0.master : tensor<3xf32>
// CHECK-NEXT: %[[C0:.*]] = train.cast %[[M0]] : tensor<3xf32> to tensor<3xbf16>
// CHECK-NEXT: %[[F0:.*]] = train.all_gather_start %[[C0]] on @dp : tensor<3xbf16> -> !train.future<tensor<6xbf16>>
// CHECK-NEXT: train.relu
// CHECK-NEXT: %[[G1:.*]] = train.wait %[[F1]] : !train.future<tensor<4xbf16>>
// CHECK-NEXT: train.write %[[G1]] to @zero.flat1.params : tensor<4xbf16>
// CHECK-NEXT: train.read @w1
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu
// CHECK-NEXT: %[[G0:.*]] = train.wait %[[F0]] : !train.future<tensor<6xbf16>>
// CHECK-NEXT: train.write %[[G0]] to @zero.flat0.params : tensor<6xbf16>
// CHECK-NEXT: train.read @w2
// The updates end the step and write the masters; no bf16 gather is left
// there, the f32 bucket's is.
// CHECK: train.write %{{.*}} to @zero.flat0.master : tensor<3xf32>
// CHECK-NOT: train.cast
// CHECK: train.write %{{.*}} to @zero.flat1.master : tensor<2xf32>
// CHECK-NOT: train.all_gather_start %{{.*}} : tensor<{{[23]}}xbf16>
// CHECK: %[[F2:.*]] = train.all_gather_start %{{.*}} on @dp : tensor<1xf32>
// CHECK-NOT: train.wait %[[F0]]
// CHECK-NOT: train.wait %[[F1]]
// CHECK: train.wait %[[F2]]
// CHECK-NEXT: train.write %{{.*}} to @zero.flat2.params : tensor<2xf32>
// CHECK-NEXT: return

// @gather_params completes both deferred gathers for readers between steps.
// CHECK-LABEL: func.func @gather_params() {
// CHECK-NEXT: train.read @zero.flat0.master : tensor<3xf32>
// CHECK-NEXT: train.cast
// CHECK-NEXT: %[[H0:.*]] = train.all_gather_start
// CHECK-NEXT: train.read @zero.flat1.master : tensor<2xf32>
// CHECK-NEXT: train.cast
// CHECK-NEXT: %[[H1:.*]] = train.all_gather_start
// CHECK-NEXT: %[[V0:.*]] = train.wait %[[H0]]
// CHECK-NEXT: train.write %[[V0]] to @zero.flat0.params : tensor<6xbf16>
// CHECK-NEXT: %[[V1:.*]] = train.wait %[[H1]]
// CHECK-NEXT: train.write %[[V1]] to @zero.flat1.params : tensor<4xbf16>
// CHECK-NEXT: return

// With one gather in flight, flat0's starts only after flat1's has been
// written.
// ONE-LABEL: func.func @train_step
// ONE-NEXT: train.read @zero.flat1.master
// ONE-NEXT: train.cast
// ONE-NEXT: %[[F1:.*]] = train.all_gather_start
// ONE-NEXT: train.relu
// ONE-NEXT: %[[G1:.*]] = train.wait %[[F1]]
// ONE-NEXT: train.write %[[G1]] to @zero.flat1.params
// ONE-NEXT: train.read @zero.flat0.master
// ONE-NEXT: train.cast
// ONE-NEXT: %[[F0:.*]] = train.all_gather_start
// ONE-NEXT: train.read @w1
// ONE-NEXT: train.add
// ONE-NEXT: train.relu
// ONE-NEXT: %[[G0:.*]] = train.wait %[[F0]]
// ONE-NEXT: train.write %[[G0]] to @zero.flat0.params
// ONE-NEXT: train.read @w2
