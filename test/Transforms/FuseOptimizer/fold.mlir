// RUN: zeroc-opt %s --train-fuse-optimizer -split-input-file | FileCheck %s

// The clipping multiply becomes the update's grad_scale, the scalar on
// either side of the multiply.

// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[P:.*]]: tensor<48xf32>, %[[G:.*]]: tensor<48xf32>, %[[M:.*]]: tensor<48xf32>, %[[V:.*]]: tensor<48xf32>, %[[LR:.*]]: tensor<f32>, %[[S:.*]]: tensor<i64>, %[[N:.*]]: tensor<f32>)
// CHECK: %[[C:.*]] = train.clip_coef %[[N]]
// CHECK-NOT: train.mul
// CHECK: train.adamw_update %[[P]], %[[G]], %[[M]], %[[V]], %[[LR]], %[[S]] grad_scale %[[C]] beta1
// CHECK-NOT: train.mul
// CHECK: train.adamw_update %[[P]], %[[G]], %[[M]], %[[V]], %[[LR]], %[[S]] grad_scale %[[C]] beta1
func.func @folded(%p: tensor<48xf32>, %g: tensor<48xf32>, %m: tensor<48xf32>, %v: tensor<48xf32>, %lr: tensor<f32>, %step: tensor<i64>, %n: tensor<f32>) -> (tensor<48xf32>, tensor<48xf32>) {
  %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
  %g1 = train.mul %g, %c : (tensor<48xf32>, tensor<f32>) -> tensor<48xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %g1, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
  %g2 = train.mul %c, %g : (tensor<f32>, tensor<48xf32>) -> tensor<48xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %g2, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
  return %p1, %p2 : tensor<48xf32>, tensor<48xf32>
}

// -----

// A sharded bucket's update (decay_ranges) takes it the same way.

// CHECK-LABEL: func.func @bucket
// CHECK-NOT: train.mul
// CHECK: train.adamw_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 grad_scale %arg6 beta1 = {{.*}} decay_ranges [0, 8]
func.func @bucket(%p: tensor<16xf32>, %g: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i64>, %c: tensor<f32>) -> tensor<16xf32> {
  %g1 = train.mul %g, %c : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %g1, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 8] : tensor<16xf32>
  return %p1 : tensor<16xf32>
}

// -----

// Left alone: a product used twice, a multiply by a tensor that is not a
// 0-d scalar, a multiply that broadcasts the gradient, an SGD update.

// CHECK-LABEL: func.func @kept
// CHECK: %[[T:.*]] = train.mul %arg1, %arg6
// CHECK: train.adamw_update %arg0, %[[T]], %arg2, %arg3, %arg4, %arg5 beta1
// CHECK: %[[W:.*]] = train.mul %arg1, %arg1
// CHECK: train.adamw_update %arg0, %[[W]], %arg2, %arg3, %arg4, %arg5 beta1
// CHECK: %[[B:.*]] = train.mul %arg7, %arg6 : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
// CHECK: %[[R:.*]] = train.reshape %[[B]]
// CHECK: train.adamw_update %arg0, %[[R]], %arg2, %arg3, %arg4, %arg5 beta1
// CHECK: %[[S:.*]] = train.mul %arg1, %arg6
// CHECK: train.sgd_update %arg0, %[[S]]
func.func @kept(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>, %c: tensor<f32>, %h: tensor<1x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = train.mul %g, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %t, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<4xf32>
  %w = train.mul %g, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %w, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<4xf32>
  %b = train.mul %h, %c : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %r = train.reshape %b : tensor<1x4xf32> -> tensor<4xf32>
  %p3, %m3, %v3 = train.adamw_update %p, %r, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<4xf32>
  %s = train.mul %g, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %p4, %b4 = train.sgd_update %p, %s, %m, %lr momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<4xf32>
  return %p1, %p2, %p3, %p4, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A state write between the multiply and the update: the multiply stays
// where it reads its operand.

train.param @w : tensor<4xf32> init = zeros
// CHECK-LABEL: func.func @write_between
// CHECK: train.mul
// CHECK: train.write
// CHECK: train.adamw_update %{{.*}}, %{{.*}}, %arg1, %arg2, %arg3, %arg4 beta1
func.func @write_between(%x: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>, %c: tensor<f32>) -> tensor<4xf32> {
  %w = train.read @w : tensor<4xf32>
  %g = train.mul %w, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  train.write %x to @w : tensor<4xf32>
  %p1, %m1, %v1 = train.adamw_update %x, %g, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}
