// RUN: zeroc-opt %s --split-input-file "--train-shard-states=stage=1 world-size=2" --verify-diagnostics
// RUN: not zeroc-opt %s --split-input-file "--train-shard-states=stage=4 world-size=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not zeroc-opt %s --split-input-file "--train-shard-states=stage=1 world-size=0" 2>&1 | FileCheck %s --check-prefix=WORLD

// Every error of train-shard-states.
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

// -----

// expected-error @below {{the batch is split for 1 rank(s) but world-size is 2; run train-data-parallel with world-size=2 first}}
module {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %n : tensor<f32>
  }
}

// -----

// expected-error @below {{the module is already partitioned (train.zero_stage is set)}}
module attributes {train.batch_split = 2 : i64, train.zero_stage = 1 : i64} {
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{the symbol @dp is taken; train-zero declares its grid under it}}
module attributes {train.batch_split = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %n : tensor<f32>
  }
}

// -----

// expected-error @below {{no function is marked train.step: run train-autodiff and train-optimizer first}}
module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{the model declares no train.optimizer}}
module attributes {train.batch_split = 2 : i64} {
  train.param @w : tensor<4xf32> init = ones
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train.gradients entry @nope is not a train.param}}
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@nope]} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{@train_step is not the step train-optimizer writes: it needs a train.lr_schedule and one train.squared_norm per entry of train.gradients}}
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}
