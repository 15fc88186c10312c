// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize -split-input-file | FileCheck %s

// Copies where a buffer cannot be shared: a read whose state is written
// while it is live, a write of a computed value, a state operand of an
// update that is not its own read.

train.param @w : tensor<4xf32> init = zeros
// CHECK-LABEL: func.func @read_across_write
// CHECK: %[[S:.*]] = train.storage @w : memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: memref.copy %[[S]], %[[COPY]]
// CHECK: %[[S2:.*]] = train.storage @w
// CHECK: memref.copy %arg0, %[[S2]]
// CHECK: train.kernel ins(%[[COPY]] : memref<4xf32>)
func.func @read_across_write(%x: tensor<4xf32>) -> tensor<f32> {
  %w = train.read @w : tensor<4xf32>
  train.write %x to @w : tensor<4xf32>
  %s = train.sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

train.param @w : tensor<4xf32> init = zeros
train.state @w.momentum_buffer : tensor<4xf32> momentum_buffer of @w
// The parameter is read once, by the update and by the sum that runs after
// the write: the read copies (the state changes while it is live), and the
// update, whose operand is not a read of its own, runs on a second copy;
// the momentum buffer is updated in place and its write disappears.
// CHECK-LABEL: func.func @update_on_copy
// CHECK: %[[W:.*]] = train.storage @w : memref<4xf32>
// CHECK: %[[READ:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: memref.copy %[[W]], %[[READ]]
// CHECK: %[[MB:.*]] = train.storage @w.momentum_buffer
// CHECK: %[[COPY:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK: memref.copy %[[READ]], %[[COPY]]
// CHECK: train.kernel ins(%[[COPY]], %arg0, %[[MB]], %{{.*}} : {{.*}}) outs(%[[COPY]], %[[MB]] : memref<4xf32>, memref<4xf32>)
// CHECK: train.sgd_update
// CHECK: %[[W2:.*]] = train.storage @w
// CHECK: memref.copy %[[COPY]], %[[W2]]
// CHECK-NOT: memref.copy
// CHECK: train.kernel ins(%[[READ]] : memref<4xf32>)
// CHECK: train.sum
func.func @update_on_copy(%g: tensor<4xf32>, %step: tensor<i64>) -> tensor<f32> attributes {train.step} {
  %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
  %w = train.read @w : tensor<4xf32>
  %b = train.read @w.momentum_buffer : tensor<4xf32>
  %p1, %b1 = train.sgd_update %w, %g, %b, %lr momentum = 0.9 weight_decay = 0.0 : tensor<4xf32>
  train.write %p1 to @w : tensor<4xf32>
  train.write %b1 to @w.momentum_buffer : tensor<4xf32>
  %s = train.sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
