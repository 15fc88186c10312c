// The derivative rules of the generic ops of TrainMathOps.td against
// central differences, as gradcheck-ops.mlir checks the others: each
// function's inputs are train.params (normal, std 1), each output y of the
// op under test enters the loss as sum(y * c) with a random c, and
// `zeroc-run --gradcheck` compares every element in fp64 (atol 1e-7, rtol
// 1e-5). The CHECK lines list every parameter with its element count.
//
// RUN: rm -rf %t && split-file %s %t

// RUN: zeroc-opt %t/exp.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=EXP
// EXP: {"name": "w", "checked": 15, {{.*}} "ok": true}
// EXP: "ok": true}}
//
// RUN: zeroc-opt %t/log.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=LOG
// LOG: {"name": "w", "checked": 15, {{.*}} "ok": true}
// LOG: "ok": true}}
//
// RUN: zeroc-opt %t/tanh.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=TANH
// TANH: {"name": "w", "checked": 21, {{.*}} "ok": true}
// TANH: "ok": true}}
//
// RUN: zeroc-opt %t/neg.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=NEG
// NEG: {"name": "w", "checked": 21, {{.*}} "ok": true}
// NEG: "ok": true}}
//
// RUN: zeroc-opt %t/rsqrt.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=RSQRT
// RSQRT: {"name": "w", "checked": 15, {{.*}} "ok": true}
// RSQRT: "ok": true}}
//
// RUN: zeroc-opt %t/erf.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=ERF
// ERF: {"name": "w", "checked": 21, {{.*}} "ok": true}
// ERF: "ok": true}}
//
// RUN: zeroc-opt %t/pow.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=POW
// POW: {"name": "a", "checked": 15, {{.*}} "ok": true}
// POW: {"name": "b", "checked": 15, {{.*}} "ok": true}
// POW: {"name": "c", "checked": 15, {{.*}} "ok": true}
// POW: {"name": "d", "checked": 15, {{.*}} "ok": true}
// POW: {"name": "e", "checked": 15, {{.*}} "ok": true}
// POW: "ok": true}}
//
// RUN: zeroc-opt %t/compare-select.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SELECT
// SELECT: {"name": "a", "checked": 21, {{.*}} "ok": true}
// SELECT: {"name": "b", "checked": 21, {{.*}} "ok": true}
// SELECT: {"name": "m", "checked": 21, {{.*}} "ok": true}
// SELECT: "ok": true}}
//
// RUN: zeroc-opt %t/triangles.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=TRIANGLES
// TRIANGLES: {"name": "w", "checked": 40, {{.*}} "ok": true}
// TRIANGLES: {"name": "v", "checked": 18, {{.*}} "ok": true}
// TRIANGLES: "ok": true}}
//
// RUN: zeroc-opt %t/constant.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CONSTANT
// CONSTANT: {"name": "w", "checked": 6, {{.*}} "ok": true}
// CONSTANT: "ok": true}}

//--- exp.mlir
// train.exp
train.param @w : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %y = train.exp %w : tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- log.mlir
// train.log (of w * w + 0.5, away from 0)
train.param @w : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %w2 = train.mul %w, %w : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %h = train.fill 5.000000e-01 : tensor<3x5xf32>
  %x = train.add %w2, %h : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y = train.log %x : tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- tanh.mlir
// train.tanh
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.tanh %w : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- erf.mlir
// train.erf
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.erf %w : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- neg.mlir
// train.neg
train.param @w : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x7xf32>
  %y = train.neg %w : tensor<3x7xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- rsqrt.mlir
// train.rsqrt (of w * w + 0.5, away from 0)
train.param @w : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3x5xf32>
  %w2 = train.mul %w, %w : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %h = train.fill 5.000000e-01 : tensor<3x5xf32>
  %x = train.add %w2, %h : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y = train.rsqrt %x : tensor<3x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- pow.mlir
