// zeroc's ZeRO ops on two ranks, checked by hand: packing end to end and
// the asynchronous collectives with their waits.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: zeroc-run %t/ops.mlir --ranks 2 --entry pack | FileCheck %s --check-prefix=PACK
// RUN: zeroc-run %t/ops.mlir --ranks 2 --entry collectives | FileCheck %s
// RUN: zeroc-run %t/sharded.mlir --ranks 2 --print-state | FileCheck %s --check-prefix=SHARDED

// Sharded storage (a train.buffer with `shards = N`, train-zero's bucket
// buffers): each rank reads its flat shard of 4 / 2 = 2 elements, the last
// one padding (zero); the printed state is the full member (more in
// sharded-state.mlir and flat-buffer.mlir).
// SHARDED: "results": {{\[}}[1, 1], [1, 0]]
// SHARDED: "w": [1, 1, 1]}

//--- ops.mlir

shard.grid @dp(shape = 2)

// %a (6 elements), %b (3) and a zero pad (1) end to end: the buffer is
// [1 .. 9, 0], which cuts into two segments of 5, [1 .. 5] and [6 .. 9, 0]
// (as a reduce-scatter would). Unpacking the buffer restores %a and %b;
// unpacking segment 1 into 3 + 2 gives [6, 7, 8] and [9, 0].
// PACK: "results": {{\[\[}}1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 6, 7, 8, 9, 0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 6, 7, 8, 9, 0]]
func.func @pack() -> (tensor<10xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<2xf32>) {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[7.0, 8.0, 9.0]> : tensor<3xf32>
  %pad = train.fill 0.0 : tensor<1xf32>
  %buf = train.pack %a, %b, %pad : tensor<2x3xf32>, tensor<3xf32>, tensor<1xf32> -> tensor<10xf32>
  %a1, %b1, %p1 = train.unpack %buf : tensor<10xf32> -> tensor<2x3xf32>, tensor<3xf32>, tensor<1xf32>
  %parts:2 = train.split %buf dim = 0 : tensor<10xf32> -> tensor<5xf32>, tensor<5xf32>
  %sa, %sb = train.unpack %parts#1 : tensor<5xf32> -> tensor<3xf32>, tensor<2xf32>
  return %buf, %a1, %b1, %p1, %sa, %sb : tensor<10xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<2xf32>
}

// Rank r holds %x = [1, 2, 3, 4] + 10 r. The all-reduce sums to
// [12, 14, 16, 18] on both; the reduce-scatter gives rank r elements
// [2r, 2r + 2) of that sum; the all-gather joins both ranks' %x.
// CHECK: "results": {{\[\[}}12, 14, 16, 18, 12, 14, 1, 2, 3, 4, 11, 12, 13, 14], [12, 14, 16, 18, 16, 18, 1, 2, 3, 4, 11, 12, 13, 14]]
func.func @collectives() -> (tensor<4xf32>, tensor<2xf32>, tensor<8xf32>) {
  %r = shard.process_linear_index on @dp : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %ten = arith.constant 10.0 : f32
  %r10 = arith.mulf %rf, %ten : f32
  %off = tensor.splat %r10 : tensor<4xf32>
  %base = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %x = train.add %base, %off : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f1 = train.all_reduce_start %x on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
  %f2 = train.reduce_scatter_start %x on @dp : tensor<4xf32> -> !train.future<tensor<2xf32>>
  %f3 = train.all_gather_start %x on @dp : tensor<4xf32> -> !train.future<tensor<8xf32>>
  %sum = train.wait %f1 : !train.future<tensor<4xf32>>
  %part = train.wait %f2 : !train.future<tensor<2xf32>>
  %all = train.wait %f3 : !train.future<tensor<8xf32>>
  train.release %all : tensor<8xf32>
  return %sum, %part, %all : tensor<4xf32>, tensor<2xf32>, tensor<8xf32>
}

//--- sharded.mlir
shard.grid @dp(shape = 2)
train.param @w : tensor<3xf32> init = ones
train.buffer @params : tensor<4xf32> <parameters> members [@w] offsets [0] shards = 2

func.func @sharded() -> tensor<2xf32> attributes {train.forward} {
  %w = train.read @params : tensor<2xf32>
  return %w : tensor<2xf32>
}
