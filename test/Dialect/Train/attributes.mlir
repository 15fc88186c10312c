// RUN: zeroc-opt %s | FileCheck %s
// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s

// The dialect's discardable attributes, where each belongs, round-trip.

// CHECK: module attributes {train.batch_split = 2 : i64, train.model = "tiny", train.world_size = 2 : i64, train.zero_stage = 3 : i64}
module attributes {train.batch_split = 2 : i64, train.model = "tiny",
                   train.world_size = 2 : i64, train.zero_stage = 3 : i64} {
  train.param @w : tensor<4xf32> init = zeros
  // CHECK: func.func @f{{.*}} attributes {train.forward}
  func.func @f(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  // CHECK: func.func @g{{.*}} attributes {train.gradients = [@w], train.step}
  func.func @g(%x: tensor<4xf32>) -> tensor<f32>
      attributes {train.gradients = [@w], train.step} {
    %l = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  // CHECK: func.func @s{{.*}} attributes {train.logits}
  func.func @s(%x: tensor<4xf32>) -> tensor<4xf32> attributes {train.logits} {
    return %x : tensor<4xf32>
  }
}
