// The folded update computes what the multiply and the update did: the
// reference evaluator runs both on the same inputs, and the printed
// results are the same to the last digit.
//
// RUN: zeroc-run %s --entry=f --seed=11 > %t.before
// RUN: zeroc-opt %s --train-fuse-optimizer > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: zeroc-run %t.mlir --entry=f --seed=11 > %t.after
// RUN: diff %t.before %t.after

// CHECK-NOT: train.mul
// CHECK: grad_scale
func.func @f(%p: tensor<3x5xf32>, %g: tensor<3x5xf32>, %m: tensor<3x5xf32>, %v: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %lr = train.fill 1.000000e-02 : tensor<f32>
  %step = arith.constant dense<2> : tensor<i64>
  // A squared norm above 1: the coefficient is below 1 and not a power of
  // two, so every product rounds.
  %n = train.squared_norm %g : tensor<3x5xf32> -> tensor<f32>
  %c = train.clip_coef %n max_norm = 3.000000e-01 : tensor<f32>
  %g1 = train.mul %g, %c : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %g1, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<3x5xf32>
  return %p1, %m1, %v1 : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}