// train.pow by 3 (negative bases too), by 2, by -0.5 and 1.5 (of a * a +
// 0.5, positive), by 1 and by 0 (a zero gradient)
train.param @a : tensor<3x5xf32> init = normal std = 1.0
train.param @b : tensor<3x5xf32> init = normal std = 1.0
train.param @c : tensor<3x5xf32> init = normal std = 1.0
train.param @d : tensor<3x5xf32> init = normal std = 1.0
train.param @e : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>, %c1: tensor<3x5xf32>, %c2: tensor<3x5xf32>, %c3: tensor<3x5xf32>, %c4: tensor<3x5xf32>, %c5: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %a = train.read @a : tensor<3x5xf32>
  %b = train.read @b : tensor<3x5xf32>
  %c = train.read @c : tensor<3x5xf32>
  %d = train.read @d : tensor<3x5xf32>
  %e = train.read @e : tensor<3x5xf32>
  %y0 = train.pow %a by 3.0 : tensor<3x5xf32>
  %y1 = train.pow %b by 2.0 : tensor<3x5xf32>
  %c2sq = train.mul %c, %c : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %h = train.fill 5.000000e-01 : tensor<3x5xf32>
  %cp = train.add %c2sq, %h : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %y2 = train.pow %cp by -0.5 : tensor<3x5xf32>
  %y3 = train.pow %cp by 1.5 : tensor<3x5xf32>
  %y4 = train.pow %d by 1.0 : tensor<3x5xf32>
  %y5 = train.pow %e by 0.0 : tensor<3x5xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p1 = train.mul %y1, %c1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p2 = train.mul %y2, %c2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p3 = train.mul %y3, %c3 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p4 = train.mul %y4, %c4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p5 = train.mul %y5, %c5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %q0 = train.add %p0, %p1 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %q1 = train.add %q0, %p2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %q2 = train.add %q1, %p3 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %q3 = train.add %q2, %p4 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %q4 = train.add %q3, %p5 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = train.sum %q4 dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- compare-select.mlir
// train.select of a mask train.compare computes from the parameters
// themselves (no gradient through the comparison; random normals are never
// within a difference step of each other), each predicate once; and a
// select whose mask is a parameter (m, nonzero: its gradient is 0).
train.param @a : tensor<3x7xf32> init = normal std = 1.0
train.param @b : tensor<3x7xf32> init = normal std = 1.0
train.param @m : tensor<3x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>, %c1: tensor<3x7xf32>, %c2: tensor<3x7xf32>, %c3: tensor<3x7xf32>, %c4: tensor<3x7xf32>, %c5: tensor<3x7xf32>, %c6: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %a = train.read @a : tensor<3x7xf32>
  %b = train.read @b : tensor<3x7xf32>
  %m = train.read @m : tensor<3x7xf32>
  %lt = train.compare %a, %b lt : tensor<3x7xf32>
  %le = train.compare %a, %b le : tensor<3x7xf32>
  %gt = train.compare %b, %m gt : tensor<3x7xf32>
  %ge = train.compare %a, %m ge : tensor<3x7xf32>
  %eq = train.compare %a, %a eq : tensor<3x7xf32>
  %ne = train.compare %a, %b ne : tensor<3x7xf32>
  %y0 = train.select %lt, %a, %b : tensor<3x7xf32>
  %ab = train.mul %a, %b : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %y1 = train.select %gt, %ab, %a : tensor<3x7xf32>
  %y2 = train.select %m, %b, %m : tensor<3x7xf32>
  %k0 = train.mul %le, %c3 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %k1 = train.mul %ge, %c4 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %k2 = train.mul %eq, %c5 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %k3 = train.mul %ne, %c6 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %p0 = train.mul %y0, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %p1 = train.mul %y1, %c1 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %p2 = train.mul %y2, %c2 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q0 = train.add %p0, %p1 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q1 = train.add %q0, %p2 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q2 = train.add %q1, %k0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q3 = train.add %q2, %k1 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q4 = train.add %q3, %k2 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %q5 = train.add %q4, %k3 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s0 = train.sum %q5 dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}

//--- triangles.mlir
// train.tril and train.triu on batched non-square matrices, diagonals
// below, on and above the main one
train.param @w : tensor<2x4x5xf32> init = normal std = 1.0
train.param @v : tensor<3x6xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x4x5xf32>, %c1: tensor<2x4x5xf32>, %c2: tensor<3x6xf32>, %c3: tensor<3x6xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x4x5xf32>
  %v = train.read @v : tensor<3x6xf32>
  %y0 = train.tril %w diagonal = -1 : tensor<2x4x5xf32>
  %y1 = train.triu %w diagonal = 2 : tensor<2x4x5xf32>
  %y2 = train.tril %v diagonal = 1 : tensor<3x6xf32>
  %y3 = train.triu %v diagonal = 0 : tensor<3x6xf32>
  %p0 = train.mul %y0, %c0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %p1 = train.mul %y1, %c1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %p2 = train.mul %y2, %c2 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  %p3 = train.mul %y3, %c3 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  %q0 = train.add %p0, %p1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %q1 = train.add %p2, %p3 : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  %s0 = train.sum %q0 dims = [0, 1, 2] : tensor<2x4x5xf32> -> tensor<f32>
  %s1 = train.sum %q1 dims = [0, 1] : tensor<3x6xf32> -> tensor<f32>
  %acc0 = train.add %s0, %s1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %acc0 : tensor<f32>
}

//--- constant.mlir
// train.constant (no derivative of its own) as a factor of a parameter
train.param @w : tensor<2x3xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<2x3xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<2x3xf32>
  %k = train.constant dense<[[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]]> : tensor<2x3xf32>
  %y = train.mul %w, %k : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %p0 = train.mul %y, %c0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s0 = train.sum %p0 dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}
