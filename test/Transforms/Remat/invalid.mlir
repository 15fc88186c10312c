// Every error train-remat reports (the policy's own: invalid-policy.mlir).
// RUN: zeroc-opt %s --split-input-file --train-remat=policy=full --verify-diagnostics
// RUN: zeroc-opt %s --split-input-file --train-remat=policy=selective --verify-diagnostics

// Not differentiated yet.
// expected-error @below {{train-remat runs after train-autodiff: the module has no @loss_and_grads}}
module {
  train.param @h.0.w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Run twice.
// expected-error @below {{train-remat cannot run on this module: it is already rematerialized (it has the attribute 'train.remat' = "full")}}
module attributes {train.remat = "full"} {
  train.param @h.0.w : tensor<4xf32> init = ones
  func.func @loss_and_grads(%x: tensor<4xf32>) -> tensor<f32> {
    %m = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Past train-optimizer: a step, optimizer state, a partitioned module.
module {
  // expected-error @below {{train-remat cannot run on this module: it already has a training step (@train_step, marked 'train.step'); train-remat runs before train-optimizer}}
  func.func @train_step(%x: tensor<4xf32>) -> tensor<f32> attributes {train.step} {
    %m = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

module {
  train.param @h.0.w : tensor<4xf32> init = ones
  // expected-error @below {{train-remat cannot run on this module: it already declares optimizer state (train.state @h.0.w.exp_avg); train-remat runs before train-optimizer}}
  train.state @h.0.w.exp_avg : tensor<4xf32> exp_avg of @h.0.w
}

// -----

// expected-error @below {{train-remat cannot run on this module: it is already partitioned (it has the attribute 'train.zero_stage' = 3); train-remat runs before train-zero}}
module attributes {train.zero_stage = 3 : i64} {
}

// -----

// No transformer block: no parameter name has a numeric part.
// expected-error @below {{train-remat recomputes per transformer block, but the model has none: no parameter read in the forward pass is named <path>.<N>.<name> (as transformer.h.0.* or model.layers.0.*)}}
module {
  train.param @fc.weight : tensor<4xf32> init = ones
  func.func @loss_and_grads(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {train.gradients = [@fc.weight]} {
    %w = train.read @fc.weight : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %l = train.mean %y dims = [0] : tensor<4xf32> -> tensor<f32>
    %g = train.scale %x by 0.25 : tensor<4xf32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The loss is not computed in the function.
module {
  train.param @h.0.w : tensor<f32> init = ones
  // expected-error @below {{the loss (the first result) of @loss_and_grads must be computed in it}}
  func.func @loss_and_grads(%l: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@h.0.w]} {
    return %l, %l : tensor<f32>, tensor<f32>
  }
}

// -----

module {
  train.param @h.0.w : tensor<f32> init = ones
  // expected-error @below {{@loss_and_grads must have a body of one block}}
  func.func @loss_and_grads(%l: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@h.0.w]} {
    return %l, %l : tensor<f32>, tensor<f32>
  ^unreachable:
    return %l, %l : tensor<f32>, tensor<f32>
  }
}
