// The ops of Llama-class models and grouped-query attention against an
// independent Python implementation (Inputs/llama_reference.py, standard
// library only): the forward ops by their formulas (dropout by the Philox
// formula of Random.h), the derivative helpers by central differences of
// those formulas, on odd shapes.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in rmsnorm silu rope rope_scaled slice gqa dropout; do \
// RUN:   zeroc-run %s --entry $f --fp64 --seed 3 --save-inputs %t/$f.in > %t/$f.json && \
// RUN:   %python %S/Inputs/llama_reference.py $f %t/$f.in %t/$f.json fp64 || exit 1; \
// RUN:   zeroc-run %s --entry $f --seed 5 --save-inputs %t/$f.f32.in > %t/$f.f32.json && \
// RUN:   %python %S/Inputs/llama_reference.py $f %t/$f.f32.in %t/$f.f32.json f32 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=FORWARD
// RUN: for f in rmsnorm_grad silu_grad rope_grad rope_scaled_grad slice_grad gqa_grad; do \
// RUN:   zeroc-run %s --entry $f --fp64 --seed 7 --save-inputs %t/$f.in > %t/$f.json && \
// RUN:   %python %S/Inputs/llama_reference.py $f %t/$f.in %t/$f.json fp64 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=GRAD

// FORWARD: rmsnorm fp64: 21 values ok
// FORWARD: rmsnorm f32: 21 values ok
// FORWARD: silu fp64: 18 values ok
// FORWARD: silu f32: 18 values ok
// FORWARD: rope fp64: 540 values ok
// FORWARD: rope f32: 540 values ok
// FORWARD: rope_scaled fp64: 720 values ok
// FORWARD: rope_scaled f32: 720 values ok
// FORWARD: slice fp64: 42 values ok
// FORWARD: slice f32: 42 values ok
// FORWARD: gqa fp64: 240 values ok
// FORWARD: gqa f32: 240 values ok
// FORWARD: dropout fp64: 96 values ok
// FORWARD: dropout f32: 96 values ok

// GRAD: rmsnorm_grad fp64: 28 values ok
// GRAD: silu_grad fp64: 18 values ok
// GRAD: rope_grad fp64: 360 values ok
// GRAD: rope_scaled_grad fp64: 240 values ok
// GRAD: slice_grad fp64: 84 values ok
// GRAD: gqa_grad fp64: 120 values ok

func.func @rmsnorm(%x: tensor<3x7xf32>, %w: tensor<7xf32>) -> tensor<3x7xf32> {
  %y = train.rmsnorm %x, %w eps = 1.000000e-05 : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  return %y : tensor<3x7xf32>
}

func.func @silu(%x: tensor<2x9xf32>) -> tensor<2x9xf32> {
  %y = train.silu %x : tensor<2x9xf32>
  return %y : tensor<2x9xf32>
}

func.func @rope(%x: tensor<2x5x3x6xf32>) -> (tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>) {
  %a = train.rope %x theta = 1.000000e+04 seq_dim = 1 interleaved : tensor<2x5x3x6xf32>
  %b = train.rope %x theta = 5.000000e+05 seq_dim = 2 rotate_half : tensor<2x5x3x6xf32>
  %c = train.rope %x theta = 1.000000e+04 seq_dim = 1 interleaved inverse : tensor<2x5x3x6xf32>
  return %a, %b, %c : tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>
}

// Llama 3's rope scaling (llama3: factor, low and high frequency factors,
// original context 8, positions to 11) and linear scaling; the reference is
// transformers' formula transcribed (Inputs/llama_reference.py).
func.func @rope_scaled(%x: tensor<2x12x10xf32>) -> (tensor<2x12x10xf32>, tensor<2x12x10xf32>, tensor<2x12x10xf32>) {
  %a = train.rope %x theta = 1.000000e+02 seq_dim = 1 rotate_half scaling = [4.0, 0.5, 1.2, 8.0] : tensor<2x12x10xf32>
  %b = train.rope %x theta = 1.000000e+02 seq_dim = 1 rotate_half scaling = [2.0] : tensor<2x12x10xf32>
  %c = train.rope %x theta = 1.000000e+02 seq_dim = 1 interleaved inverse scaling = [4.0, 0.5, 1.2, 8.0] : tensor<2x12x10xf32>
  return %a, %b, %c : tensor<2x12x10xf32>, tensor<2x12x10xf32>, tensor<2x12x10xf32>
}

