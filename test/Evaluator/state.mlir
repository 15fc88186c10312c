// Params and optimizer state through safetensors files: --save-state
// writes them (checked by an independent Python reader), --init reads them
// back, and resuming from a saved state continues the run exactly.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: zeroc-run %s --steps 2 --seed 5 --save-state %t/two.safetensors --print-state > %t/two.json
// RUN: %python %S/Inputs/state_check.py file %t/two.safetensors %t/two.json | FileCheck %s --check-prefix=FILE
// FILE: w F32 [2, 3]
// FILE-NEXT: h BF16 [4]
// FILE-NEXT: h.master F32 [4]
// FILE-NEXT: w.momentum_buffer F32 [2, 3]
// FILE-NEXT: metadata: format=pt producer=zeroc-run ranks=1 seed=5
// FILE-NEXT: file ok: matches the printed state
//
// Loading it back gives the same state, with no step run.
// RUN: zeroc-run %s --steps 0 --init %t/two.safetensors --print-state > %t/loaded.json
// RUN: %python %S/Inputs/state_check.py same-state %t/two.json %t/loaded.json | FileCheck %s --check-prefix=LOADED
// LOADED: same state: 4 tensors
//
// Two steps, save, then one step from the file equals three steps.
// RUN: zeroc-run %s --steps 3 --seed 5 --print-state > %t/three.json
// RUN: zeroc-run %s --steps 1 --init %t/two.safetensors --print-state > %t/resumed.json
// RUN: %python %S/Inputs/state_check.py same-state %t/three.json %t/resumed.json | FileCheck %s --check-prefix=LOADED
//
// A params-only file (the states start from their rules: the master from
// the loaded bf16 param, the buffer from zeros).
// RUN: %python %S/Inputs/state_check.py params-only %t/two.safetensors %t/params.safetensors
// RUN: zeroc-run %s --steps 0 --init %t/params.safetensors --print-state | FileCheck %s --check-prefix=PARAMS
// PARAMS: "h": {{\[}}[[H:[-0-9., e]+]]],
// PARAMS-NEXT: "h.master": {{\[}}[[H]]],
// PARAMS-NEXT: "w.momentum_buffer": [0, 0, 0, 0, 0, 0]}
//
// With several ranks there is still one file of full tensors (rank 0's
// values of replicated tensors, the shards of sharded ones put together:
// see sharded-state.mlir); here every rank holds the same state.
// RUN: zeroc-run %s --ranks 2 --steps 2 --seed 5 --save-state %t/ranked.safetensors --print-state > %t/ranked.json
// RUN: ls %t | FileCheck %s --check-prefix=RANKS
// RANKS-NOT: rank0
// RANKS: ranked.safetensors
// RUN: %python %S/Inputs/state_check.py same-state %t/two.json %t/ranked.json | FileCheck %s --check-prefix=LOADED
// RUN: %python %S/Inputs/state_check.py file %t/ranked.safetensors %t/ranked.json | FileCheck %s --check-prefix=RANKFILE
// RANKFILE: metadata: format=pt producer=zeroc-run ranks=2 seed=5

train.param @w : tensor<2x3xf32> init = normal std = 1.0
train.param @h : tensor<4xbf16> init = normal std = 1.0
train.state @h.master : tensor<4xf32> master of @h
train.state @w.momentum_buffer : tensor<2x3xf32> momentum_buffer of @w

// SGD with momentum on loss = |w|^2 / 4 (gradient w / 2); the bf16 param
// decays through its f32 master copy. Returns the loss before the update.
func.func @step() -> tensor<f32> attributes {train.step} {
  %w = train.read @w : tensor<2x3xf32>
  %loss0 = train.squared_norm %w : tensor<2x3xf32> -> tensor<f32>
  %loss = train.scale %loss0 by 2.500000e-01 : tensor<f32>
  %g = train.scale %w by 5.000000e-01 : tensor<2x3xf32>
  %b = train.read @w.momentum_buffer : tensor<2x3xf32>
  %lr = train.fill 1.000000e-01 : tensor<f32>
  %w1, %b1 = train.sgd_update %w, %g, %b, %lr momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<2x3xf32>
  train.write %w1 to @w : tensor<2x3xf32>
  train.write %b1 to @w.momentum_buffer : tensor<2x3xf32>
  %m = train.read @h.master : tensor<4xf32>
  %m1 = train.scale %m by 9.000000e-01 : tensor<4xf32>
  train.write %m1 to @h.master : tensor<4xf32>
  %h1 = train.cast %m1 : tensor<4xf32> to tensor<4xbf16>
  train.write %h1 to @h : tensor<4xbf16>
  return %loss : tensor<f32>
}
