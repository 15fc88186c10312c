// RUN: zeroc-opt %s --train-fuse-elementwise -split-input-file | FileCheck %s

// The generic elementwise ops of TrainMathOps.td fuse as the others do (the
// Elementwise trait): a chain of all of them, the three-operand select and
// the compare feeding it included, is one region; tril/triu and constants
// are not elementwise and stay outside.

// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = train.fused %arg0, %arg1, %arg2 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:.*]] = train.exp %[[X]]
// CHECK-NEXT: %[[L:.*]] = train.log %[[E]]
// CHECK-NEXT: %[[T:.*]] = train.tanh %[[L]]
// CHECK-NEXT: %[[N:.*]] = train.neg %[[T]]
// CHECK-NEXT: %[[Q:.*]] = train.rsqrt %[[N]]
// CHECK-NEXT: %[[P:.*]] = train.pow %[[Q]] by 3.000000e+00
// CHECK-NEXT: %[[M:.*]] = train.compare %[[P]], %[[Y]] lt
// CHECK-NEXT: %[[S:.*]] = train.select %[[M]], %[[Y]], %[[Z]]
// CHECK-NEXT: train.yield %[[S]]
// CHECK-NOT: train.fused
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = train.exp %x : tensor<4x8xf32>
  %l = train.log %e : tensor<4x8xf32>
  %t = train.tanh %l : tensor<4x8xf32>
  %n = train.neg %t : tensor<4x8xf32>
  %q = train.rsqrt %n : tensor<4x8xf32>
  %p = train.pow %q by 3.0 : tensor<4x8xf32>
  %m = train.compare %p, %y lt : tensor<4x8xf32>
  %s = train.select %m, %y, %z : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @not_elementwise
// CHECK: %[[C:.*]] = train.constant dense<{{.*}}> : tensor<2x2xf32>
// CHECK-NEXT: %[[L:.*]] = train.tril %arg0 diagonal = 0
// CHECK-NEXT: %[[U:.*]] = train.triu %[[L]] diagonal = 0
// CHECK-NEXT: %[[F:.*]] = train.fused %[[U]], %[[C]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.yield
func.func @not_elementwise(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = train.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %l = train.tril %x diagonal = 0 : tensor<2x2xf32>
  %u = train.triu %l diagonal = 0 : tensor<2x2xf32>
  %a = train.add %u, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a : tensor<2x2xf32>
}
