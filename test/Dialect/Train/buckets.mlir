// RUN: zeroc-opt %s | FileCheck %s
// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s

// train-assign-buckets' decision, the module attribute train.buckets, round-trips:
// each bucket's parameters in order, one element type per bucket.

// CHECK: module attributes {train.buckets = {{\[}}[@b, @w], [@e]]}
module attributes {train.buckets = [[@b, @w], [@e]]} {
  train.param @w : tensor<4x3xf32> init = zeros
  train.param @b : tensor<4xf32> init = zeros
  train.param @e : tensor<8xbf16> init = zeros
}
