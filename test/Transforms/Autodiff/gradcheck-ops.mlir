// Every derivative rule of train-autodiff against central differences: for
// each differentiable op of the train dialect, a small forward function on
// shapes that are not powers of two whose inputs are train.params (normal,
// std 1), differentiated by --train-autodiff and checked by
// `zeroc-run --gradcheck` element by element, in fp64 (atol 1e-7, rtol
// 1e-5, relative step 1e-6). Each output y of the op under test enters the
// loss as sum(y * c) with a random c (a generated input), so every element
// of every cotangent differs and a wrong rule cannot hide behind symmetry.
// zeroc-run exits 1 on any failing element, naming the worst offender.
//
// The CHECK lines list every parameter with its element count: every
// element is checked.
//
// RUN: rm -rf %t && split-file %s %t

// RUN: zeroc-opt %t/add.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=ADD
// ADD: {"name": "l0", "checked": 15, {{.*}} "ok": true}
// ADD: {"name": "r0", "checked": 15, {{.*}} "ok": true}
// ADD: {"name": "l1", "checked": 30, {{.*}} "ok": true}
// ADD: {"name": "r1", "checked": 5, {{.*}} "ok": true}
// ADD: {"name": "l2", "checked": 5, {{.*}} "ok": true}
// ADD: {"name": "r2", "checked": 30, {{.*}} "ok": true}
// ADD: {"name": "l3", "checked": 10, {{.*}} "ok": true}
// ADD: {"name": "r3", "checked": 3, {{.*}} "ok": true}
// ADD: {"name": "l4", "checked": 5, {{.*}} "ok": true}
// ADD: {"name": "r4", "checked": 3, {{.*}} "ok": true}
// ADD: {"name": "l5", "checked": 15, {{.*}} "ok": true}
// ADD: {"name": "r5", "checked": 1, {{.*}} "ok": true}
// ADD: {"name": "l6", "checked": 1, {{.*}} "ok": true}
// ADD: {"name": "r6", "checked": 15, {{.*}} "ok": true}
// ADD: {"name": "l7", "checked": 3, {{.*}} "ok": true}
// ADD: {"name": "r8", "checked": 5, {{.*}} "ok": true}
// ADD: "ok": true}}
//
// RUN: zeroc-opt %t/sub.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SUB
// SUB: {"name": "l0", "checked": 15, {{.*}} "ok": true}
// SUB: {"name": "r0", "checked": 15, {{.*}} "ok": true}
// SUB: {"name": "l1", "checked": 30, {{.*}} "ok": true}
// SUB: {"name": "r1", "checked": 5, {{.*}} "ok": true}
// SUB: {"name": "l2", "checked": 5, {{.*}} "ok": true}
// SUB: {"name": "r2", "checked": 30, {{.*}} "ok": true}
// SUB: {"name": "l3", "checked": 10, {{.*}} "ok": true}
// SUB: {"name": "r3", "checked": 3, {{.*}} "ok": true}
// SUB: {"name": "l4", "checked": 5, {{.*}} "ok": true}
// SUB: {"name": "r4", "checked": 3, {{.*}} "ok": true}
// SUB: {"name": "l5", "checked": 15, {{.*}} "ok": true}
// SUB: {"name": "r5", "checked": 1, {{.*}} "ok": true}
// SUB: {"name": "l6", "checked": 1, {{.*}} "ok": true}
// SUB: {"name": "r6", "checked": 15, {{.*}} "ok": true}
// SUB: {"name": "l7", "checked": 3, {{.*}} "ok": true}
// SUB: {"name": "r8", "checked": 5, {{.*}} "ok": true}
// SUB: "ok": true}}
//
// RUN: zeroc-opt %t/mul.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=MUL
// MUL: {"name": "l0", "checked": 15, {{.*}} "ok": true}
// MUL: {"name": "r0", "checked": 15, {{.*}} "ok": true}
// MUL: {"name": "l1", "checked": 30, {{.*}} "ok": true}
// MUL: {"name": "r1", "checked": 5, {{.*}} "ok": true}
// MUL: {"name": "l2", "checked": 5, {{.*}} "ok": true}
// MUL: {"name": "r2", "checked": 30, {{.*}} "ok": true}
// MUL: {"name": "l3", "checked": 10, {{.*}} "ok": true}
// MUL: {"name": "r3", "checked": 3, {{.*}} "ok": true}
// MUL: {"name": "l4", "checked": 5, {{.*}} "ok": true}
// MUL: {"name": "r4", "checked": 3, {{.*}} "ok": true}
// MUL: {"name": "l5", "checked": 15, {{.*}} "ok": true}
// MUL: {"name": "r5", "checked": 1, {{.*}} "ok": true}
// MUL: {"name": "l6", "checked": 1, {{.*}} "ok": true}
// MUL: {"name": "r6", "checked": 15, {{.*}} "ok": true}
// MUL: {"name": "l7", "checked": 3, {{.*}} "ok": true}
// MUL: {"name": "r8", "checked": 5, {{.*}} "ok": true}
// MUL: "ok": true}}
//
// RUN: zeroc-opt %t/div.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=DIV
// DIV: {"name": "l0", "checked": 15, {{.*}} "ok": true}
// DIV: {"name": "r0", "checked": 15, {{.*}} "ok": true}
// DIV: {"name": "l1", "checked": 30, {{.*}} "ok": true}
// DIV: {"name": "r1", "checked": 5, {{.*}} "ok": true}
// DIV: {"name": "l2", "checked": 5, {{.*}} "ok": true}
// DIV: {"name": "r2", "checked": 30, {{.*}} "ok": true}
// DIV: {"name": "l3", "checked": 10, {{.*}} "ok": true}
// DIV: {"name": "r3", "checked": 3, {{.*}} "ok": true}
// DIV: {"name": "l4", "checked": 5, {{.*}} "ok": true}
// DIV: {"name": "r4", "checked": 3, {{.*}} "ok": true}
// DIV: {"name": "l5", "checked": 15, {{.*}} "ok": true}
// DIV: {"name": "r5", "checked": 1, {{.*}} "ok": true}
// DIV: {"name": "l6", "checked": 1, {{.*}} "ok": true}
// DIV: {"name": "r6", "checked": 15, {{.*}} "ok": true}
// DIV: {"name": "l7", "checked": 3, {{.*}} "ok": true}
// DIV: {"name": "r8", "checked": 5, {{.*}} "ok": true}
// DIV: "ok": true}}
//
// RUN: zeroc-opt %t/scale.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SCALE
// SCALE: {"name": "w", "checked": 15, {{.*}} "ok": true}
// SCALE: "ok": true}}
//
// RUN: zeroc-opt %t/sqrt.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SQRT
// SQRT: {"name": "w", "checked": 15, {{.*}} "ok": true}
// SQRT: "ok": true}}
//
// RUN: zeroc-opt %t/gelu-tanh.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=GELU-TANH
// GELU-TANH: {"name": "w", "checked": 21, {{.*}} "ok": true}
// GELU-TANH: "ok": true}}
//
// RUN: zeroc-opt %t/gelu-erf.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=GELU-ERF
// GELU-ERF: {"name": "w", "checked": 21, {{.*}} "ok": true}
// GELU-ERF: "ok": true}}
//
// RUN: zeroc-opt %t/relu.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=RELU
// RELU: {"name": "w", "checked": 21, {{.*}} "ok": true}
// RELU: "ok": true}}
//
// RUN: zeroc-opt %t/layernorm.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=LAYERNORM
// LAYERNORM: {"name": "x", "checked": 42, {{.*}} "ok": true}
// LAYERNORM: {"name": "g", "checked": 7, {{.*}} "ok": true}
// LAYERNORM: {"name": "b", "checked": 7, {{.*}} "ok": true}
// LAYERNORM: {"name": "g2", "checked": 7, {{.*}} "ok": true}
// LAYERNORM: {"name": "b2", "checked": 7, {{.*}} "ok": true}
// LAYERNORM: "ok": true}}
//
// RUN: zeroc-opt %t/softmax.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SOFTMAX
// SOFTMAX: {"name": "w", "checked": 42, {{.*}} "ok": true}
// SOFTMAX: "ok": true}}
//
// RUN: zeroc-opt %t/causal-mask.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CAUSAL-MASK
// CAUSAL-MASK: {"name": "w", "checked": 50, {{.*}} "ok": true}
// CAUSAL-MASK: {"name": "v", "checked": 18, {{.*}} "ok": true}
// CAUSAL-MASK: "ok": true}}
//
// RUN: zeroc-opt %t/attention-causal.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=ATTENTION-CAUSAL
// ATTENTION-CAUSAL: {"name": "q", "checked": 90, {{.*}} "ok": true}
// ATTENTION-CAUSAL: {"name": "k", "checked": 90, {{.*}} "ok": true}
// ATTENTION-CAUSAL: {"name": "v", "checked": 90, {{.*}} "ok": true}
// ATTENTION-CAUSAL: "ok": true}}
//
// RUN: zeroc-opt %t/attention-full.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=ATTENTION-FULL
// ATTENTION-FULL: {"name": "q", "checked": 90, {{.*}} "ok": true}
// ATTENTION-FULL: {"name": "k", "checked": 90, {{.*}} "ok": true}
// ATTENTION-FULL: {"name": "v", "checked": 90, {{.*}} "ok": true}
// ATTENTION-FULL: "ok": true}}
//
// RUN: zeroc-opt %t/matmul.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=MATMUL
// MATMUL: {"name": "a0", "checked": 15, {{.*}} "ok": true}
// MATMUL: {"name": "b0", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a1", "checked": 15, {{.*}} "ok": true}
// MATMUL: {"name": "b1", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a2", "checked": 15, {{.*}} "ok": true}
// MATMUL: {"name": "b2", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a3", "checked": 15, {{.*}} "ok": true}
// MATMUL: {"name": "b3", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a4", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b4", "checked": 40, {{.*}} "ok": true}
// MATMUL: {"name": "a5", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b5", "checked": 40, {{.*}} "ok": true}
// MATMUL: {"name": "a6", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b6", "checked": 40, {{.*}} "ok": true}
// MATMUL: {"name": "a7", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b7", "checked": 40, {{.*}} "ok": true}
// MATMUL: {"name": "a8", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b8", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a9", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b9", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a10", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b10", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a11", "checked": 30, {{.*}} "ok": true}
// MATMUL: {"name": "b11", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a12", "checked": 90, {{.*}} "ok": true}
// MATMUL: {"name": "b12", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a13", "checked": 90, {{.*}} "ok": true}
// MATMUL: {"name": "b13", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a14", "checked": 90, {{.*}} "ok": true}
// MATMUL: {"name": "b14", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "a15", "checked": 90, {{.*}} "ok": true}
// MATMUL: {"name": "b15", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "w", "checked": 20, {{.*}} "ok": true}
// MATMUL: {"name": "u", "checked": 30, {{.*}} "ok": true}
// MATMUL: "ok": true}}
//
// RUN: zeroc-opt %t/reshape.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=RESHAPE
// RESHAPE: {"name": "w", "checked": 30, {{.*}} "ok": true}
// RESHAPE: {"name": "v", "checked": 30, {{.*}} "ok": true}
// RESHAPE: "ok": true}}
//
// RUN: zeroc-opt %t/transpose.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=TRANSPOSE
// TRANSPOSE: {"name": "w", "checked": 30, {{.*}} "ok": true}
// TRANSPOSE: {"name": "v", "checked": 210, {{.*}} "ok": true}
// TRANSPOSE: "ok": true}}
//
// RUN: zeroc-opt %t/split.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SPLIT
// SPLIT: {"name": "w", "checked": 18, {{.*}} "ok": true}
// SPLIT: {"name": "v", "checked": 30, {{.*}} "ok": true}
// SPLIT: "ok": true}}
//
// RUN: zeroc-opt %t/concat.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CONCAT
// CONCAT: {"name": "a", "checked": 6, {{.*}} "ok": true}
// CONCAT: {"name": "b", "checked": 6, {{.*}} "ok": true}
// CONCAT: {"name": "c", "checked": 15, {{.*}} "ok": true}
// CONCAT: "ok": true}}
//
// RUN: zeroc-opt %t/broadcast.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: {"name": "w", "checked": 3, {{.*}} "ok": true}
// BROADCAST: {"name": "v", "checked": 5, {{.*}} "ok": true}
// BROADCAST: {"name": "s", "checked": 1, {{.*}} "ok": true}
// BROADCAST: "ok": true}}
//
// RUN: zeroc-opt %t/sum.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SUM
// SUM: {"name": "w", "checked": 60, {{.*}} "ok": true}
// SUM: {"name": "v", "checked": 15, {{.*}} "ok": true}
// SUM: "ok": true}}
//
// RUN: zeroc-opt %t/mean.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=MEAN
// MEAN: {"name": "w", "checked": 60, {{.*}} "ok": true}
// MEAN: {"name": "v", "checked": 15, {{.*}} "ok": true}
// MEAN: "ok": true}}
//
// RUN: zeroc-opt %t/cast.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CAST
// CAST: {"name": "w", "checked": 15, {{.*}} "ok": true}
// CAST: {"name": "h", "checked": 15, {{.*}} "ok": true}
// CAST: "ok": true}}
//
// RUN: zeroc-opt %t/embedding.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=EMBEDDING
// EMBEDDING: {"name": "e", "checked": 35, {{.*}} "ok": true}
// EMBEDDING: "ok": true}}
//
// RUN: zeroc-opt %t/cross-entropy.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CROSS-ENTROPY
// CROSS-ENTROPY: {"name": "z", "checked": 42, {{.*}} "ok": true}
// CROSS-ENTROPY: "ok": true}}
// RUN: zeroc-opt %t/cross-entropy-ignore-smoothing.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 --int-range=3 | FileCheck %s --check-prefix=CE-IGNORE
// CE-IGNORE: {"name": "z", "checked": 84, {{.*}} "ok": true}
// CE-IGNORE: "ok": true}}
// RUN: zeroc-opt %t/cross-entropy-count.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 --int-range=4 | FileCheck %s --check-prefix=CE-COUNT
// CE-COUNT: {"name": "z", "checked": 84, {{.*}} "ok": true}
// CE-COUNT: "ok": true}}

