// Elementwise ops, broadcasting and rounding, checked by hand.
//
// RUN: zeroc-run %s --entry broadcasting | FileCheck %s --check-prefix=BCAST
// RUN: zeroc-run %s --entry unary | FileCheck %s --check-prefix=UNARY
// RUN: zeroc-run %s --entry rounding | FileCheck %s --check-prefix=F32
// RUN: zeroc-run %s --entry rounding --fp64 | FileCheck %s --check-prefix=FP64
// RUN: zeroc-run %s --entry bf16 | FileCheck %s --check-prefix=BF16
// RUN: zeroc-run %s --entry bf16 --fp64 | FileCheck %s --check-prefix=BF16-FP64

// add: rhs [3] repeats over rows; sub: rhs [2, 1] repeats over columns;
// mul: [2, 1] x [3] broadcast each other (an outer product); div likewise
// with the rows of %c.
// BCAST: "result_shapes": {{\[}}[2, 3], [2, 3], [2, 3], [2, 3]]
// BCAST: "results": {{\[\[}}11, 22, 33, 14, 25, 36, -1, 0, 1, 0, 1, 2, 20, 40, 60, 40, 80, 120, 0.5, 1, 1.5, 1, 1.25, 1.5]]
func.func @broadcasting() -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %c = arith.constant dense<[[2.0], [4.0]]> : tensor<2x1xf32>
  %add = train.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = train.sub %a, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %mul = train.mul %c, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %div = train.div %a, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %add, %sub, %mul, %div : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// scale by -0.5; relu; sqrt (of a negative number: NaN); fill.
// UNARY: "results": {{\[\[}}1, -0, -1.5, 0, 0, 3, 0, 2, 3, "nan", 2.5, 2.5]]
func.func @unary() -> (tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<2xf32>) {
  %x = arith.constant dense<[-2.0, 0.0, 3.0]> : tensor<3xf32>
  %s = train.scale %x by -5.000000e-01 : tensor<3xf32>
  %r = train.relu %x : tensor<3xf32>
  %y = arith.constant dense<[0.0, 4.0, 9.0, -1.0]> : tensor<4xf32>
  %q = train.sqrt %y : tensor<4xf32>
  %f = train.fill 2.5 : tensor<2xf32>
  return %s, %r, %q, %f : tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<2xf32>
}

// Every op's result is rounded to f32: 0.1 is not an f32; 1 + 1e-8 rounds
// to 1; 1/3. With --fp64 nothing is rounded.
// F32: "results": {{\[\[}}0.10000000149011612, 1, 0.3333333432674408]]
// FP64: "results": {{\[\[}}0.10000000000000001, 1.0000000099999999, 0.33333333333333331]]
func.func @rounding() -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %tenth = train.fill 0.1 : tensor<f32>
  %one = train.fill 1.0 : tensor<f32>
  %tiny = train.fill 1.0e-08 : tensor<f32>
  %sum = train.add %one, %tiny : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %three = train.fill 3.0 : tensor<f32>
  %third = train.div %one, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %tenth, %sum, %third : tensor<f32>, tensor<f32>, tensor<f32>
}

// bf16 keeps 8 significant bits. 1/3 (f32 0x3EAAAAAB) rounds up to
// 0x3EAB = 0.333984375. 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even,
// 1. 1 + 2^-7 + 2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6: to
// even, 1.015625. The cast of the f32 1/3 rounds the same way. With --fp64
// nothing rounds, not even the fills and the cast.
// BF16: "results": {{\[\[}}0.333984375, 1, 1.015625, 0.333984375]]
// BF16-FP64: "results": {{\[\[}}0.33333333333333331, 1.00390625, 1.01171875, 0.33333333333333331]]
func.func @bf16() -> (tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>) {
  %third = train.fill 0.33333333333333331 : tensor<bf16>
  %one = train.fill 1.0 : tensor<bf16>
  %eighth = train.fill 3.906250e-03 : tensor<bf16>
  %a = train.add %one, %eighth : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  %odd = train.fill 1.0078125 : tensor<bf16>
  %b = train.add %odd, %eighth : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  %f = train.fill 0.33333333333333331 : tensor<f32>
  %c = train.cast %f : tensor<f32> to tensor<bf16>
  return %third, %a, %b, %c : tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>
}
