// A sharded train.buffer (train-zero's bucket buffers) is its rank's shard,
// members and padding together: the moments of 4 + 3 elements in a buffer
// of 10 over 2 ranks take 5 * 4 = 20 bytes on a rank, the replicated
// parameter buffer its members' 28 bytes and 3 * 4 = 12 of padding.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s
// CHECK:      "per_rank_bytes": {
// CHECK-NEXT:   "parameters": 40,
// CHECK-NEXT:   "gradients": 0,
// CHECK-NEXT:   "optimizer_states": 20,
// CHECK-NEXT:   "model_states": 60
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  train.state @w.exp_avg : tensor<4xf32> exp_avg of @w
  train.param @b : tensor<3xf32> init = zeros
  train.state @b.exp_avg : tensor<3xf32> exp_avg of @b
  train.buffer @params : tensor<10xf32> <parameters> members [@w, @b] offsets [0, 4]
  train.buffer @moments : tensor<10xf32> <optimizer_states> members [@w.exp_avg, @b.exp_avg] offsets [0, 4] shards = 2
  func.func @train_step(%tokens: memref<2x4xi32>, %targets: memref<2x4xi32>, %step: memref<i64, #train.host>, %loss: memref<f32, #train.host>, %norm: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.planned, train.step} {
    %0 = train.storage @moments : memref<5xf32>
    return
  }
}
