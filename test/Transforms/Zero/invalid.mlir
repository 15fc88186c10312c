// RUN: zeroc-opt %s --split-input-file "--train-zero=stage=1 world-size=2" --verify-diagnostics

// The first and third modules have a step that train-assign-buckets (the first
// pass of train-zero) accepts, so that train-shard-states meets them.

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

// -----

module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{the loss must be computed in @train_step}}
  func.func @train_step(%l: tensor<f32>, %s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
