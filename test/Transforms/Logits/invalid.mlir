// RUN: zeroc-opt %s --split-input-file --train-logits --verify-diagnostics

module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{@logits needs a forward function that returns a train.cross_entropy of logits and targets}}
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<3x4xf32> init = ones
  // expected-error @below {{the targets are used beyond the loss, so @logits cannot drop them}}
  func.func @forward(%x: tensor<2x3xf32>, %t: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x4xf32>
    %e = train.embedding %w[%t] : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
    %y = train.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %z = train.add %y, %e : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %l = train.cross_entropy %z, %t : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{the module already has a symbol @logits}}
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @logits() {
    return
  }
}

// -----

module {
  train.param @w : tensor<3x4xf32> init = ones
  // expected-error @below {{@logits needs a forward function of (tokens, targets) whose targets feed only the loss}}
  func.func @forward(%t: tensor<2xi32>, %y: tensor<2xi32>, %extra: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x4xf32>
    %e = train.embedding %w[%t] : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
    %l = train.cross_entropy %e, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<3x4xf32> init = ones
  // expected-error @below {{the forward function does not split into one sequence for @logits}}
  func.func @forward(%t: tensor<2xi32>, %y: tensor<2xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x4xf32>
    %e = train.embedding %w[%t] : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0}}
    %s = train.sum %e dims = [0] : tensor<2x4xf32> -> tensor<4xf32>
    %z = train.add %e, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %l = train.cross_entropy %z, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
