// RUN: zeroc-opt %s --train-entry-abi -split-input-file -verify-diagnostics

// Every error of train-entry-abi.

// expected-error @+1 {{'func.func' op is not in buffer form (train.planned); run train-bufferize-ops first}}
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0 is already in host memory; the entry signature is rewritten once}}
func.func @twice(%step: memref<i64, #train.host>) attributes {train.planned} {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0 of type 'i32' is not a buffer; run train-bufferize-ops first}}
func.func @scalar(%x: i32) -> i32 attributes {train.planned} {
  return %x : i32
}

// -----

func.func @step_in_kernel(%step: memref<i64>) -> memref<1xi64> attributes {train.planned} {
  %y = memref.alloc() {train.category = #train.category<activations>} : memref<1xi64>
  train.kernel ins(%step : memref<i64>) outs(%y : memref<1xi64>) {
  ^bb0(%s: tensor<i64>):
    // expected-error @+1 {{'train.reshape' op uses the step number as a tensor; it lives in host memory, where only the learning-rate schedule, the optimizer updates and dropout (the step) read it}}
    %n = train.reshape %s : tensor<i64> -> tensor<1xi64>
    train.yield %n : tensor<1xi64>
  }
  return %y : memref<1xi64>
}

// -----

func.func @step_viewed(%step: memref<i64>) -> memref<1xi64> attributes {train.planned} {
  // expected-error @+1 {{'memref.reinterpret_cast' op uses the step number as a tensor}}
  %v = memref.reinterpret_cast %step to offset: [0], sizes: [1], strides: [1] : memref<i64> to memref<1xi64>
  return %v : memref<1xi64>
}

// -----

func.func @lr_in_kernel(%step: memref<i64>) -> memref<f32> attributes {train.planned, train.step} {
  %lr = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
  train.kernel ins(%step : memref<i64>) outs(%lr : memref<f32>) {
  ^bb0(%s: tensor<i64>):
    %r = train.lr_schedule %s lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
    train.yield %r : tensor<f32>
  }
  %y = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
  train.kernel ins(%lr : memref<f32>) outs(%y : memref<f32>) {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'train.scale' op uses the learning rate as a tensor; it lives in host memory, where only the learning-rate schedule, the optimizer updates and dropout (the step) read it}}
    %s = train.scale %a by 2.0 : tensor<f32>
    train.yield %s : tensor<f32>
  }
  return %y : memref<f32>
}
