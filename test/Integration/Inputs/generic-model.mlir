// A model written with the generic ops of TrainGenericOps.td, as an ATen
// import writes them (generic-ops.py): an embedding with padding_idx 0, a
// layer norm from train.mean and train.var, a ReLU layer whose features are
// max-pooled over time (train.amax) and added back, and the loss as
// -mean(gather(log_softmax(logits), targets)). 6 sequences of 5 tokens,
// vocabulary 37, embedding 8, hidden 12.
module attributes {train.model = "generic"} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @emb.weight : tensor<37x8xf32> init = normal std = 0.5 decay
  train.param @ln.weight : tensor<8xf32> init = ones
  train.param @ln.bias : tensor<8xf32> init = zeros
  train.param @fc1.weight : tensor<12x8xf32> init = normal std = 0.3 decay
  train.param @fc1.bias : tensor<12xf32> init = zeros
  train.param @fc2.weight : tensor<37x12xf32> init = normal std = 0.3 decay
  train.param @fc2.bias : tensor<37xf32> init = zeros
  func.func @forward(%tokens: tensor<6x5xi32>, %targets: tensor<6x5xi32>) -> tensor<f32> attributes {train.forward} {
    %emb = train.read @emb.weight : tensor<37x8xf32>
    %x = train.embedding %emb[%tokens] padding_idx = 0 : (tensor<37x8xf32>, tensor<6x5xi32>) -> tensor<6x5x8xf32>
    // layer norm: (x - mean) / sqrt(var + eps) * g + b
    %m0 = train.mean %x dims = [2] : tensor<6x5x8xf32> -> tensor<6x5xf32>
    %m = train.reshape %m0 : tensor<6x5xf32> -> tensor<6x5x1xf32>
    %v0 = train.var %x dims = [2] correction = 0 : tensor<6x5x8xf32> -> tensor<6x5xf32>
    %v = train.reshape %v0 : tensor<6x5xf32> -> tensor<6x5x1xf32>
    %eps = train.fill 1.0e-05 : tensor<f32>
    %ve = train.add %v, %eps : (tensor<6x5x1xf32>, tensor<f32>) -> tensor<6x5x1xf32>
    %sd = train.sqrt %ve : tensor<6x5x1xf32>
    %xc = train.sub %x, %m : (tensor<6x5x8xf32>, tensor<6x5x1xf32>) -> tensor<6x5x8xf32>
    %xn = train.div %xc, %sd : (tensor<6x5x8xf32>, tensor<6x5x1xf32>) -> tensor<6x5x8xf32>
    %g = train.read @ln.weight : tensor<8xf32>
    %b = train.read @ln.bias : tensor<8xf32>
    %xg = train.mul %xn, %g : (tensor<6x5x8xf32>, tensor<8xf32>) -> tensor<6x5x8xf32>
    %xl = train.add %xg, %b : (tensor<6x5x8xf32>, tensor<8xf32>) -> tensor<6x5x8xf32>
    // ReLU layer, max-pooled over time and added back
    %w1 = train.read @fc1.weight : tensor<12x8xf32>
    %b1 = train.read @fc1.bias : tensor<12xf32>
    %h0 = train.matmul %xl, %w1 transpose_rhs : (tensor<6x5x8xf32>, tensor<12x8xf32>) -> tensor<6x5x12xf32>
    %h1 = train.add %h0, %b1 : (tensor<6x5x12xf32>, tensor<12xf32>) -> tensor<6x5x12xf32>
    %h = train.relu %h1 : tensor<6x5x12xf32>
    %p0 = train.amax %h dims = [1] : tensor<6x5x12xf32> -> tensor<6x12xf32>
    %p = train.reshape %p0 : tensor<6x12xf32> -> tensor<6x1x12xf32>
    %hp = train.add %h, %p : (tensor<6x5x12xf32>, tensor<6x1x12xf32>) -> tensor<6x5x12xf32>
    %w2 = train.read @fc2.weight : tensor<37x12xf32>
    %b2 = train.read @fc2.bias : tensor<37xf32>
    %l0 = train.matmul %hp, %w2 transpose_rhs : (tensor<6x5x12xf32>, tensor<37x12xf32>) -> tensor<6x5x37xf32>
    %logits = train.add %l0, %b2 : (tensor<6x5x37xf32>, tensor<37xf32>) -> tensor<6x5x37xf32>
    // -mean(gather(log_softmax(logits), targets)): ATen's nll_loss
    %lsm = train.log_softmax %logits : tensor<6x5x37xf32>
    %t = train.reshape %targets : tensor<6x5xi32> -> tensor<6x5x1xi32>
    %picked = train.gather %lsm[%t] dim = 2 : (tensor<6x5x37xf32>, tensor<6x5x1xi32>) -> tensor<6x5x1xf32>
    %mean = train.mean %picked dims = [0, 1, 2] : tensor<6x5x1xf32> -> tensor<f32>
    %loss = train.scale %mean by -1.0 : tensor<f32>
    return %loss : tensor<f32>
  }
}
