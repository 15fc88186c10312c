// RUN: not zeroc-opt %s --train-data-parallel=world-size=0 2>&1 | FileCheck %s
// CHECK: error: world-size must be at least 1, got 0
module {
  train.param @w : tensor<4xf32> init = ones
}
