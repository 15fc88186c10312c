// Function arguments: read from --inputs, split across ranks as a global
// batch, generated from the seed, and the step counter.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/rng_check.py make-inputs %t
//
// A [4, 3] global input splits into rows [0, 2) and [2, 4) on two ranks; a
// [2, 3] input goes whole to every rank.
// RUN: zeroc-run %s --entry rows --ranks 2 --inputs %t/global.safetensors | FileCheck %s --check-prefix=SPLIT
// SPLIT: "results": {{\[\[}}0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]
// RUN: zeroc-run %s --entry rows --ranks 2 --inputs %t/local.safetensors | FileCheck %s --check-prefix=WHOLE
// WHOLE: "results": {{\[\[}}-1, -2, -3, -4, -5, -6], [-1, -2, -3, -4, -5, -6]]
// RUN: not zeroc-run %s --entry rows --ranks 3 --inputs %t/global.safetensors 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// NOSPLIT: zeroc-run: {{.*}}global.safetensors: tensor 'arg0' has shape [4, 3], but argument #0 of @rows (tensor<2x3xf32>) needs [2, 3] or the global [6, 3]
//
// Generated inputs are the global batch too: two ranks of [2, 3] see the
// same numbers as one rank of [4, 3], and save the same file.
// RUN: zeroc-run %s --entry rows --ranks 2 --seed 9 --save-inputs %t/two.safetensors > %t/two.json
// RUN: zeroc-run %s --entry rows4 --seed 9 --save-inputs %t/one.safetensors > %t/one.json
// RUN: cmp %t/two.safetensors %t/one.safetensors
// RUN: %python %S/Inputs/rng_check.py same-values %t/two.json %t/one.json | FileCheck %s --check-prefix=SAME
// SAME: same 12 values
//
// Generated values follow the documented formula: floats normal(0, 1)
// rounded to f32, integers uniform in [0, K) with K the smallest vocabulary
// in the function (5, of the loss, not 7, of the table) or --int-range.
// RUN: zeroc-run %s --entry tokens --seed 4 --save-inputs %t/tokens.safetensors > /dev/null
// RUN: %python %S/Inputs/rng_check.py inputs %t/tokens.safetensors 4 5 | FileCheck %s --check-prefix=TOKENS
// TOKENS: inputs ok: arg0 normal f32 6 values, arg1 uniform [0, 5) 10 values
// RUN: zeroc-run %s --entry tokens --seed 4 --int-range 3 --save-inputs %t/tokens3.safetensors > /dev/null
// RUN: %python %S/Inputs/rng_check.py inputs %t/tokens3.safetensors 4 3 | FileCheck %s --check-prefix=TOKENS3
// TOKENS3: inputs ok: arg0 normal f32 6 values, arg1 uniform [0, 3) 10 values
//
// A scalar tensor<i64> argument counts the steps from 0, or from its value
// in --inputs.
// RUN: zeroc-run %s --entry counter --steps 3 | FileCheck %s --check-prefix=COUNT
// COUNT: {"step": 0, "results": {{\[\[}}0]]},
// COUNT-NEXT: {"step": 1, "results": {{\[\[}}1]]},
// COUNT-NEXT: {"step": 2, "results": {{\[\[}}2]]}]}
// RUN: zeroc-run %s --entry counter --steps 2 --inputs %t/step.safetensors | FileCheck %s --check-prefix=FROM
// FROM: {"step": 0, "results": {{\[\[}}41]]},
// FROM-NEXT: {"step": 1, "results": {{\[\[}}42]]}]}

func.func @rows(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

func.func @rows4(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

func.func @tokens(%x: tensor<2x3xf32>, %ids: tensor<2x5xi64>) -> tensor<f32> {
  %table = train.fill 1.0 : tensor<7x3xf32>
  %e = train.embedding %table[%ids] : (tensor<7x3xf32>, tensor<2x5xi64>) -> tensor<2x5x3xf32>
  %v = train.fill 0.0 : tensor<3x5xf32>
  %t = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
  %ce = train.cross_entropy %v, %t : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  return %ce : tensor<f32>
}

func.func @counter(%step: tensor<i64>) -> tensor<i64> {
  return %step : tensor<i64>
}
