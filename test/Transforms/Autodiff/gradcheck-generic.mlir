// The derivative rules of the ops of TrainGenericOps.td against central
// differences, as gradcheck-ops.mlir does for the other ops: each op's
// output y enters the loss as sum(y * c) with a random c, on odd shapes,
// differentiated by --train-autodiff and checked element by element by
// zeroc-run --gradcheck in fp64. The inputs are normal: amax sees no ties
// here (test/Evaluator/generic-ops.mlir checks how ties share), and the
// gather indices repeat (a scatter-add must add them up).
//
// RUN: rm -rf %t && split-file %s %t

// RUN: zeroc-opt %t/amax.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=AMAX
// AMAX: {"name": "w", "checked": 60, {{.*}} "ok": true}
// AMAX: {"name": "v", "checked": 15, {{.*}} "ok": true}
// AMAX: "ok": true}}
//
// RUN: zeroc-opt %t/var.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=VAR
// VAR: {"name": "w", "checked": 60, {{.*}} "ok": true}
// VAR: {"name": "v", "checked": 15, {{.*}} "ok": true}
// VAR: "ok": true}}
//
// RUN: zeroc-opt %t/log-softmax.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=LOG-SOFTMAX
// LOG-SOFTMAX: {"name": "x", "checked": 42, {{.*}} "ok": true}
// LOG-SOFTMAX: "ok": true}}
//
// RUN: zeroc-opt %t/gather.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=GATHER
// GATHER: {"name": "x", "checked": 35, {{.*}} "ok": true}
// GATHER: {"name": "y", "checked": 60, {{.*}} "ok": true}
// GATHER: "ok": true}}
//
// RUN: zeroc-opt %t/nll.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=NLL
// NLL: {"name": "z", "checked": 42, {{.*}} "ok": true}
// NLL: "ok": true}}
//
// The rules themselves: amax's is train.amax_grad, gather's a
// train.gather_grad, var's and log_softmax's compositions of existing ops.
// RUN: zeroc-opt %t/amax.mlir --train-autodiff | FileCheck %s --check-prefix=RULES-AMAX
// RULES-AMAX: train.amax_grad %{{.*}} dims = [0, 2] : (tensor<4xf32>, tensor<3x4x5xf32>, tensor<4xf32>) -> tensor<3x4x5xf32>
// RUN: zeroc-opt %t/gather.mlir --train-autodiff | FileCheck %s --check-prefix=RULES-GATHER
// RULES-GATHER: train.gather_grad %{{.*}}[%{{.*}}] dim = 1 : (tensor<5x3xf32>, tensor<5x3xi32>) -> tensor<5x7xf32>

//--- amax.mlir
// train.amax over some, over all and over one dimension
train.param @w : tensor<3x4x5xf32> init = normal std = 1.0
train.param @v : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<4xf32>, %c1: tensor<f32>, %c2: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x4x5xf32>
  %v = train.read @v : tensor<3x5xf32>
  %y = train.amax %w dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %y2 = train.amax %v dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %y3 = train.amax %w dims = [1] : tensor<3x4x5xf32> -> tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s0 = train.sum %p0 dims = [0] : tensor<4xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p2 = train.mul %y3, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc1 : tensor<f32>
}

//--- var.mlir
// train.var unbiased over two dimensions, biased over all, and with
// correction 2 over one
train.param @w : tensor<3x4x5xf32> init = normal std = 1.0
train.param @v : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<4xf32>, %c1: tensor<f32>, %c2: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x4x5xf32>
  %v = train.read @v : tensor<3x5xf32>
  %y = train.var %w dims = [0, 2] correction = 1 : tensor<3x4x5xf32> -> tensor<4xf32>
  %y2 = train.var %v dims = [0, 1] correction = 0 : tensor<3x5xf32> -> tensor<f32>
  %y3 = train.var %w dims = [1] correction = 2 : tensor<3x4x5xf32> -> tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s0 = train.sum %p0 dims = [0] : tensor<4xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p2 = train.mul %y3, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc1 : tensor<f32>
}

//--- log-softmax.mlir
// train.log_softmax over the last dimension of a rank-3 tensor
train.param @x : tensor<2x3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<2x3x7xf32>
  %y = train.log_softmax %x : tensor<2x3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x7xf32>, tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- gather.mlir
// train.gather along the last dimension with more indices than elements
// (they repeat), and along the first of a rank-3 tensor with a smaller
// index
train.param @x : tensor<5x7xf32> init = normal std = 1.0
train.param @y : tensor<3x4x5xf32> init = normal std = 1.0
func.func @forward(%i: tensor<5x3xi32>, %j: tensor<6x2x5xi64>, %c0: tensor<5x3xf32>, %c1: tensor<6x2x5xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<5x7xf32>
  %y = train.read @y : tensor<3x4x5xf32>
  %g0 = train.gather %x[%i] dim = 1 : (tensor<5x7xf32>, tensor<5x3xi32>) -> tensor<5x3xf32>
  %g1 = train.gather %y[%j] dim = 0 : (tensor<3x4x5xf32>, tensor<6x2x5xi64>) -> tensor<6x2x5xf32>
  %p0 = train.mul %g0, %c0 : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<5x3xf32> -> tensor<f32>
  %p1 = train.mul %g1, %c1 : (tensor<6x2x5xf32>, tensor<6x2x5xf32>) -> tensor<6x2x5xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2] : tensor<6x2x5xf32> -> tensor<f32>
  %acc = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc : tensor<f32>
}

//--- nll.mlir
// cross-entropy written as ATen writes it: -mean(gather(log_softmax(z), t))
train.param @z : tensor<2x3x7xf32> init = normal std = 1.0
func.func @forward(%t: tensor<2x3x1xi32>) -> tensor<f32> attributes {train.forward} {
  %z = train.read @z : tensor<2x3x7xf32>
  %l = train.log_softmax %z : tensor<2x3x7xf32>
  %g = train.gather %l[%t] dim = 2 : (tensor<2x3x7xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %m = train.mean %g dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<f32>
  %loss = train.scale %m by -1.0 : tensor<f32>
  return %loss : tensor<f32>
}
