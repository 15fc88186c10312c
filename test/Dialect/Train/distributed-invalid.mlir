// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

module {
  train.param @w : tensor<4xf32> init = zeros
  // expected-error @+1 {{'train.state' op the gradient buffer @w.grad has its parameter's element type 'f32', got 'tensor<4xbf16>'}}
  train.state @w.grad : tensor<4xbf16> grad of @w
}

// -----

func.func @pack_size(%a: tensor<7xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'train.pack' op result type 'tensor<8xf32>' does not match the expected 'tensor<9xf32>'}}
  %c = train.pack %a, %b : tensor<7xf32>, tensor<2xf32> -> tensor<8xf32>
  return
}

// -----

func.func @pack_element_type(%a: tensor<4xbf16>) {
  // expected-error @+1 {{'train.pack' op result type 'tensor<4xf32>' does not match the expected 'tensor<4xbf16>'}}
  %b = train.pack %a : tensor<4xbf16> -> tensor<4xf32>
  return
}

// -----

func.func @pack_nothing() {
  // expected-error @+1 {{'train.pack' op packs no tensor}}
  %b = "train.pack"() : () -> tensor<4xf32>
  return
}

// -----

func.func @pack_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{'train.pack' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %b = train.pack %a : tensor<?xf32> -> tensor<4xf32>
  return
}

// -----

func.func @pack_rank(%a: tensor<4xf32>) {
  // expected-error @+1 {{'train.pack' op result #0 must be 1D tensor of 32-bit float or bfloat16 type values}}
  %b = train.pack %a : tensor<4xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @unpack_size(%b: tensor<9xf32>) {
  // expected-error @+1 {{'train.unpack' op the buffer must have 7 elements (the tensors end to end), got 'tensor<9xf32>'}}
  %a = train.unpack %b : tensor<9xf32> -> tensor<7xf32>
  return
}

// -----

func.func @unpack_element_type(%b: tensor<4xbf16>) {
  // expected-error @+1 {{'train.unpack' op tensor #0 has type 'tensor<4xf32>' but the buffer's element type is 'bf16'}}
  %a = train.unpack %b : tensor<4xbf16> -> tensor<4xf32>
  return
}

// -----

func.func @unpack_nothing(%b: tensor<4xf32>) {
  // expected-error @+1 {{'train.unpack' op packs no tensor}}
  "train.unpack"(%b) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @no_grid(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.all_reduce_start' op no shard.grid named @dp}}
  %f = train.all_reduce_start %x on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
  %r = train.wait %f : !train.future<tensor<4xf32>>
  return
}

// -----

module {
  shard.grid @dp(shape = 2x2)
  func.func @grid_2d(%x: tensor<4xf32>) {
    // expected-error @+1 {{'train.all_reduce_start' op collectives run on a 1-D grid of static size, but @dp has shape [2x2]}}
    %f = train.all_reduce_start %x on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 3)
  func.func @scatter_divides(%x: tensor<4xf32>) {
    // expected-error @+1 {{'train.reduce_scatter_start' op input of 4 elements does not divide among 3 ranks}}
    %f = train.reduce_scatter_start %x on @dp : tensor<4xf32> -> !train.future<tensor<1xf32>>
    %r = train.wait %f : !train.future<tensor<1xf32>>
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 3)
  func.func @gather_size(%x: tensor<4xf32>) {
    // expected-error @+1 {{'train.all_gather_start' op result must have 12 elements on a grid of 3 ranks, got 'tensor<8xf32>'}}
    %f = train.all_gather_start %x on @dp : tensor<4xf32> -> !train.future<tensor<8xf32>>
    %r = train.wait %f : !train.future<tensor<8xf32>>
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 3)
  func.func @start_element_type(%x: tensor<4xf32>) {
    // expected-error @+1 {{'train.all_reduce_start' op element type changes from 'f32' to 'bf16'}}
    %f = train.all_reduce_start %x on @dp : tensor<4xf32> -> !train.future<tensor<4xbf16>>
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 3)
  func.func @start_used_directly(%x: tensor<4xf32>) -> !train.future<tensor<4xf32>> {
    // expected-error @+1 {{'train.all_reduce_start' op result may only be used by train.wait, but 'func.return' uses it}}
    %f = train.all_reduce_start %x on @dp : tensor<4xf32> -> !train.future<tensor<4xf32>>
    return %f : !train.future<tensor<4xf32>>
  }
}

// -----

func.func @wait_without_start(%x: !train.future<tensor<4xf32>>) {
  // expected-error @+1 {{'train.wait' op waits for a value that no train.*_start op produced}}
  %r = train.wait %x : !train.future<tensor<4xf32>>
  return
}
