// RUN: zeroc-opt %s --split-input-file --verify-diagnostics --train-defer-gathers

// The module already has a symbol named @gather_params.
// expected-error @+1 {{train-defer-gathers declares @gather_params, but the module has a symbol of that name}}
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  func.func @train_step() attributes {train.step} {
    return
  }
  func.func @gather_params() {
    return
  }
}

// -----

// No op of the step reads the bucket: there is no first use to wait at.
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xbf16> init = zeros
  train.state @w.master : tensor<4xf32> master of @w
  train.buffer @zero.flat0.params : tensor<4xbf16> <parameters> members [@w] offsets [0]
  train.buffer @zero.flat0.master : tensor<4xf32> <optimizer_states> members [@w.master] offsets [0] shards = 2
  // expected-error @+1 {{train-defer-gathers: no op of the step reads the parameters of @zero.flat0.params}}
  func.func @train_step(%g: tensor<2xf32>) attributes {train.step} {
    %m = train.read @zero.flat0.master : tensor<2xf32>
    %n = train.add %m, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    train.write %n to @zero.flat0.master : tensor<2xf32>
    %c = train.cast %n : tensor<2xf32> to tensor<2xbf16>
    %f = train.all_gather_start %c on @dp : tensor<2xbf16> -> !train.future<tensor<4xbf16>>
    %r = train.wait %f : !train.future<tensor<4xbf16>>
    train.write %r to @zero.flat0.params : tensor<4xbf16>
    return
  }
}
