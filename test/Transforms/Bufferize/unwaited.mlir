// RUN: zeroc-opt %s --train-bufferize --train-deallocate --train-verify-emittable -split-input-file -verify-diagnostics

// A collective not waited for exactly once is not train-bufferize's error
// (it no longer repeats train-verify-emittable's check): it becomes a
// train.collective_start whose request is waited for as often, and
// train-verify-emittable rejects it, at the start's location.

module {
  shard.grid @dp(shape = 2)
  func.func @never_waited(%b: tensor<8xf32>) {
    // expected-error @+1 {{'train.collective_start' op must be waited for exactly once, but its request has 0 use(s)}}
    %f = train.all_reduce_start %b on @dp : tensor<8xf32> -> !train.future<tensor<8xf32>>
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @waited_twice(%b: tensor<8xf32>) -> tensor<16xf32> {
    // expected-error @+1 {{'train.collective_start' op must be waited for exactly once, but its request has 2 use(s)}}
    %f = train.all_gather_start %b on @dp : tensor<8xf32> -> !train.future<tensor<16xf32>>
    %r = train.wait %f : !train.future<tensor<16xf32>>
    %s = train.wait %f : !train.future<tensor<16xf32>>
    return %r : tensor<16xf32>
  }
}
