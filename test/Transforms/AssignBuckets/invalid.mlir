// RUN: zeroc-opt %s --split-input-file --train-assign-buckets=bucket-bytes=64 --verify-diagnostics
// RUN: not zeroc-opt %s --split-input-file --train-assign-buckets=bucket-bytes=0 2>&1 | FileCheck %s --check-prefix=BYTES

// Every error of train-assign-buckets.

// BYTES: error: bucket-bytes must be positive, got 0

// expected-error @below {{the module is already partitioned (train.zero_stage is set)}}
module attributes {train.batch_split = 2 : i64, train.zero_stage = 1 : i64} {
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{the module already has its buckets (train.buckets is set)}}
module attributes {train.buckets = [[@w]]} {
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{no function is marked train.step: run train-autodiff and train-optimizer first}}
module {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{the model declares no train.optimizer}}
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train.gradients entry @nope is not a train.param}}
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@nope]} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.optimizer sgd lr = 0.1 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{@train_step is not the step train-optimizer writes: it needs a train.lr_schedule and one train.squared_norm per entry of train.gradients}}
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w]} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}
