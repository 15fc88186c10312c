// --gradcheck compares a hand-written gradient function (using every
// *_grad helper op) against central differences of @forward, in fp64.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: zeroc-run %t/lm.mlir --gradcheck --seed 2 | FileCheck %s --check-prefix=LM
// LM: "loss": {"forward": [[LOSS:[-0-9.e]+]], "gradients": [[LOSS]], "ok": true},
// LM: {"name": "wte", "checked": 20, {{.*}} "ok": true},
// LM-NEXT: {"name": "g", "checked": 4, {{.*}} "ok": true},
// LM-NEXT: {"name": "b", "checked": 4, {{.*}} "ok": true}],
// LM-NEXT: "ok": true}}
//
// RUN: zeroc-run %t/lm.mlir --gradcheck --samples 3 | FileCheck %s --check-prefix=SAMPLES
// SAMPLES: {"name": "wte", "checked": 3,
// SAMPLES: {"name": "g", "checked": 3,
//
// RUN: zeroc-run %t/attention.mlir --gradcheck --seed 3 | FileCheck %s --check-prefix=ATTN
// ATTN: {"name": "q", "checked": 24, {{.*}} "ok": true},
// ATTN-NEXT: {"name": "k", "checked": 24, {{.*}} "ok": true},
// ATTN-NEXT: {"name": "v", "checked": 24, {{.*}} "ok": true}],
// ATTN-NEXT: "ok": true}}
//
// A wrong gradient fails, naming the worst offender.
// RUN: not zeroc-run %t/wrong.mlir --gradcheck > %t/wrong.json 2> %t/wrong.err
// RUN: FileCheck %s --check-prefix=WRONG < %t/wrong.json
// RUN: FileCheck %s --check-prefix=WRONG-ERR < %t/wrong.err
// WRONG: {"name": "w", "checked": 3, {{.*}} "ok": true},
// WRONG-NEXT: {"name": "s", "checked": 3, {{.*}} "ok": false}],
// WRONG-NEXT: "ok": false}}
// WRONG-ERR: zeroc-run: gradcheck failed: worst offender @s element {{[0-2]}}: analytic {{.*}}, finite difference {{.*}}

//--- lm.mlir
// Token embedding tied to the output layer, a LayerNorm and an erf GELU.
train.param @wte : tensor<5x4xf32> init = normal std = 5.000000e-01
train.param @g : tensor<4xf32> init = normal std = 1.0
train.param @b : tensor<4xf32> init = normal std = 1.0

