// RUN: zeroc-opt %s --split-input-file --train-raise=families=activations | FileCheck %s

// minGPT's NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func.func @new_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.gelu %[[X]] tanh : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @new_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = train.scale %x by 0.5 : tensor<2x8xf32>
  %c3 = train.pow %x by 3.0 : tensor<2x8xf32>
  %a = train.fill 0.044715 : tensor<f32>
  %ac3 = train.mul %c3, %a : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %in = train.add %x, %ac3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = train.fill 0.7978845608028654 : tensor<f32>
  %t = train.mul %k, %in : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %th = train.tanh %t : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %o = train.add %one, %th : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = train.mul %half, %o : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The cube as x * x * x, other groupings.
// CHECK-LABEL: func.func @gelu_products
// CHECK-NEXT: %[[G:.*]] = train.gelu %{{.*}} tanh
// CHECK-NEXT: train.relu %[[G]]
// CHECK-NEXT: return
func.func @gelu_products(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %x2 = train.mul %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %x3 = train.mul %x2, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %ac3 = train.scale %x3 by 0.044715 : tensor<2x8xf32>
  %in = train.add %ac3, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = train.scale %in by 0.79788456 : tensor<2x8xf32>
  %th = train.tanh %t : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %o = train.add %th, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %xo = train.mul %x, %o : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = train.scale %xo by 0.5 : tensor<2x8xf32>
  %z = train.relu %y : tensor<2x8xf32>
  return %z : tensor<2x8xf32>
}

// -----

// SiLU as x * sigmoid(x) and as x / (1 + exp(-x)); SwiGLU's silu(a) * b.
// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<2x8xf32>)
// CHECK-DAG: %[[S1:.*]] = train.silu %[[A]] : tensor<2x8xf32>
// CHECK-DAG: %[[G:.*]] = train.mul %[[S1]], %[[B]]
// CHECK-DAG: %[[S2:.*]] = train.silu %[[B]] : tensor<2x8xf32>
// CHECK: return %[[G]], %[[S2]]
func.func @silu(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %n = train.neg %a : tensor<2x8xf32>
  %e = train.exp %n : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %d = train.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %sig = train.div %one, %d : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = train.mul %a, %sig : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = train.mul %s, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %nb = train.scale %b by -1.0 : tensor<2x8xf32>
  %eb = train.exp %nb : tensor<2x8xf32>
  %db = train.add %eb, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s2 = train.div %b, %db : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g, %s2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Near misses, left generic: GELU with a wrong constant (0.0447), without
// the 0.5, x * sigmoid(y) of another value, exp(x) instead of exp(-x).
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: train.gelu
// CHECK-NOT: train.silu
// CHECK: return
func.func @near_misses(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %c3 = train.pow %x by 3.0 : tensor<2x8xf32>
  %ac3 = train.scale %c3 by 0.0447 : tensor<2x8xf32>
  %in = train.add %x, %ac3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = train.scale %in by 0.7978845608028654 : tensor<2x8xf32>
  %th = train.tanh %t : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %o = train.add %one, %th : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %xo = train.mul %x, %o : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g1 = train.scale %xo by 0.5 : tensor<2x8xf32>
  %c3b = train.pow %x by 3.0 : tensor<2x8xf32>
  %ac3b = train.scale %c3b by 0.044715 : tensor<2x8xf32>
  %inb = train.add %x, %ac3b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %tb = train.scale %inb by 0.7978845608028654 : tensor<2x8xf32>
  %thb = train.tanh %tb : tensor<2x8xf32>
  %ob = train.add %one, %thb : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g2 = train.mul %x, %ob : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %n = train.neg %y : tensor<2x8xf32>
  %e = train.exp %n : tensor<2x8xf32>
  %d = train.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %sig = train.div %one, %d : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s1 = train.mul %x, %sig : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e2 = train.exp %x : tensor<2x8xf32>
  %d2 = train.add %one, %e2 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %sig2 = train.div %one, %d2 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s2 = train.mul %x, %sig2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g1, %g2, %s1, %s2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// nn.GELU()'s erf form written out: 0.5 * x * (1 + erf(x / sqrt(2))), the
// division as ATen imports it (a scale by 1 / sqrt(2)).
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.gelu %[[X]] erf : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = train.scale %x by 0.5 : tensor<2x8xf32>
  %t = train.scale %x by 0.70710678118654746 : tensor<2x8xf32>
  %e = train.erf %t : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %o = train.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = train.mul %half, %o : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The same with x / sqrt(2) a train.div by a fill, the products grouped
// as x * (0.5 * (1 + erf(...))).
// CHECK-LABEL: func.func @gelu_erf_division
// CHECK-NEXT: %[[G:.*]] = train.gelu %{{.*}} erf : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_division(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r2 = train.fill 1.4142135623730951 : tensor<f32>
  %t = train.div %x, %r2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = train.erf %t : tensor<2x8xf32>
  %one = train.fill 1.0 : tensor<f32>
  %o = train.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = train.scale %o by 0.5 : tensor<2x8xf32>
  %y = train.mul %x, %h : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Near-misses: x / 1.5 inside the erf; x / sqrt(2) on the wrong side
// (sqrt(2) / x); 0.4 instead of 0.5; the erf of another value.
// CHECK-LABEL: func.func @gelu_erf_near_misses
// CHECK-NOT: train.gelu
// CHECK: return
func.func @gelu_erf_near_misses(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %one = train.fill 1.0 : tensor<f32>
  %c = train.fill 1.5 : tensor<f32>
  %r2 = train.fill 1.4142135623730951 : tensor<f32>
  %h0 = train.scale %x by 0.5 : tensor<2x8xf32>
  %t0 = train.div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e0 = train.erf %t0 : tensor<2x8xf32>
  %o0 = train.add %e0, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y0 = train.mul %h0, %o0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h1 = train.scale %x by 0.5 : tensor<2x8xf32>
  %t1 = train.div %r2, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e1 = train.erf %t1 : tensor<2x8xf32>
  %o1 = train.add %e1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y1 = train.mul %h1, %o1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h2 = train.scale %x by 0.4 : tensor<2x8xf32>
  %t2 = train.scale %x by 0.70710678118654746 : tensor<2x8xf32>
  %e2 = train.erf %t2 : tensor<2x8xf32>
  %o2 = train.add %e2, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y2 = train.mul %h2, %o2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h3 = train.scale %x by 0.5 : tensor<2x8xf32>
  %t3 = train.scale %z by 0.70710678118654746 : tensor<2x8xf32>
  %e3 = train.erf %t3 : tensor<2x8xf32>
  %o3 = train.add %e3, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y3 = train.mul %h3, %o3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y0, %y1, %y2, %y3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
