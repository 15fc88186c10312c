// RUN: zeroc-opt %s --split-input-file --train-raise=families=views | FileCheck %s

// A reshape of a reshape is one reshape; back to the input's type, nothing.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[X]] : tensor<2x8x16xf32> -> tensor<2x128xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshapes(%x: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x128xf32>) {
  %a = train.reshape %x : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  %b = train.reshape %a : tensor<2x8x4x4xf32> -> tensor<2x8x16xf32>
  %c = train.reshape %a : tensor<2x8x4x4xf32> -> tensor<2x128xf32>
  return %b, %c : tensor<2x8x16xf32>, tensor<2x128xf32>
}

// -----

// Transposes compose; the identity is dropped.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[X]] [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transposes(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>) {
  %a = train.transpose %x [0, 2, 1, 3] : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32>
  %b = train.transpose %a [0, 2, 1, 3] : tensor<2x4x3x5xf32> -> tensor<2x3x4x5xf32>
  %c = train.transpose %a [0, 1, 3, 2] : tensor<2x4x3x5xf32> -> tensor<2x4x5x3xf32>
  return %b, %c : tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>
}

// -----

// A transpose that moves only a size-1 dimension is a reshape; one that
// moves others too is their transpose between two reshapes.
// CHECK-LABEL: func.func @unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x1x4xf32>)
// CHECK-NEXT: %[[A:.*]] = train.reshape %[[X]] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
// CHECK-NEXT: %[[S:.*]] = train.reshape %[[X]] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4xf32>
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[S]] [0, 2, 1, 3] : tensor<2x4x8x4xf32> -> tensor<2x8x4x4xf32>
// CHECK-NEXT: %[[B:.*]] = train.reshape %[[T]] : tensor<2x8x4x4xf32> -> tensor<2x8x4x4x1xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @unit_dims(%x: tensor<2x4x8x1x4xf32>) -> (tensor<2x4x8x4x1xf32>, tensor<2x8x4x4x1xf32>) {
  %a = train.transpose %x [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
  %b = train.transpose %x [0, 2, 1, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x8x4x4x1xf32>
  return %a, %b : tensor<2x4x8x4x1xf32>, tensor<2x8x4x4x1xf32>
}

// -----

// A transpose that keeps the merged heads (2 x 2 -> 4) whole moves before
// the reshape, and before the broadcast of the same rank.
// CHECK-LABEL: func.func @through_reshape_and_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x2x4xf32>)
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[X]] [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
// CHECK-NEXT: %[[U:.*]] = train.reshape %[[T]] : tensor<2x2x8x4xf32> -> tensor<2x2x1x8x4xf32>
// CHECK-NEXT: %[[B:.*]] = train.broadcast %[[U]] : tensor<2x2x1x8x4xf32> -> tensor<2x2x2x8x4xf32>
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[B]] : tensor<2x2x2x8x4xf32> -> tensor<2x4x8x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @through_reshape_and_broadcast(%x: tensor<2x8x2x4xf32>) -> tensor<2x4x8x4xf32> {
  %u = train.reshape %x : tensor<2x8x2x4xf32> -> tensor<2x8x2x1x4xf32>
  %b = train.broadcast %u : tensor<2x8x2x1x4xf32> -> tensor<2x8x2x2x4xf32>
  %r = train.reshape %b : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4xf32>
  %t = train.transpose %r [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  return %t : tensor<2x4x8x4xf32>
}

// -----

// Left alone: a transpose that separates the dimensions a reshape split
// (16 -> 4 x 4), one of a reshape (2 x 2 -> 4) read elsewhere too, and the
// size-1 batch dimension (never dropped nor moved).
// CHECK-LABEL: func.func @kept
// CHECK-NEXT: train.reshape
// CHECK-NEXT: train.transpose {{.*}} [0, 2, 1, 3] : tensor<2x8x4x4xf32>
// CHECK-NEXT: train.reshape
// CHECK-NEXT: train.transpose {{.*}} [0, 2, 1, 3] : tensor<2x8x4x4xf32>
// CHECK-NEXT: train.transpose {{.*}} [0, 2, 1] : tensor<1x8x4xf32>
// CHECK-NEXT: return
func.func @kept(%x: tensor<2x8x16xf32>, %y: tensor<2x8x2x2x4xf32>, %z: tensor<1x8x4xf32>) -> (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x8x4x4xf32>, tensor<1x4x8xf32>) {
  %a = train.reshape %x : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  %t = train.transpose %a [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  %b = train.reshape %y : tensor<2x8x2x2x4xf32> -> tensor<2x8x4x4xf32>
  %u = train.transpose %b [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  %w = train.transpose %z [0, 2, 1] : tensor<1x8x4xf32> -> tensor<1x4x8xf32>
  return %t, %u, %b, %w : tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>, tensor<2x8x4x4xf32>, tensor<1x4x8xf32>
}

// -----

// A bmm of [B*H, ...] operands merged from [B, H, ...] values is done on
// them; an operand merged from other leading dimensions (2 x 2 x 2 -> 8)
// is reshaped to the lhs's [2, 4]. A reshape that changes the last two
// dimensions is no merge of the batch: left alone.
// CHECK-LABEL: func.func @matmul_batch
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x8x16xf32>, %[[B:.*]]: tensor<2x4x16x8xf32>, %[[C:.*]]: tensor<2x2x2x16x8xf32>, %[[D:.*]]: tensor<2x4x128xf32>)
// CHECK: %[[M:.*]] = train.matmul %[[A]], %[[B]] : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[M]] : tensor<2x4x8x8xf32> -> tensor<8x8x8xf32>
// CHECK-NEXT: %[[C4:.*]] = train.reshape %[[C]] : tensor<2x2x2x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT: %[[N:.*]] = train.matmul %[[A]], %[[C4]] : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT: train.reshape %[[N]] : tensor<2x4x8x8xf32> -> tensor<8x8x8xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
func.func @matmul_batch(%a: tensor<2x4x8x16xf32>, %b: tensor<2x4x16x8xf32>, %c: tensor<2x2x2x16x8xf32>, %d: tensor<2x4x128xf32>) -> (tensor<8x8x8xf32>, tensor<8x8x8xf32>, tensor<8x8x8xf32>) {
  %a3 = train.reshape %a : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %b3 = train.reshape %b : tensor<2x4x16x8xf32> -> tensor<8x16x8xf32>
  %c3 = train.reshape %c : tensor<2x2x2x16x8xf32> -> tensor<8x16x8xf32>
  %d3 = train.reshape %d : tensor<2x4x128xf32> -> tensor<8x16x8xf32>
  %m = train.matmul %a3, %b3 : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
  %n = train.matmul %a3, %c3 : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
  %o = train.matmul %a3, %d3 : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
  return %m, %n, %o : tensor<8x8x8xf32>, tensor<8x8x8xf32>, tensor<8x8x8xf32>
}
