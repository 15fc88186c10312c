// RUN: zeroc-opt %s --split-input-file "--train-partition=stage=1 world-size=2" --verify-diagnostics
// RUN: not zeroc-opt %s --split-input-file "--train-partition=stage=4 world-size=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not zeroc-opt %s --split-input-file "--train-partition=stage=1 world-size=0" 2>&1 | FileCheck %s --check-prefix=WORLD

// The errors of train-partition about the buckets it reads (the others:
// test/Transforms/Zero/invalid.mlir, through the train-zero pipeline).
// STAGE: error: stage must be 0, 1, 2 or 3, got 4
// WORLD: error: world-size must be at least 1, got 0

// expected-error @below {{the module has no train.buckets: run train-assign-buckets first}}
module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  func.func @train_step(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w]} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}

// -----

// expected-error @below {{train.buckets names @v, which is not in train.gradients}}
module attributes {train.batch_split = 2 : i64, train.buckets = [[@w, @v]]} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  train.param @v : tensor<4xf32> init = ones
  func.func @train_step(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w]} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}

// -----

// expected-error @below {{train.buckets has no bucket for @v (train.gradients)}}
module attributes {train.batch_split = 2 : i64, train.buckets = [[@w]]} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  train.param @v : tensor<4xf32> init = ones
  func.func @train_step(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w, @v]} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    %m = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}
