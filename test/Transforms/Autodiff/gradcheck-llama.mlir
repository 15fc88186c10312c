// The derivative rules of the Llama ops against central differences, as
// gradcheck-ops.mlir does for GPT-2's: each op's output y enters the loss
// as sum(y * c) with a random c, on odd shapes, differentiated by
// --train-autodiff and checked element by element by zeroc-run --gradcheck
// in fp64. Dropout is checked with its mask fixed: the step is an argument,
// the same for every evaluation. The last case is a whole Llama block.
//
// RUN: rm -rf %t && split-file %s %t

// RUN: zeroc-opt %t/rmsnorm.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=RMSNORM
// RMSNORM: {"name": "x", "checked": 21, {{.*}} "ok": true}
// RMSNORM: {"name": "w", "checked": 7, {{.*}} "ok": true}
// RMSNORM: "ok": true}}
//
// RUN: zeroc-opt %t/silu.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SILU
// SILU: {"name": "x", "checked": 15, {{.*}} "ok": true}
// SILU: {"name": "b", "checked": 15, {{.*}} "ok": true}
// SILU: "ok": true}}
//
// RUN: zeroc-opt %t/rope.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=ROPE
// ROPE: {"name": "x", "checked": 90, {{.*}} "ok": true}
// ROPE: {"name": "y", "checked": 90, {{.*}} "ok": true}
// ROPE: "ok": true}}
//
// RUN: zeroc-opt %t/slice.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=SLICE
// SLICE: {"name": "pos", "checked": 105, {{.*}} "ok": true}
// SLICE: "ok": true}}
//
// RUN: zeroc-opt %t/concat.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=CONCAT
// CONCAT: {"name": "a", "checked": 6, {{.*}} "ok": true}
// CONCAT: {"name": "b", "checked": 15, {{.*}} "ok": true}
// CONCAT: "ok": true}}
//
// RUN: zeroc-opt %t/gqa.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=GQA
// GQA: {"name": "q", "checked": 90, {{.*}} "ok": true}
// GQA: {"name": "k", "checked": 30, {{.*}} "ok": true}
// GQA: {"name": "v", "checked": 30, {{.*}} "ok": true}
// GQA: "ok": true}}
//
// RUN: zeroc-opt %t/dropout.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 | FileCheck %s --check-prefix=DROPOUT
// DROPOUT: {"name": "x", "checked": 35, {{.*}} "ok": true}
// DROPOUT: "ok": true}}
//
// RUN: zeroc-opt %t/block.mlir --train-autodiff | zeroc-run - --gradcheck --seed 3 --samples 6 | FileCheck %s --check-prefix=BLOCK
// BLOCK: {"name": "embed", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "posemb", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "norm1", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "wq", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "wk", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "wv", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "wo", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "norm2", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "gate", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "up", "checked": 6, {{.*}} "ok": true}
// BLOCK: {"name": "down", "checked": 6, {{.*}} "ok": true}
// BLOCK: "ok": true}}
//
// The rules themselves: rope's is the inverse rotation, slice's a scatter
// into zeros, dropout's the same dropout (same step and seed) of the
// cotangent.
// RUN: zeroc-opt %t/block.mlir --train-autodiff | FileCheck %s --check-prefix=RULES
// RULES-LABEL: func.func @loss_and_grads
// RULES:       train.dropout %{{.+}}, %arg1 p = 3.000000e-01 seed = 5 : tensor<2x5x12xf32>
// RULES:       train.dropout %{{.+}}, %arg1 p = 3.000000e-01 seed = 5 : tensor<2x5x12xf32>
// RULES:       train.silu_grad
// RULES:       train.attention_grad {{.+}} -> (tensor<2x4x5x6xf32>, tensor<2x2x5x6xf32>, tensor<2x2x5x6xf32>)
// RULES:       train.rope %{{.+}} theta = 1.000000e+04 seq_dim = 2 rotate_half inverse : tensor<2x2x5x6xf32>
// RULES:       train.rope %{{.+}} theta = 1.000000e+04 seq_dim = 2 rotate_half inverse : tensor<2x4x5x6xf32>
// RULES:       train.rmsnorm_grad
// RULES:       train.slice_grad %{{.+}} offsets = [0, 0] strides = [1, 1] : tensor<5x12xf32> -> tensor<8x12xf32>

