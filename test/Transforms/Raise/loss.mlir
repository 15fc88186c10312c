// RUN: zeroc-opt %s --split-input-file --train-raise=families=loss | FileCheck %s

// F.cross_entropy through log_softmax and nll_loss (a gather of the
// targets' log-probabilities, their negated mean).
// CHECK-LABEL: func.func @nll
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>, %[[T:.*]]: tensor<2x3xi32>)
// CHECK-NEXT: %[[L:.*]] = train.cross_entropy %[[X]], %[[T]] : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]]
func.func @nll(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<2x3x5xf32>
  %i = train.reshape %t : tensor<2x3xi32> -> tensor<2x3x1xi32>
  %g = train.gather %ls[%i] dim = 2 : (tensor<2x3x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %m = train.mean %g dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<f32>
  %l = train.scale %m by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// -----

// The negation first, the gathered values squeezed to [d...].
// CHECK-LABEL: func.func @negated_first
// CHECK-NEXT: train.cross_entropy
// CHECK-NEXT: return
func.func @negated_first(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %s = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<f32>
  %n = train.sub %z, %s : (tensor<f32>, tensor<6xf32>) -> tensor<6xf32>
  %l = train.mean %n dims = [0] : tensor<6xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Near misses, left generic.
// Gathered along the wrong axis.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @wrong_axis(%x: tensor<5x5xf32>, %t: tensor<5xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<5x5xf32>
  %i = train.reshape %t : tensor<5xi32> -> tensor<1x5xi32>
  %g = train.gather %ls[%i] dim = 0 : (tensor<5x5xf32>, tensor<1x5xi32>) -> tensor<1x5xf32>
  %m = train.mean %g dims = [0, 1] : tensor<1x5xf32> -> tensor<f32>
  %l = train.scale %m by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// Not negated (a wrong constant: -0.5).
// CHECK-LABEL: func.func @half
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @half(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %m = train.mean %g dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %l = train.scale %m by -0.5 : tensor<f32>
  return %l : tensor<f32>
}

// label_smoothing = 0.1: the log-probabilities are read again for the
// smoothing term; train.cross_entropy has no smoothing.
// CHECK-LABEL: func.func @label_smoothing
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @label_smoothing(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %m = train.mean %g dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %nll = train.scale %m by -0.9 : tensor<f32>
  %u = train.mean %ls dims = [0, 1] : tensor<6x5xf32> -> tensor<f32>
  %smooth = train.scale %u by -0.1 : tensor<f32>
  %l = train.add %nll, %smooth : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// ignore_index: a mean over the kept positions only (a masked sum divided
// by the count), not the mean over every position.
// CHECK-LABEL: func.func @ignore_index
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @ignore_index(%x: tensor<6x5xf32>, %t: tensor<6xi32>, %keep: tensor<6x1xf32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %kg = train.mul %g, %keep : (tensor<6x1xf32>, tensor<6x1xf32>) -> tensor<6x1xf32>
  %s = train.sum %kg dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %c = train.sum %keep dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %q = train.div %s, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %l = train.scale %q by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// A mean over part of the positions only.
// CHECK-LABEL: func.func @partial_mean
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @partial_mean(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<2xf32> {
  %ls = train.log_softmax %x : tensor<2x3x5xf32>
  %i = train.reshape %t : tensor<2x3xi32> -> tensor<2x3x1xi32>
  %g = train.gather %ls[%i] dim = 2 : (tensor<2x3x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %m = train.mean %g dims = [1, 2] : tensor<2x3x1xf32> -> tensor<2xf32>
  %l = train.scale %m by -1.0 : tensor<2xf32>
  return %l : tensor<2xf32>
}
