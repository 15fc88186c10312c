// zeroc-run's errors name the file, op, tensor or flag at fault and exit
// non-zero.
//
// RUN: rm -rf %t && split-file %s %t
//
// RUN: not zeroc-run %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: zeroc-run: cannot open input file '{{.*}}missing.mlir': No such file or directory
//
// RUN: not zeroc-run %t/model.mlir --entry nope 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: zeroc-run: {{.*}}model.mlir: no function @nope in the module (functions: @forward, @unsupported, @ids, @vec)
//
// RUN: not zeroc-run %t/model.mlir --entry unsupported 2>&1 | FileCheck %s --check-prefix=NOSUPPORT
// NOSUPPORT: model.mlir:{{[0-9]+}}:8: error: 'tensor.empty' op is not supported by the reference evaluator
// NOSUPPORT: zeroc-run: evaluation of @unsupported failed at step 0
//
// RUN: not zeroc-run %t/model.mlir --entry ids --int-range 100 --seed 1 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: model.mlir:{{[0-9]+}}:8: error: 'train.embedding' op id {{[0-9]+}} at position {{[0-9]+}} is outside [0, 3)
//
// RUN: not zeroc-run %t/noloss.mlir 2>&1 | FileCheck %s --check-prefix=INTS
// INTS: zeroc-run: cannot generate integer argument #0 of @forward (tensor<4xi32>): the function has no train.embedding or train.cross_entropy to take a vocabulary size from; pass --int-range
//
// RUN: not zeroc-run %t/model.mlir --ranks 0 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: zeroc-run: --ranks must be between 1 and 16384, got 0
//
// --init: a saved state of @w [2, 3] does not fit @w [3, 2]; a file without
// @v, or with a tensor the module lacks, is refused.
// RUN: zeroc-run %t/model.mlir --steps 0 --save-state %t/model.safetensors > /dev/null
// RUN: not zeroc-run %t/reshaped.mlir --init %t/model.safetensors 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: zeroc-run: {{.*}}model.safetensors: tensor 'w': shape [2, 3] differs from @w's declared [3, 2]
// RUN: not zeroc-run %t/more.mlir --init %t/model.safetensors 2>&1 | FileCheck %s --check-prefix=LACKS
// LACKS: zeroc-run: {{.*}}model.safetensors: no tensor for parameter @v
// RUN: not zeroc-run %t/fewer.mlir --init %t/model.safetensors 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: zeroc-run: {{.*}}model.safetensors: tensor 'w': the module has no train.param or train.state of that name
// RUN: not zeroc-run %t/model.mlir --init %t/nothere.safetensors 2>&1 | FileCheck %s --check-prefix=NOINIT
// NOINIT: zeroc-run: {{.*}}nothere.safetensors: cannot open: No such file or directory
//
// --inputs: keys must name arguments and shapes must fit.
// RUN: zeroc-run %t/model.mlir --steps 0 --save-inputs %t/inputs.safetensors > /dev/null
// RUN: not zeroc-run %t/model.mlir --entry vec --inputs %t/inputs.safetensors 2>&1 | FileCheck %s --check-prefix=INPUTS
// INPUTS: zeroc-run: {{.*}}inputs.safetensors: tensor 'arg0' has shape [2, 3], but argument #0 of @vec (tensor<6xf32>) needs [6]
// RUN: not zeroc-run %t/model.mlir --entry ids --inputs %t/inputs.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: zeroc-run: {{.*}}inputs.safetensors: tensor 'arg0' has dtype F32, which does not fit argument #0 of @ids (tensor<4xi32>)
//
// RUN: not zeroc-run %t/model.mlir --gradcheck 2>&1 | FileCheck %s --check-prefix=GRADCHECK
// GRADCHECK: zeroc-run: --gradcheck needs a func with attribute train.gradients

//--- model.mlir
train.param @w : tensor<2x3xf32> init = normal std = 1.0

func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {train.forward} {
  %w = train.read @w : tensor<2x3xf32>
  %y = train.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

func.func @unsupported() -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  return %e : tensor<2xf32>
}

func.func @ids(%ids: tensor<4xi32>) -> tensor<4x2xf32> {
  %table = train.fill 1.0 : tensor<3x2xf32>
  %e = train.embedding %table[%ids] : (tensor<3x2xf32>, tensor<4xi32>) -> tensor<4x2xf32>
  return %e : tensor<4x2xf32>
}

func.func @vec(%x: tensor<6xf32>) -> tensor<6xf32> {
  return %x : tensor<6xf32>
}

//--- noloss.mlir
func.func @forward(%ids: tensor<4xi32>) -> tensor<4xi32> attributes {train.forward} {
  return %ids : tensor<4xi32>
}

//--- reshaped.mlir
train.param @w : tensor<3x2xf32> init = zeros

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}

//--- more.mlir
train.param @w : tensor<2x3xf32> init = zeros
train.param @v : tensor<2xf32> init = zeros

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}

//--- fewer.mlir
train.param @u : tensor<2x3xf32> init = zeros

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}
