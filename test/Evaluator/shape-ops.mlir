// Shape manipulation, reductions, masks and embeddings, checked by hand.
//
// RUN: zeroc-run %s --entry layout | FileCheck %s --check-prefix=LAYOUT
// RUN: zeroc-run %s --entry reductions | FileCheck %s --check-prefix=REDUCE
// RUN: zeroc-run %s --entry masks | FileCheck %s --check-prefix=MASK
// RUN: zeroc-run %s --entry embedding | FileCheck %s --check-prefix=EMBED

// %x is [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]] (2x2x3).
// reshape to 3x4 keeps the row-major order. transpose [2, 0, 1]: result
// dim 0 is input dim 2, so result[k][i][j] = x[i][j][k]. split of a 2x4
// along dim 1 into two 2x2; concat of the two halves along dim 0.
// LAYOUT: "result_shapes": {{\[}}[3, 4], [3, 2, 2], [2, 2], [2, 2], [4, 2]]
// LAYOUT: "results": {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, 0, 1, 4, 5, 2, 3, 6, 7, 0, 1, 4, 5, 2, 3, 6, 7]]
func.func @layout() -> (tensor<3x4xf32>, tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>) {
  %x = arith.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %r = train.reshape %x : tensor<2x2x3xf32> -> tensor<3x4xf32>
  %t = train.transpose %x [2, 0, 1] : tensor<2x2x3xf32> -> tensor<3x2x2xf32>
  %y = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<2x4xf32>
  %a, %b = train.split %y dim = 1 : tensor<2x4xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %c = train.concat %a, %b dim = 0 : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  return %r, %t, %a, %b, %c : tensor<3x4xf32>, tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>
}

// Of the same %x: sum over dims [0] (2x3: x[0] + x[1]), over [1, 2]
// (per outer index: 0+..+5 = 15 and 6+..+11 = 51), over everything (66);
// mean over [2] (rows of 3: 1, 4, 7, 10); broadcast of [[1], [2]] to 2x2x2
// (repeat the column, then the leading dimension).
// REDUCE: "result_shapes": {{\[}}[2, 3], [2], [], [2, 2], [2, 2, 2]]
// REDUCE: "results": {{\[\[}}6, 8, 10, 12, 14, 16, 15, 51, 66, 1, 4, 7, 10, 1, 1, 2, 2, 1, 1, 2, 2]]
func.func @reductions() -> (tensor<2x3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2x2xf32>) {
  %x = arith.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %s0 = train.sum %x dims = [0] : tensor<2x2x3xf32> -> tensor<2x3xf32>
  %s12 = train.sum %x dims = [1, 2] : tensor<2x2x3xf32> -> tensor<2xf32>
  %all = train.sum %x dims = [0, 1, 2] : tensor<2x2x3xf32> -> tensor<f32>
  %m = train.mean %x dims = [2] : tensor<2x2x3xf32> -> tensor<2x2xf32>
  %c = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = train.broadcast %c : tensor<2x1xf32> -> tensor<2x2x2xf32>
  return %s0, %s12, %all, %m, %b : tensor<2x3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2x2xf32>
}

// causal_mask on the last two dimensions [T=3, S=3] of a 2x3x3: entries
// with column > row become -inf (or 0 with `zero`); softmax of a masked row
// gives the masked entries 0 and the rest 1/(kept entries).
// MASK: "results": {{\[\[}}1, "-inf", "-inf", 1, 1, "-inf", 1, 1, 1, 2, "-inf", "-inf", 2, 2, "-inf", 2, 2, 2, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0.5, 0.5, 0, 0.3333333432674408, 0.3333333432674408, 0.3333333432674408]]
func.func @masks() -> (tensor<2x3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %x = arith.constant dense<[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]> : tensor<2x3x3xf32>
  %m = train.causal_mask %x : tensor<2x3x3xf32>
  %ones = train.fill 1.0 : tensor<3x3xf32>
  %z = train.causal_mask %ones zero : tensor<3x3xf32>
  %masked = train.causal_mask %ones : tensor<3x3xf32>
  %p = train.softmax %masked : tensor<3x3xf32>
  return %m, %z, %p : tensor<2x3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

// embedding gathers rows 2, 0, 2 of the table; embedding_grad scatter-adds
// the rows of %g into a 3x2 zero table: row 2 gets [1, 2] + [5, 6], row 0
// gets [3, 4], row 1 nothing.
// EMBED: "results": {{\[\[}}4, 5, 0, 1, 4, 5, 3, 4, 0, 0, 6, 8]]
func.func @embedding() -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %table = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>
  %ids = arith.constant dense<[2, 0, 2]> : tensor<3xi32>
  %rows = train.embedding %table[%ids] : (tensor<3x2xf32>, tensor<3xi32>) -> tensor<3x2xf32>
  %g = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %dt = train.embedding_grad %g[%ids] : (tensor<3x2xf32>, tensor<3xi32>) -> tensor<3x2xf32>
  return %rows, %dt : tensor<3x2xf32>, tensor<3x2xf32>
}
