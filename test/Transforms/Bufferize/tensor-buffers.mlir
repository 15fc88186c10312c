// RUN: zeroc-opt %s --train-fuse-elementwise --train-bufferize -split-input-file | FileCheck %s

// A train.buffer declared before bufferization (train-zero's bucket buffers)
// aliases its members: a read of a member copies when the buffer is
// written while it is live, and a read of the buffer when a member is;
// the buffer's reads and writes use its storage (a sharded buffer's is
// the rank's shard).

train.param @a : tensor<4xf32> init = zeros
train.param @b : tensor<4xf32> init = zeros
train.buffer @p : tensor<8xf32> <parameters> members [@a, @b] offsets [0, 4]
// CHECK-LABEL: func.func @member_read_across_buffer_write
// CHECK: %[[A:.*]] = train.storage @a : memref<4xf32>
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[COPY]]
// CHECK: %[[P:.*]] = train.storage @p : memref<8xf32>
// CHECK-NEXT: memref.copy %arg0, %[[P]]
// CHECK: train.kernel ins(%[[COPY]] : memref<4xf32>)
func.func @member_read_across_buffer_write(%x: tensor<8xf32>) -> tensor<f32> {
  %a = train.read @a : tensor<4xf32>
  train.write %x to @p : tensor<8xf32>
  %s = train.sum %a dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

train.param @a : tensor<4xf32> init = zeros
train.param @b : tensor<4xf32> init = zeros
train.buffer @p : tensor<8xf32> <parameters> members [@a, @b] offsets [0, 4]
// CHECK-LABEL: func.func @buffer_read_across_member_write
// CHECK: %[[P:.*]] = train.storage @p : memref<8xf32>
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() {train.category = #train.category<activations>} : memref<8xf32>
// CHECK-NEXT: memref.copy %[[P]], %[[COPY]]
// CHECK: train.kernel ins(%[[COPY]] : memref<8xf32>)
func.func @buffer_read_across_member_write(%x: tensor<4xf32>) -> tensor<f32> {
  %p = train.read @p : tensor<8xf32>
  train.write %x to @b : tensor<4xf32>
  %s = train.sum %p dims = [0] : tensor<8xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Without a write in between, reads use the storage directly, and a
// sharded buffer's storage is the rank's shard.
train.param @a : tensor<4xf32> init = zeros
train.state @a.exp_avg : tensor<4xf32> exp_avg of @a
train.buffer @m : tensor<6xf32> <optimizer_states> members [@a.exp_avg] offsets [0] shards = 2
// CHECK-LABEL: func.func @sharded_read
// CHECK-NOT: memref.copy
// CHECK: %[[M:.*]] = train.storage @m : memref<3xf32>
// CHECK: train.kernel ins(%[[M]] : memref<3xf32>)
func.func @sharded_read() -> tensor<f32> {
  %m = train.read @m : tensor<3xf32>
  %s = train.sum %m dims = [0] : tensor<3xf32> -> tensor<f32>
  return %s : tensor<f32>
}
