// RUN: zeroc-opt %s --split-input-file --train-batch-size=global-batch=6 --verify-diagnostics

// Each error train-batch-size emits.

module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{the arguments disagree on the batch size: 10 and 8 (argument #1)}}
  func.func @forward(%x: tensor<10x4xf32>, %y: tensor<8x4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.mean %x dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  // expected-error @below {{no argument of the forward function has a batch dimension to resize}}
  func.func @forward(%x: tensor<f32>) -> tensor<f32> attributes {train.forward} {
    return %x : tensor<f32>
  }
}

// -----

module {
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<10x4xf32> -> tensor<4x10xf32>
    // [4, 10] as [4, 2, 5] -> [8, 5]: the leading part of 2 of the batch
    // cannot become 2 x 6 / 10.
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 1 (4x10) to 8x5, which keeps a leading part of 2 of the batch of 10 in a dimension, and that part cannot follow a new batch size}}
    %r = train.reshape %t : tensor<4x10xf32> -> tensor<8x5xf32>
    %l = train.mean %r dims = [0, 1] : tensor<8x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.slice' op slices the batch dimension 0, which cannot follow a new batch size}}
    %s = train.slice %x offsets = [0, 0] strides = [1, 1] : tensor<10x4xf32> -> tensor<6x4xf32>
    %l = train.mean %s dims = [0, 1] : tensor<6x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  func.func @forward(%x: tensor<10x3xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 0 (10x3) to 6x5, which cuts through the batch, so it cannot follow a new batch size}}
    %r = train.reshape %x : tensor<10x3xf32> -> tensor<6x5xf32>
    %l = train.mean %r dims = [0, 1] : tensor<6x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{train.batch_split}}
module attributes {train.batch_split = 2 : i64} {
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.mean %x dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{no func.func is marked train.forward}}
module {
  train.param @w : tensor<4xf32> init = ones
}
