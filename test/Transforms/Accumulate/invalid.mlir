// Every error train-accumulate reports (K < 0: invalid-count.mlir).
// RUN: zeroc-opt %s --split-input-file --train-accumulate=micro-batches=2 --verify-diagnostics

// Not differentiated yet.
// expected-error @below {{train-accumulate runs after train-autodiff: the module has no @loss_and_grads}}
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// The micro-batches do not divide the rank's batch (3 rows).
module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{micro-batches=2 (zeroc's --grad-accum) does not divide the rank's batch of 3 (argument #0 of @forward)}}
  func.func @forward(%x: tensor<3x4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<3x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Run twice.
// expected-error @below {{train-accumulate cannot run on this module: it already accumulates micro-batches (it has the attribute 'train.grad_accum' = 2)}}
module attributes {train.grad_accum = 2 : i64} {
  train.param @w : tensor<4xf32> init = ones
  func.func @loss_and_grads(%x: tensor<4x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Already partitioned.
// expected-error @below {{train-accumulate cannot run on this module: it is already partitioned (it has the attribute 'train.zero_stage' = 2); train-accumulate runs before train-zero}}
module attributes {train.zero_stage = 2 : i64} {
  train.param @w : tensor<4xf32> init = ones
}

// -----

// Already a training step.
module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train-accumulate cannot run on this module: it already has a training step (@train_step, marked 'train.step'); train-accumulate runs before train-optimizer}}
  func.func @train_step(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.step} {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Optimizer state declared.
module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train-accumulate cannot run on this module: it already declares optimizer state (train.state @w.exp_avg); train-accumulate runs before train-optimizer}}
  train.state @w.exp_avg : tensor<4xf32> exp_avg of @w
}

// -----

// @loss_and_grads is not of the forward function's batch.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
  // expected-error @below {{the arguments of @loss_and_grads must be those of @forward (the rank's batch), got 'tensor<2x4xf32>'}}
  func.func @loss_and_grads(%x: tensor<2x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// No forward function.
// expected-error @below {{no func.func is marked train.forward}}
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @loss_and_grads(%x: tensor<4x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// No batch to divide.
module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{micro-batches=2 needs a batch to divide, but no argument of @forward has a batch dimension}}
  func.func @forward(%x: tensor<f32>) -> tensor<f32> attributes {train.forward} {
    return %x : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

// A dropout that already records a micro-batch.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
    // expected-error @below {{'train.dropout' op already records a micro-batch}}
    %d = train.dropout %y p = 0.1 seed = 0 batch_dim = 0 ranks = 1 micro_batch = 0 micro_batches = 2 : tensor<4x4xf32>
    %m = train.mean %d dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<4x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// A forward program that does not split by the micro-batches (a sum over
// the batch), as train-data-parallel reports it.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0}}
    %s = train.sum %y dims = [0] : tensor<4x4xf32> -> tensor<4xf32>
    %m = train.mean %s dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<4x4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}