//--- add.mlir
// train.add: NumPy broadcasting (equal shapes, missing leading dims on either
// side, size-1 dims on both, scalars), with both operands params and with only
// one
train.param @l0 : tensor<3x5xf32> init = normal std = 1.0
train.param @r0 : tensor<3x5xf32> init = normal std = 1.0
train.param @l1 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @r1 : tensor<5xf32> init = normal std = 1.0
train.param @l2 : tensor<5xf32> init = normal std = 1.0
train.param @r2 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @l3 : tensor<2x1x5xf32> init = normal std = 1.0
train.param @r3 : tensor<3x1xf32> init = normal std = 1.0
train.param @l4 : tensor<1x5xf32> init = normal std = 1.0
train.param @r4 : tensor<3x1xf32> init = normal std = 1.0
train.param @l5 : tensor<3x5xf32> init = normal std = 1.0
train.param @r5 : tensor<f32> init = normal std = 1.0
train.param @l6 : tensor<f32> init = normal std = 1.0
train.param @r6 : tensor<3x5xf32> init = normal std = 1.0
train.param @l7 : tensor<3x1xf32> init = normal std = 1.0
train.param @r8 : tensor<1x5xf32> init = normal std = 1.0
func.func @forward(%r7: tensor<3x5xf32>, %l8: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %c1: tensor<2x3x5xf32>, %c2: tensor<2x3x5xf32>, %c3: tensor<2x3x5xf32>, %c4: tensor<3x5xf32>, %c5: tensor<3x5xf32>, %c6: tensor<3x5xf32>, %c7: tensor<3x5xf32>, %c8: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %l0 = train.read @l0 : tensor<3x5xf32>
  %r0 = train.read @r0 : tensor<3x5xf32>
  %l1 = train.read @l1 : tensor<2x3x5xf32>
  %r1 = train.read @r1 : tensor<5xf32>
  %l2 = train.read @l2 : tensor<5xf32>
  %r2 = train.read @r2 : tensor<2x3x5xf32>
  %l3 = train.read @l3 : tensor<2x1x5xf32>
  %r3 = train.read @r3 : tensor<3x1xf32>
  %l4 = train.read @l4 : tensor<1x5xf32>
  %r4 = train.read @r4 : tensor<3x1xf32>
  %l5 = train.read @l5 : tensor<3x5xf32>
  %r5 = train.read @r5 : tensor<f32>
  %l6 = train.read @l6 : tensor<f32>
  %r6 = train.read @r6 : tensor<3x5xf32>
  %l7 = train.read @l7 : tensor<3x1xf32>
  %r8 = train.read @r8 : tensor<1x5xf32>
  %y0 = train.add %l0, %r0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y1 = train.add %l1, %r1 : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %y2 = train.add %l2, %r2 : (tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %y3 = train.add %l3, %r3 : (tensor<2x1x5xf32>, tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %y4 = train.add %l4, %r4 : (tensor<1x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %y5 = train.add %l5, %r5 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %y6 = train.add %l6, %r6 : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y7 = train.add %l7, %r7 : (tensor<3x1xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y8 = train.add %l8, %r8 : (tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p1 = train.mul %y1, %c1 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p2 = train.mul %y2, %c2 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p3 = train.mul %y3, %c3 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s3 = train.sum %p3 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p4 = train.mul %y4, %c4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s4 = train.sum %p4 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p5 = train.mul %y5, %c5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s5 = train.sum %p5 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p6 = train.mul %y6, %c6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s6 = train.sum %p6 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p7 = train.mul %y7, %c7 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s7 = train.sum %p7 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p8 = train.mul %y8, %c8 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s8 = train.sum %p8 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = train.add %acc2, %s4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = train.add %acc3, %s5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = train.add %acc4, %s6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = train.add %acc5, %s7 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = train.add %acc6, %s8 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc7 : tensor<f32>
}

//--- sub.mlir
// train.sub: NumPy broadcasting (equal shapes, missing leading dims on either
// side, size-1 dims on both, scalars), with both operands params and with only
// one
train.param @l0 : tensor<3x5xf32> init = normal std = 1.0
train.param @r0 : tensor<3x5xf32> init = normal std = 1.0
train.param @l1 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @r1 : tensor<5xf32> init = normal std = 1.0
train.param @l2 : tensor<5xf32> init = normal std = 1.0
train.param @r2 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @l3 : tensor<2x1x5xf32> init = normal std = 1.0
train.param @r3 : tensor<3x1xf32> init = normal std = 1.0
train.param @l4 : tensor<1x5xf32> init = normal std = 1.0
train.param @r4 : tensor<3x1xf32> init = normal std = 1.0
train.param @l5 : tensor<3x5xf32> init = normal std = 1.0
train.param @r5 : tensor<f32> init = normal std = 1.0
train.param @l6 : tensor<f32> init = normal std = 1.0
train.param @r6 : tensor<3x5xf32> init = normal std = 1.0
train.param @l7 : tensor<3x1xf32> init = normal std = 1.0
train.param @r8 : tensor<1x5xf32> init = normal std = 1.0
func.func @forward(%r7: tensor<3x5xf32>, %l8: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %c1: tensor<2x3x5xf32>, %c2: tensor<2x3x5xf32>, %c3: tensor<2x3x5xf32>, %c4: tensor<3x5xf32>, %c5: tensor<3x5xf32>, %c6: tensor<3x5xf32>, %c7: tensor<3x5xf32>, %c8: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %l0 = train.read @l0 : tensor<3x5xf32>
  %r0 = train.read @r0 : tensor<3x5xf32>
  %l1 = train.read @l1 : tensor<2x3x5xf32>
  %r1 = train.read @r1 : tensor<5xf32>
  %l2 = train.read @l2 : tensor<5xf32>
  %r2 = train.read @r2 : tensor<2x3x5xf32>
  %l3 = train.read @l3 : tensor<2x1x5xf32>
  %r3 = train.read @r3 : tensor<3x1xf32>
  %l4 = train.read @l4 : tensor<1x5xf32>
  %r4 = train.read @r4 : tensor<3x1xf32>
  %l5 = train.read @l5 : tensor<3x5xf32>
  %r5 = train.read @r5 : tensor<f32>
  %l6 = train.read @l6 : tensor<f32>
  %r6 = train.read @r6 : tensor<3x5xf32>
  %l7 = train.read @l7 : tensor<3x1xf32>
  %r8 = train.read @r8 : tensor<1x5xf32>
  %y0 = train.sub %l0, %r0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y1 = train.sub %l1, %r1 : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %y2 = train.sub %l2, %r2 : (tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %y3 = train.sub %l3, %r3 : (tensor<2x1x5xf32>, tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %y4 = train.sub %l4, %r4 : (tensor<1x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %y5 = train.sub %l5, %r5 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %y6 = train.sub %l6, %r6 : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y7 = train.sub %l7, %r7 : (tensor<3x1xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y8 = train.sub %l8, %r8 : (tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p1 = train.mul %y1, %c1 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p2 = train.mul %y2, %c2 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p3 = train.mul %y3, %c3 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s3 = train.sum %p3 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p4 = train.mul %y4, %c4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s4 = train.sum %p4 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p5 = train.mul %y5, %c5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s5 = train.sum %p5 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p6 = train.mul %y6, %c6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s6 = train.sum %p6 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p7 = train.mul %y7, %c7 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s7 = train.sum %p7 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p8 = train.mul %y8, %c8 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s8 = train.sum %p8 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = train.add %acc2, %s4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = train.add %acc3, %s5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = train.add %acc4, %s6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = train.add %acc5, %s7 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = train.add %acc6, %s8 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc7 : tensor<f32>
}

//--- mul.mlir
// train.mul: NumPy broadcasting (equal shapes, missing leading dims on either
// side, size-1 dims on both, scalars), with both operands params and with only
// one
train.param @l0 : tensor<3x5xf32> init = normal std = 1.0
train.param @r0 : tensor<3x5xf32> init = normal std = 1.0
train.param @l1 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @r1 : tensor<5xf32> init = normal std = 1.0
train.param @l2 : tensor<5xf32> init = normal std = 1.0
train.param @r2 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @l3 : tensor<2x1x5xf32> init = normal std = 1.0
train.param @r3 : tensor<3x1xf32> init = normal std = 1.0
train.param @l4 : tensor<1x5xf32> init = normal std = 1.0
train.param @r4 : tensor<3x1xf32> init = normal std = 1.0
train.param @l5 : tensor<3x5xf32> init = normal std = 1.0
train.param @r5 : tensor<f32> init = normal std = 1.0
train.param @l6 : tensor<f32> init = normal std = 1.0
train.param @r6 : tensor<3x5xf32> init = normal std = 1.0
train.param @l7 : tensor<3x1xf32> init = normal std = 1.0
train.param @r8 : tensor<1x5xf32> init = normal std = 1.0
func.func @forward(%r7: tensor<3x5xf32>, %l8: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %c1: tensor<2x3x5xf32>, %c2: tensor<2x3x5xf32>, %c3: tensor<2x3x5xf32>, %c4: tensor<3x5xf32>, %c5: tensor<3x5xf32>, %c6: tensor<3x5xf32>, %c7: tensor<3x5xf32>, %c8: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %l0 = train.read @l0 : tensor<3x5xf32>
  %r0 = train.read @r0 : tensor<3x5xf32>
  %l1 = train.read @l1 : tensor<2x3x5xf32>
  %r1 = train.read @r1 : tensor<5xf32>
  %l2 = train.read @l2 : tensor<5xf32>
  %r2 = train.read @r2 : tensor<2x3x5xf32>
  %l3 = train.read @l3 : tensor<2x1x5xf32>
  %r3 = train.read @r3 : tensor<3x1xf32>
  %l4 = train.read @l4 : tensor<1x5xf32>
  %r4 = train.read @r4 : tensor<3x1xf32>
  %l5 = train.read @l5 : tensor<3x5xf32>
  %r5 = train.read @r5 : tensor<f32>
  %l6 = train.read @l6 : tensor<f32>
  %r6 = train.read @r6 : tensor<3x5xf32>
  %l7 = train.read @l7 : tensor<3x1xf32>
  %r8 = train.read @r8 : tensor<1x5xf32>
  %y0 = train.mul %l0, %r0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y1 = train.mul %l1, %r1 : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %y2 = train.mul %l2, %r2 : (tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %y3 = train.mul %l3, %r3 : (tensor<2x1x5xf32>, tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %y4 = train.mul %l4, %r4 : (tensor<1x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %y5 = train.mul %l5, %r5 : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %y6 = train.mul %l6, %r6 : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y7 = train.mul %l7, %r7 : (tensor<3x1xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y8 = train.mul %l8, %r8 : (tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p1 = train.mul %y1, %c1 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p2 = train.mul %y2, %c2 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p3 = train.mul %y3, %c3 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s3 = train.sum %p3 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p4 = train.mul %y4, %c4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s4 = train.sum %p4 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p5 = train.mul %y5, %c5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s5 = train.sum %p5 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p6 = train.mul %y6, %c6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s6 = train.sum %p6 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p7 = train.mul %y7, %c7 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s7 = train.sum %p7 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p8 = train.mul %y8, %c8 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s8 = train.sum %p8 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = train.add %acc2, %s4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = train.add %acc3, %s5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = train.add %acc4, %s6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = train.add %acc5, %s7 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = train.add %acc6, %s8 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc7 : tensor<f32>
}

//--- div.mlir
// train.div: NumPy broadcasting (equal shapes, missing leading dims on either
// side, size-1 dims on both, scalars), with both operands params and with only
// one
train.param @l0 : tensor<3x5xf32> init = normal std = 1.0
train.param @r0 : tensor<3x5xf32> init = normal std = 1.0
train.param @l1 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @r1 : tensor<5xf32> init = normal std = 1.0
train.param @l2 : tensor<5xf32> init = normal std = 1.0
train.param @r2 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @l3 : tensor<2x1x5xf32> init = normal std = 1.0
train.param @r3 : tensor<3x1xf32> init = normal std = 1.0
train.param @l4 : tensor<1x5xf32> init = normal std = 1.0
train.param @r4 : tensor<3x1xf32> init = normal std = 1.0
train.param @l5 : tensor<3x5xf32> init = normal std = 1.0
train.param @r5 : tensor<f32> init = normal std = 1.0
train.param @l6 : tensor<f32> init = normal std = 1.0
train.param @r6 : tensor<3x5xf32> init = normal std = 1.0
train.param @l7 : tensor<3x1xf32> init = normal std = 1.0
train.param @r8 : tensor<1x5xf32> init = normal std = 1.0
func.func @forward(%r7: tensor<3x5xf32>, %l8: tensor<3x5xf32>, %c0: tensor<3x5xf32>, %c1: tensor<2x3x5xf32>, %c2: tensor<2x3x5xf32>, %c3: tensor<2x3x5xf32>, %c4: tensor<3x5xf32>, %c5: tensor<3x5xf32>, %c6: tensor<3x5xf32>, %c7: tensor<3x5xf32>, %c8: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %l0 = train.read @l0 : tensor<3x5xf32>
  %r0 = train.read @r0 : tensor<3x5xf32>
  %l1 = train.read @l1 : tensor<2x3x5xf32>
  %r1 = train.read @r1 : tensor<5xf32>
  %l2 = train.read @l2 : tensor<5xf32>
  %r2 = train.read @r2 : tensor<2x3x5xf32>
  %l3 = train.read @l3 : tensor<2x1x5xf32>
  %r3 = train.read @r3 : tensor<3x1xf32>
  %l4 = train.read @l4 : tensor<1x5xf32>
  %r4 = train.read @r4 : tensor<3x1xf32>
  %l5 = train.read @l5 : tensor<3x5xf32>
  %r5 = train.read @r5 : tensor<f32>
  %l6 = train.read @l6 : tensor<f32>
  %r6 = train.read @r6 : tensor<3x5xf32>
  %l7 = train.read @l7 : tensor<3x1xf32>
  %r8 = train.read @r8 : tensor<1x5xf32>
  %r0_sq = train.mul %r0, %r0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r0_half = train.fill 5.000000e-01 : tensor<3x5xf32>
  %r0_den = train.add %r0_sq, %r0_half : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y0 = train.div %l0, %r0_den : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r1_sq = train.mul %r1, %r1 : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %r1_half = train.fill 5.000000e-01 : tensor<5xf32>
  %r1_den = train.add %r1_sq, %r1_half : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %y1 = train.div %l1, %r1_den : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %r2_sq = train.mul %r2, %r2 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %r2_half = train.fill 5.000000e-01 : tensor<2x3x5xf32>
  %r2_den = train.add %r2_sq, %r2_half : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %y2 = train.div %l2, %r2_den : (tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %r3_sq = train.mul %r3, %r3 : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r3_half = train.fill 5.000000e-01 : tensor<3x1xf32>
  %r3_den = train.add %r3_sq, %r3_half : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %y3 = train.div %l3, %r3_den : (tensor<2x1x5xf32>, tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %r4_sq = train.mul %r4, %r4 : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r4_half = train.fill 5.000000e-01 : tensor<3x1xf32>
  %r4_den = train.add %r4_sq, %r4_half : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %y4 = train.div %l4, %r4_den : (tensor<1x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %r5_sq = train.mul %r5, %r5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r5_half = train.fill 5.000000e-01 : tensor<f32>
  %r5_den = train.add %r5_sq, %r5_half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %y5 = train.div %l5, %r5_den : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %r6_sq = train.mul %r6, %r6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r6_half = train.fill 5.000000e-01 : tensor<3x5xf32>
  %r6_den = train.add %r6_sq, %r6_half : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y6 = train.div %l6, %r6_den : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r7_sq = train.mul %r7, %r7 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r7_half = train.fill 5.000000e-01 : tensor<3x5xf32>
  %r7_den = train.add %r7_sq, %r7_half : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y7 = train.div %l7, %r7_den : (tensor<3x1xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r8_sq = train.mul %r8, %r8 : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  %r8_half = train.fill 5.000000e-01 : tensor<1x5xf32>
  %r8_den = train.add %r8_sq, %r8_half : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  %y8 = train.div %l8, %r8_den : (tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p1 = train.mul %y1, %c1 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p2 = train.mul %y2, %c2 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p3 = train.mul %y3, %c3 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s3 = train.sum %p3 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p4 = train.mul %y4, %c4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s4 = train.sum %p4 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p5 = train.mul %y5, %c5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s5 = train.sum %p5 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p6 = train.mul %y6, %c6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s6 = train.sum %p6 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p7 = train.mul %y7, %c7 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s7 = train.sum %p7 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p8 = train.mul %y8, %c8 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s8 = train.sum %p8 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = train.add %acc2, %s4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = train.add %acc3, %s5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = train.add %acc4, %s6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = train.add %acc5, %s7 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = train.add %acc6, %s8 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc7 : tensor<f32>
}

//--- scale.mlir
// train.scale
train.param @w : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %y = train.scale %w by -1.700000e+00 : tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- sqrt.mlir
// train.sqrt (of w * w + 0.5, away from 0)
train.param @w : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %w2 = train.mul %w, %w : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %h = train.fill 5.000000e-01 : tensor<3x5xf32>
  %x = train.add %w2, %h : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y = train.sqrt %x : tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- gelu-tanh.mlir
// train.gelu with the tanh approximation
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.gelu %w tanh : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- gelu-erf.mlir
// train.gelu exact (erf)
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.gelu %w erf : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- relu.mlir
// train.relu
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.relu %w : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- layernorm.mlir
// train.layernorm: input, weight and bias all params; and an input that is not
// a param
train.param @x : tensor<2x3x7xf32> init = normal std = 1.0
train.param @g : tensor<7xf32> init = normal std = 1.0
train.param @b : tensor<7xf32> init = normal std = 1.0
train.param @g2 : tensor<7xf32> init = normal std = 1.0
train.param @b2 : tensor<7xf32> init = normal std = 1.0
func.func @forward(%z: tensor<5x7xf32>, %c0: tensor<2x3x7xf32>, %c1: tensor<5x7xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<2x3x7xf32>
  %g = train.read @g : tensor<7xf32>
  %b = train.read @b : tensor<7xf32>
  %g2 = train.read @g2 : tensor<7xf32>
  %b2 = train.read @b2 : tensor<7xf32>
  %y = train.layernorm %x, %g, %b eps = 1.000000e-05 : (tensor<2x3x7xf32>, tensor<7xf32>, tensor<7xf32>) -> tensor<2x3x7xf32>
  %y2 = train.layernorm %z, %g2, %b2 eps = 1.000000e-01 : (tensor<5x7xf32>, tensor<7xf32>, tensor<7xf32>) -> tensor<5x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x7xf32>, tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x3x7xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<5x7xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- softmax.mlir
// train.softmax over the last dimension
train.param @w : tensor<2x3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x3x7xf32>
  %y = train.softmax %w : tensor<2x3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x7xf32>, tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- causal-mask.mlir
// train.causal_mask before a softmax (square and rectangular [T, S])
train.param @w : tensor<2x5x5xf32> init = normal std = 1.0
train.param @v : tensor<3x6xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x5x5xf32>, %c1: tensor<3x6xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x5x5xf32>
  %v = train.read @v : tensor<3x6xf32>
  %m = train.causal_mask %w : tensor<2x5x5xf32>
  %y = train.softmax %m : tensor<2x5x5xf32>
  %m2 = train.causal_mask %v : tensor<3x6xf32>
  %y2 = train.softmax %m2 : tensor<3x6xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x5x5xf32>, tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x5x5xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<3x6xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- attention-causal.mlir
// train.attention causal
train.param @q : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @k : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @v : tensor<2x3x5x3xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x5x3xf32>) -> tensor<f32> attributes {train.forward} {
  %q = train.read @q : tensor<2x3x5x3xf32>
  %k = train.read @k : tensor<2x3x5x3xf32>
  %v = train.read @v : tensor<2x3x5x3xf32>
  %y = train.attention %q, %k, %v causal scale = 5.773500e-01 : (tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>) -> tensor<2x3x5x3xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>) -> tensor<2x3x5x3xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2, 3] : tensor<2x3x5x3xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- attention-full.mlir
// train.attention without a mask
train.param @q : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @k : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @v : tensor<2x3x5x3xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x5x3xf32>) -> tensor<f32> attributes {train.forward} {
  %q = train.read @q : tensor<2x3x5x3xf32>
  %k = train.read @k : tensor<2x3x5x3xf32>
  %v = train.read @v : tensor<2x3x5x3xf32>
  %y = train.attention %q, %k, %v scale = 5.773500e-01 : (tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>) -> tensor<2x3x5x3xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32>) -> tensor<2x3x5x3xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2, 3] : tensor<2x3x5x3xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- matmul.mlir
// train.matmul: rank 2 and batched, every transpose combination; a rank-2 rhs
// shared by a rank-3 and a rank-4 lhs with every transpose combination; only
// the rhs or only the lhs a param
train.param @a0 : tensor<3x5xf32> init = normal std = 1.0
train.param @b0 : tensor<5x4xf32> init = normal std = 1.0
train.param @a1 : tensor<3x5xf32> init = normal std = 1.0
train.param @b1 : tensor<4x5xf32> init = normal std = 1.0
train.param @a2 : tensor<5x3xf32> init = normal std = 1.0
train.param @b2 : tensor<5x4xf32> init = normal std = 1.0
train.param @a3 : tensor<5x3xf32> init = normal std = 1.0
train.param @b3 : tensor<4x5xf32> init = normal std = 1.0
train.param @a4 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @b4 : tensor<2x5x4xf32> init = normal std = 1.0
train.param @a5 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @b5 : tensor<2x4x5xf32> init = normal std = 1.0
train.param @a6 : tensor<2x5x3xf32> init = normal std = 1.0
train.param @b6 : tensor<2x5x4xf32> init = normal std = 1.0
train.param @a7 : tensor<2x5x3xf32> init = normal std = 1.0
train.param @b7 : tensor<2x4x5xf32> init = normal std = 1.0
train.param @a8 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @b8 : tensor<5x4xf32> init = normal std = 1.0
train.param @a9 : tensor<2x3x5xf32> init = normal std = 1.0
train.param @b9 : tensor<4x5xf32> init = normal std = 1.0
train.param @a10 : tensor<2x5x3xf32> init = normal std = 1.0
train.param @b10 : tensor<5x4xf32> init = normal std = 1.0
train.param @a11 : tensor<2x5x3xf32> init = normal std = 1.0
train.param @b11 : tensor<4x5xf32> init = normal std = 1.0
train.param @a12 : tensor<2x3x3x5xf32> init = normal std = 1.0
train.param @b12 : tensor<5x4xf32> init = normal std = 1.0
train.param @a13 : tensor<2x3x3x5xf32> init = normal std = 1.0
train.param @b13 : tensor<4x5xf32> init = normal std = 1.0
train.param @a14 : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @b14 : tensor<5x4xf32> init = normal std = 1.0
train.param @a15 : tensor<2x3x5x3xf32> init = normal std = 1.0
train.param @b15 : tensor<4x5xf32> init = normal std = 1.0
train.param @w : tensor<4x5xf32> init = normal std = 1.0
train.param @u : tensor<2x3x5xf32> init = normal std = 1.0
func.func @forward(%x: tensor<2x3x5xf32>, %z: tensor<5x4xf32>, %c0: tensor<3x4xf32>, %c1: tensor<3x4xf32>, %c2: tensor<3x4xf32>, %c3: tensor<3x4xf32>, %c4: tensor<2x3x4xf32>, %c5: tensor<2x3x4xf32>, %c6: tensor<2x3x4xf32>, %c7: tensor<2x3x4xf32>, %c8: tensor<2x3x4xf32>, %c9: tensor<2x3x4xf32>, %c10: tensor<2x3x4xf32>, %c11: tensor<2x3x4xf32>, %c12: tensor<2x3x3x4xf32>, %c13: tensor<2x3x3x4xf32>, %c14: tensor<2x3x3x4xf32>, %c15: tensor<2x3x3x4xf32>, %c16: tensor<2x3x4xf32>, %c17: tensor<2x3x4xf32>) -> tensor<f32> attributes {train.forward} {
  %a0 = train.read @a0 : tensor<3x5xf32>
  %b0 = train.read @b0 : tensor<5x4xf32>
  %a1 = train.read @a1 : tensor<3x5xf32>
  %b1 = train.read @b1 : tensor<4x5xf32>
  %a2 = train.read @a2 : tensor<5x3xf32>
  %b2 = train.read @b2 : tensor<5x4xf32>
  %a3 = train.read @a3 : tensor<5x3xf32>
  %b3 = train.read @b3 : tensor<4x5xf32>
  %a4 = train.read @a4 : tensor<2x3x5xf32>
  %b4 = train.read @b4 : tensor<2x5x4xf32>
  %a5 = train.read @a5 : tensor<2x3x5xf32>
  %b5 = train.read @b5 : tensor<2x4x5xf32>
  %a6 = train.read @a6 : tensor<2x5x3xf32>
  %b6 = train.read @b6 : tensor<2x5x4xf32>
  %a7 = train.read @a7 : tensor<2x5x3xf32>
  %b7 = train.read @b7 : tensor<2x4x5xf32>
  %a8 = train.read @a8 : tensor<2x3x5xf32>
  %b8 = train.read @b8 : tensor<5x4xf32>
  %a9 = train.read @a9 : tensor<2x3x5xf32>
  %b9 = train.read @b9 : tensor<4x5xf32>
  %a10 = train.read @a10 : tensor<2x5x3xf32>
  %b10 = train.read @b10 : tensor<5x4xf32>
  %a11 = train.read @a11 : tensor<2x5x3xf32>
  %b11 = train.read @b11 : tensor<4x5xf32>
  %a12 = train.read @a12 : tensor<2x3x3x5xf32>
  %b12 = train.read @b12 : tensor<5x4xf32>
  %a13 = train.read @a13 : tensor<2x3x3x5xf32>
  %b13 = train.read @b13 : tensor<4x5xf32>
  %a14 = train.read @a14 : tensor<2x3x5x3xf32>
  %b14 = train.read @b14 : tensor<5x4xf32>
  %a15 = train.read @a15 : tensor<2x3x5x3xf32>
  %b15 = train.read @b15 : tensor<4x5xf32>
  %w = train.read @w : tensor<4x5xf32>
  %u = train.read @u : tensor<2x3x5xf32>
  %y0 = train.matmul %a0, %b0 : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %y1 = train.matmul %a1, %b1 transpose_rhs : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  %y2 = train.matmul %a2, %b2 transpose_lhs : (tensor<5x3xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %y3 = train.matmul %a3, %b3 transpose_lhs transpose_rhs : (tensor<5x3xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  %y4 = train.matmul %a4, %b4 : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  %y5 = train.matmul %a5, %b5 transpose_rhs : (tensor<2x3x5xf32>, tensor<2x4x5xf32>) -> tensor<2x3x4xf32>
  %y6 = train.matmul %a6, %b6 transpose_lhs : (tensor<2x5x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  %y7 = train.matmul %a7, %b7 transpose_lhs transpose_rhs : (tensor<2x5x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x4xf32>
  %y8 = train.matmul %a8, %b8 : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %y9 = train.matmul %a9, %b9 transpose_rhs : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  %y10 = train.matmul %a10, %b10 transpose_lhs : (tensor<2x5x3xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %y11 = train.matmul %a11, %b11 transpose_lhs transpose_rhs : (tensor<2x5x3xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  %y12 = train.matmul %a12, %b12 : (tensor<2x3x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x3x4xf32>
  %y13 = train.matmul %a13, %b13 transpose_rhs : (tensor<2x3x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x3x4xf32>
  %y14 = train.matmul %a14, %b14 transpose_lhs : (tensor<2x3x5x3xf32>, tensor<5x4xf32>) -> tensor<2x3x3x4xf32>
  %y15 = train.matmul %a15, %b15 transpose_lhs transpose_rhs : (tensor<2x3x5x3xf32>, tensor<4x5xf32>) -> tensor<2x3x3x4xf32>
  %yw = train.matmul %x, %w transpose_rhs : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  %yu = train.matmul %u, %z : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %p1 = train.mul %y1, %c1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %p2 = train.mul %y2, %c2 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %p3 = train.mul %y3, %c3 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s3 = train.sum %p3 dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %p4 = train.mul %y4, %c4 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s4 = train.sum %p4 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p5 = train.mul %y5, %c5 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s5 = train.sum %p5 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p6 = train.mul %y6, %c6 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s6 = train.sum %p6 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p7 = train.mul %y7, %c7 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s7 = train.sum %p7 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p8 = train.mul %y8, %c8 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s8 = train.sum %p8 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p9 = train.mul %y9, %c9 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s9 = train.sum %p9 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p10 = train.mul %y10, %c10 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s10 = train.sum %p10 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p11 = train.mul %y11, %c11 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s11 = train.sum %p11 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p12 = train.mul %y12, %c12 : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %s12 = train.sum %p12 dims = [0, 1, 2, 3] : tensor<2x3x3x4xf32> -> tensor<f32>
  %p13 = train.mul %y13, %c13 : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %s13 = train.sum %p13 dims = [0, 1, 2, 3] : tensor<2x3x3x4xf32> -> tensor<f32>
  %p14 = train.mul %y14, %c14 : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %s14 = train.sum %p14 dims = [0, 1, 2, 3] : tensor<2x3x3x4xf32> -> tensor<f32>
  %p15 = train.mul %y15, %c15 : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %s15 = train.sum %p15 dims = [0, 1, 2, 3] : tensor<2x3x3x4xf32> -> tensor<f32>
  %p16 = train.mul %yw, %c16 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s16 = train.sum %p16 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %p17 = train.mul %yu, %c17 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s17 = train.sum %p17 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = train.add %acc2, %s4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = train.add %acc3, %s5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = train.add %acc4, %s6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = train.add %acc5, %s7 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = train.add %acc6, %s8 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc8 = train.add %acc7, %s9 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc9 = train.add %acc8, %s10 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc10 = train.add %acc9, %s11 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc11 = train.add %acc10, %s12 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc12 = train.add %acc11, %s13 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc13 = train.add %acc12, %s14 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc14 = train.add %acc13, %s15 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc15 = train.add %acc14, %s16 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc16 = train.add %acc15, %s17 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc16 : tensor<f32>
}

//--- reshape.mlir
// train.reshape
train.param @w : tensor<3x10xf32> init = normal std = 1.0
train.param @v : tensor<2x3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x5xf32>, %c1: tensor<30xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x10xf32>
  %v = train.read @v : tensor<2x3x5xf32>
  %y = train.reshape %w : tensor<3x10xf32> -> tensor<2x3x5xf32>
  %y2 = train.reshape %v : tensor<2x3x5xf32> -> tensor<30xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<30xf32>, tensor<30xf32>) -> tensor<30xf32>
  %s1 = train.sum %p1 dims = [0] : tensor<30xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- transpose.mlir
// train.transpose (permutations that are not their own inverse)
train.param @w : tensor<2x3x5xf32> init = normal std = 1.0
train.param @v : tensor<2x3x5x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<5x2x3xf32>, %c1: tensor<2x5x7x3xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x3x5xf32>
  %v = train.read @v : tensor<2x3x5x7xf32>
  %y = train.transpose %w [2, 0, 1] : tensor<2x3x5xf32> -> tensor<5x2x3xf32>
  %y2 = train.transpose %v [0, 2, 3, 1] : tensor<2x3x5x7xf32> -> tensor<2x5x7x3xf32>
  %p0 = train.mul %y, %c0 : (tensor<5x2x3xf32>, tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<5x2x3xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<2x5x7x3xf32>, tensor<2x5x7x3xf32>) -> tensor<2x5x7x3xf32>
  %s1 = train.sum %p1 dims = [0, 1, 2, 3] : tensor<2x5x7x3xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- split.mlir
// train.split (one part unused: its cotangent is zero)
train.param @w : tensor<2x9xf32> init = normal std = 1.0
train.param @v : tensor<6x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3xf32>, %c1: tensor<2x3xf32>, %c2: tensor<3x5xf32>, %c3: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x9xf32>
  %v = train.read @v : tensor<6x5xf32>
  %a, %b, %c = train.split %w dim = 1 : tensor<2x9xf32> -> tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  %d, %e = train.split %v dim = 0 : tensor<6x5xf32> -> tensor<3x5xf32>, tensor<3x5xf32>
  %p0 = train.mul %a, %c0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %p1 = train.mul %c, %c1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %p2 = train.mul %d, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p3 = train.mul %e, %c3 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s3 = train.sum %p3 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = train.add %acc1, %s3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc2 : tensor<f32>
}

//--- concat.mlir
// train.concat of equal parts (one part used twice)
train.param @a : tensor<2x3xf32> init = normal std = 1.0
train.param @b : tensor<2x3xf32> init = normal std = 1.0
train.param @c : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x9xf32>, %c1: tensor<6x5xf32>) -> tensor<f32> attributes {train.forward} {
  %a = train.read @a : tensor<2x3xf32>
  %b = train.read @b : tensor<2x3xf32>
  %c = train.read @c : tensor<3x5xf32>
  %y = train.concat %a, %b, %a dim = 1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x9xf32>
  %y2 = train.concat %c, %c dim = 0 : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<6x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x9xf32>, tensor<2x9xf32>) -> tensor<2x9xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<2x9xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<6x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- broadcast.mlir
// train.broadcast: new leading dims, size-1 dims, a scalar
train.param @w : tensor<3x1xf32> init = normal std = 1.0
train.param @v : tensor<5xf32> init = normal std = 1.0
train.param @s : tensor<f32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3x5xf32>, %c1: tensor<3x5xf32>, %c2: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x1xf32>
  %v = train.read @v : tensor<5xf32>
  %s = train.read @s : tensor<f32>
  %y = train.broadcast %w : tensor<3x1xf32> -> tensor<2x3x5xf32>
  %y2 = train.broadcast %v : tensor<5xf32> -> tensor<3x5xf32>
  %y3 = train.broadcast %s : tensor<f32> -> tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p2 = train.mul %y3, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc1 : tensor<f32>
}

//--- sum.mlir
// train.sum over some and over all dimensions
train.param @w : tensor<3x4x5xf32> init = normal std = 1.0
train.param @v : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<4xf32>, %c1: tensor<f32>, %c2: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x4x5xf32>
  %v = train.read @v : tensor<3x5xf32>
  %y = train.sum %w dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %y2 = train.sum %v dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %y3 = train.sum %w dims = [1] : tensor<3x4x5xf32> -> tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s0 = train.sum %p0 dims = [0] : tensor<4xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p2 = train.mul %y3, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc1 : tensor<f32>
}

//--- mean.mlir
// train.mean over some and over all dimensions
train.param @w : tensor<3x4x5xf32> init = normal std = 1.0
train.param @v : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<4xf32>, %c1: tensor<f32>, %c2: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x4x5xf32>
  %v = train.read @v : tensor<3x5xf32>
  %y = train.mean %w dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %y2 = train.mean %v dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %y3 = train.mean %w dims = [1] : tensor<3x4x5xf32> -> tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s0 = train.sum %p0 dims = [0] : tensor<4xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p2 = train.mul %y3, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = train.sum %p2 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = train.add %acc0, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc1 : tensor<f32>
}

//--- cast.mlir
// train.cast f32 -> bf16 -> f32 around a bf16 op, and a bf16 param (values are
// not rounded in the fp64 gradient check)
train.param @w : tensor<3x5xf32> init = normal std = 1.0
train.param @h : tensor<3x5xbf16> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>, %c1: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %h = train.read @h : tensor<3x5xbf16>
  %wb = train.cast %w : tensor<3x5xf32> to tensor<3x5xbf16>
  %gb = train.gelu %wb tanh : tensor<3x5xbf16>
  %y = train.cast %gb : tensor<3x5xbf16> to tensor<3x5xf32>
  %y2 = train.cast %h : tensor<3x5xbf16> to tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %p1 = train.mul %y2, %c1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s1 = train.sum %p1 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- embedding.mlir
// train.embedding (ids repeat, some rows unused)
train.param @e : tensor<7x5xf32> init = normal std = 1.0
func.func @forward(%ids: tensor<3x4xi32>, %c0: tensor<3x4x5xf32>) -> tensor<f32> attributes {train.forward} {
  %e = train.read @e : tensor<7x5xf32>
  %y = train.embedding %e[%ids] : (tensor<7x5xf32>, tensor<3x4xi32>) -> tensor<3x4x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<3x4x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- cross-entropy.mlir
// train.cross_entropy of param logits (its loss is the whole loss)
train.param @z : tensor<2x3x7xf32> init = normal std = 1.0
func.func @forward(%t: tensor<2x3xi32>) -> tensor<f32> attributes {train.forward} {
  %z = train.read @z : tensor<2x3x7xf32>
  %y = train.cross_entropy %z, %t : (tensor<2x3x7xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %y : tensor<f32>
}

//--- cross-entropy-ignore-smoothing.mlir
// train.cross_entropy with ignore_index and label_smoothing, targets in
// [0, 3) (--int-range) so that index 1 is hit: the ignored positions get no
// gradient and the mean is over the others.
train.param @z : tensor<3x4x7xf32> init = normal std = 1.0
func.func @forward(%t: tensor<3x4xi32>) -> tensor<f32> attributes {train.forward} {
  %z = train.read @z : tensor<3x4x7xf32>
  %y = train.cross_entropy %z, %t {ignore_index = 1 : i64, label_smoothing = 0.2 : f64} : (tensor<3x4x7xf32>, tensor<3x4xi32>) -> tensor<f32>
  return %y : tensor<f32>
}

//--- cross-entropy-count.mlir
// ... and with a given count (a data-parallel part's share), which is not
// differentiated (train-zero computes it from the targets).
train.param @z : tensor<3x4x7xf32> init = normal std = 1.0
func.func @forward(%t: tensor<3x4xi32>) -> tensor<f32> attributes {train.forward} {
  %z = train.read @z : tensor<3x4x7xf32>
  %n = train.fill 5.0 : tensor<f32>
  %y = train.cross_entropy %z, %t count %n {ignore_index = 2 : i64, label_smoothing = 0.3 : f64} : (tensor<3x4x7xf32>, tensor<3x4xi32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
