// A two-layer MLP language model whose activation is nn.GELU()'s erf form
// written out as ATen imports `0.5 * x * (1 + torch.erf(x / math.sqrt(2)))`:
// a scale by 0.5, a scale by 1/sqrt(2), train.erf, an add of 1 and a product.
// 4 sequences of 6 tokens, vocabulary 23, embedding 8, hidden 16.
module attributes {train.model = "gelu_erf"} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1
  train.param @wte.weight : tensor<23x8xf32> init = normal std = 0.5 decay
  train.param @fc1.weight : tensor<16x8xf32> init = normal std = 0.5 decay
  train.param @fc2.weight : tensor<23x16xf32> init = normal std = 0.3 decay
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte.weight : tensor<23x8xf32>
    %x = train.embedding %wte[%tokens] : (tensor<23x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    %w1 = train.read @fc1.weight : tensor<16x8xf32>
    %h = train.matmul %x, %w1 transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %half = train.scale %h by 0.5 : tensor<4x6x16xf32>
    %t = train.scale %h by 0.70710678118654746 : tensor<4x6x16xf32>
    %e = train.erf %t : tensor<4x6x16xf32>
    %one = train.fill 1.0 : tensor<f32>
    %o = train.add %e, %one : (tensor<4x6x16xf32>, tensor<f32>) -> tensor<4x6x16xf32>
    %g = train.mul %half, %o : (tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %w2 = train.read @fc2.weight : tensor<23x16xf32>
    %logits = train.matmul %g, %w2 transpose_rhs : (tensor<4x6x16xf32>, tensor<23x16xf32>) -> tensor<4x6x23xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<4x6x23xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
