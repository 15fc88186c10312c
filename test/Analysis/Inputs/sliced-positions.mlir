// A minGPT-style model for the performance model's coverage test: a learned
// position table sliced to the sequence (pos[:t], a train.slice whose
// derivative is a train.slice_grad), RMSNorm, SiLU and dropout.
module {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1
  train.param @emb : tensor<16x8xf32> init = normal std = 0.02
  train.param @pos : tensor<12x8xf32> init = normal std = 0.02
  train.param @norm : tensor<8xf32> init = ones
  train.param @head : tensor<16x8xf32> init = normal std = 0.02 decay
  func.func @forward(%tokens: tensor<4x5xi32>, %targets: tensor<4x5xi32>) -> tensor<f32> attributes {train.forward} {
    %e = train.read @emb : tensor<16x8xf32>
    %x = train.embedding %e[%tokens] : (tensor<16x8xf32>, tensor<4x5xi32>) -> tensor<4x5x8xf32>
    %pos = train.read @pos : tensor<12x8xf32>
    %p = train.slice %pos offsets = [0, 0] strides = [1, 1] : tensor<12x8xf32> -> tensor<5x8xf32>
    %a = train.add %x, %p : (tensor<4x5x8xf32>, tensor<5x8xf32>) -> tensor<4x5x8xf32>
    %d = train.dropout %a p = 0.1 seed = 7 : tensor<4x5x8xf32>
    %g = train.read @norm : tensor<8xf32>
    %n = train.rmsnorm %d, %g eps = 1.0e-05 : (tensor<4x5x8xf32>, tensor<8xf32>) -> tensor<4x5x8xf32>
    %s = train.silu %n : tensor<4x5x8xf32>
    %h = train.read @head : tensor<16x8xf32>
    %logits = train.matmul %s, %h transpose_rhs : (tensor<4x5x8xf32>, tensor<16x8xf32>) -> tensor<4x5x16xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<4x5x16xf32>, tensor<4x5xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
