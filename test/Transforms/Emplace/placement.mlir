// RUN: zeroc-opt %s --train-emplace -split-input-file | FileCheck %s

// Stage 0's gradient bucket: the pack all-reduced, averaged and written to
// the gradient train.buffer is that buffer (train.into); the gradients
// used only by the pack are computed into their slices (inputs 0, through
// a reshape, and 1), the one also used by the loss (input 2) is not; the
// bucket's write disappears (the averaging is computed into the buffer).
// The update runs in place on its three states, whose writes disappear.

// CHECK-LABEL: func.func @bucket(
// CHECK: train.pack {{.*}} {train.emplace = array<i64: 0, 1>, train.into = @zero.flat0.grads}
// CHECK: train.all_reduce_start
// CHECK-NOT: train.emplace
// CHECK: train.write %{{.*}} to @zero.flat0.grads {train.emplace = array<i64: 0>}
// CHECK: train.adamw_update {{.*}} {train.emplace = array<i64: 0, 2, 3>}
// CHECK-NEXT: train.write %{{.*}} to @w {train.emplace = array<i64: 0>}
// CHECK-NEXT: train.write %{{.*}} to @w.exp_avg {train.emplace = array<i64: 0>}
// CHECK-NEXT: train.write %{{.*}} to @w.exp_avg_sq {train.emplace = array<i64: 0>}
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<8xf32> init = zeros
  train.param @b : tensor<2xf32> init = zeros
  train.param @c : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<8xf32> grad of @w
  train.state @b.grad : tensor<2xf32> grad of @b
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<14xf32> <gradients> members [@w.grad, @b.grad, @c.grad] offsets [0, 8, 10]
  train.state @w.exp_avg : tensor<8xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<8xf32> exp_avg_sq of @w
  func.func @bucket(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>, %step: tensor<i64>) -> tensor<f32> attributes {train.step} {
    %mm = train.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %gw = train.reshape %mm : tensor<2x4xf32> -> tensor<8xf32>
    %gb = train.fill 1.0 : tensor<2xf32>
    %gc = train.fill 3.0 : tensor<4xf32>
    %l = train.mean %gc dims = [0] : tensor<4xf32> -> tensor<f32>
    %p = train.pack %gw, %gb, %gc : tensor<8xf32>, tensor<2xf32>, tensor<4xf32> -> tensor<14xf32>
    %f = train.all_reduce_start %p on @dp : tensor<14xf32> -> !train.future<tensor<14xf32>>
    %r = train.wait %f : !train.future<tensor<14xf32>>
    %a = train.scale %r by 0.5 : tensor<14xf32>
    train.write %a to @zero.flat0.grads : tensor<14xf32>
    %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
    %g = train.read @w.grad : tensor<8xf32>
    %m = train.read @w.exp_avg : tensor<8xf32>
    %v = train.read @w.exp_avg_sq : tensor<8xf32>
    %w = train.read @w : tensor<8xf32>
    %p1, %m1, %v1 = train.adamw_update %w, %g, %m, %v, %lr, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.0 : tensor<8xf32>
    train.write %p1 to @w : tensor<8xf32>
    train.write %m1 to @w.exp_avg : tensor<8xf32>
    train.write %v1 to @w.exp_avg_sq : tensor<8xf32>
    return %l : tensor<f32>
  }
}

// -----

// A bucket whose buffer is read before the bucket's write (a member
// accumulated) is not the buffer: no train.into, and nothing is placed.

// CHECK-LABEL: func.func @accumulating(
// CHECK-NOT: train.into
// CHECK-NOT: train.emplace
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @c : tensor<4xf32> init = zeros
  train.state @c.grad : tensor<4xf32> grad of @c
  train.buffer @zero.flat0.grads : tensor<4xf32> <gradients> members [@c.grad] offsets [0]
  func.func @accumulating(%x: tensor<4xf32>) -> tensor<4xf32> {
    %old = train.read @c.grad : tensor<4xf32>
    %g = train.add %old, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %p = train.pack %g : tensor<4xf32> -> tensor<4xf32>
    %f = train.all_reduce_start %p on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    train.write %r to @zero.flat0.grads : tensor<4xf32>
    return %old : tensor<4xf32>
  }
}

// -----

// Stages 2-3: a pack only reduce-scattered is a segment; its inputs that a
// kernel computes for it alone are placed (0 and 1; 2 is also returned, 3
// is the padding), no train.into.

