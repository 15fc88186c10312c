// The fused program computes what the unfused one does: the reference
// evaluator runs both on the same inputs.
//
// RUN: zeroc-run %s --entry=f --seed=7 > %t.before
// RUN: zeroc-opt %s --train-fuse-elementwise > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: zeroc-run %t.mlir --entry=f --seed=7 > %t.after
// RUN: diff %t.before %t.after

// CHECK-COUNT-2: train.fused
// CHECK-NOT: train.fused
func.func @f(%x: tensor<3x4xf32>, %b: tensor<4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %c = train.fill 0.5 : tensor<4xf32>
  %s = train.add %x, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %t = train.mul %s, %c : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %g = train.gelu %t erf : tensor<3x4xf32>
  %m = train.matmul %g, %w transpose_rhs : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %r = train.relu %m : tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
