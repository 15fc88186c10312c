// RUN: not zeroc %s --world-size=2 --emit=mlir -o /dev/null 2>&1 | FileCheck %s

// A model that mixes the examples of its batch is refused once, at the op
// and its source line: the @logits copy that train-logits tries first
// (one sequence per call) does not repeat the error.
// CHECK: mixes-once.mlir:[[# @LINE + 11]]:10: error: 'train.softmax' op mixes the examples of the batch: its batch dimension is 2 and the op normalizes along it, so it does not split across ranks
// CHECK-NOT: mixes the examples
// CHECK: zeroc: error: the pipeline failed at pass 'train-data-parallel'
// CHECK-NOT: mixes the examples
module {
  train.param @emb : tensor<16x8xf32> init = normal std = 0.02
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @emb : tensor<16x8xf32>
    %x = train.embedding %w[%tokens] : (tensor<16x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    %t = train.transpose %x [1, 2, 0] : tensor<4x6x8xf32> -> tensor<6x8x4xf32>
    // The softmax runs across the 4 sequences of the batch.
    %s = train.softmax %t : tensor<6x8x4xf32>
    %b = train.transpose %s [2, 0, 1] : tensor<6x8x4xf32> -> tensor<4x6x8xf32>
    %l = train.cross_entropy %b, %targets : (tensor<4x6x8xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
