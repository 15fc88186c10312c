// RUN: zeroc-opt %s --train-assign-buckets=bucket-bytes=64 | FileCheck %s --check-prefix=B64
// RUN: zeroc-opt %s --train-assign-buckets=bucket-bytes=1000 | FileCheck %s --check-prefix=ONE
// RUN: zeroc-opt %s --train-assign-buckets=bucket-bytes=1 | FileCheck %s --check-prefix=EACH

// A step as train-optimizer writes it, by hand: backward computes @b2's
// and @w2's gradients first (the last layer), then @w1's and @b1's, and
// train.gradients lists them in another order. The buckets follow
// backward's order, whatever the order of train.gradients or of the
// squared norms; a bucket closes once it holds at least bucket-bytes.

// 64 bytes: @b2 (20 B) + @w2 (80 B) close the first bucket; @e (bf16)
// starts a bucket of its own inside the second group (the group's bytes
// go on counting: 16 B + 48 B = 64 closes it), and @b1 opens the third.
// B64: module attributes {train.batch_split = 2 : i64, train.buckets = {{\[}}[@b2, @w2], [@w1], [@e], [@b1]]}
// ONE: train.buckets = {{\[}}[@b2, @w2, @w1], [@e], [@b1]]}
// EACH: train.buckets = {{\[}}[@b2], [@w2], [@w1], [@e], [@b1]]}
// The step is unchanged.
// B64-LABEL: func.func @train_step
// B64: %[[N1:.*]] = train.squared_norm %{{.*}} : tensor<4x3xf32>
// B64-NOT: train.buffer
module attributes {train.batch_split = 2 : i64} {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-08 weight_decay = 0.1
  train.param @w1 : tensor<4x3xf32> init = zeros
  train.param @b1 : tensor<4xf32> init = zeros
  train.param @w2 : tensor<5x4xf32> init = zeros
  train.param @b2 : tensor<5xf32> init = zeros
  train.param @e : tensor<8xbf16> init = zeros
  func.func @train_step(%s: tensor<i64>) -> tensor<f32> attributes {train.step, train.gradients = [@w1, @b1, @w2, @b2, @e]} {
    %db2 = train.fill 1.0 : tensor<5xf32>
    %dw2 = train.fill 1.0 : tensor<5x4xf32>
    %dw1 = train.fill 1.0 : tensor<4x3xf32>
    %de = train.fill 1.0 : tensor<8xbf16>
    %db1 = train.fill 1.0 : tensor<4xf32>
    %lr = train.lr_schedule %s lr = 1.0e-03 schedule = constant : (tensor<i64>) -> tensor<f32>
    %n1 = train.squared_norm %dw1 : tensor<4x3xf32> -> tensor<f32>
    %n2 = train.squared_norm %db1 : tensor<4xf32> -> tensor<f32>
    %n3 = train.squared_norm %dw2 : tensor<5x4xf32> -> tensor<f32>
    %n4 = train.squared_norm %db2 : tensor<5xf32> -> tensor<f32>
    %n5 = train.squared_norm %de : tensor<8xbf16> -> tensor<f32>
    return %n1 : tensor<f32>
  }
}
