// A tiny block written out with the generic elementwise ops of issue 31
// (raise-equivalence.test): attention masked with torch.where(tril, att,
// -inf), minGPT's NewGELU MLP, a SwiGLU MLP with sigmoid as
// 1 / (1 + exp(-x)), cross-entropy.
module {
  train.optimizer adamw lr = 1.000000e-02 beta1 = 0.9 beta2 = 0.95 eps = 1.000000e-08 weight_decay = 0.0 grad_clip = 0.0
  train.param @wte : tensor<16x8xf32> init = normal std = 5.000000e-01
  train.param @wq : tensor<8x8xf32> init = normal std = 3.000000e-01
  train.param @wk : tensor<8x8xf32> init = normal std = 3.000000e-01
  train.param @wv : tensor<8x8xf32> init = normal std = 3.000000e-01
  train.param @fc : tensor<16x8xf32> init = normal std = 3.000000e-01
  train.param @proj : tensor<8x16xf32> init = normal std = 3.000000e-01
  train.param @gate : tensor<16x8xf32> init = normal std = 3.000000e-01
  train.param @up : tensor<16x8xf32> init = normal std = 3.000000e-01
  train.param @down : tensor<8x16xf32> init = normal std = 3.000000e-01
  train.param @head : tensor<16x8xf32> init = normal std = 3.000000e-01
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte : tensor<16x8xf32>
    %x = train.embedding %wte[%tokens] : (tensor<16x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
    // one-head attention, where(tril, att, -inf)
    %wq = train.read @wq : tensor<8x8xf32>
    %wk = train.read @wk : tensor<8x8xf32>
    %wv = train.read @wv : tensor<8x8xf32>
    %q3 = train.matmul %x, %wq transpose_rhs : (tensor<4x6x8xf32>, tensor<8x8xf32>) -> tensor<4x6x8xf32>
    %k3 = train.matmul %x, %wk transpose_rhs : (tensor<4x6x8xf32>, tensor<8x8xf32>) -> tensor<4x6x8xf32>
    %v3 = train.matmul %x, %wv transpose_rhs : (tensor<4x6x8xf32>, tensor<8x8xf32>) -> tensor<4x6x8xf32>
    %q = train.reshape %q3 : tensor<4x6x8xf32> -> tensor<4x1x6x8xf32>
    %k = train.reshape %k3 : tensor<4x6x8xf32> -> tensor<4x1x6x8xf32>
    %v = train.reshape %v3 : tensor<4x6x8xf32> -> tensor<4x1x6x8xf32>
    %kt = train.transpose %k [0, 1, 3, 2] : tensor<4x1x6x8xf32> -> tensor<4x1x8x6xf32>
    %s = train.matmul %q, %kt : (tensor<4x1x6x8xf32>, tensor<4x1x8x6xf32>) -> tensor<4x1x6x6xf32>
    %sd = train.scale %s by 0.35355339059327379 : tensor<4x1x6x6xf32>
    %ones = train.fill 1.0 : tensor<6x6xf32>
    %tril = train.tril %ones diagonal = 0 : tensor<6x6xf32>
    %keep = train.broadcast %tril : tensor<6x6xf32> -> tensor<4x1x6x6xf32>
    %ninf = train.fill 0xFFF0000000000000 : tensor<4x1x6x6xf32>
    %msk = train.select %keep, %sd, %ninf : tensor<4x1x6x6xf32>
    %pr = train.softmax %msk : tensor<4x1x6x6xf32>
    %att = train.matmul %pr, %v : (tensor<4x1x6x6xf32>, tensor<4x1x6x8xf32>) -> tensor<4x1x6x8xf32>
    %a = train.reshape %att : tensor<4x1x6x8xf32> -> tensor<4x6x8xf32>
    %x1 = train.add %x, %a : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
    // NewGELU MLP
    %fc = train.read @fc : tensor<16x8xf32>
    %h = train.matmul %x1, %fc transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %half = train.scale %h by 0.5 : tensor<4x6x16xf32>
    %c3 = train.pow %h by 3.0 : tensor<4x6x16xf32>
    %ac3 = train.scale %c3 by 0.044715 : tensor<4x6x16xf32>
    %in = train.add %h, %ac3 : (tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %t = train.scale %in by 0.7978845608028654 : tensor<4x6x16xf32>
    %th = train.tanh %t : tensor<4x6x16xf32>
    %one = train.fill 1.0 : tensor<f32>
    %o = train.add %one, %th : (tensor<f32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %g = train.mul %half, %o : (tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %proj = train.read @proj : tensor<8x16xf32>
    %m1 = train.matmul %g, %proj transpose_rhs : (tensor<4x6x16xf32>, tensor<8x16xf32>) -> tensor<4x6x8xf32>
    %x2 = train.add %x1, %m1 : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
    // SwiGLU MLP
    %wg = train.read @gate : tensor<16x8xf32>
    %wu = train.read @up : tensor<16x8xf32>
    %ga = train.matmul %x2, %wg transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %u = train.matmul %x2, %wu transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %n = train.neg %ga : tensor<4x6x16xf32>
    %e = train.exp %n : tensor<4x6x16xf32>
    %den = train.add %one, %e : (tensor<f32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %sig = train.div %one, %den : (tensor<f32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %si = train.mul %ga, %sig : (tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %sw = train.mul %si, %u : (tensor<4x6x16xf32>, tensor<4x6x16xf32>) -> tensor<4x6x16xf32>
    %wd = train.read @down : tensor<8x16xf32>
    %m2 = train.matmul %sw, %wd transpose_rhs : (tensor<4x6x16xf32>, tensor<8x16xf32>) -> tensor<4x6x8xf32>
    %x3 = train.add %x2, %m2 : (tensor<4x6x8xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
    %head = train.read @head : tensor<16x8xf32>
    %logits = train.matmul %x3, %head transpose_rhs : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<4x6x16xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
