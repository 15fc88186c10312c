// RUN: zeroc-opt %s --train-elide-copies -split-input-file | FileCheck %s
// RUN: zeroc-opt %s --train-emplace --train-elide-copies -split-input-file | FileCheck %s --check-prefix=PLACED

// A read whose state is written (a train.write that remains) while the
// read is live copies; one whose last use comes before the write does not.

// CHECK-LABEL: func.func @read_across_write
// CHECK: train.read @w {train.copy} : tensor<4xf32>
// CHECK: train.read @v : tensor<4xf32>
train.param @w : tensor<4xf32> init = zeros
train.param @v : tensor<4xf32> init = zeros
func.func @read_across_write(%x: tensor<4xf32>) -> (tensor<f32>, tensor<f32>) {
  %w = train.read @w : tensor<4xf32>
  %v = train.read @v : tensor<4xf32>
  %t = train.sum %v dims = [0] : tensor<4xf32> -> tensor<f32>
  train.write %x to @w : tensor<4xf32>
  train.write %x to @v : tensor<4xf32>
  %s = train.sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s, %t : tensor<f32>, tensor<f32>
}

// -----

// A member of a train.buffer is the buffer's memory: a read of the member
// copies when the buffer is written while it is live (through a view too).

// CHECK-LABEL: func.func @member_across_buffer_write
// CHECK: train.read @a {train.copy} : tensor<4xf32>
train.param @a : tensor<4xf32> init = zeros
train.param @b : tensor<4xf32> init = zeros
train.buffer @p : tensor<8xf32> <parameters> members [@a, @b] offsets [0, 4]
func.func @member_across_buffer_write(%x: tensor<8xf32>) -> tensor<f32> {
  %a = train.read @a : tensor<4xf32>
  %r = train.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  train.write %x to @p : tensor<8xf32>
  %s = train.sum %r dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// The reads an update reads are the state's buffers (their last use is
// the update, before the writes); a second read of the parameter, live
// across its write, copies -- the write that remains without train-emplace
// (first run), or the update in place through the other read after
// train-emplace (second run: its writes are marked and are no writes).

// CHECK-LABEL: func.func @across_update
// CHECK: train.read @w : tensor<4xf32>
// CHECK: train.read @w.momentum_buffer : tensor<4xf32>
// CHECK: train.read @w {train.copy} : tensor<4xf32>
// PLACED-LABEL: func.func @across_update
// PLACED: train.read @w : tensor<4xf32>
// PLACED: train.read @w.momentum_buffer : tensor<4xf32>
// PLACED: train.read @w {train.copy} : tensor<4xf32>
// PLACED: train.sgd_update {{.*}} {train.emplace = array<i64: 0, 2>}
// PLACED: train.write %{{.*}} to @w {train.emplace = array<i64: 0>}
train.param @w : tensor<4xf32> init = zeros
train.state @w.momentum_buffer : tensor<4xf32> momentum_buffer of @w
func.func @across_update(%g: tensor<4xf32>, %step: tensor<i64>) -> tensor<f32> attributes {train.step} {
  %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
  %w = train.read @w : tensor<4xf32>
  %b = train.read @w.momentum_buffer : tensor<4xf32>
  %w2 = train.read @w : tensor<4xf32>
  %p1, %b1 = train.sgd_update %w, %g, %b, %lr momentum = 0.9 weight_decay = 0.0 : tensor<4xf32>
  train.write %p1 to @w : tensor<4xf32>
  train.write %b1 to @w.momentum_buffer : tensor<4xf32>
  %s = train.sum %w2 dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A view lives as long as any of its results: the state written after the
// unpack's first member is last used but before its second member is, copies.

// CHECK-LABEL: func.func @unpack_member_across_write
// CHECK: train.read @p {train.copy} : tensor<8xf32>
train.param @p : tensor<8xf32> init = zeros
func.func @unpack_member_across_write(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %p = train.read @p : tensor<8xf32>
  %a, %b = train.unpack %p : tensor<8xf32> -> tensor<4xf32>, tensor<4xf32>
  %s = train.sum %a dims = [0] : tensor<4xf32> -> tensor<f32>
  train.write %x to @p : tensor<8xf32>
  %t = train.sum %b dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s, %t : tensor<f32>, tensor<f32>
}
