// RUN: zeroc-opt %s --train-fuse-grad-average -split-input-file | FileCheck %s

// Stage 0: the averaged bucket is written to its gradient buffer and read
// back by the clipping norm and the update. The scale goes; the norm is
// scaled by c^2, the update's grad_scale by c.

train.param @w : tensor<48xf32> init = zeros
train.param @b : tensor<16xf32> init = zeros
train.state @w.grad : tensor<48xf32> grad of @w
train.state @b.grad : tensor<16xf32> grad of @b
train.buffer @zero.flat0.grads : tensor<64xf32> <gradients> members [@w.grad, @b.grad] offsets [0, 48]
// CHECK-LABEL: func.func @stage0
// CHECK-SAME: (%[[R:[^:]*]]: tensor<64xf32>
// CHECK-NOT: train.scale {{.*}} : tensor<64xf32>
// CHECK: train.write %[[R]] to @zero.flat0.grads
// CHECK: %[[G:.*]] = train.read @zero.flat0.grads
// CHECK: %[[N0:.*]] = train.squared_norm %[[G]]
// CHECK: %[[N:.*]] = train.scale %[[N0]] by 2.500000e-01 : tensor<f32>
// CHECK: %[[C:.*]] = train.clip_coef %[[N]]
// CHECK: %[[CS:.*]] = train.scale %[[C]] by 5.000000e-01 : tensor<f32>
// CHECK: train.adamw_update %{{.*}}, %[[G]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} grad_scale %[[CS]]
// CHECK: return %[[N]]
func.func @stage0(%r: tensor<64xf32>, %p: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, tensor<64xf32>) {
  %a = train.scale %r by 5.000000e-01 : tensor<64xf32>
  train.write %a to @zero.flat0.grads : tensor<64xf32>
  %g = train.read @zero.flat0.grads : tensor<64xf32>
  %n = train.squared_norm %g : tensor<64xf32> -> tensor<f32>
  %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
  %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %c beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<64xf32>
  return %n, %p1 : tensor<f32>, tensor<64xf32>
}

// -----

// Stage 1: the averaged shard is used as it is; an update without a
// grad_scale gets the constant. Two updates of one coefficient share its
// scaled copy.

// CHECK-LABEL: func.func @stage1
// CHECK-SAME: (%[[R:[^:]*]]: tensor<32xf32>, %[[Q:[^:]*]]: tensor<32xf32>
// CHECK: %[[K:.*]] = train.fill 2.500000e-01 : tensor<f32>
// CHECK-NOT: train.scale {{.*}} : tensor<32xf32>
// CHECK: train.adamw_update %{{.*}}, %[[R]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} grad_scale %[[K]]
// CHECK: train.adamw_update %{{.*}}, %[[Q]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} grad_scale %[[K]]
func.func @stage1(%r: tensor<32xf32>, %q: tensor<32xf32>, %p: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<32xf32>, tensor<32xf32>) {
  %a = train.scale %r by 2.500000e-01 : tensor<32xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %a, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<32xf32>
  %b = train.scale %q by 2.500000e-01 : tensor<32xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %b, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<32xf32>
  return %p1, %p2 : tensor<32xf32>, tensor<32xf32>
}

// -----

// Stage 2 with two micro-batches: the second reduction is added to what
// the first wrote; both scales go, the add sums the unscaled values.

train.param @w : tensor<32xf32> init = zeros
train.state @w.grad : tensor<32xf32> grad of @w
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[R0:[^:]*]]: tensor<32xf32>, %[[R1:[^:]*]]: tensor<32xf32>
// CHECK-NOT: train.scale {{.*}} : tensor<32xf32>
// CHECK: train.write %[[R0]] to @w.grad
// CHECK: %[[A:.*]] = train.read @w.grad
// CHECK: %[[S:.*]] = train.add %[[A]], %[[R1]]
// CHECK: train.write %[[S]] to @w.grad
// CHECK: %[[G:.*]] = train.read @w.grad
// CHECK: train.squared_norm %[[G]]
// CHECK-NEXT: train.scale %{{.*}} by 2.500000e-01 : tensor<f32>
// CHECK: train.adamw_update %{{.*}}, %[[G]], {{.*}} grad_scale
func.func @accumulate(%r0: tensor<32xf32>, %r1: tensor<32xf32>, %p: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, tensor<32xf32>) {
  %a0 = train.scale %r0 by 5.000000e-01 : tensor<32xf32>
  train.write %a0 to @w.grad : tensor<32xf32>
  %acc = train.read @w.grad : tensor<32xf32>
  %a1 = train.scale %r1 by 5.000000e-01 : tensor<32xf32>
  %sum = train.add %acc, %a1 {train.accumulate} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  train.write %sum to @w.grad : tensor<32xf32>
  %g = train.read @w.grad : tensor<32xf32>
  %n = train.squared_norm %g : tensor<32xf32> -> tensor<f32>
  %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
  %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %c beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<32xf32>
  return %n, %p1 : tensor<f32>, tensor<32xf32>
}

