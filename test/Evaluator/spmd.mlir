// SPMD simulation: three ranks on a 1-D grid, each starting from data that
// depends on its process index, combined by the shard dialect's
// collectives. Every expected number is worked out by hand: rank r holds
// %x = [1, 2, 3, 4, 5, 6] + r.
//
// RUN: zeroc-run %s --ranks 3 --entry collectives | FileCheck %s
// RUN: zeroc-run %s --ranks 3 --entry gather2d | FileCheck %s --check-prefix=GATHER
// RUN: zeroc-run %s --ranks 3 --entry data_parallel --print-state | FileCheck %s --check-prefix=DP
// RUN: not zeroc-run %s --ranks 1 --entry collectives 2>&1 | FileCheck %s --check-prefix=ONE

shard.grid @grid(shape = 3)

// Per rank: the index; all_reduce sum (3 * base + 0 + 1 + 2), max (base +
// 2), min (base), average (base + 1); reduce_scatter of the sum (rank r
// gets elements 2r, 2r + 1); all_gather (every rank's %x in rank order);
// all_slice (rank r keeps elements 2r, 2r + 1 of its own %x: r + 2r + 1,
// r + 2r + 2).
// CHECK: "result_shapes": {{\[}}[], [6], [6], [6], [6], [2], [18], [2]]
// CHECK: "results": {{\[\[}}0, 6, 9, 12, 15, 18, 21, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 6, 9, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 8, 1, 2],
// CHECK-SAME: [1, 6, 9, 12, 15, 18, 21, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 12, 15, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 8, 4, 5],
// CHECK-SAME: [2, 6, 9, 12, 15, 18, 21, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 18, 21, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 8, 7, 8]]
//
// With one rank the same program needs a grid of one process.
// ONE: error: 'shard.process_linear_index' op grid @grid has shape [3], but --ranks 1 simulates a 1-D grid of size 1
// ONE: zeroc-run: evaluation of @collectives failed at step 0
func.func @collectives() -> (index, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<2xf32>, tensor<18xf32>, tensor<2xf32>) {
  %r = shard.process_linear_index on @grid : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %splat = tensor.splat %rf : tensor<6xf32>
  %base = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %x = train.add %base, %splat : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %sum = shard.all_reduce %x on @grid grid_axes = [0] : tensor<6xf32> -> tensor<6xf32>
  %max = shard.all_reduce %x on @grid grid_axes = [0] reduction = max : tensor<6xf32> -> tensor<6xf32>
  %min = shard.all_reduce %x on @grid grid_axes = [0] reduction = min : tensor<6xf32> -> tensor<6xf32>
  %avg = shard.all_reduce %x on @grid grid_axes = [0] reduction = average : tensor<6xf32> -> tensor<6xf32>
  %rs = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 0 : tensor<6xf32> -> tensor<2xf32>
  %ag = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0 : tensor<6xf32> -> tensor<18xf32>
  %as = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0 : tensor<6xf32> -> tensor<2xf32>
  return %r, %sum, %max, %min, %avg, %rs, %ag, %as : index, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<2xf32>, tensor<18xf32>, tensor<2xf32>
}

// Gathering along dimension 1 of a 2x1 per rank interleaves the ranks'
// columns: row i of the result is [10 i + 0, 10 i + 1, 10 i + 2]; the
// multi-index is the linear one on a 1-D grid.
// GATHER: "results": {{\[\[}}0, 0, 1, 2, 10, 11, 12], [1, 0, 1, 2, 10, 11, 12], [2, 0, 1, 2, 10, 11, 12]]
func.func @gather2d() -> (index, tensor<2x3xf32>) {
  %r = shard.process_multi_index on @grid : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %col = tensor.from_elements %rf, %rf : tensor<2x1xf32>
  %rows = arith.constant dense<[[0.0], [10.0]]> : tensor<2x1xf32>
  %x = train.add %rows, %col : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %g = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 1 : tensor<2x1xf32> -> tensor<2x3xf32>
  return %r, %g : index, tensor<2x3xf32>
}

// Data parallelism in miniature: each rank computes a rank-dependent
// "gradient" (r + 1) * [1, 1], the ranks average it, and every rank applies
// the same SGD step to its own copy of @p (initialized to ones): every
// replica ends at 1 - 0.5 * 2 = 0.
// DP: "results": {{\[\[}}2, 2], [2, 2], [2, 2]]
// DP: "state": {
// DP-NEXT: "p": [0, 0],
// DP-NEXT: "p.momentum_buffer": [2, 2]}
train.param @p : tensor<2xf32> init = ones
train.state @p.momentum_buffer : tensor<2xf32> momentum_buffer of @p
func.func @data_parallel() -> tensor<2xf32> {
  %r = shard.process_linear_index on @grid : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %one = arith.constant 1.0 : f32
  %r1 = arith.addf %rf, %one : f32
  %g = tensor.splat %r1 : tensor<2xf32>
  %avg = shard.all_reduce %g on @grid grid_axes = [0] reduction = average : tensor<2xf32> -> tensor<2xf32>
  %p = train.read @p : tensor<2xf32>
  %b = train.read @p.momentum_buffer : tensor<2xf32>
  %lr = train.fill 5.000000e-01 : tensor<f32>
  %p1, %b1 = train.sgd_update %p, %avg, %b, %lr momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<2xf32>
  train.write %p1 to @p : tensor<2xf32>
  train.write %b1 to @p.momentum_buffer : tensor<2xf32>
  return %avg : tensor<2xf32>
}
