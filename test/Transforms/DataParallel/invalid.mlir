// RUN: zeroc-opt %s --split-input-file --train-data-parallel=world-size=5 --verify-diagnostics

module {
  train.param @w : tensor<4xf32> init = ones
  // expected-error @below {{the global batch of 12 (argument #0) does not divide among 5 ranks}}
  func.func @forward(%x: tensor<12x4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.mean %x dims = [0, 1] : tensor<12x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0, which does not split across ranks: the loss must be a mean over the batch (train.mean, train.cross_entropy, or a sum over the batch divided by the 0-d sum over the batch of a value of the batch arguments alone, such as a mask of the targets)}}
    %l = train.sum %y dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Near misses of a masked mean, sum(select(mask, y, 0)) / sum(mask): the
// divisor reads a parameter.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>, %t: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    %m = train.mul %t, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    %z = train.fill 0.0 : tensor<10x4xf32>
    %k = train.select %m, %y, %z : tensor<10x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0, which does not split across ranks}}
    %s = train.sum %k dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    %n = train.sum %m dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    %l = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The divisor is read by another op too (the loss adds the count).
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>, %t: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    %z = train.fill 0.0 : tensor<10x4xf32>
    %k = train.select %t, %y, %z : tensor<10x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0, which does not split across ranks}}
    %s = train.sum %k dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    %n = train.sum %t dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    %d = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %l = train.add %d, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The divisor sums over the batch only (a count per feature, not 0-d).
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>, %t: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0, which does not split across ranks}}
    %s = train.sum %y dims = [0] : tensor<10x4xf32> -> tensor<4xf32>
    %n = train.sum %t dims = [0] : tensor<10x4xf32> -> tensor<4xf32>
    %d = train.div %s, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %l = train.mean %d dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A sum over the batch divided by a constant (the batch size) is not a
// mean over the global batch either.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    // expected-error @below {{'train.sum' op sums over the batch dimension 0, which does not split across ranks}}
    %s = train.sum %y dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    %n = train.fill 40.0 : tensor<f32>
    %l = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<10x4xf32> -> tensor<4x10xf32>
    // A reshape that keeps a leading part of 2 of the batch of 10 in one
    // dimension ([4, 10] as [4, 2, 5] -> [8, 5]): 2 does not divide among 5.
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 1 (4x10) to 8x5, which keeps a leading part of 2 of the batch of 10 in a dimension, and that part does not divide among 5 ranks}}
    %r = train.reshape %t : tensor<4x10xf32> -> tensor<8x5xf32>
    %l = train.mean %r dims = [0, 1] : tensor<8x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x3xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 0 (10x3) to 6x5, which cuts through the batch, so it does not split across ranks}}
    %r = train.reshape %x : tensor<10x3xf32> -> tensor<6x5xf32>
    %l = train.mean %r dims = [0, 1] : tensor<6x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{the batch is already split (train.batch_split is set); run train-data-parallel once}}
module attributes {train.batch_split = 5 : i64} {
  train.param @w : tensor<4xf32> init = ones
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

// -----

// world-size=5: a slice of part of the batch does not split across ranks.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.slice' op slices the batch dimension 0, which does not split across ranks}}
    %s = train.slice %x offsets = [0, 0] strides = [1, 1] : tensor<10x4xf32> -> tensor<6x4xf32>
    %w = train.read @w : tensor<4xf32>
    %m = train.mul %s, %w : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
    %l = train.mean %m dims = [0, 1] : tensor<6x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A dropout that already records a batch split.
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.dropout' op already records a batch split}}
    %d = train.dropout %x p = 0.1 seed = 0 batch_dim = 0 ranks = 2 : tensor<10x4xf32>
    %w = train.read @w : tensor<4xf32>
    %m = train.mul %d, %w : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<10x4xf32>
    %l = train.mean %m dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
