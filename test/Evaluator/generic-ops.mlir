// The ops of TrainGenericOps.td and train.embedding's padding_idx in the
// reference evaluator against PyTorch (Inputs/generic_reference.py): the
// forward ops against torch.amax, torch.var, torch.log_softmax and
// torch.gather, the derivative helpers against torch.autograd on the same
// inputs (amax's tied maxima sharing the cotangent evenly, gather's repeated
// indices adding up, the padding row of an embedding getting none), in fp64
// and in f32.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in amax_ties var log_softmax gather embedding_padding; do \
// RUN:   zeroc-run %s --entry $f --fp64 --seed 3 --save-inputs %t/$f.in > %t/$f.json && \
// RUN:   %python %S/Inputs/generic_reference.py $f %t/$f.in %t/$f.json fp64 || exit 1; \
// RUN:   zeroc-run %s --entry $f --seed 5 --save-inputs %t/$f.f32.in > %t/$f.f32.json && \
// RUN:   %python %S/Inputs/generic_reference.py $f %t/$f.f32.in %t/$f.f32.json f32 || exit 1; \
// RUN: done | FileCheck %s
//
// CHECK: amax_ties fp64: 18 values ok (3 tied maxima)
// CHECK: amax_ties f32: 18 values ok ({{[1-3]}} tied maxima)
// CHECK: var fp64: 19 values ok
// CHECK: var f32: 19 values ok
// CHECK: log_softmax fp64: 42 values ok
// CHECK: log_softmax f32: 42 values ok
// CHECK: gather fp64: 47 values ok
// CHECK: gather f32: 47 values ok
// CHECK: embedding_padding fp64: 35 values ok (padding row selected)
// CHECK: embedding_padding f32: 35 values ok (padding row selected)
//
// train-autodiff passes the padding row on to train.embedding_grad.
// RUN: zeroc-opt %S/Inputs/embedding-padding.mlir --train-autodiff | FileCheck %s --check-prefix=RULE
// RULE: train.embedding_grad %{{.*}}[%{{.*}}] padding_idx = 2 : (tensor<3x4x5xf32>, tensor<3x4xi32>) -> tensor<7x5xf32>

// Every maximum of a row ties (a is repeated), and b may beat them.
func.func @amax_ties(%a: tensor<3x2xf32>, %b: tensor<3x1xf32>, %dy: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x5xf32>) {
  %x = train.concat %a, %a, %b dim = 1 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x1xf32> -> tensor<3x5xf32>
  %y = train.amax %x dims = [1] : tensor<3x5xf32> -> tensor<3xf32>
  %dx = train.amax_grad %dy, %x, %y dims = [1] : (tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  return %y, %dx : tensor<3xf32>, tensor<3x5xf32>
}

func.func @var(%x: tensor<3x4x5xf32>) -> (tensor<4xf32>, tensor<3x5xf32>) {
  %u = train.var %x dims = [0, 2] correction = 1 : tensor<3x4x5xf32> -> tensor<4xf32>
  %b = train.var %x dims = [1] correction = 0 : tensor<3x4x5xf32> -> tensor<3x5xf32>
  return %u, %b : tensor<4xf32>, tensor<3x5xf32>
}

func.func @log_softmax(%x: tensor<2x3x7xf32>) -> tensor<2x3x7xf32> {
  %y = train.log_softmax %x : tensor<2x3x7xf32>
  return %y : tensor<2x3x7xf32>
}

// 15 indices into rows of 7 (some repeat), and their scatter-add.
func.func @gather(%x: tensor<5x7xf32>, %i: tensor<4x3xi32>, %dy: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<5x7xf32>) {
  %y = train.gather %x[%i] dim = 1 : (tensor<5x7xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
  %dx = train.gather_grad %dy[%i] dim = 1 : (tensor<4x3xf32>, tensor<4x3xi32>) -> tensor<5x7xf32>
  return %y, %dx : tensor<4x3xf32>, tensor<5x7xf32>
}

func.func @embedding_padding(%ids: tensor<3x4xi32>, %dy: tensor<3x4x5xf32>) -> tensor<7x5xf32> {
  %dw = train.embedding_grad %dy[%ids] padding_idx = 2 : (tensor<3x4x5xf32>, tensor<3x4xi32>) -> tensor<7x5xf32>
  return %dw : tensor<7x5xf32>
}