// -----

// Left alone: a gradient that an SGD update reads, one that is also
// returned, a state read before the step writes it (last step's value),
// a state another function reads, two factors in one sum, a scale whose
// operand a broadcasting add makes.

train.param @w : tensor<8xf32> init = zeros
train.state @w.grad : tensor<8xf32> grad of @w
train.param @u : tensor<8xf32> init = zeros
train.state @u.grad : tensor<8xf32> grad of @u
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-6: train.scale {{.*}} : tensor<8xf32>
// CHECK-NOT: grad_scale
// CHECK-LABEL: func.func @other
func.func @kept(%r: tensor<8xf32>, %p: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = train.scale %r by 5.000000e-01 : tensor<8xf32>
  %p1, %b1 = train.sgd_update %p, %a, %m, %lr momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<8xf32>
  %b = train.scale %r by 5.000000e-01 : tensor<8xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %b, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
  %old = train.read @w.grad : tensor<8xf32>
  %c = train.scale %r by 5.000000e-01 : tensor<8xf32>
  train.write %c to @w.grad : tensor<8xf32>
  %p3, %m3, %v3 = train.adamw_update %p, %old, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
  %d = train.scale %r by 5.000000e-01 : tensor<8xf32>
  train.write %d to @u.grad : tensor<8xf32>
  %e = train.scale %r by 2.500000e-01 : tensor<8xf32>
  %f = train.scale %p by 5.000000e-01 : tensor<8xf32>
  %s = train.add %e, %f : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %p4, %m4, %v4 = train.adamw_update %p, %s, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
  return %p1, %p2, %b, %p3, %p4, %m4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
func.func @other() -> tensor<8xf32> {
  %u = train.read @u.grad : tensor<8xf32>
  return %u : tensor<8xf32>
}

// -----

// With the collectives: stage 0's all-reduced bucket, written to its
// buffer (in place, where the reduction ran), loses its scale; stage 2's
// reduce-scattered shard written to its sharded buffer keeps it (the scale
// is what moves the shard out of the send buffer; without it a copy
// would).

// CHECK-LABEL: func.func @collectives
// CHECK: %[[A:.*]] = train.wait %{{.*}} : !train.future<tensor<8xf32>>
// CHECK-NEXT: train.write %[[A]] to @a.grad
// CHECK: %[[B:.*]] = train.wait %{{.*}} : !train.future<tensor<4xf32>>
// CHECK-NEXT: %[[BS:.*]] = train.scale %[[B]] by 5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: train.write %[[BS]] to @b.grad
// CHECK: %[[GA:.*]] = train.read @a.grad
// CHECK: %[[GB:.*]] = train.read @b.grad
// CHECK: train.adamw_update %{{.*}}, %[[GA]], {{.*}} grad_scale
// CHECK-NOT: grad_scale
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @a : tensor<8xf32> init = zeros
  train.state @a.grad : tensor<8xf32> grad of @a
  train.param @b : tensor<4xf32> init = zeros
  train.state @b.grad : tensor<4xf32> grad of @b
  func.func @collectives(%x: tensor<8xf32>, %m: tensor<8xf32>, %y: tensor<8xf32>, %n: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<4xf32>) {
    %fa = train.all_reduce_start %x on @dp : tensor<8xf32> -> !train.future<tensor<8xf32>>
    %ra = train.wait %fa : !train.future<tensor<8xf32>>
    %sa = train.scale %ra by 5.000000e-01 : tensor<8xf32>
    train.write %sa to @a.grad : tensor<8xf32>
    %fb = train.reduce_scatter_start %y on @dp : tensor<8xf32> -> !train.future<tensor<4xf32>>
    %rb = train.wait %fb : !train.future<tensor<4xf32>>
    %sb = train.scale %rb by 5.000000e-01 : tensor<4xf32>
    train.write %sb to @b.grad : tensor<4xf32>
    %ga = train.read @a.grad : tensor<8xf32>
    %gb = train.read @b.grad : tensor<4xf32>
    %pa, %ma, %va = train.adamw_update %m, %ga, %m, %m, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
    %pb, %mb, %vb = train.adamw_update %n, %gb, %n, %n, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<4xf32>
    return %pa, %pb : tensor<8xf32>, tensor<4xf32>
  }
}