//--- rmsnorm.mlir
train.param @x : tensor<3x7xf32> init = normal std = 1.0
train.param @w : tensor<7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<3x7xf32>
  %w = train.read @w : tensor<7xf32>
  %y = train.rmsnorm %x, %w eps = 1.000000e-05 : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  %p = train.mul %y, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %s = train.sum %p dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %s : tensor<f32>
}

//--- silu.mlir
// SwiGLU: silu(x) * b.
train.param @x : tensor<3x5xf32> init = normal std = 1.0
train.param @b : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<3x5xf32>
  %b = train.read @b : tensor<3x5xf32>
  %s = train.silu %x : tensor<3x5xf32>
  %y = train.mul %s, %b : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %p = train.mul %y, %c0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %l = train.sum %p dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}

//--- rope.mlir
// Both styles, the sequence in dimension 1 and in dimension 2.
train.param @x : tensor<3x5x6xf32> init = normal std = 1.0
train.param @y : tensor<5x3x6xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x5x6xf32>, %c1: tensor<5x3x6xf32>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<3x5x6xf32>
  %y = train.read @y : tensor<5x3x6xf32>
  %a = train.rope %x theta = 1.000000e+04 seq_dim = 1 interleaved : tensor<3x5x6xf32>
  %b = train.rope %y theta = 5.000000e+02 seq_dim = 0 rotate_half : tensor<5x3x6xf32>
  %pa = train.mul %a, %c0 : (tensor<3x5x6xf32>, tensor<3x5x6xf32>) -> tensor<3x5x6xf32>
  %pb = train.mul %b, %c1 : (tensor<5x3x6xf32>, tensor<5x3x6xf32>) -> tensor<5x3x6xf32>
  %sa = train.sum %pa dims = [0, 1, 2] : tensor<3x5x6xf32> -> tensor<f32>
  %sb = train.sum %pb dims = [0, 1, 2] : tensor<5x3x6xf32> -> tensor<f32>
  %l = train.add %sa, %sb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

