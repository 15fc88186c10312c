// RUN: zeroc-opt %s --canonicalize --cse | FileCheck %s

// train.constant is ConstantLike with a folder: the canonicalizer hoists the
// constants, CSE merges equal ones, and none is dropped or changed (f32 data,
// i64 ids, an i32 splat).

// CHECK-LABEL: func.func @merge(
// CHECK-DAG:     %[[Z:.+]] = train.constant dense<0> : tensor<4xi32>
// CHECK-DAG:     %[[I:.+]] = train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-DAG:     %[[C:.+]] = train.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK:         %[[S:.+]] = train.add %[[C]], %arg0
// CHECK-NEXT:    return %[[S]], %[[S]], %[[I]], %[[Z]]
func.func @merge(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>) {
  %a = train.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = train.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = train.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = train.add %b, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %i = train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %z = train.constant dense<0> : tensor<4xi32>
  return %s, %t, %i, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>
}
