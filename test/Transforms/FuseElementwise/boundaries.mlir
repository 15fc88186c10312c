// RUN: zeroc-opt %s --train-fuse-elementwise -split-input-file | FileCheck %s

// Where a chain stops: a value used twice, a change of shape, a write in
// between.

// CHECK-LABEL: func.func @two_uses
// CHECK: %[[R:.*]] = train.fused %arg0 : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.relu
// CHECK: train.fused %[[R]] : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.mul
func.func @two_uses(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = train.relu %x : tensor<4xf32>
  %m = train.mul %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// A broadcast to a larger shape starts its own region: the producer's loop
// runs over fewer elements.

// CHECK-LABEL: func.func @shape_change
// CHECK: %[[S:.*]] = train.fused %arg0 : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.scale
// CHECK: train.fused %arg1, %[[S]] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32> {
// CHECK: train.add
func.func @shape_change(%b: tensor<4xf32>, %x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %s = train.scale %b by 2.0 : tensor<4xf32>
  %y = train.add %x, %s : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// A state write between producer and user: the producer runs where it is.

train.param @w : tensor<4xf32> init = zeros
// CHECK-LABEL: func.func @write_between
// CHECK: %[[S:.*]] = train.fused %{{.*}} : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.scale
// CHECK: train.write
// CHECK: train.fused %[[S]] : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: train.relu
func.func @write_between(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = train.read @w : tensor<4xf32>
  %s = train.scale %w by 2.0 : tensor<4xf32>
  train.write %x to @w : tensor<4xf32>
  %r = train.relu %s : tensor<4xf32>
  return %r : tensor<4xf32>
}
