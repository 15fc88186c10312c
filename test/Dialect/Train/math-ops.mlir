// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Round-trip of every op of TrainMathOps.td (the generic ops of issue 31),
// with each piece of optional syntax, in f32 and bf16.

// CHECK-LABEL: func.func @unary(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[H:[a-z0-9_]+]]: tensor<3xbf16>, %[[S:[a-z0-9_]+]]: tensor<f32>)
// CHECK-NEXT:    train.exp %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.exp %[[H]] {note} : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.log %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.log %[[S]] : tensor<f32>{{$}}
// CHECK-NEXT:    train.tanh %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.tanh %[[H]] : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.neg %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.neg %[[H]] : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.rsqrt %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.rsqrt %[[H]] : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.erf %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.erf %[[H]] {note} : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.pow %[[X]] by 3.000000e+00 : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.pow %[[H]] by -5.000000e-01 {note} : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.pow %[[S]] by 0.000000e+00 : tensor<f32>{{$}}
func.func @unary(%x: tensor<4x8xf32>, %h: tensor<3xbf16>, %s: tensor<f32>) {
  %0 = train.exp %x : tensor<4x8xf32>
  %1 = train.exp %h {note} : tensor<3xbf16>
  %2 = train.log %x : tensor<4x8xf32>
  %3 = train.log %s : tensor<f32>
  %4 = train.tanh %x : tensor<4x8xf32>
  %5 = train.tanh %h : tensor<3xbf16>
  %6 = train.neg %x : tensor<4x8xf32>
  %7 = train.neg %h : tensor<3xbf16>
  %8 = train.rsqrt %x : tensor<4x8xf32>
  %9 = train.rsqrt %h : tensor<3xbf16>
  %e0 = train.erf %x : tensor<4x8xf32>
  %e1 = train.erf %h {note} : tensor<3xbf16>
  %10 = train.pow %x by 3.0 : tensor<4x8xf32>
  %11 = train.pow %h by -0.5 {note} : tensor<3xbf16>
  %12 = train.pow %s by 0.0 : tensor<f32>
  return
}

// CHECK-LABEL: func.func @compare_select(
// CHECK-SAME:      %[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<4x8xf32>, %[[H:[a-z0-9_]+]]: tensor<3xbf16>)
// CHECK-NEXT:    %[[M:.+]] = train.compare %[[A]], %[[B]] eq : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.compare %[[A]], %[[B]] ne : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.compare %[[A]], %[[B]] lt : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.compare %[[A]], %[[B]] le : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.compare %[[A]], %[[A]] gt : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    %[[MH:.+]] = train.compare %[[H]], %[[H]] ge {note} : tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.select %[[M]], %[[A]], %[[B]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.select %[[MH]], %[[H]], %[[H]] {note} : tensor<3xbf16>{{$}}
func.func @compare_select(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %h: tensor<3xbf16>) {
  %0 = train.compare %a, %b eq : tensor<4x8xf32>
  %1 = train.compare %a, %b ne : tensor<4x8xf32>
  %2 = train.compare %a, %b lt : tensor<4x8xf32>
  %3 = train.compare %a, %b le : tensor<4x8xf32>
  %4 = train.compare %a, %a gt : tensor<4x8xf32>
  %5 = train.compare %h, %h ge {note} : tensor<3xbf16>
  %6 = train.select %0, %a, %b : tensor<4x8xf32>
  %7 = train.select %5, %h, %h {note} : tensor<3xbf16>
  return
}

// CHECK-LABEL: func.func @triangles(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<8x8xf32>, %[[B:[a-z0-9_]+]]: tensor<2x3x5x7xbf16>)
// CHECK-NEXT:    train.tril %[[X]] diagonal = 0 : tensor<8x8xf32>{{$}}
// CHECK-NEXT:    train.triu %[[X]] diagonal = 1 : tensor<8x8xf32>{{$}}
// CHECK-NEXT:    train.tril %[[B]] diagonal = -2 {note} : tensor<2x3x5x7xbf16>{{$}}
// CHECK-NEXT:    train.triu %[[B]] diagonal = 9 : tensor<2x3x5x7xbf16>{{$}}
func.func @triangles(%x: tensor<8x8xf32>, %b: tensor<2x3x5x7xbf16>) {
  %0 = train.tril %x diagonal = 0 : tensor<8x8xf32>
  %1 = train.triu %x diagonal = 1 : tensor<8x8xf32>
  %2 = train.tril %b diagonal = -2 {note} : tensor<2x3x5x7xbf16>
  %3 = train.triu %b diagonal = 9 : tensor<2x3x5x7xbf16>
  return
}

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    train.constant dense<[1.000000e+00, -2.500000e-01, 0xFF800000, 4.000000e+00]> : tensor<4xf32>{{$}}
// CHECK-NEXT:    train.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xbf16>{{$}}
// CHECK-NEXT:    train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>{{$}}
// CHECK-NEXT:    train.constant {note} dense<[7, -1]> : tensor<2xi32>{{$}}
// CHECK-NEXT:    train.constant dense<5.000000e-01> : tensor<3xf32>{{$}}
// CHECK-NEXT:    train.constant dense<2.000000e+00> : tensor<f32>{{$}}
func.func @constants() {
  // -inf, as an additive attention mask holds.
  %0 = train.constant dense<[1.0, -0.25, 0xFF800000, 4.0]> : tensor<4xf32>
  %1 = train.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xbf16>
  %2 = train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %3 = train.constant {note} dense<[7, -1]> : tensor<2xi32>
  // A splat is accepted too (train.fill is the usual spelling).
  %4 = train.constant dense<0.5> : tensor<3xf32>
  %5 = train.constant dense<2.0> : tensor<f32>
  return
}