// CHECK-LABEL: func.func @segment(
// CHECK: train.pack {{.*}} {train.emplace = array<i64: 0, 1, 3>} :
// CHECK-NOT: train.into
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  func.func @segment(%x: tensor<1x3xf32>, %y: tensor<2xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
    %a = train.relu %x : tensor<1x3xf32>
    %a1 = train.reshape %a : tensor<1x3xf32> -> tensor<3xf32>
    %b = train.relu %y : tensor<2xf32>
    %c = train.relu %z : tensor<4xf32>
    %pad = train.fill 0.0 : tensor<1xf32>
    %p = train.pack %a1, %b, %c, %pad : tensor<3xf32>, tensor<2xf32>, tensor<4xf32>, tensor<1xf32> -> tensor<10xf32>
    %f = train.reduce_scatter_start %p on @dp : tensor<10xf32> -> !train.future<tensor<5xf32>>
    %r = train.wait %f : !train.future<tensor<5xf32>>
    return %c, %r : tensor<4xf32>, tensor<5xf32>
  }
}

// -----

// A kernel's result written to the whole storage of a parameter that
// nothing else accesses in between is computed there (the write
// disappears); one whose parameter is read while it is live is not.

// CHECK-LABEL: func.func @into_storage(
// CHECK: train.write %{{.*}} to @p {train.emplace = array<i64: 0>}
// CHECK: train.write %{{.*}} to @q : tensor<4xf32>
module {
  train.param @p : tensor<4xf32> init = zeros
  train.param @q : tensor<4xf32> init = zeros
  func.func @into_storage(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = train.relu %x : tensor<4xf32>
    train.write %a to @p : tensor<4xf32>
    %q = train.read @q : tensor<4xf32>
    %b = train.relu %x : tensor<4xf32>
    train.write %b to @q : tensor<4xf32>
    %s = train.add %q, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

// Stage 1: an all-gather written to its replicated parameter buffer
// receives into it (train.into); its send, computed by a kernel for it
// alone, goes into the rank's slot (train.emplace); an update in place on
// the rank's slice of the buffer (its send) is marked on the update (its
// momentum buffer, an argument, is not a state: not in place).

// CHECK-LABEL: func.func @gathers(
// CHECK: train.all_gather_start {{.*}} {train.emplace = array<i64: 0>, train.into = @zero.flat0.params}
// CHECK: train.sgd_update {{.*}} {train.emplace = array<i64: 0>}
// CHECK: train.all_gather_start {{.*}} {train.into = @zero.flat1.params}
// CHECK: train.write %{{.*}} to @zero.flat0.params {train.emplace = array<i64: 0>}
// CHECK: train.write %{{.*}} to @zero.flat1.params {train.emplace = array<i64: 0>}
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<2xf32> init = zeros
  train.param @v : tensor<2xf32> init = zeros
  train.buffer @zero.flat0.params : tensor<2xf32> <parameters> members [@w] offsets [0]
  train.buffer @zero.flat1.params : tensor<2xf32> <parameters> members [@v] offsets [0]
  func.func @gathers(%g: tensor<1xf32>, %b: tensor<1xf32>, %step: tensor<i64>) -> (tensor<f32>, tensor<1xf32>) attributes {train.step} {
    %w = train.read @zero.flat0.params : tensor<2xf32>
    %s = shard.all_slice %w on @dp grid_axes = [0] slice_axis = 0 : tensor<2xf32> -> tensor<1xf32>
    %n = train.add %s, %g : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %f = train.all_gather_start %n on @dp : tensor<1xf32> -> !train.future<tensor<2xf32>>
    %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
    %v = train.read @zero.flat1.params : tensor<2xf32>
    %t = shard.all_slice %v on @dp grid_axes = [0] slice_axis = 0 : tensor<2xf32> -> tensor<1xf32>
    %u, %b1 = train.sgd_update %t, %g, %b, %lr momentum = 0.9 weight_decay = 0.0 : tensor<1xf32>
    %h = train.all_gather_start %u on @dp : tensor<1xf32> -> !train.future<tensor<2xf32>>
    %r = train.wait %f : !train.future<tensor<2xf32>>
    train.write %r to @zero.flat0.params : tensor<2xf32>
    %q = train.wait %h : !train.future<tensor<2xf32>>
    train.write %q to @zero.flat1.params : tensor<2xf32>
    %l = train.sum %g dims = [0] : tensor<1xf32> -> tensor<f32>
    return %l, %b1 : tensor<f32>, tensor<1xf32>
  }
}
