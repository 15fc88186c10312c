// The optimizer updates over a rank's shard of a sharded flat buffer
// (decay_ranges): on two ranks, each holding 4 of the buffer's 8 logical
// elements, only the elements whose logical index rank * 4 + i lies in
// [0, 3) or [5, 8) take weight decay. With a zero gradient the update
// term vanishes, so by hand: a decayed element of 1 becomes
// 1 - lr * weight_decay = 1 - 0.5 * 0.5 = 0.75 (AdamW and SGD alike: SGD's
// momentum buffer is then weight_decay * p = 0.5), every other stays 1
// (and its SGD buffer 0).
//
// RUN: zeroc-run %s --ranks 2 --entry adamw --fp64 | FileCheck %s --check-prefix=ADAMW
// RUN: zeroc-run %s --ranks 2 --entry sgd --fp64 | FileCheck %s --check-prefix=SGD
// RUN: zeroc-run %s --ranks 2 --entry no_ranges --fp64 | FileCheck %s --check-prefix=ALL
// RUN: zeroc-run %s --ranks 2 --entry replicated --fp64 | FileCheck %s --check-prefix=WHOLE
//
// ADAMW: "results": {{\[\[}}0.75, 0.75, 0.75, 1],
// ADAMW-SAME: [1, 0.75, 0.75, 0.75]]
// SGD: "results": {{\[\[}}0.75, 0.75, 0.75, 1, 0.5, 0.5, 0.5, 0],
// SGD-SAME: [1, 0.75, 0.75, 0.75, 0, 0.5, 0.5, 0.5]]
// Without decay_ranges every element takes decay, on each rank alike.
// ALL: "results": {{\[\[}}0.75, 0.75, 0.75, 0.75],
// ALL-SAME: [0.75, 0.75, 0.75, 0.75]]
// With `replicated` each rank updates the whole buffer: index i on every
// rank, so [0, 3) decays alike on both (AdamW, then SGD's param and
// buffer).
// WHOLE: "results": {{\[\[}}0.75, 0.75, 0.75, 1, 0.75, 0.75, 0.75, 1, 0.5, 0.5, 0.5, 0],
// WHOLE-SAME: [0.75, 0.75, 0.75, 1, 0.75, 0.75, 0.75, 1, 0.5, 0.5, 0.5, 0]]

shard.grid @dp(shape = 2)

func.func @adamw(%step: tensor<i64>) -> tensor<4xf32> {
  %p = train.fill 1.0 : tensor<4xf32>
  %z = train.fill 0.0 : tensor<4xf32>
  %lr = train.fill 0.5 : tensor<f32>
  %p1, %m1, %v1 = train.adamw_update %p, %z, %z, %z, %lr, %step beta1 = 0.9 beta2 = 0.75 eps = 1.0e-8 weight_decay = 0.5 decay_ranges [0, 3, 5, 8] : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

func.func @sgd() -> (tensor<4xf32>, tensor<4xf32>) {
  %p = train.fill 1.0 : tensor<4xf32>
  %z = train.fill 0.0 : tensor<4xf32>
  %lr = train.fill 0.5 : tensor<f32>
  %p1, %b1 = train.sgd_update %p, %z, %z, %lr momentum = 0.9 weight_decay = 0.5 decay_ranges [0, 3, 5, 8] : tensor<4xf32>
  return %p1, %b1 : tensor<4xf32>, tensor<4xf32>
}

func.func @no_ranges(%step: tensor<i64>) -> tensor<4xf32> {
  %p = train.fill 1.0 : tensor<4xf32>
  %z = train.fill 0.0 : tensor<4xf32>
  %lr = train.fill 0.5 : tensor<f32>
  %p1, %m1, %v1 = train.adamw_update %p, %z, %z, %z, %lr, %step beta1 = 0.9 beta2 = 0.75 eps = 1.0e-8 weight_decay = 0.5 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

func.func @replicated(%step: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p = train.fill 1.0 : tensor<4xf32>
  %z = train.fill 0.0 : tensor<4xf32>
  %lr = train.fill 0.5 : tensor<f32>
  %p1, %m1, %v1 = train.adamw_update %p, %z, %z, %z, %lr, %step beta1 = 0.9 beta2 = 0.75 eps = 1.0e-8 weight_decay = 0.5 decay_ranges [0, 3] replicated : tensor<4xf32>
  %p2, %b2 = train.sgd_update %p, %z, %z, %lr momentum = 0.9 weight_decay = 0.5 decay_ranges [0, 3] replicated : tensor<4xf32>
  return %p1, %p2, %b2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
