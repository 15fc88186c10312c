// A flat buffer adds its padding to its category: the grad states take
// (4 + 3) * 4 = 28 bytes, the buffer of 10 elements 40, so the gradients
// are 40 bytes (a buffer without padding would add nothing).
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s
// CHECK:      "per_rank_bytes": {
// CHECK-NEXT:   "parameters": 28,
// CHECK-NEXT:   "gradients": 40,
// CHECK-NEXT:   "optimizer_states": 0,
// CHECK-NEXT:   "model_states": 68
module attributes {train.world_size = 1 : i64, train.zero_stage = 0 : i64} {
  train.param @w : tensor<4xf32> init = zeros
  train.state @w.grad : tensor<4xf32> grad of @w
  train.param @b : tensor<3xf32> init = zeros
  train.state @b.grad : tensor<3xf32> grad of @b
  train.buffer @bucket : tensor<10xf32> <gradients> members [@w.grad, @b.grad] offsets [0, 4]
  func.func @train_step(%tokens: memref<2x4xi32>, %targets: memref<2x4xi32>, %step: memref<i64, #train.host>, %loss: memref<f32, #train.host>, %norm: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.planned, train.step} {
    %0 = train.storage @bucket : memref<10xf32>
    return
  }
}
