// RUN: zeroc-opt %s --split-input-file --train-autodiff --verify-diagnostics

// expected-error @below {{no func.func is marked train.forward}}
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @a() -> tensor<f32> attributes {train.forward} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
  // expected-error @below {{more than one function is marked train.forward (also @a)}}
  func.func @b() -> tensor<f32> attributes {train.forward} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{the forward function must return one scalar loss of type tensor<f32>, but returns 'tensor<4xf32>'}}
  func.func @forward() -> tensor<4xf32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    return %w : tensor<4xf32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{the module already has a symbol @loss_and_grads; was train-autodiff run twice?}}
  func.func @forward() -> tensor<f32> attributes {train.forward} {
    %l = train.fill 0.0 : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @loss_and_grads() {
    return
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.write' op writes state inside the forward function, which train-autodiff cannot differentiate}}
    train.write %x to @w : tensor<4xf32>
    %l = train.sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{the model declares no train.param to differentiate}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    // Second-order derivatives are out of scope.
    // expected-error @below {{'train.relu_grad' op has no derivative: train-autodiff cannot differentiate through it, and a parameter's gradient depends on its result}}
    %g = train.relu_grad %w, %x : tensor<4xf32>
    %l = train.sum %g dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

