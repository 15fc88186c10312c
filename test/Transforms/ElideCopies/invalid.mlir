// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// train-elide-copies emits no errors (a read it cannot prove safe is
// copied); its decision, train.copy, is checked by the train dialect.

func.func @copy_on_a_write(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.copy' belongs on a train.read, not on 'train.write'}}
  train.write %x to @w {train.copy} : tensor<4xf32>
  return
}
train.param @w : tensor<4xf32> init = zeros

// -----

train.param @w : tensor<4xf32> init = zeros
func.func @copy_not_unit() -> tensor<4xf32> {
  // expected-error @+1 {{'train.copy' must be a unit attribute, got 1 : i64}}
  %w = train.read @w {train.copy = 1 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}
