// RUN: zeroc-opt %s --train-batch-size=global-batch=-1 --verify-diagnostics

// expected-error @below {{global-batch must be at least 1 (0 keeps the model's), got -1}}
module {
  func.func @forward(%x: tensor<10x4xf32>) -> tensor<f32> attributes {train.forward} {
    %l = train.mean %x dims = [0, 1] : tensor<10x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
