// A tiny GPT-2 in the `train` dialect, written by hand: nanoGPT's
// architecture with 2 layers, n_embd 48, 3 heads (head_dim 16), vocabulary
// 65 and block size 17, and a global batch of 12 sequences.
//
//   zeroc-opt examples/gpt2-tiny.mlir
//
// Parameter names are PyTorch's state-dict names; nn.Linear weights are
// [out_features, in_features]. The lm_head is tied to transformer.wte.weight,
// so it is not a parameter of its own (train.tied: exports write it too).

module attributes {train.model = "gpt2", train.tied = {"lm_head.weight" = @transformer.wte.weight}} {
  train.optimizer adamw lr = 6.000000e-04 beta1 = 0.9 beta2 = 0.95 eps = 1.000000e-08 weight_decay = 0.1 grad_clip = 1.0

  train.param @transformer.wte.weight : tensor<65x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.wpe.weight : tensor<17x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.h.0.ln_1.weight : tensor<48xf32> init = ones
  train.param @transformer.h.0.ln_1.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.0.attn.c_attn.weight : tensor<144x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.h.0.attn.c_attn.bias : tensor<144xf32> init = zeros
  train.param @transformer.h.0.attn.c_proj.weight : tensor<48x48xf32> init = normal std = 1.000000e-02 decay
  train.param @transformer.h.0.attn.c_proj.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.0.ln_2.weight : tensor<48xf32> init = ones
  train.param @transformer.h.0.ln_2.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.0.mlp.c_fc.weight : tensor<192x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.h.0.mlp.c_fc.bias : tensor<192xf32> init = zeros
  train.param @transformer.h.0.mlp.c_proj.weight : tensor<48x192xf32> init = normal std = 1.000000e-02 decay
  train.param @transformer.h.0.mlp.c_proj.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.1.ln_1.weight : tensor<48xf32> init = ones
  train.param @transformer.h.1.ln_1.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.1.attn.c_attn.weight : tensor<144x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.h.1.attn.c_attn.bias : tensor<144xf32> init = zeros
  train.param @transformer.h.1.attn.c_proj.weight : tensor<48x48xf32> init = normal std = 1.000000e-02 decay
  train.param @transformer.h.1.attn.c_proj.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.1.ln_2.weight : tensor<48xf32> init = ones
  train.param @transformer.h.1.ln_2.bias : tensor<48xf32> init = zeros
  train.param @transformer.h.1.mlp.c_fc.weight : tensor<192x48xf32> init = normal std = 2.000000e-02 decay
  train.param @transformer.h.1.mlp.c_fc.bias : tensor<192xf32> init = zeros
  train.param @transformer.h.1.mlp.c_proj.weight : tensor<48x192xf32> init = normal std = 1.000000e-02 decay
  train.param @transformer.h.1.mlp.c_proj.bias : tensor<48xf32> init = zeros
  train.param @transformer.ln_f.weight : tensor<48xf32> init = ones
  train.param @transformer.ln_f.bias : tensor<48xf32> init = zeros

