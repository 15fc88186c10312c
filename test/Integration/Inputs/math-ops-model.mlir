// A small language model written with every op of TrainMathOps.td (the
// generic ops of issue 31), for math-ops-evaluator.py: token embeddings plus
// position embeddings gathered by a train.constant arange; one causal
// self-attention without projections, its mask applied twice (train.tril's
// zeros, then train.select of -inf where train.compare finds a zero in a
// train.constant lower triangle); minGPT's NewGELU written with train.pow and
// train.tanh; an RMS norm written with train.rsqrt; softplus(-x) written
// with train.neg, train.exp and train.log; the loss is the cross-entropy
// plus 0.01 times the mean of train.erf of the train.triu part of the scores.
// 4 sequences of 6 tokens, vocabulary 23, embedding 8, hidden 12.
module attributes {train.model = "math_ops"} {
  train.optimizer adamw lr = 1.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @wte.weight : tensor<23x8xf32> init = normal std = 0.5 decay
  train.param @wpe.weight : tensor<6x8xf32> init = normal std = 0.2
  train.param @fc1.weight : tensor<12x8xf32> init = normal std = 0.3 decay
  train.param @fc2.weight : tensor<23x12xf32> init = normal std = 0.3 decay
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte.weight : tensor<23x8xf32>
    %tok = train.embedding %wte[%tokens] : (tensor<23x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    %wpe = train.read @wpe.weight : tensor<6x8xf32>
    %pos = train.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>
    %pe = train.embedding %wpe[%pos] : (tensor<6x8xf32>, tensor<6xi32>) -> tensor<6x8xf32>
    %x = train.add %tok, %pe : (tensor<4x6x8xf32>, tensor<6x8xf32>) -> tensor<4x6x8xf32>

    // Causal self-attention, masked by tril and by select.
    %s0 = train.matmul %x, %x transpose_rhs : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x6x6xf32>
    %s = train.scale %s0 by 0.35355339059327373 : tensor<4x6x6xf32>
    %lower = train.tril %s diagonal = 0 : tensor<4x6x6xf32>
    %keep = train.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<6x6xf32>
    %keepb = train.broadcast %keep : tensor<6x6xf32> -> tensor<4x6x6xf32>
    %zero = train.fill 0.0 : tensor<4x6x6xf32>
    %masked = train.compare %keepb, %zero eq : tensor<4x6x6xf32>
    %ninf = train.fill 0xFFF0000000000000 : tensor<4x6x6xf32>
    %scores = train.select %masked, %ninf, %lower : tensor<4x6x6xf32>
    %att = train.softmax %scores : tensor<4x6x6xf32>
    %a = train.matmul %att, %x : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>

    // NewGELU: 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3))).
    %w1 = train.read @fc1.weight : tensor<12x8xf32>
    %h = train.matmul %a, %w1 transpose_rhs : (tensor<4x6x8xf32>, tensor<12x8xf32>) -> tensor<4x6x12xf32>
    %h3 = train.pow %h by 3.0 : tensor<4x6x12xf32>
    %k = train.scale %h3 by 0.044715 : tensor<4x6x12xf32>
    %inner = train.add %h, %k : (tensor<4x6x12xf32>, tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    %ts = train.scale %inner by 0.79788456080286541 : tensor<4x6x12xf32>
    %th = train.tanh %ts : tensor<4x6x12xf32>
    %one = train.fill 1.0 : tensor<4x6x12xf32>
    %opt = train.add %th, %one : (tensor<4x6x12xf32>, tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    %hh = train.mul %h, %opt : (tensor<4x6x12xf32>, tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    %g = train.scale %hh by 0.5 : tensor<4x6x12xf32>

    // RMS norm: g * rsqrt(mean(g^2) + eps).
    %g2 = train.pow %g by 2.0 : tensor<4x6x12xf32>
    %ms = train.mean %g2 dims = [2] : tensor<4x6x12xf32> -> tensor<4x6xf32>
    %eps = train.fill 1.0e-05 : tensor<4x6xf32>
    %mse = train.add %ms, %eps : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %r = train.rsqrt %mse : tensor<4x6xf32>
    %rr = train.reshape %r : tensor<4x6xf32> -> tensor<4x6x1xf32>
    %n = train.mul %g, %rr : (tensor<4x6x12xf32>, tensor<4x6x1xf32>) -> tensor<4x6x12xf32>

    // n - softplus(-n) = n - log(1 + exp(-n)).
    %nn = train.neg %n : tensor<4x6x12xf32>
    %en = train.exp %nn : tensor<4x6x12xf32>
    %one2 = train.fill 1.0 : tensor<4x6x12xf32>
    %sp = train.add %en, %one2 : (tensor<4x6x12xf32>, tensor<4x6x12xf32>) -> tensor<4x6x12xf32>
    %lsp = train.log %sp : tensor<4x6x12xf32>
    %y = train.sub %n, %lsp : (tensor<4x6x12xf32>, tensor<4x6x12xf32>) -> tensor<4x6x12xf32>

    %w2 = train.read @fc2.weight : tensor<23x12xf32>
    %logits = train.matmul %y, %w2 transpose_rhs : (tensor<4x6x12xf32>, tensor<23x12xf32>) -> tensor<4x6x23xf32>
    %ce = train.cross_entropy %logits, %targets : (tensor<4x6x23xf32>, tensor<4x6xi32>) -> tensor<f32>
    %upper = train.triu %s diagonal = 1 : tensor<4x6x6xf32>
    %eu = train.erf %upper : tensor<4x6x6xf32>
    %um = train.mean %eu dims = [0, 1, 2] : tensor<4x6x6xf32> -> tensor<f32>
    %reg = train.scale %um by 0.01 : tensor<f32>
    // The loss stays f32 under --precision=bf16 (cross_entropy's is).
    %regf = train.cast %reg : tensor<f32> to tensor<f32>
    %loss = train.add %ce, %regf : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
