// A small language model whose loss is cross-entropy with ignore_index = 3
// (a token id) and label_smoothing = 0.1: token embeddings, a ReLU layer, a
// head. 4 sequences of 6 tokens, vocabulary 23, embedding 8.
module attributes {train.model = "ignore_index"} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @wte.weight : tensor<23x8xf32> init = normal std = 0.5 decay
  train.param @fc.weight : tensor<8x8xf32> init = normal std = 0.3 decay
  train.param @head.weight : tensor<23x8xf32> init = normal std = 0.3 decay
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte.weight : tensor<23x8xf32>
    %x = train.embedding %wte[%tokens] : (tensor<23x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    %fc = train.read @fc.weight : tensor<8x8xf32>
    %h0 = train.matmul %x, %fc transpose_rhs : (tensor<4x6x8xf32>, tensor<8x8xf32>) -> tensor<4x6x8xf32>
    %h = train.relu %h0 : tensor<4x6x8xf32>
    %head = train.read @head.weight : tensor<23x8xf32>
    %logits = train.matmul %h, %head transpose_rhs : (tensor<4x6x8xf32>, tensor<23x8xf32>) -> tensor<4x6x23xf32>
    %loss = train.cross_entropy %logits, %targets {ignore_index = 3 : i64, label_smoothing = 0.1 : f64} : (tensor<4x6x23xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
