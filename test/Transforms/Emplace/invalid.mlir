// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// train-emplace emits no errors (what it cannot place keeps no attribute
// and is copied); its decisions, train.emplace and train.into, are checked
// by the train dialect (train-bufferize-ops checks what they name).

train.param @w : tensor<4xf32> init = zeros
func.func @emplace_on_a_read() -> tensor<4xf32> {
  // expected-error @+1 {{'train.emplace' belongs on a train.pack, train.write, train.all_gather_start or optimizer update, not on 'train.read'}}
  %w = train.read @w {train.emplace = array<i64: 0>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @emplace_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.emplace' must be an array of the op's operand numbers, got array<i64: 1>}}
  train.write %x to @w {train.emplace = array<i64: 1>} : tensor<4xf32>
  return
}
train.param @w : tensor<4xf32> init = zeros

// -----

func.func @into_on_a_write(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.into' belongs on a train.pack or train.all_gather_start, not on 'train.write'}}
  train.write %x to @w {train.into = @w} : tensor<4xf32>
  return
}
train.param @w : tensor<4xf32> init = zeros

// -----

func.func @into_not_a_symbol(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.into' must be a train.buffer symbol (@name), got "b"}}
  %p = train.pack %x {train.into = "b"} : tensor<4xf32> -> tensor<4xf32>
  return %p : tensor<4xf32>
}
