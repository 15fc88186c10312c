// RUN: not zeroc-opt %s --train-mixed-precision=precision=fp16 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: zeroc-opt %s --train-mixed-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// BAD: error: precision must be bf16 or fp32, got 'fp16'
// With fp32 the pass only checks: an f32 model is left as it is.
// FP32: train.param @w : tensor<3xf32>
module {
  train.param @w : tensor<3xf32> init = ones
  func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3xf32>
    %y = train.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
