// A hand-written scheduled step (what train-schedule writes, in miniature):
// a GEMM, an all-reduce started after it, a GELU that overlaps the
// all-reduce, the wait, and a norm of the reduced buffer.
module attributes {train.world_size = 4 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 4)
  train.param @w : tensor<256x256xf32> init = zeros
  train.param @a : tensor<16x256xf32> init = zeros
  func.func @train_step(%tokens: tensor<2x8xi32>, %targets: tensor<2x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %w = train.read @w : tensor<256x256xf32>
    %a = train.read @a : tensor<16x256xf32>
    %m = train.matmul %a, %w : (tensor<16x256xf32>, tensor<256x256xf32>) -> tensor<16x256xf32>
    %flat = train.reshape %w : tensor<256x256xf32> -> tensor<65536xf32>
    %f = train.all_reduce_start %flat on @dp : tensor<65536xf32> -> !train.future<tensor<65536xf32>>
    %g = train.gelu %m tanh : tensor<16x256xf32>
    %r = train.wait %f : !train.future<tensor<65536xf32>>
    %n = train.squared_norm %r : tensor<65536xf32> -> tensor<f32>
    return %n, %n : tensor<f32>, tensor<f32>
  }
}
