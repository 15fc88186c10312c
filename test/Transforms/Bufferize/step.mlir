// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize | FileCheck %s

// A train.step function in buffer form: the entry point's signature (host
// step, host out-parameters for the loss, the norm and the learning rate),
// reads as the state's buffers, the update in place on them (its writes
// gone), the schedule writing the learning rate on the host, the results
// read back.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.*]]: memref<2x8xf32>, %[[T:.*]]: memref<2x8xi32>, %[[STEP:.*]]: memref<i64, #train.host>, %[[LOSS:.*]]: memref<f32, #train.host>, %[[NORM:.*]]: memref<f32, #train.host>, %[[LR:.*]]: memref<f32, #train.host>)
// CHECK-SAME: attributes {train.planned, train.step}
// CHECK: %[[W:.*]] = train.storage @w : memref<4x8xf32>
// CHECK: %[[Y:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<2x4xf32>
// CHECK: train.kernel ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<4x8xf32>) outs(%[[Y]] : memref<2x4xf32>)
// CHECK: train.matmul
// CHECK: %[[L:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
// CHECK: train.kernel ins(%[[Y]] : memref<2x4xf32>) outs(%[[L]] : memref<f32>)
// CHECK: %[[G:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4x8xf32>
// CHECK: train.kernel ins() outs(%[[G]] : memref<4x8xf32>)
// CHECK-NEXT: train.fused
// CHECK: train.kernel ins(%[[STEP]] : memref<i64, #train.host>) outs(%[[LR]] : memref<f32, #train.host>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.lr_schedule
// CHECK: %[[M:.*]] = train.storage @w.exp_avg
// CHECK: %[[V:.*]] = train.storage @w.exp_avg_sq
// CHECK: %[[P:.*]] = train.storage @w
// CHECK: train.kernel ins(%[[P]], %[[G]], %[[M]], %[[V]], %[[LR]], %[[STEP]] : {{.*}}) outs(%[[P]], %[[M]], %[[V]] : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>)
// CHECK: train.adamw_update
// CHECK-NOT: memref.copy
// CHECK: train.read_back %[[L]], %[[LOSS]] : memref<f32>, memref<f32, #train.host>
// CHECK-NEXT: train.read_back %[[L]], %[[NORM]]
// CHECK-NEXT: return
module attributes {train.world_size = 1 : i64, train.zero_stage = 0 : i64} {
  train.param @w : tensor<4x8xf32> init = zeros
  train.state @w.exp_avg : tensor<4x8xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<4x8xf32> exp_avg_sq of @w
  func.func @train_step(%x: tensor<2x8xf32>, %t: tensor<2x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %w = train.read @w : tensor<4x8xf32>
    %y = train.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    %g = train.fill 1.0 : tensor<4x8xf32>
    %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
    %m = train.read @w.exp_avg : tensor<4x8xf32>
    %v = train.read @w.exp_avg_sq : tensor<4x8xf32>
    %w2 = train.read @w : tensor<4x8xf32>
    %p1, %m1, %v1 = train.adamw_update %w2, %g, %m, %v, %lr, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.0 : tensor<4x8xf32>
    train.write %p1 to @w : tensor<4x8xf32>
    train.write %m1 to @w.exp_avg : tensor<4x8xf32>
    train.write %v1 to @w.exp_avg_sq : tensor<4x8xf32>
    return %l, %l : tensor<f32>, tensor<f32>
  }
}
