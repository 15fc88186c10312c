// RUN: zeroc-opt %s --train-fuse-matmul-bias -split-input-file | FileCheck %s

// A linear layer's bias add joins its product, the bias on either side of
// the add, transposes kept; the product's attributes (its trace site) go
// with it, and the op takes the add's place.

// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[X:.*]]: tensor<4x16x8xf32>, %[[W:.*]]: tensor<12x8xf32>, %[[B:.*]]: tensor<12xf32>, %[[WT:.*]]: tensor<8x12xf32>)
// CHECK-NOT: train.add
// CHECK: %[[Y:.*]] = train.matmul_bias %[[X]], %[[W]], %[[B]] transpose_rhs {train.trace = {{.*}}kind = "matmul"{{.*}}name = "matmul fc"{{.*}}} : (tensor<4x16x8xf32>, tensor<12x8xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
// CHECK-NEXT: %[[Z:.*]] = train.matmul_bias %[[X]], %[[WT]], %[[B]] : (tensor<4x16x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
// CHECK-NOT: train.matmul {{.*}}
// CHECK: return %[[Y]], %[[Z]]
func.func @folded(%x: tensor<4x16x8xf32>, %w: tensor<12x8xf32>, %b: tensor<12xf32>, %wt: tensor<8x12xf32>) -> (tensor<4x16x12xf32>, tensor<4x16x12xf32>) {
  %y0 = train.matmul %x, %w transpose_rhs {train.trace = {bytes = 0 : i64, collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64, kind = "matmul", location = "x.py:1:1", name = "matmul fc", phase = "forward"}} : (tensor<4x16x8xf32>, tensor<12x8xf32>) -> tensor<4x16x12xf32>
  %y = train.add %y0, %b {train.trace = {bytes = 0 : i64, collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64, kind = "add", location = "x.py:1:1", name = "add fc", phase = "forward"}} : (tensor<4x16x12xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
  %z0 = train.matmul %x, %wt : (tensor<4x16x8xf32>, tensor<8x12xf32>) -> tensor<4x16x12xf32>
  %z = train.add %b, %z0 : (tensor<12xf32>, tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  return %y, %z : tensor<4x16x12xf32>, tensor<4x16x12xf32>
}

// -----

// A bias read after the product (the add's place dominates both) and the
// residual add that follows a projection: the bias joins the product, the
// residual add stays.

// CHECK-LABEL: func.func @residual
// CHECK: %[[B:.*]] = train.read @proj.bias
// CHECK-NEXT: %[[P:.*]] = train.matmul_bias %arg0, %arg1, %[[B]] transpose_rhs
// CHECK-NEXT: %[[R:.*]] = train.add %arg2, %[[P]]
// CHECK-NEXT: return %[[R]]
module {
  train.param @proj.bias : tensor<8xf32> init = zeros
  func.func @residual(%x: tensor<2x3x8xf32>, %w: tensor<8x8xf32>, %res: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
    %p0 = train.matmul %x, %w transpose_rhs : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
    %b = train.read @proj.bias : tensor<8xf32>
    %p = train.add %p0, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    %r = train.add %res, %p : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
    return %r : tensor<2x3x8xf32>
  }
}

// -----

// Left alone: a product with a second use, an add of a full-shape tensor
// (a residual), an add of a vector that broadcasts the product to a larger
// shape, a bias of the wrong length broadcast as [1], and a product read
// after a write to memory between it and the add.

// CHECK-LABEL: func.func @kept
// CHECK: %[[T:.*]] = train.matmul %arg0, %arg1 transpose_rhs
// CHECK-NEXT: train.add %[[T]], %arg2
// CHECK-NEXT: %[[F:.*]] = train.matmul %arg0, %arg1 transpose_rhs
// CHECK-NEXT: train.add %[[F]], %arg3
// CHECK-NEXT: %[[O:.*]] = train.matmul %arg0, %arg1 transpose_rhs
// CHECK-NEXT: train.add %[[O]], %arg4
// CHECK-NEXT: %[[W:.*]] = train.matmul %arg0, %arg1 transpose_rhs
// CHECK-NEXT: train.write
// CHECK-NEXT: train.add %[[W]], %arg2
// CHECK-NOT: train.matmul_bias
module {
  train.param @w : tensor<12x8xf32> init = zeros
  func.func @kept(%x: tensor<16x8xf32>, %w: tensor<12x8xf32>, %b: tensor<12xf32>, %full: tensor<16x12xf32>, %one: tensor<1xf32>) -> (tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>) {
    %t = train.matmul %x, %w transpose_rhs : (tensor<16x8xf32>, tensor<12x8xf32>) -> tensor<16x12xf32>
    %t1 = train.add %t, %b : (tensor<16x12xf32>, tensor<12xf32>) -> tensor<16x12xf32>
    %f = train.matmul %x, %w transpose_rhs : (tensor<16x8xf32>, tensor<12x8xf32>) -> tensor<16x12xf32>
    %f1 = train.add %f, %full : (tensor<16x12xf32>, tensor<16x12xf32>) -> tensor<16x12xf32>
    %o = train.matmul %x, %w transpose_rhs : (tensor<16x8xf32>, tensor<12x8xf32>) -> tensor<16x12xf32>
    %o1 = train.add %o, %one : (tensor<16x12xf32>, tensor<1xf32>) -> tensor<16x12xf32>
    %v = train.matmul %x, %w transpose_rhs : (tensor<16x8xf32>, tensor<12x8xf32>) -> tensor<16x12xf32>
    train.write %w to @w : tensor<12x8xf32>
    %v1 = train.add %v, %b : (tensor<16x12xf32>, tensor<12xf32>) -> tensor<16x12xf32>
    return %t, %t1, %f1, %o1, %v1 : tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x12xf32>
  }
}
