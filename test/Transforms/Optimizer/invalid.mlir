// RUN: zeroc-opt %s --split-input-file --train-optimizer --verify-diagnostics

// expected-error @below {{the model declares no train.optimizer}}
module {
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{no @loss_and_grads function: run --train-autodiff first}}
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
}

// -----

// expected-error @below {{the module already has a symbol @train_step; was train-optimizer run twice?}}
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  func.func @loss_and_grads() -> (tensor<f32>, tensor<4xf32>) attributes {train.gradients = [@w]} {
    %l = train.fill 0.5 : tensor<f32>
    %g = train.fill 1.0 : tensor<4xf32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
  func.func @train_step() {
    return
  }
}

// -----

module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train.gradients must name the parameter of each result after the loss}}
  func.func @loss_and_grads() -> (tensor<f32>, tensor<4xf32>) {
    %l = train.fill 0.5 : tensor<f32>
    %g = train.fill 1.0 : tensor<4xf32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
}

// -----

module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{train.gradients entry @nope is not a train.param}}
  func.func @loss_and_grads() -> (tensor<f32>, tensor<4xf32>) attributes {train.gradients = [@nope]} {
    %l = train.fill 0.5 : tensor<f32>
    %g = train.fill 1.0 : tensor<4xf32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
}
