// RUN: zeroc-opt %s --train-logits | FileCheck %s

// Sampling runs without dropout: @logits has none (the forward function
// keeps its step-less dropout, the identity there too).
// CHECK-LABEL: func.func @forward(
// CHECK: train.dropout
// CHECK-LABEL: func.func @logits(
// CHECK-NOT: train.dropout
// CHECK: return
module {
  train.param @wte : tensor<7x4xf32> init = normal std = 0.02
  func.func @forward(%t: tensor<3x5xi32>, %y: tensor<3x5xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte : tensor<7x4xf32>
    %e = train.embedding %wte[%t] : (tensor<7x4xf32>, tensor<3x5xi32>) -> tensor<3x5x4xf32>
    %d = train.dropout %e p = 0.25 seed = 1 : tensor<3x5x4xf32>
    %l = train.matmul %d, %wte transpose_rhs : (tensor<3x5x4xf32>, tensor<7x4xf32>) -> tensor<3x5x7xf32>
    %loss = train.cross_entropy %l, %y : (tensor<3x5x7xf32>, tensor<3x5xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
