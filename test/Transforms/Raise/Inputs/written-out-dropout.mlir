// A tiny transformer block written out with generic ops, as an importer of
// functionalized ATen graphs emits it: RMSNorm, attention from a fused qkv
// projection permuted with (2, 0, 3, 1, 4), a residual, LayerNorm, a
// tied-free head and cross-entropy (raise-equivalence.test); here with a
// dropout of 0.2 on the attention probabilities
// (attention-dropout-equivalence.test).
module {
  train.optimizer adamw lr = 1.000000e-02 beta1 = 0.9 beta2 = 0.95 eps = 1.000000e-08 weight_decay = 0.0 grad_clip = 0.0
  train.param @wte : tensor<16x16xf32> init = normal std = 2.000000e-01
  train.param @g1 : tensor<16xf32> init = normal std = 1.000000e+00
  train.param @wqkv : tensor<48x16xf32> init = normal std = 2.000000e-01
  train.param @lnw : tensor<16xf32> init = normal std = 1.000000e+00
  train.param @lnb : tensor<16xf32> init = normal std = 1.000000e-01
  train.param @head : tensor<16x16xf32> init = normal std = 2.000000e-01
  func.func @forward(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte : tensor<16x16xf32>
    %x = train.embedding %wte[%tokens] : (tensor<16x16xf32>, tensor<4x8xi32>) -> tensor<4x8x16xf32>
    // RMSNorm
    %g1 = train.read @g1 : tensor<16xf32>
    %sq = train.mul %x, %x : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %ms = train.mean %sq dims = [2] : tensor<4x8x16xf32> -> tensor<4x8xf32>
    %mk = train.reshape %ms : tensor<4x8xf32> -> tensor<4x8x1xf32>
    %eps1 = train.fill 1.0e-6 : tensor<f32>
    %t1 = train.add %mk, %eps1 : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32>
    %s1 = train.sqrt %t1 : tensor<4x8x1xf32>
    %one = train.fill 1.0 : tensor<f32>
    %r1 = train.div %one, %s1 : (tensor<f32>, tensor<4x8x1xf32>) -> tensor<4x8x1xf32>
    %n1 = train.mul %x, %r1 : (tensor<4x8x16xf32>, tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %h = train.mul %g1, %n1 : (tensor<16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    // qkv = h @ wqkv^T, viewed [B, T, 3, H, D] and permuted (2, 0, 3, 1, 4)
    %wqkv = train.read @wqkv : tensor<48x16xf32>
    %qkv = train.matmul %h, %wqkv transpose_rhs : (tensor<4x8x16xf32>, tensor<48x16xf32>) -> tensor<4x8x48xf32>
    %q5 = train.reshape %qkv : tensor<4x8x48xf32> -> tensor<4x8x3x2x8xf32>
    %p = train.transpose %q5 [2, 0, 3, 1, 4] : tensor<4x8x3x2x8xf32> -> tensor<3x4x2x8x8xf32>
    %q1, %k1, %v1 = train.split %p dim = 0 : tensor<3x4x2x8x8xf32> -> tensor<1x4x2x8x8xf32>, tensor<1x4x2x8x8xf32>, tensor<1x4x2x8x8xf32>
    %q = train.reshape %q1 : tensor<1x4x2x8x8xf32> -> tensor<4x2x8x8xf32>
    %k = train.reshape %k1 : tensor<1x4x2x8x8xf32> -> tensor<4x2x8x8xf32>
    %v = train.reshape %v1 : tensor<1x4x2x8x8xf32> -> tensor<4x2x8x8xf32>
    // dropout(softmax(causal(q @ k^T / sqrt(8))), 0.2) @ v
    %kt = train.transpose %k [0, 1, 3, 2] : tensor<4x2x8x8xf32> -> tensor<4x2x8x8xf32>
    %sc = train.matmul %q, %kt : (tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32>
    %sqrtd = train.fill 2.8284271247461903 : tensor<f32>
    %scd = train.div %sc, %sqrtd : (tensor<4x2x8x8xf32>, tensor<f32>) -> tensor<4x2x8x8xf32>
    %msk = train.causal_mask %scd : tensor<4x2x8x8xf32>
    %pr0 = train.softmax %msk : tensor<4x2x8x8xf32>
    %pr = train.dropout %pr0 p = 2.000000e-01 seed = 5 : tensor<4x2x8x8xf32>
    %att = train.matmul %pr, %v : (tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32>
    %at = train.transpose %att [0, 2, 1, 3] : tensor<4x2x8x8xf32> -> tensor<4x8x2x8xf32>
    %a = train.reshape %at : tensor<4x8x2x8xf32> -> tensor<4x8x16xf32>
    %res = train.add %x, %a : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    // LayerNorm
    %lnw = train.read @lnw : tensor<16xf32>
    %lnb = train.read @lnb : tensor<16xf32>
    %m = train.mean %res dims = [2] : tensor<4x8x16xf32> -> tensor<4x8xf32>
    %mk2 = train.reshape %m : tensor<4x8xf32> -> tensor<4x8x1xf32>
    %d = train.sub %res, %mk2 : (tensor<4x8x16xf32>, tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %dsq = train.mul %d, %d : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %var = train.mean %dsq dims = [2] : tensor<4x8x16xf32> -> tensor<4x8xf32>
    %vk = train.reshape %var : tensor<4x8xf32> -> tensor<4x8x1xf32>
    %eps2 = train.fill 1.0e-5 : tensor<f32>
    %t2 = train.add %vk, %eps2 : (tensor<4x8x1xf32>, tensor<f32>) -> tensor<4x8x1xf32>
    %s2 = train.sqrt %t2 : tensor<4x8x1xf32>
    %n2 = train.div %d, %s2 : (tensor<4x8x16xf32>, tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %nw = train.mul %n2, %lnw : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
    %y = train.add %nw, %lnb : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
    %head = train.read @head : tensor<16x16xf32>
    %logits = train.matmul %y, %head transpose_rhs : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<4x8x16xf32>, tensor<4x8xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
