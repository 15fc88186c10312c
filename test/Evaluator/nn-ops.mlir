// Neural-network ops and their derivative helpers against an independent
// Python implementation (Inputs/nn_reference.py, standard library only):
// the forward ops by their formulas, the *_grad ops by central differences
// of those formulas. Inputs are generated from the seed and saved with
// --save-inputs for the script to read.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in layernorm softmax gelu attention_causal attention_full cross_entropy matmul embedding; do \
// RUN:   zeroc-run %s --entry $f --fp64 --seed 3 --save-inputs %t/$f.in > %t/$f.json && \
// RUN:   %python %S/Inputs/nn_reference.py $f %t/$f.in %t/$f.json fp64 || exit 1; \
// RUN:   zeroc-run %s --entry $f --seed 5 --save-inputs %t/$f.f32.in > %t/$f.f32.json && \
// RUN:   %python %S/Inputs/nn_reference.py $f %t/$f.f32.in %t/$f.f32.json f32 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=FORWARD
// RUN: for f in cross_entropy_grad softmax_grad layernorm_grad gelu_grad relu_grad attention_grad; do \
// RUN:   zeroc-run %s --entry $f --fp64 --seed 7 --save-inputs %t/$f.in > %t/$f.json && \
// RUN:   %python %S/Inputs/nn_reference.py $f %t/$f.in %t/$f.json fp64 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=GRAD

// FORWARD: layernorm fp64: 15 values ok
// FORWARD: layernorm f32: 15 values ok
// FORWARD: softmax fp64: 24 values ok
// FORWARD: softmax f32: 24 values ok
// FORWARD: gelu fp64: 20 values ok
// FORWARD: gelu f32: 20 values ok
// FORWARD: attention_causal fp64: 48 values ok
// FORWARD: attention_causal f32: 48 values ok
// FORWARD: attention_full fp64: 24 values ok
// FORWARD: attention_full f32: 24 values ok
// FORWARD: cross_entropy fp64: 1 values ok
// FORWARD: cross_entropy f32: 1 values ok
// FORWARD: matmul fp64: 129 values ok
// FORWARD: matmul f32: 129 values ok
// FORWARD: embedding fp64: 42 values ok
// FORWARD: embedding f32: 42 values ok

// GRAD: cross_entropy_grad fp64: 42 values ok
// GRAD: softmax_grad fp64: 24 values ok
// GRAD: layernorm_grad fp64: 25 values ok
// GRAD: gelu_grad fp64: 20 values ok
// GRAD: relu_grad fp64: 10 values ok
// GRAD: attention_grad fp64: 72 values ok

func.func @layernorm(%x: tensor<3x5xf32>, %w: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = train.layernorm %x, %w, %b eps = 1.000000e-05 : (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = train.softmax %x : tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

func.func @gelu(%x: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>) {
  %t = train.gelu %x tanh : tensor<10xf32>
  %e = train.gelu %x erf : tensor<10xf32>
  return %t, %e : tensor<10xf32>, tensor<10xf32>
}

func.func @attention_causal(%q: tensor<2x2x4x3xf32>, %k: tensor<2x2x4x3xf32>, %v: tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32> {
  %y = train.attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>
  return %y : tensor<2x2x4x3xf32>
}

func.func @attention_full(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
  %y = train.attention %q, %k, %v scale = 7.000000e-01 : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// The targets are generated in [0, 7): the vocabulary of the loss.
func.func @cross_entropy(%logits: tensor<2x3x7xf32>, %targets: tensor<2x3xi64>) -> tensor<f32> {
  %l = train.cross_entropy %logits, %targets : (tensor<2x3x7xf32>, tensor<2x3xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// A linear layer (shared rank-2 rhs, transposed), batched products with
// each transpose combination, and a plain rank-2 product.
func.func @matmul(%a: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %at: tensor<2x4x3xf32>, %b: tensor<2x4x5xf32>, %bt: tensor<2x5x4xf32>, %m: tensor<3x2xf32>, %n: tensor<2x3xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x3xf32>) {
  %linear = train.matmul %a, %w transpose_rhs : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %plain = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %tl = train.matmul %at, %b transpose_lhs : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %both = train.matmul %at, %bt transpose_lhs transpose_rhs : (tensor<2x4x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %mn = train.matmul %m, %n : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %linear, %plain, %tl, %both, %mn : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x3xf32>
}

// The ids are generated in [0, 6): the table's rows.
func.func @embedding(%table: tensor<6x3xf32>, %ids: tensor<2x4xi32>, %g: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<6x3xf32>) {
  %x = train.embedding %table[%ids] : (tensor<6x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  %dt = train.embedding_grad %g[%ids] : (tensor<2x4x3xf32>, tensor<2x4xi32>) -> tensor<6x3xf32>
  return %x, %dt : tensor<2x4x3xf32>, tensor<6x3xf32>
}

func.func @cross_entropy_grad(%s: tensor<f32>, %logits: tensor<2x3x7xf32>, %targets: tensor<2x3xi32>) -> tensor<2x3x7xf32> {
  %d = train.cross_entropy_grad %s, %logits, %targets : (tensor<f32>, tensor<2x3x7xf32>, tensor<2x3xi32>) -> tensor<2x3x7xf32>
  return %d : tensor<2x3x7xf32>
}

func.func @softmax_grad(%x: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = train.softmax %x : tensor<2x3x4xf32>
  %d = train.softmax_grad %g, %y : tensor<2x3x4xf32>
  return %d : tensor<2x3x4xf32>
}

func.func @layernorm_grad(%dy: tensor<3x5xf32>, %x: tensor<3x5xf32>, %w: tensor<5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %dx, %dw, %db = train.layernorm_grad %dy, %x, %w eps = 1.000000e-05 : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return %dx, %dw, %db : tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>
}

func.func @gelu_grad(%g: tensor<10xf32>, %x: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>) {
  %t = train.gelu_grad %g, %x tanh : tensor<10xf32>
  %e = train.gelu_grad %g, %x erf : tensor<10xf32>
  return %t, %e : tensor<10xf32>, tensor<10xf32>
}

func.func @relu_grad(%g: tensor<10xf32>, %x: tensor<10xf32>) -> tensor<10xf32> {
  %d = train.relu_grad %g, %x : tensor<10xf32>
  return %d : tensor<10xf32>
}

func.func @attention_grad(%dy: tensor<1x2x4x3xf32>, %q: tensor<1x2x4x3xf32>, %k: tensor<1x2x4x3xf32>, %v: tensor<1x2x4x3xf32>) -> (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) {
  %dq, %dk, %dv = train.attention_grad %dy, %q, %k, %v causal scale = 6.000000e-01 : (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) -> (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>)
  return %dq, %dk, %dv : tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>
}
