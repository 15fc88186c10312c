// train.buffer in the evaluator: a buffer is a view of its members. On two
// ranks, @params (replicated, 8 elements: @a at 0, @b at 5, padding at 7)
// is every member whole on every rank; @moments (shards = 2: rank r stores
// elements [4r, 4r + 4)) cuts @a.exp_avg after its fourth element, and the
// gap at 5 and its padding are zero. Every number below is worked out by
// hand.
//
// RUN: rm -rf %t && mkdir -p %t
//
// Reads: the replicated buffer assembled from its members (a = 1, b = 0),
// the sharded one as each rank's shard (moments start at zero).
// RUN: zeroc-run %s --ranks 2 --entry reads | FileCheck %s --check-prefix=READS
// READS: "result_shapes": {{\[}}[8], [4]],
// READS: "results": {{\[\[}}1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
// READS-SAME: [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]]
//
// Writes: rank r writes r + 1 into its shard of @moments, and 7 into the
// replicated @params, which the members then read; the printed state puts
// each member's elements together from the ranks that hold them (a.exp_avg
// = 1 1 1 1 | 2, b.exp_avg at 6, 7 = 2 2), and the saved file holds the
// logical members.
// RUN: zeroc-run %s --ranks 2 --entry writes --print-state --save-state %t/state.safetensors > %t/writes.json
// RUN: FileCheck %s --check-prefix=WRITES < %t/writes.json
// WRITES: "results": {{\[\[}}7, 7, 7, 7, 7, 7, 7],
// WRITES-SAME: [7, 7, 7, 7, 7, 7, 7]]
// WRITES: "state": {
// WRITES-NEXT: "a": [7, 7, 7, 7, 7],
// WRITES-NEXT: "b": [7, 7],
// WRITES-NEXT: "a.exp_avg": [1, 1, 1, 1, 2],
// WRITES-NEXT: "b.exp_avg": [2, 2]},
// WRITES-NEXT: "replica_max_abs_diff": {
// WRITES-NEXT: "a": 0,
// WRITES-NEXT: "b": 0}}
//
// --init of the saved members: the sharded buffer's shards come back.
// RUN: zeroc-run %s --ranks 2 --entry reads --init %t/state.safetensors | FileCheck %s --check-prefix=INIT
// INIT: "results": {{\[\[}}7, 7, 7, 7, 7, 7, 7, 0, 1, 1, 1, 1],
// INIT-SAME: [7, 7, 7, 7, 7, 7, 7, 0, 2, 0, 2, 2]]
//
// A member of a sharded buffer is not stored whole on a rank, and the
// buffer needs as many ranks as it has shards.
// RUN: not zeroc-run %s --ranks 2 --entry member 2>&1 | FileCheck %s --check-prefix=MEMBER
// MEMBER: error: 'train.read' op @a.exp_avg is a member of the sharded buffer @moments, which each rank stores only a shard of: read and write the buffer
// RUN: not zeroc-run %s --ranks 1 --entry reads 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: 'train.buffer' op is sharded over 2 ranks (shards = 2), but the evaluator runs 1 (--ranks): run the partitioned program on as many ranks as it was partitioned for

shard.grid @dp(shape = 2)
train.param @a : tensor<5xf32> init = ones
train.param @b : tensor<2xf32> init = zeros
train.state @a.exp_avg : tensor<5xf32> exp_avg of @a
train.state @b.exp_avg : tensor<2xf32> exp_avg of @b
train.buffer @params : tensor<8xf32> <parameters> members [@a, @b] offsets [0, 5]
train.buffer @moments : tensor<8xf32> <optimizer_states> members [@a.exp_avg, @b.exp_avg] offsets [0, 6] shards = 2

func.func @reads() -> (tensor<8xf32>, tensor<4xf32>) {
  %p = train.read @params : tensor<8xf32>
  %m = train.read @moments : tensor<4xf32>
  return %p, %m : tensor<8xf32>, tensor<4xf32>
}

func.func @writes() -> (tensor<5xf32>, tensor<2xf32>) {
  %r = shard.process_linear_index on @dp : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %splat = tensor.splat %rf : tensor<4xf32>
  %one = train.fill 1.0 : tensor<4xf32>
  %m = train.add %splat, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  train.write %m to @moments : tensor<4xf32>
  %seven = train.fill 7.0 : tensor<8xf32>
  train.write %seven to @params : tensor<8xf32>
  %a = train.read @a : tensor<5xf32>
  %b = train.read @b : tensor<2xf32>
  return %a, %b : tensor<5xf32>, tensor<2xf32>
}

func.func @member() -> tensor<5xf32> {
  %m = train.read @a.exp_avg : tensor<5xf32>
  return %m : tensor<5xf32>
}
