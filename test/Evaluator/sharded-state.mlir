// Params and states in sharded train.buffers (`shards = N` on the buffer,
// train-zero's bucket buffers): rank r stores the flat elements
// [r*S, r*S + S) of the buffer, S = numel / N, its members laid end to end
// and the rest padding (zero). --print-state, --save-state and --init deal
// in full tensors under the members' names.
//
// RUN: rm -rf %t && split-file %s %t
//
// Initialization draws element i of the full tensor at index i, so the
// shards of 3 ranks put together are bitwise the unsharded initial values
// (random.mlir's declarations, here in buffers sharded 3 ways: the f32
// params 12 + 8 + 3 + 3 = 26 padded to 27, the bf16 param and its master
// 8 padded to 9 each), and they follow the formula.
// RUN: zeroc-run %t/random-sharded.mlir --ranks 3 --steps 0 --seed 1234 --print-state > %t/sharded.json
// RUN: zeroc-run %S/random.mlir --steps 0 --seed 1234 --print-state > %t/unsharded.json
// RUN: %python %S/Inputs/state_check.py same-state %t/sharded.json %t/unsharded.json | FileCheck %s --check-prefix=SAME
// SAME: same state: 6 tensors
// RUN: %python %S/Inputs/rng_check.py params %t/sharded.json 1234 | FileCheck %s --check-prefix=FORMULA
// FORMULA: params ok
// Sharded tensors have no replicas to compare.
// RUN: FileCheck %s --check-prefix=NOREPLICA < %t/sharded.json
// NOREPLICA: "replica_max_abs_diff": {}}
//
// What each rank stores: loaded values 0..7 of @wpe (in a buffer of 9
// sharded 3 ways) cut into [0 1 2] [3 4 5] [6 7 pad]; its master starts
// from the loaded param; the moment from zeros.
// RUN: %python %S/Inputs/state_check.py make-layout-init %t/init.safetensors
// RUN: zeroc-run %t/layout.mlir --ranks 3 --init %t/init.safetensors --entry storage | FileCheck %s --check-prefix=STORAGE
// STORAGE: "result_shapes": {{\[}}[3], [3], [3], [2, 1]],
// STORAGE: "results": {{\[}}[0, 1, 2, 0, 1, 2, 0, 0, 0, 5, 6], [3, 4, 5, 3, 4, 5, 0, 0, 0, 5, 6], [6, 7, 0, 6, 7, 0, 0, 0, 0, 5, 6]]
//
// After each rank writes its own values into its shard of each buffer, the
// printed state puts each member together from the ranks that hold its
// elements (the padding is no member's); a replicated param comes from rank
// 0, with how far the other ranks are from it.
// RUN: zeroc-run %t/layout.mlir --ranks 3 --entry ranked --print-state --save-state %t/ranked.safetensors > %t/ranked.json
// RUN: FileCheck %s --check-prefix=RANKED < %t/ranked.json
// RANKED: "state": {
// RANKED-NEXT: "wpe": [0, 0, 0, 1, 1, 1, 2, 2],
// RANKED-NEXT: "wpe.master": [10, 10, 10, 11, 11, 11, 12, 12],
// RANKED-NEXT: "wpe.exp_avg": [20, 20, 20, 21, 21, 21, 22, 22],
// RANKED-NEXT: "rep": [0, 0]},
// RANKED-NEXT: "replica_max_abs_diff": {
// RANKED-NEXT: "rep": 1}}
//
// --save-state writes one file of full tensors with the declared shapes.
// RUN: %python %S/Inputs/state_check.py file %t/ranked.safetensors %t/ranked.json | FileCheck %s --check-prefix=FILE
// FILE: wpe F32 [8]
// FILE-NEXT: wpe.master F32 [8]
// FILE-NEXT: wpe.exp_avg F32 [8]
// FILE-NEXT: rep F32 [2, 1]
// FILE-NEXT: metadata: format=pt producer=zeroc-run ranks=3 seed=0
// FILE-NEXT: file ok: matches the printed state
//
// Loading it shards it again: the same state, and the same per-rank storage.
// RUN: zeroc-run %t/layout.mlir --ranks 3 --init %t/ranked.safetensors --steps 0 --print-state > %t/reloaded.json
// RUN: %python %S/Inputs/state_check.py same-state %t/ranked.json %t/reloaded.json | FileCheck %s --check-prefix=RELOAD
// RELOAD: same state: 4 tensors
// RUN: zeroc-run %t/layout.mlir --ranks 3 --init %t/ranked.safetensors --entry storage | FileCheck %s --check-prefix=RESTORE
// RESTORE: "results": {{\[}}[0, 0, 0, 10, 10, 10, 20, 20, 20, 0, 0], [1, 1, 1, 11, 11, 11, 21, 21, 21, 0, 0], [2, 2, 0, 12, 12, 0, 22, 22, 0, 0, 0]]
//
// The file does not depend on the layout: the unsharded model on one rank
// and the same model in buffers sharded over 2 ranks load it into the same
// state.
// RUN: zeroc-run %t/unsharded.mlir --init %t/ranked.safetensors --steps 0 --print-state > %t/one.json
// RUN: %python %S/Inputs/state_check.py same-state %t/ranked.json %t/one.json | FileCheck %s --check-prefix=RELOAD
// RUN: zeroc-run %t/two.mlir --ranks 2 --init %t/ranked.safetensors --steps 0 --print-state > %t/two.json
// RUN: %python %S/Inputs/state_check.py same-state %t/ranked.json %t/two.json | FileCheck %s --check-prefix=RELOAD
//
// A sharded buffer runs on as many ranks as it has shards.
// RUN: not zeroc-run %t/layout.mlir --ranks 2 --entry storage 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: 'train.buffer' op is sharded over 3 ranks (shards = 3), but the evaluator runs 2 (--ranks): run the partitioned program on as many ranks as it was partitioned for

