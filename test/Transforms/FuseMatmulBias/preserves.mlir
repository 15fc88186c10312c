// The fused product computes what the product and the add did: the
// reference evaluator runs both on the same inputs (f32 and bf16), and the
// printed results are the same to the last digit.
//
// RUN: zeroc-run %s --entry=f --seed=5 > %t.before
// RUN: zeroc-run %s --entry=g --seed=5 >> %t.before
// RUN: zeroc-opt %s --train-fuse-matmul-bias > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: zeroc-run %t.mlir --entry=f --seed=5 > %t.after
// RUN: zeroc-run %t.mlir --entry=g --seed=5 >> %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @f
// CHECK-NOT: train.add
// CHECK: train.matmul_bias {{.*}} transpose_rhs
// CHECK: train.matmul_bias
// CHECK-NOT: train.add
// CHECK-LABEL: func.func @g
// CHECK: train.matmul_bias {{.*}} : (tensor<3x4x5xbf16>, tensor<6x5xbf16>, tensor<6xbf16>) -> tensor<3x4x6xbf16>
func.func @f(%x: tensor<3x4x5xf32>, %w: tensor<6x5xf32>, %b: tensor<6xf32>, %wt: tensor<5x7xf32>, %c: tensor<7xf32>) -> (tensor<3x4x6xf32>, tensor<3x4x7xf32>) {
  %y0 = train.matmul %x, %w transpose_rhs : (tensor<3x4x5xf32>, tensor<6x5xf32>) -> tensor<3x4x6xf32>
  %y = train.add %y0, %b : (tensor<3x4x6xf32>, tensor<6xf32>) -> tensor<3x4x6xf32>
  %z0 = train.matmul %x, %wt : (tensor<3x4x5xf32>, tensor<5x7xf32>) -> tensor<3x4x7xf32>
  %z = train.add %c, %z0 : (tensor<7xf32>, tensor<3x4x7xf32>) -> tensor<3x4x7xf32>
  return %y, %z : tensor<3x4x6xf32>, tensor<3x4x7xf32>
}

func.func @g(%x: tensor<3x4x5xbf16>, %w: tensor<6x5xbf16>, %b: tensor<6xbf16>) -> tensor<3x4x6xbf16> {
  %y0 = train.matmul %x, %w transpose_rhs : (tensor<3x4x5xbf16>, tensor<6x5xbf16>) -> tensor<3x4x6xbf16>
  %y = train.add %y0, %b : (tensor<3x4x6xbf16>, tensor<6xbf16>) -> tensor<3x4x6xbf16>
  return %y : tensor<3x4x6xbf16>
}
