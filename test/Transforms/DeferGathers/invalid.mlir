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

// -----

// The planned form: an fp32 bucket's in-place gather to defer, but the
// module's @gather_params is not a planned function.
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<4xf32> init = zeros
  train.buffer @zero.flat0.params : tensor<4xf32> <parameters> members [@w] offsets [0]
  func.func @train_step(%x: memref<4xf32>) attributes {train.planned, train.step} {
    %r = train.rank on @dp
    %w = train.storage @w : memref<4xf32>
    train.kernel ins(%x, %w : memref<4xf32>, memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %s = train.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      train.yield %s : tensor<4xf32>
    }
    %p = train.storage @zero.flat0.params : memref<4xf32>
    %c2 = arith.constant 2 : index
    %o = arith.muli %r, %c2 : index
    %slot = memref.reinterpret_cast %p to offset: [%o], sizes: [2], strides: [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
    %g = train.collective_start all_gather %slot, %p on @dp payload = 4 : memref<2xf32, strided<[1], offset: ?>>, memref<4xf32>
    train.collective_wait %g
    return
  }
  // expected-error @+1 {{train-defer-gathers: @gather_params must be a planned function of no result}}
  func.func @gather_params() {
    return
  }
}