  func.func @forward(%tokens: tensor<12x17xi32>, %targets: tensor<12x17xi32>) -> tensor<f32> attributes {train.forward} {
    // Token and position embeddings.
    %wte = train.read @transformer.wte.weight : tensor<65x48xf32>
    %wpe = train.read @transformer.wpe.weight : tensor<17x48xf32>
    %tok = train.embedding %wte[%tokens] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
    %x0 = train.add %tok, %wpe : (tensor<12x17x48xf32>, tensor<17x48xf32>) -> tensor<12x17x48xf32>


    // Block 0: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)).
    %ln1w_0 = train.read @transformer.h.0.ln_1.weight : tensor<48xf32>
    %ln1b_0 = train.read @transformer.h.0.ln_1.bias : tensor<48xf32>
    %h1_0 = train.layernorm %x0, %ln1w_0, %ln1b_0 eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %wqkv_0 = train.read @transformer.h.0.attn.c_attn.weight : tensor<144x48xf32>
    %bqkv_0 = train.read @transformer.h.0.attn.c_attn.bias : tensor<144xf32>
    %qkv0_0 = train.matmul %h1_0, %wqkv_0 transpose_rhs : (tensor<12x17x48xf32>, tensor<144x48xf32>) -> tensor<12x17x144xf32>
    %qkv_0 = train.add %qkv0_0, %bqkv_0 : (tensor<12x17x144xf32>, tensor<144xf32>) -> tensor<12x17x144xf32>
    %q_0, %k_0, %v_0 = train.split %qkv_0 dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
    %q4_0 = train.reshape %q_0 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %k4_0 = train.reshape %k_0 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %v4_0 = train.reshape %v_0 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %qh_0 = train.transpose %q4_0 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %kh_0 = train.transpose %k4_0 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %vh_0 = train.transpose %v4_0 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %att_0 = train.attention %qh_0, %kh_0, %vh_0 causal scale = 2.500000e-01 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
    %atb_0 = train.transpose %att_0 [0, 2, 1, 3] : tensor<12x3x17x16xf32> -> tensor<12x17x3x16xf32>
    %y_0 = train.reshape %atb_0 : tensor<12x17x3x16xf32> -> tensor<12x17x48xf32>
    %wap_0 = train.read @transformer.h.0.attn.c_proj.weight : tensor<48x48xf32>
    %bap_0 = train.read @transformer.h.0.attn.c_proj.bias : tensor<48xf32>
    %ap0_0 = train.matmul %y_0, %wap_0 transpose_rhs : (tensor<12x17x48xf32>, tensor<48x48xf32>) -> tensor<12x17x48xf32>
    %ap_0 = train.add %ap0_0, %bap_0 : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %x1 = train.add %x0, %ap_0 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>
    %ln2w_0 = train.read @transformer.h.0.ln_2.weight : tensor<48xf32>
    %ln2b_0 = train.read @transformer.h.0.ln_2.bias : tensor<48xf32>
    %h2_0 = train.layernorm %x1, %ln2w_0, %ln2b_0 eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %wfc_0 = train.read @transformer.h.0.mlp.c_fc.weight : tensor<192x48xf32>
    %bfc_0 = train.read @transformer.h.0.mlp.c_fc.bias : tensor<192xf32>
    %fc0_0 = train.matmul %h2_0, %wfc_0 transpose_rhs : (tensor<12x17x48xf32>, tensor<192x48xf32>) -> tensor<12x17x192xf32>
    %fc_0 = train.add %fc0_0, %bfc_0 : (tensor<12x17x192xf32>, tensor<192xf32>) -> tensor<12x17x192xf32>
    %g_0 = train.gelu %fc_0 tanh : tensor<12x17x192xf32>
    %wmp_0 = train.read @transformer.h.0.mlp.c_proj.weight : tensor<48x192xf32>
    %bmp_0 = train.read @transformer.h.0.mlp.c_proj.bias : tensor<48xf32>
    %mp0_0 = train.matmul %g_0, %wmp_0 transpose_rhs : (tensor<12x17x192xf32>, tensor<48x192xf32>) -> tensor<12x17x48xf32>
    %mp_0 = train.add %mp0_0, %bmp_0 : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %x2 = train.add %x1, %mp_0 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>

    // Block 1: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)).
    %ln1w_1 = train.read @transformer.h.1.ln_1.weight : tensor<48xf32>
    %ln1b_1 = train.read @transformer.h.1.ln_1.bias : tensor<48xf32>
    %h1_1 = train.layernorm %x2, %ln1w_1, %ln1b_1 eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %wqkv_1 = train.read @transformer.h.1.attn.c_attn.weight : tensor<144x48xf32>
    %bqkv_1 = train.read @transformer.h.1.attn.c_attn.bias : tensor<144xf32>
    %qkv0_1 = train.matmul %h1_1, %wqkv_1 transpose_rhs : (tensor<12x17x48xf32>, tensor<144x48xf32>) -> tensor<12x17x144xf32>
    %qkv_1 = train.add %qkv0_1, %bqkv_1 : (tensor<12x17x144xf32>, tensor<144xf32>) -> tensor<12x17x144xf32>
    %q_1, %k_1, %v_1 = train.split %qkv_1 dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
    %q4_1 = train.reshape %q_1 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %k4_1 = train.reshape %k_1 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %v4_1 = train.reshape %v_1 : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    %qh_1 = train.transpose %q4_1 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %kh_1 = train.transpose %k4_1 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %vh_1 = train.transpose %v4_1 [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    %att_1 = train.attention %qh_1, %kh_1, %vh_1 causal scale = 2.500000e-01 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
    %atb_1 = train.transpose %att_1 [0, 2, 1, 3] : tensor<12x3x17x16xf32> -> tensor<12x17x3x16xf32>
    %y_1 = train.reshape %atb_1 : tensor<12x17x3x16xf32> -> tensor<12x17x48xf32>
    %wap_1 = train.read @transformer.h.1.attn.c_proj.weight : tensor<48x48xf32>
    %bap_1 = train.read @transformer.h.1.attn.c_proj.bias : tensor<48xf32>
    %ap0_1 = train.matmul %y_1, %wap_1 transpose_rhs : (tensor<12x17x48xf32>, tensor<48x48xf32>) -> tensor<12x17x48xf32>
    %ap_1 = train.add %ap0_1, %bap_1 : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %x3 = train.add %x2, %ap_1 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>
    %ln2w_1 = train.read @transformer.h.1.ln_2.weight : tensor<48xf32>
    %ln2b_1 = train.read @transformer.h.1.ln_2.bias : tensor<48xf32>
    %h2_1 = train.layernorm %x3, %ln2w_1, %ln2b_1 eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %wfc_1 = train.read @transformer.h.1.mlp.c_fc.weight : tensor<192x48xf32>
    %bfc_1 = train.read @transformer.h.1.mlp.c_fc.bias : tensor<192xf32>
    %fc0_1 = train.matmul %h2_1, %wfc_1 transpose_rhs : (tensor<12x17x48xf32>, tensor<192x48xf32>) -> tensor<12x17x192xf32>
    %fc_1 = train.add %fc0_1, %bfc_1 : (tensor<12x17x192xf32>, tensor<192xf32>) -> tensor<12x17x192xf32>
    %g_1 = train.gelu %fc_1 tanh : tensor<12x17x192xf32>
    %wmp_1 = train.read @transformer.h.1.mlp.c_proj.weight : tensor<48x192xf32>
    %bmp_1 = train.read @transformer.h.1.mlp.c_proj.bias : tensor<48xf32>
    %mp0_1 = train.matmul %g_1, %wmp_1 transpose_rhs : (tensor<12x17x192xf32>, tensor<48x192xf32>) -> tensor<12x17x48xf32>
    %mp_1 = train.add %mp0_1, %bmp_1 : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %x4 = train.add %x3, %mp_1 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>

    // Final LayerNorm, the lm_head tied to the token embedding, and the loss.
    %lnfw = train.read @transformer.ln_f.weight : tensor<48xf32>
    %lnfb = train.read @transformer.ln_f.bias : tensor<48xf32>
    %hf = train.layernorm %x4, %lnfw, %lnfb eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    %logits = train.matmul %hf, %wte transpose_rhs : (tensor<12x17x48xf32>, tensor<65x48xf32>) -> tensor<12x17x65xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
