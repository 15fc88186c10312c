// The generic ops of TrainMathOps.td, checked by hand (--fp64, so that the
// printed values are the exact ones: exp(1) = e, log(e^2) = 2, ...).
//
// RUN: zeroc-run %s --entry unary --fp64 | FileCheck %s --check-prefix=UNARY
// RUN: zeroc-run %s --entry erf --fp64 | FileCheck %s --check-prefix=ERF
// RUN: zeroc-run %s --entry compare | FileCheck %s --check-prefix=COMPARE
// RUN: zeroc-run %s --entry triangles | FileCheck %s --check-prefix=TRI
// RUN: zeroc-run %s --entry constants | FileCheck %s --check-prefix=CONST
// RUN: zeroc-run %s --entry bf16 | FileCheck %s --check-prefix=BF16

// exp [0, 1]; log [1, 4] (log 4 = 1.3862943611198906); tanh [0, 1]
// (0.76159415595576485); neg [2, -0] ; rsqrt [4, 0.25]; pow [-2, 3] by 3
// and [4, 9] by 0.5 and [2, 0] by -1 (1/0 = inf, as torch.pow).
// UNARY: "results": {{\[\[}}1, 2.7182818284590451, 0, 1.3862943611198906, 0, 0.76159415595576485, -2, -0, 0.5, 2, -8, 27, 2, 3, 0.5, "inf"]]
func.func @unary() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = train.exp %x : tensor<2xf32>
  %l4 = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %l = train.log %l4 : tensor<2xf32>
  %t = train.tanh %x : tensor<2xf32>
  %n2 = arith.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %n = train.neg %n2 : tensor<2xf32>
  %r4 = arith.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %r = train.rsqrt %r4 : tensor<2xf32>
  %b = arith.constant dense<[-2.0, 3.0]> : tensor<2xf32>
  %p3 = train.pow %b by 3.0 : tensor<2xf32>
  %s = arith.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %ph = train.pow %s by 0.5 : tensor<2xf32>
  %pm = train.pow %n2 by -1.0 : tensor<2xf32>
  return %e, %l, %t, %n, %r, %p3, %ph, %pm : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// erf [0, 1, -0.5, 3] (Python's math.erf: 0.8427007929497149,
// -0.5204998778130465, 0.9999779095030014).
// ERF: "results": {{\[\[}}0, 0.84270079294971{{[0-9]*}}, -0.52049987781304{{[0-9]*}}, 0.99997790950300{{[0-9]*}}]]
func.func @erf() -> tensor<4xf32> {
  %x = arith.constant dense<[0.0, 1.0, -0.5, 3.0]> : tensor<4xf32>
  %e = train.erf %x : tensor<4xf32>
  return %e : tensor<4xf32>
}

// a = [1, 2, 3, nan], b = [2, 2, 2, 2]: eq, ne, lt, le, gt, ge as 1/0
// (NaN compares false except for ne); then select(lt, a, b) and
// select([0, -1, 0.5, 0], a, b): the mask is "non-zero", not "is 1".
// COMPARE: "results": {{\[\[}}0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 2, 2, 2, 2, 2, 3, 2]]
func.func @compare() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 0x7FC00000]> : tensor<4xf32>
  %b = train.fill 2.0 : tensor<4xf32>
  %eq = train.compare %a, %b eq : tensor<4xf32>
  %ne = train.compare %a, %b ne : tensor<4xf32>
  %lt = train.compare %a, %b lt : tensor<4xf32>
  %le = train.compare %a, %b le : tensor<4xf32>
  %gt = train.compare %a, %b gt : tensor<4xf32>
  %ge = train.compare %a, %b ge : tensor<4xf32>
  %y = train.select %lt, %a, %b : tensor<4xf32>
  %m = arith.constant dense<[0.0, -1.0, 0.5, 0.0]> : tensor<4xf32>
  %z = train.select %m, %a, %b : tensor<4xf32>
  return %eq, %ne, %lt, %le, %gt, %ge, %y, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A 3x4 matrix of 1..12 through tril 0, tril -1, triu 1, triu -1; and a
// batch of two 2x2 through tril 0 (each matrix masked alike).
// TRI: "results": {{\[\[}}1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0, 0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0, 0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12, 1, 0, 3, 4, 5, 0, 7, 8]]
func.func @triangles() -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x2x2xf32>) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %0 = train.tril %x diagonal = 0 : tensor<3x4xf32>
  %1 = train.tril %x diagonal = -1 : tensor<3x4xf32>
  %2 = train.triu %x diagonal = 1 : tensor<3x4xf32>
  %3 = train.triu %x diagonal = -1 : tensor<3x4xf32>
  %b = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %4 = train.tril %b diagonal = 0 : tensor<2x2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x2x2xf32>
}

// f32 (rounded: 0.1 is not an f32), i64 and i32 ids (an arange), -inf.
// CONST: "results": {{\[\[}}0.10000000149011612, -2, "-inf", 0, 1, 2, 3, 7, -1]]
func.func @constants() -> (tensor<3xf32>, tensor<4xi64>, tensor<2xi32>) {
  %f = train.constant dense<[0.1, -2.0, 0xFF800000]> : tensor<3xf32>
  %i = train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %j = train.constant dense<[7, -1]> : tensor<2xi32>
  return %f, %i, %j : tensor<3xf32>, tensor<4xi64>, tensor<2xi32>
}

// bf16: exp(1) rounds to 2.71875 (8 significant bits); a bf16 constant.
// BF16: "results": {{\[\[}}2.71875, 0.333984375, 3]]
func.func @bf16() -> (tensor<1xbf16>, tensor<2xbf16>) {
  %one = train.fill 1.0 : tensor<1xbf16>
  %e = train.exp %one : tensor<1xbf16>
  %c = train.constant dense<[0.33333333333333331, 3.0]> : tensor<2xbf16>
  return %e, %c : tensor<1xbf16>, tensor<2xbf16>
}
