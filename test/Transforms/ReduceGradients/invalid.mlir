// RUN: zeroc-opt %s --split-input-file --train-reduce-gradients --verify-diagnostics

// Every error of train-reduce-gradients: what train-shard-states decided missing, a step
// train-optimizer did not write, a loss that is not computed in the step.

// expected-error @below {{train-reduce-gradients needs the stage and buffers train-shard-states decides (train.zero_stage, train.world_size): run train-shard-states first}}
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

// expected-error @below {{train-reduce-gradients finds no parameter buffer @zero.flat<k>.params: run train-shard-states first}}
module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 2)
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

module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  train.state @w.grad : tensor<4xf32> grad of @w
  // expected-error @below {{member @w.grad of a parameter buffer is not a train.param}}
  train.buffer @zero.flat0.params : tensor<4xf32> <parameters> members [@w.grad] offsets [0] shards = 2
  func.func @train_step(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w]} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}

// -----

module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  train.state @w.grad : tensor<4xf32> grad of @w
  train.state @w.momentum_buffer : tensor<4xf32> momentum_buffer of @w
  train.buffer @zero.flat0.params : tensor<4xf32> <parameters> members [@w] offsets [0] shards = 2
  train.buffer @zero.flat0.grads : tensor<4xf32> <gradients> members [@w.grad] offsets [0] shards = 2
  train.buffer @zero.flat0.momentum_buffer : tensor<4xf32> <optimizer_states> members [@w.momentum_buffer] offsets [0] shards = 2
  // expected-error @below {{@train_step is not the step train-optimizer writes: it needs a train.lr_schedule and one train.squared_norm per entry of train.gradients}}
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 2)
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  train.state @w.grad : tensor<4xf32> grad of @w
  train.state @w.momentum_buffer : tensor<4xf32> momentum_buffer of @w
  train.buffer @zero.flat0.params : tensor<4xf32> <parameters> members [@w] offsets [0] shards = 2
  train.buffer @zero.flat0.grads : tensor<4xf32> <gradients> members [@w.grad] offsets [0] shards = 2
  train.buffer @zero.flat0.momentum_buffer : tensor<4xf32> <optimizer_states> members [@w.momentum_buffer] offsets [0] shards = 2
  // expected-error @below {{the loss must be computed in @train_step}}
  func.func @train_step(%l: tensor<f32>, %s: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step, train.gradients = [@w]} {
    %g = train.fill 0.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}
