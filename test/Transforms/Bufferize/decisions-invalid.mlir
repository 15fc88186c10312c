// RUN: zeroc-opt %s --train-bufferize-ops -split-input-file -verify-diagnostics

// train-bufferize-ops checks the decisions it executes where it reads
// them: what train.into names, and that a placed operand has a kernel to
// compute it.

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  func.func @into_a_param(%x: tensor<4xf32>) -> tensor<4xf32> {
    %g = train.relu %x : tensor<4xf32>
    // expected-error @+1 {{'train.pack' op is placed into @w ('train.into'), which is not a replicated train.buffer of type 'tensor<4xf32>'}}
    %p = train.pack %g {train.into = @w, train.emplace = array<i64: 0>} : tensor<4xf32> -> tensor<4xf32>
    return %p : tensor<4xf32>
  }
}

// -----

module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  func.func @gather_without_into(%x: tensor<2xf32>) -> tensor<4xf32> {
    %s = train.relu %x : tensor<2xf32>
    // expected-error @+1 {{'train.all_gather_start' op computes its send in place ('train.emplace') but receives into no buffer ('train.into')}}
    %f = train.all_gather_start %s on @dp {train.emplace = array<i64: 0>} : tensor<2xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    return %r : tensor<4xf32>
  }
}

// -----

module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  func.func @placed_argument(%x: tensor<4xf32>) -> tensor<2xf32> {
    // expected-error @+1 {{'train.pack' op operand #0 is placed ('train.emplace') but no kernel computes it}}
    %p = train.pack %x {train.emplace = array<i64: 0>} : tensor<4xf32> -> tensor<4xf32>
    %f = train.reduce_scatter_start %p on @dp : tensor<4xf32> -> !train.future<tensor<2xf32>>
    %r = train.wait %f : !train.future<tensor<2xf32>>
    return %r : tensor<2xf32>
  }
}
