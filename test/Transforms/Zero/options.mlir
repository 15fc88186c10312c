// RUN: not zeroc-opt %s "--train-zero=stage=4 world-size=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not zeroc-opt %s "--train-zero=stage=0 world-size=0" 2>&1 | FileCheck %s --check-prefix=WORLD
// RUN: not zeroc-opt %s "--train-zero=stage=0 world-size=1 bucket-bytes=0" 2>&1 | FileCheck %s --check-prefix=BUCKET
// STAGE: error: stage must be 0, 1, 2 or 3, got 4
// WORLD: error: world-size must be at least 1, got 0
// BUCKET: error: bucket-bytes must be positive, got 0
module {
  train.param @w : tensor<4xf32> init = ones
}
