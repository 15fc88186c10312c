// Optimizer math over several steps against PyTorch's algorithms written
// out in Inputs/optimizer_reference.py (torch.optim.AdamW and SGD as their
// docs give them, nanoGPT's get_lr, clip_grad_norm_'s coefficient). The
// parameters come from a Python-written --init file, the gradients from a
// Python-written --inputs file; the step counter advances across --steps.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/optimizer_reference.py make-inputs %t
// RUN: zeroc-run %s --entry adamw --init %t/init.safetensors --inputs %t/adamw.safetensors --steps 3 --fp64 --print-state > %t/adamw.json
// RUN: %python %S/Inputs/optimizer_reference.py check adamw %t/adamw.json fp64 | FileCheck %s --check-prefix=ADAMW
// RUN: zeroc-run %s --entry adamw --init %t/init.safetensors --inputs %t/adamw.safetensors --steps 3 > %t/adamw32.json
// RUN: %python %S/Inputs/optimizer_reference.py check adamw %t/adamw32.json f32 | FileCheck %s --check-prefix=ADAMW32
// RUN: zeroc-run %s --entry sgd --init %t/init.safetensors --inputs %t/sgd.safetensors --steps 3 --fp64 > %t/sgd.json
// RUN: %python %S/Inputs/optimizer_reference.py check sgd %t/sgd.json fp64 | FileCheck %s --check-prefix=SGD
// RUN: zeroc-run %s --entry schedule --init %t/init.safetensors --steps 9 --fp64 > %t/schedule.json
// RUN: %python %S/Inputs/optimizer_reference.py check schedule %t/schedule.json fp64 | FileCheck %s --check-prefix=SCHEDULE
// RUN: zeroc-run %s --entry schedule --init %t/init.safetensors --inputs %t/step100.safetensors --steps 2 --fp64 > %t/late.json
// RUN: %python %S/Inputs/optimizer_reference.py check schedule %t/late.json fp64 100 | FileCheck %s --check-prefix=LATE
// RUN: zeroc-run %s --entry clip --init %t/init.safetensors --inputs %t/clip.safetensors --fp64 > %t/clip.json
// RUN: %python %S/Inputs/optimizer_reference.py check clip %t/clip.json fp64 | FileCheck %s --check-prefix=CLIP

// ADAMW: adamw fp64: 48 values ok
// ADAMW32: adamw f32: 36 values ok
// SGD: sgd fp64: 24 values ok
// SCHEDULE: schedule fp64: 18 values ok
// LATE: schedule fp64: 4 values ok
// CLIP: clip fp64: 5 values ok

train.param @w : tensor<4xf32> init = normal std = 1.0 decay
train.param @u : tensor<4xf32> init = zeros
train.state @w.exp_avg : tensor<4xf32> exp_avg of @w
train.state @w.exp_avg_sq : tensor<4xf32> exp_avg_sq of @w
train.state @u.momentum_buffer : tensor<4xf32> momentum_buffer of @u

// One AdamW step of @w with gradient %g; returns the new param and moments.
func.func @adamw(%g: tensor<4xf32>, %step: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %lr = train.lr_schedule %step lr = 1.000000e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
  %p = train.read @w : tensor<4xf32>
  %m = train.read @w.exp_avg : tensor<4xf32>
  %v = train.read @w.exp_avg_sq : tensor<4xf32>
  %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<4xf32>
  train.write %p1 to @w : tensor<4xf32>
  train.write %m1 to @w.exp_avg : tensor<4xf32>
  train.write %v1 to @w.exp_avg_sq : tensor<4xf32>
  return %p1, %m1, %v1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// One SGD step of @u with momentum and weight decay.
func.func @sgd(%g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %lr = train.fill 1.000000e-01 : tensor<f32>
  %p = train.read @u : tensor<4xf32>
  %b = train.read @u.momentum_buffer : tensor<4xf32>
  %p1, %b1 = train.sgd_update %p, %g, %b, %lr momentum = 9.000000e-01 weight_decay = 1.000000e-02 : tensor<4xf32>
  train.write %p1 to @u : tensor<4xf32>
  train.write %b1 to @u.momentum_buffer : tensor<4xf32>
  return %p1, %b1 : tensor<4xf32>, tensor<4xf32>
}

// Steps 0..8 cover the warmup (0, 1 = warmup - 1), the peak (2 = warmup),
// the decay (3..5, 4 the midpoint), max_steps (6) and beyond (7, 8).
func.func @schedule(%step: tensor<i64>) -> (tensor<f32>, tensor<f32>) {
  %cos = train.lr_schedule %step lr = 1.000000e+00 schedule = cosine warmup = 2 min_lr = 1.000000e-01 max_steps = 6 : (tensor<i64>) -> tensor<f32>
  %const = train.lr_schedule %step lr = 3.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>
  return %cos, %const : tensor<f32>, tensor<f32>
}

// |x|^2 and the clipping coefficient for a norm above (max_norm 1) and
// below (max_norm 10) the limit.
func.func @clip(%x: tensor<2x2xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %n = train.squared_norm %x : tensor<2x2xf32> -> tensor<f32>
  %c1 = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
  %c10 = train.clip_coef %n max_norm = 1.000000e+01 : tensor<f32>
  return %n, %c1, %c10 : tensor<f32>, tensor<f32>, tensor<f32>
}
