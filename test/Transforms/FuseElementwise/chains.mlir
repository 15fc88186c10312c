// RUN: zeroc-opt %s --train-fuse-elementwise -split-input-file | FileCheck %s

// A chain whose links each feed only the next becomes one region; its
// inputs are what it reads from outside, in order of first use.

// CHECK-LABEL: func.func @bias_gelu
// CHECK-NEXT: %[[M:.*]] = train.matmul
// CHECK-NEXT: %[[F:.*]] = train.fused %[[M]], %arg2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[S:.*]] = train.add %[[A]], %[[B]]
// CHECK-NEXT: %[[G:.*]] = train.gelu %[[S]] tanh
// CHECK-NEXT: train.yield %[[G]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @bias_gelu(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %m = train.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %s = train.add %m, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %g = train.gelu %s tanh : tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// A constant used only by elementwise ops is copied into each region that
// reads it; the original goes away.

// CHECK-LABEL: func.func @constants
// CHECK-NOT: train.fill
// CHECK: train.fused %arg0 : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.fill 2.0
// CHECK: train.mul
// CHECK: train.fused %arg1 : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.fill 2.0
// CHECK: train.add
func.func @constants(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = train.fill 2.0 : tensor<4xf32>
  %a = train.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = train.add %y, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A constant with a non-elementwise user is a region of its own (the
// cross-entropy gradient's seed), and so is a lone elementwise op.

// CHECK-LABEL: func.func @lone
// CHECK: %[[ONE:.*]] = train.fused : () -> tensor<f32> {
// CHECK-NEXT: train.fill 1.0
// CHECK: train.cross_entropy_grad %[[ONE]]
// CHECK: train.fused %{{.*}} : (tensor<2x5xf32>) -> tensor<2x5xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.scale
func.func @lone(%l: tensor<2x5xf32>, %t: tensor<2xi32>) -> tensor<2x5xf32> {
  %one = train.fill 1.0 : tensor<f32>
  %g = train.cross_entropy_grad %one, %l, %t : (tensor<f32>, tensor<2x5xf32>, tensor<2xi32>) -> tensor<2x5xf32>
  %s = train.scale %g by 0.5 : tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}