//--- slice.mlir
// A parameter sliced twice (minGPT's pos_emb[:, :t, :], and a strided
// slice): its gradient is the sum of two scatters into zeros.
train.param @pos : tensor<1x15x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<1x5x7xf32>, %c1: tensor<1x4x3xf32>) -> tensor<f32> attributes {train.forward} {
  %pos = train.read @pos : tensor<1x15x7xf32>
  %a = train.slice %pos offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x15x7xf32> -> tensor<1x5x7xf32>
  %b = train.slice %pos offsets = [0, 2, 1] strides = [1, 3, 2] : tensor<1x15x7xf32> -> tensor<1x4x3xf32>
  %pa = train.mul %a, %c0 : (tensor<1x5x7xf32>, tensor<1x5x7xf32>) -> tensor<1x5x7xf32>
  %pb = train.mul %b, %c1 : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %sa = train.sum %pa dims = [0, 1, 2] : tensor<1x5x7xf32> -> tensor<f32>
  %sb = train.sum %pb dims = [0, 1, 2] : tensor<1x4x3xf32> -> tensor<f32>
  %l = train.add %sa, %sb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

//--- concat.mlir
// Inputs of different sizes (rotate-half's cat of the two halves, stack).
train.param @a : tensor<3x2xf32> init = normal std = 1.0
train.param @b : tensor<3x5xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<3x7xf32>) -> tensor<f32> attributes {train.forward} {
  %a = train.read @a : tensor<3x2xf32>
  %b = train.read @b : tensor<3x5xf32>
  %c = train.concat %a, %b dim = 1 : tensor<3x2xf32>, tensor<3x5xf32> -> tensor<3x7xf32>
  %p = train.mul %c, %c0 : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
  %l = train.sum %p dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

//--- gqa.mlir
// Grouped-query attention: 6 query heads on 2 key/value heads.
train.param @q : tensor<1x6x5x3xf32> init = normal std = 1.0
train.param @k : tensor<1x2x5x3xf32> init = normal std = 1.0
train.param @v : tensor<1x2x5x3xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<1x6x5x3xf32>) -> tensor<f32> attributes {train.forward} {
  %q = train.read @q : tensor<1x6x5x3xf32>
  %k = train.read @k : tensor<1x2x5x3xf32>
  %v = train.read @v : tensor<1x2x5x3xf32>
  %y = train.attention %q, %k, %v causal scale = 5.773500e-01 : (tensor<1x6x5x3xf32>, tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>) -> tensor<1x6x5x3xf32>
  %p = train.mul %y, %c0 : (tensor<1x6x5x3xf32>, tensor<1x6x5x3xf32>) -> tensor<1x6x5x3xf32>
  %l = train.sum %p dims = [0, 1, 2, 3] : tensor<1x6x5x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

//--- dropout.mlir
// p = 0.4 at step 3 (the argument), with the mask fixed.
train.param @x : tensor<5x7xf32> init = normal std = 1.0
func.func @forward(%c0: tensor<5x7xf32>, %step: tensor<i64>) -> tensor<f32> attributes {train.forward} {
  %x = train.read @x : tensor<5x7xf32>
  %y = train.dropout %x, %step p = 4.000000e-01 seed = 9 : tensor<5x7xf32>
  %p = train.mul %y, %c0 : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %l = train.sum %p dims = [0, 1] : tensor<5x7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

//--- block.mlir
// One Llama block with a learned position table sliced to the sequence:
// RMSNorm, q/k/v projections with 4 query and 2 key/value heads,
// rotate-half rotary embeddings, causal grouped-query attention, a SwiGLU
// MLP with dropout, the tied embedding as output layer.
train.param @embed : tensor<11x12xf32> init = normal std = 0.5
train.param @posemb : tensor<8x12xf32> init = normal std = 0.5
train.param @norm1 : tensor<12xf32> init = normal std = 1.0
train.param @wq : tensor<24x12xf32> init = normal std = 0.3
train.param @wk : tensor<12x12xf32> init = normal std = 0.3
train.param @wv : tensor<12x12xf32> init = normal std = 0.3
train.param @wo : tensor<12x24xf32> init = normal std = 0.3
train.param @norm2 : tensor<12xf32> init = normal std = 1.0
train.param @gate : tensor<9x12xf32> init = normal std = 0.3
train.param @up : tensor<9x12xf32> init = normal std = 0.3
train.param @down : tensor<12x9xf32> init = normal std = 0.3
func.func @forward(%tokens: tensor<2x5xi32>, %step: tensor<i64>) -> tensor<f32> attributes {train.forward} {
  %embed = train.read @embed : tensor<11x12xf32>
  %posemb = train.read @posemb : tensor<8x12xf32>
  %tok = train.embedding %embed[%tokens] : (tensor<11x12xf32>, tensor<2x5xi32>) -> tensor<2x5x12xf32>
  %pos = train.slice %posemb offsets = [0, 0] strides = [1, 1] : tensor<8x12xf32> -> tensor<5x12xf32>
  %x = train.add %tok, %pos : (tensor<2x5x12xf32>, tensor<5x12xf32>) -> tensor<2x5x12xf32>
  %n1 = train.read @norm1 : tensor<12xf32>
  %h = train.rmsnorm %x, %n1 eps = 1.000000e-05 : (tensor<2x5x12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %wq = train.read @wq : tensor<24x12xf32>
  %wk = train.read @wk : tensor<12x12xf32>
  %wv = train.read @wv : tensor<12x12xf32>
  %q0 = train.matmul %h, %wq transpose_rhs : (tensor<2x5x12xf32>, tensor<24x12xf32>) -> tensor<2x5x24xf32>
  %k0 = train.matmul %h, %wk transpose_rhs : (tensor<2x5x12xf32>, tensor<12x12xf32>) -> tensor<2x5x12xf32>
  %v0 = train.matmul %h, %wv transpose_rhs : (tensor<2x5x12xf32>, tensor<12x12xf32>) -> tensor<2x5x12xf32>
  %q1 = train.reshape %q0 : tensor<2x5x24xf32> -> tensor<2x5x4x6xf32>
  %k1 = train.reshape %k0 : tensor<2x5x12xf32> -> tensor<2x5x2x6xf32>
  %v1 = train.reshape %v0 : tensor<2x5x12xf32> -> tensor<2x5x2x6xf32>
  %q2 = train.transpose %q1 [0, 2, 1, 3] : tensor<2x5x4x6xf32> -> tensor<2x4x5x6xf32>
  %k2 = train.transpose %k1 [0, 2, 1, 3] : tensor<2x5x2x6xf32> -> tensor<2x2x5x6xf32>
  %v2 = train.transpose %v1 [0, 2, 1, 3] : tensor<2x5x2x6xf32> -> tensor<2x2x5x6xf32>
  %q = train.rope %q2 theta = 1.000000e+04 seq_dim = 2 rotate_half : tensor<2x4x5x6xf32>
  %k = train.rope %k2 theta = 1.000000e+04 seq_dim = 2 rotate_half : tensor<2x2x5x6xf32>
  %a = train.attention %q, %k, %v2 causal scale = 4.082483e-01 : (tensor<2x4x5x6xf32>, tensor<2x2x5x6xf32>, tensor<2x2x5x6xf32>) -> tensor<2x4x5x6xf32>
  %a1 = train.transpose %a [0, 2, 1, 3] : tensor<2x4x5x6xf32> -> tensor<2x5x4x6xf32>
  %a2 = train.reshape %a1 : tensor<2x5x4x6xf32> -> tensor<2x5x24xf32>
  %wo = train.read @wo : tensor<12x24xf32>
  %o = train.matmul %a2, %wo transpose_rhs : (tensor<2x5x24xf32>, tensor<12x24xf32>) -> tensor<2x5x12xf32>
  %x1 = train.add %x, %o : (tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
  %n2 = train.read @norm2 : tensor<12xf32>
  %h2 = train.rmsnorm %x1, %n2 eps = 1.000000e-05 : (tensor<2x5x12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %wg = train.read @gate : tensor<9x12xf32>
  %wu = train.read @up : tensor<9x12xf32>
  %wd = train.read @down : tensor<12x9xf32>
  %g = train.matmul %h2, %wg transpose_rhs : (tensor<2x5x12xf32>, tensor<9x12xf32>) -> tensor<2x5x9xf32>
  %u = train.matmul %h2, %wu transpose_rhs : (tensor<2x5x12xf32>, tensor<9x12xf32>) -> tensor<2x5x9xf32>
  %sg = train.silu %g : tensor<2x5x9xf32>
  %m = train.mul %sg, %u : (tensor<2x5x9xf32>, tensor<2x5x9xf32>) -> tensor<2x5x9xf32>
  %d = train.matmul %m, %wd transpose_rhs : (tensor<2x5x9xf32>, tensor<12x9xf32>) -> tensor<2x5x12xf32>
  %dd = train.dropout %d, %step p = 3.000000e-01 seed = 5 : tensor<2x5x12xf32>
  %x2 = train.add %x1, %dd : (tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
  %logits = train.matmul %x2, %embed transpose_rhs : (tensor<2x5x12xf32>, tensor<11x12xf32>) -> tensor<2x5x11xf32>
  %loss = train.cross_entropy %logits, %tokens : (tensor<2x5x11xf32>, tensor<2x5xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
