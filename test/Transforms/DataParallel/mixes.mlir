// RUN: zeroc-opt %s --split-input-file --train-data-parallel=world-size=2 --verify-diagnostics

// What computes across the examples of the batch is refused, naming the op:
// a contraction over the batch.
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.matmul' op mixes the examples of the batch: its batch dimension is 0 and the op contracts over it, so it does not split across ranks}}
    %g = train.matmul %x, %x transpose_lhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %l = train.mean %g dims = [0, 1] : tensor<8x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A softmax along the batch (after a transpose moved it last).
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    // expected-error @below {{'train.softmax' op mixes the examples of the batch: its batch dimension is 1 and the op normalizes along it, so it does not split across ranks}}
    %s = train.softmax %t : tensor<8x4xf32>
    %l = train.mean %s dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A split of the batch into parts.
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.split' op mixes the examples of the batch: its batch dimension is 0 and the op splits it into parts, so it does not split across ranks}}
    %a, %b = train.split %x dim = 0 : tensor<4x8xf32> -> tensor<2x8xf32>, tensor<2x8xf32>
    %y = train.add %a, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// An add that lines the batch up with another dimension.
module {
  func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    // expected-error @below {{'train.add' op mixes the examples of the batch: its batch dimension is 0 and the op lines it up with dimension 1 of another operand's batch, so it does not split across ranks}}
    %y = train.add %x, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A reshape that cuts through the batch: [6, 4] -> [4, 6] puts examples
// of the batch in rows that start in the middle of it.
module {
  func.func @forward(%x: tensor<4x6xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 1 (6x4) to 4x6, which cuts through the batch, so it does not split across ranks}}
    %r = train.reshape %t : tensor<6x4xf32> -> tensor<4x6xf32>
    %l = train.mean %r dims = [0, 1] : tensor<4x6xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Attention across the batch (the batch in the positions of k).
module {
  func.func @forward(%x: tensor<4x1x2x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [2, 1, 0, 3] : tensor<4x1x2x8xf32> -> tensor<2x1x4x8xf32>
    // expected-error @below {{'train.attention' op mixes the examples of the batch: its batch dimension is 2 and the op attends across it, so it does not split across ranks}}
    %a = train.attention %t, %t, %t scale = 0.5 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
    %l = train.mean %a dims = [0, 1, 2, 3] : tensor<2x1x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A variance over the batch (batch statistics).
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.var' op mixes the examples of the batch: its batch dimension is 0 and the op reduces over it, so it does not split across ranks}}
    %v = train.var %x dims = [0] correction = 0 : tensor<4x8xf32> -> tensor<8xf32>
    %l = train.mean %v dims = [0] : tensor<8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A gather along the batch.
module {
  func.func @forward(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> tensor<f32> attributes {train.forward} {
    // expected-error @below {{'train.gather' op mixes the examples of the batch: its batch dimension is 0 and the op gathers along it, so it does not split across ranks}}
    %g = train.gather %x[%i] dim = 0 : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x8xf32>
    %l = train.mean %g dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Near misses of the merged dimensions (merged.mlir): nn.MultiheadAttention's
// [T, B, C] -> [T, B*H, D] with a head size that does not divide C cuts
// through the batch ([4, 4, 6] -> [4, 3, 8]: a row of 8 holds parts of two
// examples).
module {
  func.func @forward(%x: tensor<4x4x6xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0, 2] : tensor<4x4x6xf32> -> tensor<4x4x6xf32>
    // expected-error @below {{'train.reshape' op mixes the examples of the batch: it reshapes a value whose batch dimension is 1 (4x4x6) to 4x3x8, which cuts through the batch, so it does not split across ranks}}
    %r = train.reshape %t : tensor<4x4x6xf32> -> tensor<4x3x8xf32>
    %l = train.mean %r dims = [0, 1, 2] : tensor<4x3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A softmax along a dimension the batch was merged into ([B, H] -> [B*H]).
module {
  func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.reshape %x : tensor<4x2x3xf32> -> tensor<8x3xf32>
    %t = train.transpose %m [1, 0] : tensor<8x3xf32> -> tensor<3x8xf32>
    // expected-error @below {{'train.softmax' op mixes the examples of the batch: its batch dimension is 1 and the op normalizes along it, so it does not split across ranks}}
    %s = train.softmax %t : tensor<3x8xf32>
    %l = train.mean %s dims = [0, 1] : tensor<3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A contraction over a dimension the batch was merged into, after a major
// factor ([T, B] -> [T*B] as the rows of a matmul's transposed left operand).
module {
  func.func @forward(%x: tensor<4x3x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0, 2] : tensor<4x3x8xf32> -> tensor<3x4x8xf32>
    %m = train.reshape %t : tensor<3x4x8xf32> -> tensor<12x8xf32>
    // expected-error @below {{'train.matmul' op mixes the examples of the batch: its batch dimension is 0 and the op contracts over it, so it does not split across ranks}}
    %g = train.matmul %m, %m transpose_lhs : (tensor<12x8xf32>, tensor<12x8xf32>) -> tensor<8x8xf32>
    %l = train.mean %g dims = [0, 1] : tensor<8x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// An add of [B*C] (the batch major) and [C*B] (the batch after a major
// factor of 8): the same shape, but the elements of different examples
// meet.
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %a = train.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    %t = train.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %b = train.reshape %t : tensor<8x4xf32> -> tensor<32xf32>
    // expected-error @below {{'train.add' op mixes the examples of the batch: its batch dimension is 0 and the op lines its examples up with other examples of another operand (the batch is a different factor of the dimension there), so it does not split across ranks}}
    %y = train.add %a, %b : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %l = train.mean %y dims = [0] : tensor<32xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A dropout draws its mask by global position, which a rank's part of
// [H*B] (the batch after a major factor) does not give as one offset.
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %t = train.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %m = train.reshape %t : tensor<8x4xf32> -> tensor<32xf32>
    // expected-error @below {{'train.dropout' op draws its mask by the global position of each element, but its batch dimension 0 holds the batch after a major factor of 8, so a rank's part is not one block of it}}
    %d = train.dropout %m p = 0.1 seed = 0 : tensor<32xf32>
    %l = train.mean %d dims = [0] : tensor<32xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
