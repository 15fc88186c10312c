// RUN: zeroc-opt %s --train-fuse-head-split -split-input-file | FileCheck %s

// q, k and v split from one projection, each viewed as heads and
// transposed alike: one transpose of the projection viewed with the parts
// as a dimension, moved first, and an unpack of its three parts. The
// transpose is traced as the first part's; the views are not traced.

// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x4x24xf32>)
// CHECK-NEXT: %[[H:.*]] = train.reshape %[[QKV]] : tensor<2x4x24xf32> -> tensor<2x4x3x2x4xf32>
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[H]] [2, 0, 3, 1, 4] {train.trace = {{.*}}name = "transpose q"{{.*}}} : tensor<2x4x3x2x4xf32> -> tensor<3x2x2x4x4xf32>
// CHECK-NEXT: %[[F:.*]] = train.reshape %[[T]] : tensor<3x2x2x4x4xf32> -> tensor<192xf32>
// CHECK-NEXT: %[[P:.*]]:3 = train.unpack %[[F]] : tensor<192xf32> -> tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
// CHECK-NOT: train.split
// CHECK-NOT: train.transpose
// CHECK: train.attention %[[P]]#0, %[[P]]#1, %[[P]]#2 causal
func.func @heads(%qkv: tensor<2x4x24xf32>) -> tensor<2x2x4x4xf32> {
  %q, %k, %v = train.split %qkv dim = 2 {train.trace = {bytes = 0 : i64, collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64, kind = "split", location = "x.py:1:1", name = "split", phase = "forward"}} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %q4 = train.reshape %q : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %k4 = train.reshape %k : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %v4 = train.reshape %v : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %qh = train.transpose %q4 [0, 2, 1, 3] {train.trace = {bytes = 0 : i64, collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64, kind = "transpose", location = "x.py:2:1", name = "transpose q", phase = "forward"}} : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %kh = train.transpose %k4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %vh = train.transpose %v4 [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %a = train.attention %qh, %kh, %vh causal scale = 5.000000e-01 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  return %a : tensor<2x2x4x4xf32>
}

// -----

// Parts transposed without a reshape: the stacked view is the input with
// the parts' dimension inserted before the last.

// CHECK-LABEL: func.func @plain
// CHECK-NEXT: %[[H:.*]] = train.reshape %arg0 : tensor<3x10xf32> -> tensor<3x2x5xf32>
// CHECK-NEXT: %[[T:.*]] = train.transpose %[[H]] [1, 2, 0] : tensor<3x2x5xf32> -> tensor<2x5x3xf32>
// CHECK-NEXT: %[[F:.*]] = train.reshape %[[T]] : tensor<2x5x3xf32> -> tensor<30xf32>
// CHECK-NEXT: %[[P:.*]]:2 = train.unpack %[[F]] : tensor<30xf32> -> tensor<5x3xf32>, tensor<5x3xf32>
// CHECK-NEXT: return %[[P]]#0, %[[P]]#1
func.func @plain(%x: tensor<3x10xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  %a, %b = train.split %x dim = 1 : tensor<3x10xf32> -> tensor<3x5xf32>, tensor<3x5xf32>
  %at = train.transpose %a [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  %bt = train.transpose %b [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  return %at, %bt : tensor<5x3xf32>, tensor<5x3xf32>
}

// -----

// Left alone: a part with another use, parts transposed differently, a
// split along another dimension than the last, a reshape that merges a
// leading dimension.

// CHECK-LABEL: func.func @other_use
// CHECK: train.split
// CHECK-NOT: train.unpack
func.func @other_use(%x: tensor<2x24xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x8xf32>) {
  %a, %b, %c = train.split %x dim = 1 : tensor<2x24xf32> -> tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
  %at = train.transpose %a [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %bt = train.transpose %b [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %ct = train.transpose %c [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %s = train.add %a, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %at, %bt, %ct, %s : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @different_perms
// CHECK: train.split
// CHECK-NOT: train.unpack
func.func @different_perms(%x: tensor<2x4x24xf32>) -> (tensor<3x2x4x4xf32>, tensor<2x3x4x4xf32>) {
  %a, %b = train.split %x dim = 2 : tensor<2x4x24xf32> -> tensor<2x4x12xf32>, tensor<2x4x12xf32>
  %ar = train.reshape %a : tensor<2x4x12xf32> -> tensor<2x4x3x4xf32>
  %br = train.reshape %b : tensor<2x4x12xf32> -> tensor<2x4x3x4xf32>
  %at = train.transpose %ar [2, 0, 1, 3] : tensor<2x4x3x4xf32> -> tensor<3x2x4x4xf32>
  %bt = train.transpose %br [0, 2, 1, 3] : tensor<2x4x3x4xf32> -> tensor<2x3x4x4xf32>
  return %at, %bt : tensor<3x2x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @leading_dim
// CHECK: train.split
// CHECK-NOT: train.unpack
func.func @leading_dim(%y: tensor<4x6xf32>) -> (tensor<6x2xf32>, tensor<6x2xf32>) {
  %a, %b = train.split %y dim = 0 : tensor<4x6xf32> -> tensor<2x6xf32>, tensor<2x6xf32>
  %at = train.transpose %a [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  %bt = train.transpose %b [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  return %at, %bt : tensor<6x2xf32>, tensor<6x2xf32>
}

// -----

// CHECK-LABEL: func.func @merged_leading
// CHECK: train.split
// CHECK-NOT: train.unpack
func.func @merged_leading(%x: tensor<2x4x16xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a, %b = train.split %x dim = 2 : tensor<2x4x16xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %ar = train.reshape %a : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %br = train.reshape %b : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %at = train.transpose %ar [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %bt = train.transpose %br [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %at, %bt : tensor<8x8xf32>, tensor<8x8xf32>
}
