// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the planned form's verifiers.

func.func @fused_not_elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op body holds 'train.softmax', which is not elementwise (a fused loop computes only Elementwise ops)}}
  %y = train.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = train.softmax %a : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @fused_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op body has 0 argument(s) for 1 input(s)}}
  %y = train.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
    %s = train.fill 1.0 : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @fused_arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op body argument #0 has type 'tensor<4xbf16>' but input #0 has type 'tensor<4xf32>'}}
  %y = train.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xbf16>):
    %s = train.fill 1.0 : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @fused_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op body must yield one value of the result type 'tensor<4xf32>'}}
  %y = train.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = train.fill 1.0 : tensor<8xf32>
    train.yield %s : tensor<8xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @kernel_args(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'train.kernel' op body has 0 argument(s) for 1 input buffer(s)}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
    %s = train.fill 1.0 : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_mirror(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'train.kernel' op body argument #0 of type 'tensor<8xf32>' does not mirror input buffer 'memref<4xf32>'}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %s = train.fill 1.0 : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yields(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'train.kernel' op body yields 0 value(s) for 1 output buffer(s)}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    train.yield
  }
  return
}

// -----

func.func @kernel_out_type(%x: memref<4xf32>, %y: memref<4xbf16>) {
  // expected-error @+1 {{'train.kernel' op yielded value #0 of type 'tensor<4xf32>' does not fit output buffer 'memref<4xbf16>'}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xbf16>) {
  ^bb0(%a: tensor<4xf32>):
    train.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_host_out(%x: memref<4xf32>, %y: memref<4xf32, #train.host>) {
  // expected-error @+1 {{'train.kernel' op writes the host buffer 'memref<4xf32, #train.host>'; only the learning-rate schedule (or a constant) is computed on the host}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32, #train.host>) {
  ^bb0(%a: tensor<4xf32>):
    %s = train.scale %a by 2.0 : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return
}

// -----

train.param @w : tensor<4xf32> init = zeros
func.func @kernel_effects(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'train.kernel' op body holds 'train.read', which has memory effects (a kernel's body is a pure tensor computation)}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %w = train.read @w : tensor<4xf32>
    train.yield %w : tensor<4xf32>
  }
  return
}

// -----

train.param @w : tensor<4xf32> init = zeros
func.func @storage_type() {
  // expected-error @+1 {{'train.storage' op buffer type 'memref<2xf32>' is not the storage 'tensor<4xf32>' of @w (identity layout, default memory)}}
  %w = train.storage @w : memref<2xf32>
  return
}

// -----

func.func @storage_symbol() {
  // expected-error @+1 {{'train.storage' op no train.param, train.state or train.buffer named @nothing}}
  %w = train.storage @nothing : memref<4xf32>
  return
}

// -----

module {
  shard.grid @dp(shape = 0)
  func.func @collective_no_ranks(%x: memref<4xf32>, %y: memref<2xf32>) {
    // expected-error @+1 {{'train.collective_start' op collectives need at least one rank, but @dp has shape [0]}}
    %r = train.collective_start reduce_scatter %x, %y on @dp payload = 4 : memref<4xf32>, memref<2xf32>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_types(%x: memref<4xf32>, %y: memref<4xbf16>) {
    // expected-error @+1 {{'train.collective_start' op send element type 'f32' differs from recv element type 'bf16'}}
    %r = train.collective_start all_reduce %x, %y on @dp payload = 4 : memref<4xf32>, memref<4xbf16>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_rank(%x: memref<2x2xf32>) {
    // expected-error @+1 {{'train.collective_start' op buffers must be 1-D, got 'memref<2x2xf32>' and 'memref<2x2xf32>'}}
    %r = train.collective_start all_reduce %x, %x on @dp payload = 4 : memref<2x2xf32>, memref<2x2xf32>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_host(%x: memref<4xf32, #train.host>) {
    // expected-error @+1 {{'train.collective_start' op buffers must not be host memory}}
    %r = train.collective_start all_reduce %x, %x on @dp payload = 4 : memref<4xf32, #train.host>, memref<4xf32, #train.host>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_payload(%x: memref<4xf32>) {
    // expected-error @+1 {{'train.collective_start' op payload 5 must be in [0, 4] (the elements of the full buffer)}}
    %r = train.collective_start all_reduce %x, %x on @dp payload = 5 : memref<4xf32>, memref<4xf32>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_negative_payload(%x: memref<4xf32>) {
    // expected-error @+1 {{'train.collective_start' op payload -1 must be in [0, 4] (the elements of the full buffer)}}
    %r = train.collective_start all_reduce %x, %x on @dp payload = -1 : memref<4xf32>, memref<4xf32>
    train.collective_wait %r
    return
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @collective_sizes(%x: memref<4xf32>, %y: memref<4xf32>) {
    // expected-error @+1 {{'train.collective_start' op a reduce_scatter of 4 element(s) on 2 rank(s) cannot receive 4}}
    %r = train.collective_start reduce_scatter %x, %y on @dp payload = 4 : memref<4xf32>, memref<4xf32>
    train.collective_wait %r
    return
  }
}

// -----

func.func @collective_grid(%x: memref<4xf32>) {
  // expected-error @+1 {{'train.collective_start' op no shard.grid named @dp}}
  %r = train.collective_start all_reduce %x, %x on @dp payload = 4 : memref<4xf32>, memref<4xf32>
  train.collective_wait %r
  return
}

// -----

func.func @rank_grid() -> index {
  // expected-error @+1 {{'train.rank' op no shard.grid named @dp}}
  %r = train.rank on @dp
  return %r : index
}

// -----

func.func @read_back_host(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'train.read_back' op destination must be f32 host memory (memref<..., #train.host>), got 'memref<4xf32>'}}
  train.read_back %x, %y : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @read_back_size(%x: memref<4xf32>, %y: memref<2xf32, #train.host>) {
  // expected-error @+1 {{'train.read_back' op source has 4 element(s) but the destination 2}}
  train.read_back %x, %y : memref<4xf32>, memref<2xf32, #train.host>
  return
}

// -----

func.func @read_back_source(%x: memref<4xf32, #train.host>, %y: memref<4xf32, #train.host>) {
  // expected-error @+1 {{'train.read_back' op source 'memref<4xf32, #train.host>' is host memory already}}
  train.read_back %x, %y : memref<4xf32, #train.host>, memref<4xf32, #train.host>
  return
}

// -----

func.func @category_place() {
  // expected-error @+1 {{'train.category' belongs on a memref.alloc, not on 'func.return'}}
  return {train.category = #train.category<activations>}
}

// -----

func.func @category_type() {
  // expected-error @+1 {{'train.category' must be a memory category (#train.category<...>), got 1 : i64}}
  %a = memref.alloc() {train.category = 1 : i64} : memref<4xf32>
  return
}

// -----

func.func @wait_request(%r: !train.request) {
  // expected-error @+1 {{'train.collective_wait' op waits for a request that no train.collective_start made}}
  train.collective_wait %r
  return
}

// -----

// train.buffer: its members and offsets.

train.param @w : tensor<4xf32> init = zeros
// expected-error @+1 {{'train.buffer' op has 1 member(s) but 2 offset(s)}}
train.buffer @b : tensor<8xf32> <gradients> members [@w] offsets [0, 4]

// -----

train.param @w : tensor<4xf32> init = zeros
// expected-error @+1 {{'train.buffer' op has 5 elements, not a multiple of shards = 2 (a sharded buffer is padded to N equal shards)}}
train.buffer @b : tensor<5xf32> <gradients> members [@w] offsets [0] shards = 2

// -----

train.param @w : tensor<4xf32> init = zeros
// expected-error @+1 {{'train.buffer' op attribute 'shards' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
train.buffer @b : tensor<4xf32> <gradients> members [@w] offsets [0] shards = 0

// -----

train.param @w : tensor<4xf32> init = zeros
train.buffer @b : tensor<4xf32> <parameters> members [@w] offsets [0] shards = 2
func.func @whole_read_of_sharded() {
  // expected-error @+1 {{'train.read' op result type 'tensor<4xf32>' differs from the type 'tensor<2xf32>' declared by @b}}
  %0 = train.read @b : tensor<4xf32>
  return
}

// -----

train.param @w : tensor<4xf32> init = zeros
train.buffer @b : tensor<4xf32> <parameters> members [@w] offsets [0] shards = 2
func.func @whole_storage_of_sharded() {
  // expected-error @+1 {{'train.storage' op buffer type 'memref<4xf32>' is not the storage 'tensor<2xf32>' of @b (identity layout, default memory)}}
  %0 = train.storage @b : memref<4xf32>
  return
}

// -----

// expected-error @+1 {{'train.buffer' op has no members}}
train.buffer @b : tensor<8xf32> <gradients> members [] offsets []

// -----

// expected-error @+1 {{'train.buffer' op member @nothing is not a train.param or train.state}}
train.buffer @b : tensor<8xf32> <gradients> members [@nothing] offsets [0]

// -----

train.param @w : tensor<4xbf16> init = zeros
// expected-error @+1 {{'train.buffer' op member @w has element type 'bf16', the buffer 'f32'}}
train.buffer @b : tensor<8xf32> <gradients> members [@w] offsets [0]

// -----

train.param @w : tensor<4xf32> init = zeros
train.param @v : tensor<4xf32> init = zeros
// expected-error @+1 {{'train.buffer' op member @v at offset 3 overlaps the member before it (which ends at 4); offsets are increasing}}
train.buffer @b : tensor<8xf32> <gradients> members [@w, @v] offsets [0, 3]

// -----

train.param @w : tensor<4xf32> init = zeros
train.param @v : tensor<4xf32> init = zeros
// expected-error @+1 {{'train.buffer' op member @v ends at element 9, past the buffer's 8}}
train.buffer @b : tensor<8xf32> <gradients> members [@w, @v] offsets [0, 5]

// -----

train.param @w : tensor<4xf32> init = zeros
train.buffer @b : tensor<8xf32> <gradients> members [@w] offsets [0]
func.func @buffer_storage_type() {
  // expected-error @+1 {{'train.storage' op buffer type 'memref<4xf32>' is not the storage 'tensor<8xf32>' of @b (identity layout, default memory)}}
  %b = train.storage @b : memref<4xf32>
  return
}

// -----

// expected-error @+1 {{'train.buffer' op type 'tensor<?xf32>' must have a static size}}
train.buffer @b : tensor<?xf32> <gradients> members [@w] offsets [0]
