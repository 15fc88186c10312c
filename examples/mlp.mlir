// A model that is not a GPT: a two-layer MLP language model. Each token is
// embedded, passed through a ReLU hidden layer and projected back to the
// vocabulary, and the loss is the cross-entropy against the next token.
// 6 sequences of 5 tokens, vocabulary 37, embedding 8, hidden 12.
//
//   zeroc examples/mlp.mlir --zero-stage=2 --world-size=2 -o mlp
//   mpirun -np 2 ./mlp --data data/tinyshakespeare.txt --data-format=text
//
// (byte data needs a vocabulary of 256; with 37 the bytes of a text file
// are out of range, so train it on a token file with ids below 37.)
module attributes {train.model = "mlp"} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @emb.weight : tensor<37x8xf32> init = normal std = 0.5 decay
  train.param @fc1.weight : tensor<12x8xf32> init = normal std = 0.3 decay
  train.param @fc1.bias : tensor<12xf32> init = zeros
  train.param @fc2.weight : tensor<37x12xf32> init = normal std = 0.3 decay
  train.param @fc2.bias : tensor<37xf32> init = zeros
  func.func @forward(%tokens: tensor<6x5xi32>, %targets: tensor<6x5xi32>) -> tensor<f32> attributes {train.forward} {
    %emb = train.read @emb.weight : tensor<37x8xf32>
    %x = train.embedding %emb[%tokens] : (tensor<37x8xf32>, tensor<6x5xi32>) -> tensor<6x5x8xf32>
    %w1 = train.read @fc1.weight : tensor<12x8xf32>
    %b1 = train.read @fc1.bias : tensor<12xf32>
    %h0 = train.matmul %x, %w1 transpose_rhs : (tensor<6x5x8xf32>, tensor<12x8xf32>) -> tensor<6x5x12xf32>
    %h1 = train.add %h0, %b1 : (tensor<6x5x12xf32>, tensor<12xf32>) -> tensor<6x5x12xf32>
    %h = train.relu %h1 : tensor<6x5x12xf32>
    %w2 = train.read @fc2.weight : tensor<37x12xf32>
    %b2 = train.read @fc2.bias : tensor<37xf32>
    %l0 = train.matmul %h, %w2 transpose_rhs : (tensor<6x5x12xf32>, tensor<37x12xf32>) -> tensor<6x5x37xf32>
    %logits = train.add %l0, %b2 : (tensor<6x5x37xf32>, tensor<37xf32>) -> tensor<6x5x37xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<6x5x37xf32>, tensor<6x5xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
