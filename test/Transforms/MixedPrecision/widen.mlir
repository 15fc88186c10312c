// RUN: zeroc-opt %s --train-mixed-precision=precision=fp32 --verify-diagnostics
module {
  // expected-error @below {{the model is not fp32 (@w is 'tensor<3xbf16>'); zeroc does not widen a model to fp32}}
  train.param @w : tensor<3xbf16> init = ones
  func.func @forward(%x: tensor<2x3xbf16>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3xbf16>
    %y = train.mul %x, %w : (tensor<2x3xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
    %l = train.mean %y dims = [0, 1] : tensor<2x3xbf16> -> tensor<bf16>
    %f = train.cast %l : tensor<bf16> to tensor<f32>
    return %f : tensor<f32>
  }
}
