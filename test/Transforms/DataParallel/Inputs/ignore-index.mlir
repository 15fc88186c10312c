// A linear classifier with cross-entropy that ignores class 0 and smooths
// labels: 8 samples of 2 positions, 3 features, 3 classes. With targets
// drawn in [0, 3), about a third of the positions are ignored, and the
// parts of the batch (2 ranks x 2 micro-batches of 2 samples) hold
// different numbers of them.
module {
  train.optimizer adamw lr = 5.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @w : tensor<3x3xf32> init = normal std = 0.5 decay
  train.param @b : tensor<3xf32> init = zeros
  func.func @forward(%x: tensor<8x2x3xf32>, %y: tensor<8x2xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x3xf32>
    %b = train.read @b : tensor<3xf32>
    %l0 = train.matmul %x, %w transpose_rhs : (tensor<8x2x3xf32>, tensor<3x3xf32>) -> tensor<8x2x3xf32>
    %l = train.add %l0, %b : (tensor<8x2x3xf32>, tensor<3xf32>) -> tensor<8x2x3xf32>
    %loss = train.cross_entropy %l, %y {ignore_index = 0 : i64, label_smoothing = 0.1 : f64} : (tensor<8x2x3xf32>, tensor<8x2xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