//--- random-sharded.mlir
train.param @transformer.h.0.attn.c_attn.weight : tensor<3x4xf32> init = normal std = 2.000000e-02 decay
train.param @wpe : tensor<8xf32> init = normal std = 1.0
train.param @emb : tensor<2x4xbf16> init = normal std = 5.000000e-01
train.param @bias : tensor<3xf32> init = zeros
train.param @gain : tensor<3xf32> init = ones
train.state @emb.master : tensor<2x4xf32> master of @emb
train.buffer @params : tensor<27xf32> <parameters> members [@transformer.h.0.attn.c_attn.weight, @wpe, @bias, @gain] offsets [0, 12, 20, 23] shards = 3
train.buffer @params.bf16 : tensor<9xbf16> <parameters> members [@emb] offsets [0] shards = 3
train.buffer @master : tensor<9xf32> <optimizer_states> members [@emb.master] offsets [0] shards = 3

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}

//--- layout.mlir
shard.grid @dp(shape = 3)
train.param @wpe : tensor<8xf32> init = normal std = 1.0
train.state @wpe.master : tensor<8xf32> master of @wpe
train.state @wpe.exp_avg : tensor<8xf32> exp_avg of @wpe
train.param @rep : tensor<2x1xf32> init = ones
train.buffer @params : tensor<9xf32> <parameters> members [@wpe] offsets [0] shards = 3
train.buffer @master : tensor<9xf32> <optimizer_states> members [@wpe.master] offsets [0] shards = 3
train.buffer @exp_avg : tensor<9xf32> <optimizer_states> members [@wpe.exp_avg] offsets [0] shards = 3

func.func @storage() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x1xf32>) {
  %w = train.read @params : tensor<3xf32>
  %m = train.read @master : tensor<3xf32>
  %v = train.read @exp_avg : tensor<3xf32>
  %r = train.read @rep : tensor<2x1xf32>
  return %w, %m, %v, %r : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x1xf32>
}

// Rank r writes r to its shard of @params (the padding is no member's and
// is dropped), 10 + r to the master's, 20 + r to the moment's and r / 2 to
// the replicated @rep.
func.func @ranked() -> tensor<f32> attributes {train.step} {
  %i = shard.process_linear_index on @dp : index
  %i64 = arith.index_cast %i : index to i64
  %r = arith.sitofp %i64 : i64 to f32
  %ten = arith.constant 1.000000e+01 : f32
  %twenty = arith.constant 2.000000e+01 : f32
  %half = arith.constant 5.000000e-01 : f32
  %m = arith.addf %r, %ten : f32
  %v = arith.addf %r, %twenty : f32
  %h = arith.mulf %r, %half : f32
  %w3 = tensor.splat %r : tensor<3xf32>
  %m3 = tensor.splat %m : tensor<3xf32>
  %v3 = tensor.splat %v : tensor<3xf32>
  %h2 = tensor.splat %h : tensor<2x1xf32>
  train.write %w3 to @params : tensor<3xf32>
  train.write %m3 to @master : tensor<3xf32>
  train.write %v3 to @exp_avg : tensor<3xf32>
  train.write %h2 to @rep : tensor<2x1xf32>
  %s = tensor.from_elements %r : tensor<f32>
  return %s : tensor<f32>
}

//--- unsharded.mlir
train.param @wpe : tensor<8xf32> init = normal std = 1.0
train.state @wpe.master : tensor<8xf32> master of @wpe
train.state @wpe.exp_avg : tensor<8xf32> exp_avg of @wpe
train.param @rep : tensor<2x1xf32> init = ones

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}

//--- two.mlir
train.param @wpe : tensor<8xf32> init = normal std = 1.0
train.state @wpe.master : tensor<8xf32> master of @wpe
train.state @wpe.exp_avg : tensor<8xf32> exp_avg of @wpe
train.param @rep : tensor<2x1xf32> init = ones
train.buffer @params : tensor<8xf32> <parameters> members [@wpe] offsets [0] shards = 2
train.buffer @master : tensor<8xf32> <optimizer_states> members [@wpe.master] offsets [0] shards = 2
train.buffer @exp_avg : tensor<8xf32> <optimizer_states> members [@wpe.exp_avg] offsets [0] shards = 2

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}
