// A state may be a member of one flat buffer only: the printers, which
// point each member into its buffer, reject a second one, naming it.
//
// RUN: not zeroc %s --no-pipeline --emit=source -o %t.cpp 2>&1 | FileCheck %s
// RUN: not test -e %t.cpp
// CHECK: error: 'train.buffer' op member @w.grad is a member of another train.buffer already
module attributes {train.world_size = 1 : i64, train.zero_stage = 0 : i64} {
  train.param @w : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<4xf32> grad of @w
  train.buffer @first : tensor<4xf32> <gradients> members [@w.grad] offsets [0]
  train.buffer @second : tensor<8xf32> <gradients> members [@w.grad] offsets [4]
  func.func @train_step(%tokens: memref<2x4xi32>, %targets: memref<2x4xi32>, %step: memref<i64, #train.host>, %loss: memref<f32, #train.host>, %norm: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.planned, train.step} {
    return
  }
}
