// With required=false (as the pipeline runs it), a model whose loss is not
// a cross-entropy simply gets no @logits.
// RUN: zeroc-opt %s --train-logits=required=false | FileCheck %s
// CHECK-NOT: @logits
module {
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
