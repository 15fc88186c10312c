// Parameter initialization follows the formula documented in
// include/zeroc/Support/Random.h, re-implemented in Inputs/rng_check.py:
// normal f32 and bf16 params, zeros, ones, and the f32 master copy of a
// bf16 param (its initial value before rounding to bf16). Every rank starts
// from the same values.
//
// RUN: zeroc-run %s --steps 0 --seed 1234 --print-state > %t.json
// RUN: %python %S/Inputs/rng_check.py params %t.json 1234 | FileCheck %s
// CHECK: params ok: 12 + 8 normal f32, 8 normal bf16, 8 master, 3 zeros, 3 ones
//
// Another seed gives other values; the ranks agree with each other.
// RUN: zeroc-run %s --steps 0 --seed 1235 --print-state > %t.other.json
// RUN: not %python %S/Inputs/rng_check.py params %t.other.json 1234 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: differ
// RUN: zeroc-run %s --ranks 3 --steps 0 --seed 1234 --print-state > %t.ranks.json
// RUN: %python %S/Inputs/rng_check.py params %t.ranks.json 1234 | FileCheck %s
// RUN: FileCheck %s --check-prefix=RANKS < %t.ranks.json
// RANKS: "replica_max_abs_diff": {
// RANKS-NEXT: "transformer.h.0.attn.c_attn.weight": 0,
// RANKS-NEXT: "wpe": 0,
// RANKS-NEXT: "emb": 0,
// RANKS-NEXT: "bias": 0,
// RANKS-NEXT: "gain": 0,
// RANKS-NEXT: "emb.master": 0}}
//
// Sharded declarations (`shards = N`, ZeRO) initialize each element from
// its index in the full tensor: see sharded-state.mlir.

train.param @transformer.h.0.attn.c_attn.weight : tensor<3x4xf32> init = normal std = 2.000000e-02 decay
train.param @wpe : tensor<8xf32> init = normal std = 1.0
train.param @emb : tensor<2x4xbf16> init = normal std = 5.000000e-01
train.param @bias : tensor<3xf32> init = zeros
train.param @gain : tensor<3xf32> init = ones
train.state @emb.master : tensor<2x4xf32> master of @emb

func.func @forward() -> tensor<f32> attributes {train.forward} {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}