func.func @slice(%x: tensor<3x4x7xf32>) -> (tensor<2x3x6xf32>, tensor<1x2x3xf32>) {
  %a = train.slice %x offsets = [0, 1, 0] strides = [1, 1, 1] : tensor<3x4x7xf32> -> tensor<2x3x6xf32>
  %b = train.slice %x offsets = [1, 0, 1] strides = [1, 2, 2] : tensor<3x4x7xf32> -> tensor<1x2x3xf32>
  return %a, %b : tensor<2x3x6xf32>, tensor<1x2x3xf32>
}

func.func @gqa(%q: tensor<2x4x3x5xf32>, %k: tensor<2x2x3x5xf32>, %v: tensor<2x2x3x5xf32>) -> (tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>) {
  %a = train.attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<2x4x3x5xf32>, tensor<2x2x3x5xf32>, tensor<2x2x3x5xf32>) -> tensor<2x4x3x5xf32>
  %b = train.attention %q, %k, %v scale = 3.000000e-01 : (tensor<2x4x3x5xf32>, tensor<2x2x3x5xf32>, tensor<2x2x3x5xf32>) -> tensor<2x4x3x5xf32>
  return %a, %b : tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>
}

// Seed 11 at the step and the next, seed 12, and the identity of
// evaluation (no step).
func.func @dropout(%x: tensor<4x6xf32>, %step: tensor<i64>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %one = arith.constant dense<1> : tensor<i64>
  %next = arith.addi %step, %one : tensor<i64>
  %a = train.dropout %x, %step p = 2.500000e-01 seed = 11 : tensor<4x6xf32>
  %b = train.dropout %x, %next p = 2.500000e-01 seed = 11 : tensor<4x6xf32>
  %c = train.dropout %x, %step p = 2.500000e-01 seed = 12 : tensor<4x6xf32>
  %d = train.dropout %x p = 2.500000e-01 seed = 11 : tensor<4x6xf32>
  return %a, %b, %c, %d : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

func.func @rmsnorm_grad(%dy: tensor<3x7xf32>, %x: tensor<3x7xf32>, %w: tensor<7xf32>) -> (tensor<3x7xf32>, tensor<7xf32>) {
  %dx, %dw = train.rmsnorm_grad %dy, %x, %w eps = 1.000000e-05 : (tensor<3x7xf32>, tensor<3x7xf32>, tensor<7xf32>) -> (tensor<3x7xf32>, tensor<7xf32>)
  return %dx, %dw : tensor<3x7xf32>, tensor<7xf32>
}

func.func @silu_grad(%g: tensor<2x9xf32>, %x: tensor<2x9xf32>) -> tensor<2x9xf32> {
  %d = train.silu_grad %g, %x : tensor<2x9xf32>
  return %d : tensor<2x9xf32>
}

// train-autodiff's rule for rope: the inverse rotation of the cotangent.
func.func @rope_grad(%dy: tensor<2x5x3x6xf32>, %x: tensor<2x5x3x6xf32>) -> (tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>) {
  %a = train.rope %dy theta = 1.000000e+04 seq_dim = 1 interleaved inverse : tensor<2x5x3x6xf32>
  %b = train.rope %dy theta = 5.000000e+05 seq_dim = 2 rotate_half inverse : tensor<2x5x3x6xf32>
  return %a, %b : tensor<2x5x3x6xf32>, tensor<2x5x3x6xf32>
}

func.func @rope_scaled_grad(%dy: tensor<2x12x10xf32>, %x: tensor<2x12x10xf32>) -> tensor<2x12x10xf32> {
  %a = train.rope %dy theta = 1.000000e+02 seq_dim = 1 rotate_half inverse scaling = [4.0, 0.5, 1.2, 8.0] : tensor<2x12x10xf32>
  return %a : tensor<2x12x10xf32>
}

func.func @slice_grad(%g: tensor<2x2x2xf32>, %x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %d = train.slice_grad %g offsets = [0, 1, 1] strides = [1, 2, 3] : tensor<2x2x2xf32> -> tensor<3x4x7xf32>
  return %d : tensor<3x4x7xf32>
}

func.func @gqa_grad(%dy: tensor<1x4x3x5xf32>, %q: tensor<1x4x3x5xf32>, %k: tensor<1x2x3x5xf32>, %v: tensor<1x2x3x5xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x5xf32>) {
  %dq, %dk, %dv = train.attention_grad %dy, %q, %k, %v causal scale = 6.000000e-01 : (tensor<1x4x3x5xf32>, tensor<1x4x3x5xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x5xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x5xf32>)
  return %dq, %dk, %dv : tensor<1x4x3x5xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x5xf32>
}
