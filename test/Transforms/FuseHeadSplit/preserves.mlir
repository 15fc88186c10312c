// The heads computed by one transpose are the heads the split and the
// transposes computed: the reference evaluator prints the same values
// before and after (a permutation moves values; no rounding).
//
// RUN: zeroc-run %s --entry=f --seed=3 > %t.before
// RUN: zeroc-opt %s --train-fuse-head-split > %t.mlir
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: zeroc-run %t.mlir --entry=f --seed=3 > %t.after
// RUN: diff %t.before %t.after

// CHECK-NOT: train.split
// CHECK: train.unpack
func.func @f(%qkv: tensor<2x3x12xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) {
  %q, %k, %v = train.split %qkv dim = 2 : tensor<2x3x12xf32> -> tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %q4 = train.reshape %q : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %k4 = train.reshape %k : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %v4 = train.reshape %v : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %qh = train.transpose %q4 [0, 2, 1, 3] : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
  %kh = train.transpose %k4 [0, 2, 1, 3] : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
  %vh = train.transpose %v4 [0, 2, 1, 3] : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
  return %qh, %kh, %vh : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
}
