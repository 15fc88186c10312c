// Folding the average computes what the scales did: the reference
// evaluator runs both on the same inputs, and with a factor of 1/2 (two
// ranks; every scaling by a power of two is exact) the printed results are
// the same to the last digit, at stage 0's shape (through a gradient
// state, clipped) and at stage 2's (two micro-batches accumulated).
//
// RUN: zeroc-run %s --entry=f --seed=5 > %t.before
// RUN: zeroc-opt %s --train-fuse-optimizer --train-fuse-grad-average > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: zeroc-run %t.mlir --entry=f --seed=5 > %t.after
// RUN: diff %t.before %t.after

train.param @w : tensor<3x5xf32> init = zeros
train.state @w.grad : tensor<3x5xf32> grad of @w
// CHECK-NOT: train.scale {{.*}} : tensor<3x5xf32>
// CHECK: grad_scale
func.func @f(%r0: tensor<3x5xf32>, %r1: tensor<3x5xf32>, %p: tensor<3x5xf32>, %m: tensor<3x5xf32>, %v: tensor<3x5xf32>) -> (tensor<f32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %lr = train.fill 1.000000e-02 : tensor<f32>
  %step = arith.constant dense<2> : tensor<i64>
  %a0 = train.scale %r0 by 5.000000e-01 : tensor<3x5xf32>
  train.write %a0 to @w.grad : tensor<3x5xf32>
  %acc = train.read @w.grad : tensor<3x5xf32>
  %a1 = train.scale %r1 by 5.000000e-01 : tensor<3x5xf32>
  %sum = train.add %acc, %a1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  train.write %sum to @w.grad : tensor<3x5xf32>
  %g = train.read @w.grad : tensor<3x5xf32>
  // A squared norm above the limit: the coefficient is below 1 and not a
  // power of two, so every product with it rounds.
  %n = train.squared_norm %g : tensor<3x5xf32> -> tensor<f32>
  %norm = train.sqrt %n : tensor<f32>
  %c = train.clip_coef %n max_norm = 3.000000e-01 : tensor<f32>
  %g1 = train.mul %g, %c : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  // A second moment is not negative.
  %vv = train.mul %v, %v : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %g1, %m, %vv, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<3x5xf32>
  return %norm, %p1, %m1, %v1 : tensor<f32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}