func.func @forward(%tokens: tensor<2x3xi32>, %targets: tensor<2x3xi32>) -> tensor<f32> attributes {train.forward} {
  %wte = train.read @wte : tensor<5x4xf32>
  %g = train.read @g : tensor<4xf32>
  %b = train.read @b : tensor<4xf32>
  %x = train.embedding %wte[%tokens] : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %h = train.layernorm %x, %g, %b eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %a = train.gelu %h erf : tensor<2x3x4xf32>
  %logits = train.matmul %a, %wte transpose_rhs : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %loss = train.cross_entropy %logits, %targets : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @gradients(%tokens: tensor<2x3xi32>, %targets: tensor<2x3xi32>) -> (tensor<f32>, tensor<5x4xf32>, tensor<4xf32>, tensor<4xf32>) attributes {train.gradients = [@wte, @g, @b]} {
  %wte = train.read @wte : tensor<5x4xf32>
  %g = train.read @g : tensor<4xf32>
  %b = train.read @b : tensor<4xf32>
  %x = train.embedding %wte[%tokens] : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %h = train.layernorm %x, %g, %b eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %a = train.gelu %h erf : tensor<2x3x4xf32>
  %logits = train.matmul %a, %wte transpose_rhs : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %loss = train.cross_entropy %logits, %targets : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  %one = train.fill 1.0 : tensor<f32>
  %dlogits = train.cross_entropy_grad %one, %logits, %targets : (tensor<f32>, tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<2x3x5xf32>
  %da = train.matmul %dlogits, %wte : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %dhead3 = train.matmul %dlogits, %a transpose_lhs : (tensor<2x3x5xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %dhead = train.sum %dhead3 dims = [0] : tensor<2x5x4xf32> -> tensor<5x4xf32>
  %dh = train.gelu_grad %da, %h erf : tensor<2x3x4xf32>
  %dx, %dg, %db = train.layernorm_grad %dh, %x, %g eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %demb = train.embedding_grad %dx[%tokens] : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<5x4xf32>
  %dwte = train.add %dhead, %demb : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  return %loss, %dwte, %dg, %db : tensor<f32>, tensor<5x4xf32>, tensor<4xf32>, tensor<4xf32>
}

//--- attention.mlir
// Causal attention, a tanh GELU, ReLU and softmax under the loss.
train.param @q : tensor<1x2x3x4xf32> init = normal std = 1.0
train.param @k : tensor<1x2x3x4xf32> init = normal std = 1.0
train.param @v : tensor<1x2x3x4xf32> init = normal std = 1.0

func.func @forward(%targets: tensor<6xi32>) -> tensor<f32> attributes {train.forward} {
  %q = train.read @q : tensor<1x2x3x4xf32>
  %k = train.read @k : tensor<1x2x3x4xf32>
  %v = train.read @v : tensor<1x2x3x4xf32>
  %y = train.attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %t = train.gelu %y tanh : tensor<1x2x3x4xf32>
  %r = train.relu %t : tensor<1x2x3x4xf32>
  %p = train.softmax %r : tensor<1x2x3x4xf32>
  %l = train.reshape %p : tensor<1x2x3x4xf32> -> tensor<6x4xf32>
  %loss = train.cross_entropy %l, %targets : (tensor<6x4xf32>, tensor<6xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @gradients(%targets: tensor<6xi32>) -> (tensor<f32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) attributes {train.gradients = [@q, @k, @v]} {
  %q = train.read @q : tensor<1x2x3x4xf32>
  %k = train.read @k : tensor<1x2x3x4xf32>
  %v = train.read @v : tensor<1x2x3x4xf32>
  %y = train.attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %t = train.gelu %y tanh : tensor<1x2x3x4xf32>
  %r = train.relu %t : tensor<1x2x3x4xf32>
  %p = train.softmax %r : tensor<1x2x3x4xf32>
  %l = train.reshape %p : tensor<1x2x3x4xf32> -> tensor<6x4xf32>
  %loss = train.cross_entropy %l, %targets : (tensor<6x4xf32>, tensor<6xi32>) -> tensor<f32>
  %one = train.fill 1.0 : tensor<f32>
  %dl = train.cross_entropy_grad %one, %l, %targets : (tensor<f32>, tensor<6x4xf32>, tensor<6xi32>) -> tensor<6x4xf32>
  %dp = train.reshape %dl : tensor<6x4xf32> -> tensor<1x2x3x4xf32>
  %dr = train.softmax_grad %dp, %p : tensor<1x2x3x4xf32>
  %dt = train.relu_grad %dr, %t : tensor<1x2x3x4xf32>
  %dy = train.gelu_grad %dt, %y tanh : tensor<1x2x3x4xf32>
  %dq, %dk, %dv = train.attention_grad %dy, %q, %k, %v causal scale = 5.000000e-01 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %loss, %dq, %dk, %dv : tensor<f32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

//--- wrong.mlir
// loss = sum(w * s * x): d/dw = s * x is right, d/ds is off by a factor 2.
train.param @w : tensor<3xf32> init = normal std = 1.0
train.param @s : tensor<3xf32> init = normal std = 1.0

func.func @forward(%x: tensor<3xf32>) -> tensor<f32> attributes {train.forward} {
  %w = train.read @w : tensor<3xf32>
  %s = train.read @s : tensor<3xf32>
  %ws = train.mul %w, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = train.mul %ws, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %loss = train.sum %y dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @gradients(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) attributes {train.gradients = [@w, @s]} {
  %w = train.read @w : tensor<3xf32>
  %s = train.read @s : tensor<3xf32>
  %ws = train.mul %w, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = train.mul %ws, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %loss = train.sum %y dims = [0] : tensor<3xf32> -> tensor<f32>
  %dw = train.mul %s, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %wx = train.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %ds = train.scale %wx by 2.0 : tensor<3xf32>
  return %loss, %dw, %ds : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
