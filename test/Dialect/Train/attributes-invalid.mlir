// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of TrainDialect::verifyOperationAttribute: a discardable
// attribute on the wrong op, of the wrong type, or not the dialect's.

// expected-error @+1 {{'train.forward' belongs on a func.func, not on 'builtin.module'}}
module attributes {train.forward} {
}

// -----

module {
  // expected-error @+1 {{'train.step' must be a unit attribute, got 1 : i64}}
  func.func @f() attributes {train.step = 1 : i64} {
    return
  }
}

// -----

module {
  // expected-error @+1 {{'train.gradients' must be an array of parameter symbols (@name), got ["w"]}}
  func.func @f() attributes {train.gradients = ["w"]} {
    return
  }
}

// -----

module {
  // expected-error @+1 {{'train.world_size' belongs on the module, not on 'func.func'}}
  func.func @f() attributes {train.world_size = 2 : i64} {
    return
  }
}

// -----

// expected-error @+1 {{'train.batch_split' must be a positive 64-bit integer, got 0 : i64}}
module attributes {train.batch_split = 0 : i64} {
}

// -----

// expected-error @+1 {{'train.zero_stage' must be a 64-bit integer in [0, 3], got 4 : i64}}
module attributes {train.zero_stage = 4 : i64} {
}

// -----

// expected-error @+1 {{'train.model' must be a string, got 3 : i64}}
module attributes {train.model = 3 : i64} {
}

// -----

// expected-error @+1 {{'train.fast' is not an attribute of the train dialect (see the dialect's reference for the list)}}
module attributes {train.fast} {
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'train.trace' must be a trace site: a dictionary of strings name, kind, phase, location and integers collective, collective_kind, elements, bytes, got {name = "gelu"}}}
    %y = train.gelu %x tanh {train.trace = {name = "gelu"}} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'train.trace' belongs on an op of a function, not on 'builtin.module'}}
module attributes {train.trace = {name = "m", kind = "m", phase = "forward", location = "", collective = -1, collective_kind = -1, elements = 0, bytes = 0}} {
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'train.recomputed' must be a unit attribute, got 1 : i64}}
    %y = train.gelu %x tanh {train.recomputed = 1 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'train.remat' must be none, full or selective, got "partial"}}
module attributes {train.remat = "partial"} {
}

// -----

// expected-error @+1 {{'train.micro_batches' must be a positive 64-bit integer, got 0 : i64}}
module attributes {train.micro_batches = 0 : i64} {
}

// -----

module {
  // expected-error @+1 {{'train.grad_accum' belongs on the module, not on 'func.func'}}
  func.func @f() attributes {train.grad_accum = 2 : i64} {
    return
  }
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'train.micro_batch' must be a non-negative 64-bit integer, got -1 : i64}}
    %y = train.gelu %x tanh {train.micro_batch = -1 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'train.accumulate' must be a unit attribute, got "yes"}}
    %y = train.add %x, %x {train.accumulate = "yes"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// train.batch_count: a masked mean's divisor number, on a train.sum.
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
    // expected-error @+1 {{'train.batch_count' belongs on a train.sum, not on 'train.mean'}}
    %y = train.mean %x dims = [0] {train.batch_count = 0 : i64} : tensor<4xf32> -> tensor<f32>
    return %y : tensor<f32>
  }
}

// -----

module {
  func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
    // expected-error @+1 {{'train.batch_count' must be a non-negative 64-bit integer, got -1 : i64}}
    %y = train.sum %x dims = [0] {train.batch_count = -1 : i64} : tensor<4xf32> -> tensor<f32>
    return %y : tensor<f32>
  }
}

// -----

// train.tied: a dictionary of second names to train.param symbols.
// expected-error @+1 {{'train.tied' must be a dictionary of names to parameter symbols ({"lm_head.weight" = @transformer.wte.weight}), got {lm_head.weight = "w"}}}
module attributes {train.tied = {"lm_head.weight" = "w"}} {
  train.param @w : tensor<4x4xf32> init = zeros
}

// -----

// expected-error @+1 {{'train.tied' ties 'lm_head.weight' to @nope, which is not a train.param of the module}}
module attributes {train.tied = {"lm_head.weight" = @nope}} {
  train.param @w : tensor<4x4xf32> init = zeros
}

// -----

// expected-error @+1 {{'train.tied' ties 'v', which is a symbol of the module already}}
module attributes {train.tied = {"v" = @w}} {
  train.param @w : tensor<4x4xf32> init = zeros
  train.param @v : tensor<4x4xf32> init = zeros
}

// -----

module {
  // expected-error @+1 {{'train.tied' belongs on the module, not on 'func.func'}}
  func.func @f() attributes {train.tied = {}} {
    return
  }
}

// -----

module {
  // expected-error @+1 {{'train.buckets' belongs on the module, not on 'func.func'}}
  func.func @f() attributes {train.buckets = [[@w]]} {
    return
  }
}

// -----

// expected-error @+1 {{'train.buckets' must be a non-empty array of non-empty arrays of parameter symbols ([[@a, @b], [@c]]), got [[@w], []]}}
module attributes {train.buckets = [[@w], []]} {
  train.param @w : tensor<4xf32> init = zeros
}

// -----

// expected-error @+1 {{'train.buckets' must be a non-empty array of non-empty arrays of parameter symbols ([[@a, @b], [@c]]), got [@w]}}
module attributes {train.buckets = [@w]} {
  train.param @w : tensor<4xf32> init = zeros
}

// -----

// expected-error @+1 {{'train.buckets' bucket 1 names @f, which is not a train.param}}
module attributes {train.buckets = [[@w], [@f]]} {
  train.param @w : tensor<4xf32> init = zeros
  func.func @f() {
    return
  }
}

// -----

// The module's attributes are verified before its ops: a bucket's param
// whose type its own verifier rejects (unranked) is left to that verifier
// (the bucket check used to cast it to a ranked type and abort; found by
// zeroc-fuzz-passes).
module attributes {train.buckets = [[@w, @v]]} {
  // expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of 32-bit float or bfloat16 type values}}
  train.param @w : tensor<*xf32> init = ones
  train.param @v : tensor<4xf32> init = ones
}

// -----

// expected-error @+1 {{'train.buckets' names @w in more than one place}}
module attributes {train.buckets = [[@w, @b], [@w]]} {
  train.param @w : tensor<4xf32> init = zeros
  train.param @b : tensor<4xf32> init = zeros
}

// -----

// expected-error @+1 {{'train.buckets' bucket 0 mixes 'f32' and 'bf16' (@e): a bucket holds one element type}}
module attributes {train.buckets = [[@w, @e]]} {
  train.param @w : tensor<4xf32> init = zeros
  train.param @e : tensor<4xbf16> init = zeros
}
