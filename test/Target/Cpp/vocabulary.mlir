// RUN: zeroc %s --grad-accum=2 --emit=source | FileCheck %s
// RUN: zeroc %s --world-size=2 --emit=source | FileCheck %s --check-prefix=SPLIT

// The program's vocabulary (the bound the runtime checks token ids and
// targets against, and the logits' width when sampling) is the rows of the
// embedding that reads the token ids, here through the slices that cut the
// micro-batches, and the classes of the loss: 16. A second embedding of 3
// rows indexed by segment ids sliced from a constant (not the tokens, and
// not read from a train.constant directly) does not bound it.
// CHECK: static const zrt_program program = {
// CHECK-NEXT: "segments", 1, 0,
// CHECK-NEXT: 4, 6, 16, ZRT_I32,
// SPLIT: static const zrt_program program = {
// SPLIT-NEXT: "segments", 2, 0,
// SPLIT-NEXT: 2, 6, 16, ZRT_I32,
module attributes {train.model = "segments"} {
  train.optimizer adamw lr = 0.001 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1
  train.param @wte : tensor<16x8xf32> init = normal std = 0.02
  train.param @seg : tensor<3x8xf32> init = normal std = 0.02
  train.param @head : tensor<16x8xf32> init = normal std = 0.02
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte : tensor<16x8xf32>
    %x = train.embedding %wte[%tokens] : (tensor<16x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    %all = train.constant dense<[0, 0, 0, 1, 1, 1, 2, 2]> : tensor<8xi32>
    %ids = train.slice %all offsets = [0] strides = [1] : tensor<8xi32> -> tensor<6xi32>
    %seg = train.read @seg : tensor<3x8xf32>
    %s = train.embedding %seg[%ids] : (tensor<3x8xf32>, tensor<6xi32>) -> tensor<6x8xf32>
    %y = train.add %x, %s : (tensor<4x6x8xf32>, tensor<6x8xf32>) -> tensor<4x6x8xf32>
    %head = train.read @head : tensor<16x8xf32>
    %logits = train.matmul %y, %head transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %l = train.cross_entropy %logits, %targets : (tensor<4x6x16xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
