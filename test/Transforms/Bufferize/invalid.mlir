// RUN: zeroc-opt %s --train-bufferize -split-input-file -verify-diagnostics

// Every error of the train-bufferize pipeline (train-bufferize-ops, then
// train-entry-abi). A train.*_start not waited for exactly once becomes a
// train.collective_start that train-verify-emittable rejects
// (test/Transforms/VerifyEmittable/invalid.mlir).

// expected-error @+1 {{'func.func' op is already in buffer form (train.planned is set)}}
func.func @planned(%x: memref<4xf32>) attributes {train.planned} {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 of type 'i32' is not a tensor; train-bufferize takes tensor arguments}}
func.func @scalar(%x: i32) {
  return
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @blocking(%b: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'shard.all_reduce' op is a blocking collective; the back ends take only train.*_start / train.wait pairs (run train-schedule)}}
    %r = shard.all_reduce %b on @dp grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
    return %r : tensor<8xf32>
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @blocking_reduce(%b: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'shard.reduce' op is a blocking collective; the back ends take only train.*_start / train.wait pairs (run train-schedule)}}
    %r = shard.reduce %b on @dp grid_axes = [0] root = [0] : (tensor<8xf32>) -> tensor<8xf32>
    return %r : tensor<8xf32>
  }
}

// -----

func.func @step_as_tensor(%step: tensor<i64>) -> tensor<1xi64> {
  // The view of the step (train-entry-abi's check runs on the buffer form).
  // expected-error @+1 {{'memref.reinterpret_cast' op uses the step number as a tensor; it lives in host memory, where only the learning-rate schedule, the optimizer updates and dropout (the step) read it}}
  %s = train.reshape %step : tensor<i64> -> tensor<1xi64>
  return %s : tensor<1xi64>
}

// -----

func.func @lr_as_tensor(%step: tensor<i64>) -> tensor<f32> {
  %lr = train.lr_schedule %step lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
  // expected-error @+1 {{'train.scale' op uses the learning rate as a tensor; it lives in host memory, where only the learning-rate schedule, the optimizer updates and dropout (the step) read it}}
  %s = train.scale %lr by 2.0 : tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func private @elsewhere(tensor<4xf32>) -> tensor<4xf32>
func.func @call(%b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op has memory effects that train-bufferize does not know how to keep}}
  %r = func.call @elsewhere(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A scalar made inside the step (the rank, a cast) has no buffer to get.
module {
  shard.grid @dp(shape = 2)
  func.func @rank_index() -> tensor<4xf32> {
    // expected-error @+1 {{'shard.process_linear_index' op result #0 of type 'index' is not a tensor; train-bufferize takes tensors only}}
    %r = shard.process_linear_index on @dp : index
    %one = train.fill 1.0 : tensor<4xf32>
    return %one : tensor<4xf32>
  }
}

// -----

func.func @scalar_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op result #0 of type 'f32' is not a tensor; train-bufferize takes tensors only}}
  %c = arith.constant 2.0 : f32
  return %x : tensor<4xf32>
}