// -----

// bf16 gradients (mixed precision), widened for the update: folded by a
// power of two (exact in bf16), kept by 1/3 (the scale rounded each
// element to bf16; the update's f32 product would not).

train.param @w : tensor<8xbf16> init = zeros
train.state @w.grad : tensor<8xbf16> grad of @w
train.param @u : tensor<8xbf16> init = zeros
train.state @u.grad : tensor<8xbf16> grad of @u
// CHECK-LABEL: func.func @bf16
// CHECK-SAME: (%[[R:[^:]*]]: tensor<8xbf16>
// CHECK: train.write %[[R]] to @w.grad
// CHECK: %[[G:.*]] = train.read @w.grad
// CHECK: %[[N0:.*]] = train.squared_norm %[[G]] : tensor<8xbf16> -> tensor<f32>
// CHECK-NEXT: train.scale %[[N0]] by 2.500000e-01 : tensor<f32>
// CHECK: %[[W:.*]] = train.cast %[[G]]
// CHECK: train.adamw_update %{{.*}}, %[[W]], {{.*}} grad_scale
// CHECK: %[[T:.*]] = train.scale %{{.*}} by 0.33333333333333331 : tensor<8xbf16>
// CHECK-NEXT: train.write %[[T]] to @u.grad
func.func @bf16(%r: tensor<8xbf16>, %p: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
  %a = train.scale %r by 5.000000e-01 : tensor<8xbf16>
  train.write %a to @w.grad : tensor<8xbf16>
  %g = train.read @w.grad : tensor<8xbf16>
  %n = train.squared_norm %g : tensor<8xbf16> -> tensor<f32>
  %w = train.cast %g : tensor<8xbf16> to tensor<8xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %w, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
  %t = train.scale %r by 0.33333333333333331 : tensor<8xbf16>
  train.write %t to @u.grad : tensor<8xbf16>
  %h = train.read @u.grad : tensor<8xbf16>
  %x = train.cast %h : tensor<8xbf16> to tensor<8xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %x, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<8xf32>
  return %n, %p1, %p2 : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A reduce-scattered shard reached through a view of the receive buffer
// (an unpack's member, as a bucket of several members gives) keeps its
// scale too: it is what moves the member into the state.

// CHECK-LABEL: func.func @unpacked_shard
// CHECK: %[[R:.*]] = train.wait
// CHECK: %[[M:.*]]:2 = train.unpack %[[R]]
// CHECK: %[[S:.*]] = train.scale %[[M]]#0 by 5.000000e-01
// CHECK: train.write %[[S]] to @b.grad
// CHECK: train.adamw_update
// CHECK-NOT: grad_scale
// CHECK: return
module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @b : tensor<4xf32> init = zeros
  train.state @b.grad : tensor<4xf32> grad of @b
  func.func @unpacked_shard(%y: tensor<16xf32>, %n: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> tensor<4xf32> {
    %f = train.reduce_scatter_start %y on @dp : tensor<16xf32> -> !train.future<tensor<8xf32>>
    %r = train.wait %f : !train.future<tensor<8xf32>>
    %m0, %m1 = train.unpack %r : tensor<8xf32> -> tensor<4xf32>, tensor<4xf32>
    %s = train.scale %m0 by 5.000000e-01 : tensor<4xf32>
    train.write %s to @b.grad : tensor<4xf32>
    %g = train.read @b.grad : tensor<4xf32>
    %p, %m, %v = train.adamw_update %n, %g, %n, %n, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<4xf32>
    return %p : tensor<4xf32>
  }
}
