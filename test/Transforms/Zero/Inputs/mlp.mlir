// A two-layer MLP with ReLU and cross-entropy: 6 samples of 3 features, 5
// classes. Sizes do not divide by 4, so sharding pads.
module {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @w1 : tensor<4x3xf32> init = normal std = 0.5 decay
  train.param @b1 : tensor<4xf32> init = zeros
  train.param @w2 : tensor<5x4xf32> init = normal std = 0.5 decay
  train.param @b2 : tensor<5xf32> init = zeros
  func.func @forward(%x: tensor<6x3xf32>, %y: tensor<6xi32>) -> tensor<f32> attributes {train.forward} {
    %w1 = train.read @w1 : tensor<4x3xf32>
    %b1 = train.read @b1 : tensor<4xf32>
    %h0 = train.matmul %x, %w1 transpose_rhs : (tensor<6x3xf32>, tensor<4x3xf32>) -> tensor<6x4xf32>
    %h1 = train.add %h0, %b1 : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
    %h = train.relu %h1 : tensor<6x4xf32>
    %w2 = train.read @w2 : tensor<5x4xf32>
    %b2 = train.read @b2 : tensor<5xf32>
    %l0 = train.matmul %h, %w2 transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
    %l = train.add %l0, %b2 : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
    %loss = train.cross_entropy %l, %y : (tensor<6x5xf32>, tensor<6xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
