// Imported from PyTorch by zeroc.importer: test/python/Inputs/llama_models.py:HFLlama
// batch 2 x block 8, i32 ids, vocabulary 64, f32; 29,328 parameters.

module attributes {train.model = "hfllama"} {
  train.optimizer adamw lr = 0.0006 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1

  train.param @model.embed_tokens.weight : tensor<64x48xf32> init = normal std = 0.01994 decay
  train.param @model.layers.0.self_attn.q_proj.weight : tensor<48x48xf32> init = normal std = 0.3977 decay
  train.param @model.layers.0.self_attn.k_proj.weight : tensor<24x48xf32> init = normal std = 0.4055 decay
  train.param @model.layers.0.self_attn.v_proj.weight : tensor<24x48xf32> init = normal std = 0.02005 decay
  train.param @model.layers.0.self_attn.o_proj.weight : tensor<48x48xf32> init = normal std = 0.02017 decay
  train.param @model.layers.0.mlp.gate_proj.weight : tensor<112x48xf32> init = normal std = 0.01989 decay
  train.param @model.layers.0.mlp.up_proj.weight : tensor<112x48xf32> init = normal std = 0.01984 decay
  train.param @model.layers.0.mlp.down_proj.weight : tensor<48x112xf32> init = normal std = 0.01989 decay
  train.param @model.layers.0.input_layernorm.weight : tensor<48xf32> init = ones
  train.param @model.layers.0.post_attention_layernorm.weight : tensor<48xf32> init = ones
  train.param @model.norm.weight : tensor<48xf32> init = ones
  train.param @lm_head.weight : tensor<64x48xf32> init = normal std = 0.01968 decay

  func.func @forward(%tokens: tensor<2x8xi32>, %targets: tensor<2x8xi32>) -> tensor<f32> attributes {train.forward} {
    %model.embed_tokens.weight = train.read @model.embed_tokens.weight : tensor<64x48xf32>
    %embedding = train.embedding %model.embed_tokens.weight[%tokens] : (tensor<64x48xf32>, tensor<2x8xi32>) -> tensor<2x8x48xf32>
    %pow_1 = train.pow %embedding by 2.0 : tensor<2x8x48xf32>
    %mean = train.mean %pow_1 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_1 = train.reshape %mean : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_fill = train.fill 1.0e-05 : tensor<f32>
    %add = train.add %mean_1, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt = train.rsqrt %add : tensor<2x8x1xf32>
    %mul = train.mul %embedding, %rsqrt : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %model.layers.0.input_layernorm.weight = train.read @model.layers.0.input_layernorm.weight : tensor<48xf32>
    %mul_1 = train.mul %model.layers.0.input_layernorm.weight, %mul : (tensor<48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %model.layers.0.self_attn.q_proj.weight = train.read @model.layers.0.self_attn.q_proj.weight : tensor<48x48xf32>
    %mm = train.matmul %mul_1, %model.layers.0.self_attn.q_proj.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<48x48xf32>) -> tensor<2x8x48xf32>
    %view = train.reshape %mm : tensor<2x8x48xf32> -> tensor<2x8x4x12xf32>
    %transpose_1 = train.transpose %view [0, 2, 1, 3] : tensor<2x8x4x12xf32> -> tensor<2x4x8x12xf32>
    %model.layers.0.self_attn.k_proj.weight = train.read @model.layers.0.self_attn.k_proj.weight : tensor<24x48xf32>
    %mm_1_1 = train.matmul %mul_1, %model.layers.0.self_attn.k_proj.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<24x48xf32>) -> tensor<2x8x24xf32>
    %view_1 = train.reshape %mm_1_1 : tensor<2x8x24xf32> -> tensor<2x8x2x12xf32>
    %transpose_2 = train.transpose %view_1 [0, 2, 1, 3] : tensor<2x8x2x12xf32> -> tensor<2x2x8x12xf32>
    %model.layers.0.self_attn.v_proj.weight = train.read @model.layers.0.self_attn.v_proj.weight : tensor<24x48xf32>
    %mm_2 = train.matmul %mul_1, %model.layers.0.self_attn.v_proj.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<24x48xf32>) -> tensor<2x8x24xf32>
    %view_2 = train.reshape %mm_2 : tensor<2x8x24xf32> -> tensor<2x8x2x12xf32>
    %transpose_3 = train.transpose %view_2 [0, 2, 1, 3] : tensor<2x8x2x12xf32> -> tensor<2x2x8x12xf32>
    %mul_2_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F41510A3FEB147A3F6AB97F3FB9FC7F3FD9FF7F3FFEFF7F3F41510A3FEB147A3F6AB97F3FB9FC7F3FD9FF7F3FFEFF7F3F3311D5BEBA99683FD1E57E3FE5F27F3F64FF7F3FF9FF7F3F3311D5BEBA99683FD1E57E3FE5F27F3F64FF7F3FF9FF7F3F26707DBF575D4C3FA8857D3F83E27F3FA2FE7F3FF0FF7F3F26707DBF575D4C3FA8857D3F83E27F3FA2FE7F3FF0FF7F3F305527BFFAAD263FB2997B3F94CB7F3F91FD7F3FE3FF7F3F305527BFFAAD263FB2997B3F94CB7F3F91FD7F3FE3FF7F3F2C3C913E6793F23EFF22793F19AE7F3F33FC7F3FD3FF7F3F2C3C913E6793F23EFF22793F19AE7F3F33FC7F3FD3FF7F3FB8CD753F93938C3EE922763F128A7F3F86FA7F3FBFFF7F3FB8CD753F93938C3EE922763F128A7F3F86FA7F3FBFFF7F3FBDFF403F434F803D199B723F815F7F3F8CF87F3FA8FF7F3FBDFF403F434F803D199B723F815F7F3F8CF87F3FA8FF7F3F"> : tensor<1x1x8x12xf32>
    %mul_2 = train.mul %transpose_1, %mul_2_const : (tensor<2x4x8x12xf32>, tensor<1x1x8x12xf32>) -> tensor<2x4x8x12xf32>
    %slice_8 = train.slice %transpose_1 offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x4x8x12xf32> -> tensor<2x4x8x6xf32>
    %slice_9 = train.slice %transpose_1 offsets = [0, 0, 0, 6] strides = [1, 1, 1, 1] : tensor<2x4x8x12xf32> -> tensor<2x4x8x6xf32>
    %neg = train.neg %slice_9 : tensor<2x4x8x6xf32>
    %cat_1 = train.concat %neg, %slice_8 dim = 3 : tensor<2x4x8x6xf32>, tensor<2x4x8x6xf32> -> tensor<2x4x8x12xf32>
    %mul_3_const = train.constant dense<"0x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000A46A573F50E95A3E1C0D3E3D57D6233C62310D3B5B5AF339A46A573F50E95A3E1C0D3E3D57D6233C62310D3B5B5AF339B7C7683FBCD9D53EB5D8BD3D3ED4A33C4C318D3B5A5A733AB7C7683FBCD9D53EB5D8BD3D3ED4A33C4C318D3B5A5A733AC381103EC72D1A3F16210E3E1FB9F53CBDC9D33BC183B63AC381103EC72D1A3F16210E3E1FB9F53CBDC9D33BC183B63ACFBD41BFBC4D423F72073D3EDBCB233DF6300D3C535AF33ACFBD41BFBC4D423F72073D3EDBCB233DF6300D3C535AF33A107C75BFCE71613F90856B3EF4B64C3DE37C303C7118183B107C75BFCE71613F90856B3EF4B64C3DE37C303C7118183B8C0F8FBE6329763FE8C08C3ED19C753D9BC8533CB683363B8C0F8FBE6329763FE8C08C3ED19C753D9BC8533CB683363B4630283F417F7F3F6971A33E323E8F3D1214773CF7EE543B4630283F417F7F3F6971A33E323E8F3D1214773CF7EE543B"> : tensor<1x1x8x12xf32>
    %mul_3 = train.mul %cat_1, %mul_3_const : (tensor<2x4x8x12xf32>, tensor<1x1x8x12xf32>) -> tensor<2x4x8x12xf32>
    %add_1 = train.add %mul_2, %mul_3 : (tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>) -> tensor<2x4x8x12xf32>
    %mul_4_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F41510A3FEB147A3F6AB97F3FB9FC7F3FD9FF7F3FFEFF7F3F41510A3FEB147A3F6AB97F3FB9FC7F3FD9FF7F3FFEFF7F3F3311D5BEBA99683FD1E57E3FE5F27F3F64FF7F3FF9FF7F3F3311D5BEBA99683FD1E57E3FE5F27F3F64FF7F3FF9FF7F3F26707DBF575D4C3FA8857D3F83E27F3FA2FE7F3FF0FF7F3F26707DBF575D4C3FA8857D3F83E27F3FA2FE7F3FF0FF7F3F305527BFFAAD263FB2997B3F94CB7F3F91FD7F3FE3FF7F3F305527BFFAAD263FB2997B3F94CB7F3F91FD7F3FE3FF7F3F2C3C913E6793F23EFF22793F19AE7F3F33FC7F3FD3FF7F3F2C3C913E6793F23EFF22793F19AE7F3F33FC7F3FD3FF7F3FB8CD753F93938C3EE922763F128A7F3F86FA7F3FBFFF7F3FB8CD753F93938C3EE922763F128A7F3F86FA7F3FBFFF7F3FBDFF403F434F803D199B723F815F7F3F8CF87F3FA8FF7F3FBDFF403F434F803D199B723F815F7F3F8CF87F3FA8FF7F3F"> : tensor<1x1x8x12xf32>
    %mul_4 = train.mul %transpose_2, %mul_4_const : (tensor<2x2x8x12xf32>, tensor<1x1x8x12xf32>) -> tensor<2x2x8x12xf32>
    %slice_10 = train.slice %transpose_2 offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x8x12xf32> -> tensor<2x2x8x6xf32>
    %slice_11 = train.slice %transpose_2 offsets = [0, 0, 0, 6] strides = [1, 1, 1, 1] : tensor<2x2x8x12xf32> -> tensor<2x2x8x6xf32>
    %neg_1 = train.neg %slice_11 : tensor<2x2x8x6xf32>
    %cat_2 = train.concat %neg_1, %slice_10 dim = 3 : tensor<2x2x8x6xf32>, tensor<2x2x8x6xf32> -> tensor<2x2x8x12xf32>
    %mul_5_const = train.constant dense<"0x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000A46A573F50E95A3E1C0D3E3D57D6233C62310D3B5B5AF339A46A573F50E95A3E1C0D3E3D57D6233C62310D3B5B5AF339B7C7683FBCD9D53EB5D8BD3D3ED4A33C4C318D3B5A5A733AB7C7683FBCD9D53EB5D8BD3D3ED4A33C4C318D3B5A5A733AC381103EC72D1A3F16210E3E1FB9F53CBDC9D33BC183B63AC381103EC72D1A3F16210E3E1FB9F53CBDC9D33BC183B63ACFBD41BFBC4D423F72073D3EDBCB233DF6300D3C535AF33ACFBD41BFBC4D423F72073D3EDBCB233DF6300D3C535AF33A107C75BFCE71613F90856B3EF4B64C3DE37C303C7118183B107C75BFCE71613F90856B3EF4B64C3DE37C303C7118183B8C0F8FBE6329763FE8C08C3ED19C753D9BC8533CB683363B8C0F8FBE6329763FE8C08C3ED19C753D9BC8533CB683363B4630283F417F7F3F6971A33E323E8F3D1214773CF7EE543B4630283F417F7F3F6971A33E323E8F3D1214773CF7EE543B"> : tensor<1x1x8x12xf32>
    %mul_5 = train.mul %cat_2, %mul_5_const : (tensor<2x2x8x12xf32>, tensor<1x1x8x12xf32>) -> tensor<2x2x8x12xf32>
    %add_2 = train.add %mul_4, %mul_5 : (tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>) -> tensor<2x2x8x12xf32>
    %unsqueeze_6 = train.reshape %add_2 : tensor<2x2x8x12xf32> -> tensor<2x2x1x8x12xf32>
    %expand_3 = train.broadcast %unsqueeze_6 : tensor<2x2x1x8x12xf32> -> tensor<2x2x2x8x12xf32>
    %_unsafe_view_4 = train.reshape %expand_3 : tensor<2x2x2x8x12xf32> -> tensor<2x4x8x12xf32>
    %unsqueeze_7 = train.reshape %transpose_3 : tensor<2x2x8x12xf32> -> tensor<2x2x1x8x12xf32>
    %expand_4 = train.broadcast %unsqueeze_7 : tensor<2x2x1x8x12xf32> -> tensor<2x2x2x8x12xf32>
    %bmm_1 = train.matmul %add_1, %_unsafe_view_4 transpose_rhs : (tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>) -> tensor<2x4x8x8xf32>
    %div = train.scale %bmm_1 by 0.2886751345948129 : tensor<2x4x8x8xf32>
    %add_3 = train.causal_mask %div : tensor<2x4x8x8xf32>
    %_softmax = train.softmax %add_3 : tensor<2x4x8x8xf32>
    %_reshape_alias_6 = train.reshape %_softmax : tensor<2x4x8x8xf32> -> tensor<8x8x8xf32>
    %_reshape_alias_7 = train.reshape %expand_4 : tensor<2x2x2x8x12xf32> -> tensor<8x8x12xf32>
    %bmm_2 = train.matmul %_reshape_alias_6, %_reshape_alias_7 : (tensor<8x8x8xf32>, tensor<8x8x12xf32>) -> tensor<8x8x12xf32>
    %_unsafe_view_8 = train.reshape %bmm_2 : tensor<8x8x12xf32> -> tensor<2x4x8x12xf32>
    %transpose_5 = train.transpose %_unsafe_view_8 [0, 2, 1, 3] : tensor<2x4x8x12xf32> -> tensor<2x8x4x12xf32>
    %model.layers.0.self_attn.o_proj.weight = train.read @model.layers.0.self_attn.o_proj.weight : tensor<48x48xf32>
    %_reshape_alias_9 = train.reshape %transpose_5 : tensor<2x8x4x12xf32> -> tensor<16x48xf32>
    %mm_3 = train.matmul %_reshape_alias_9, %model.layers.0.self_attn.o_proj.weight transpose_rhs : (tensor<16x48xf32>, tensor<48x48xf32>) -> tensor<16x48xf32>
    %_unsafe_view_9 = train.reshape %mm_3 : tensor<16x48xf32> -> tensor<2x8x48xf32>
    %add_4 = train.add %embedding, %_unsafe_view_9 : (tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %pow_2 = train.pow %add_4 by 2.0 : tensor<2x8x48xf32>
    %mean_1_1 = train.mean %pow_2 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_1_2 = train.reshape %mean_1_1 : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_5 = train.add %mean_1_2, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt_1 = train.rsqrt %add_5 : tensor<2x8x1xf32>
    %mul_6 = train.mul %add_4, %rsqrt_1 : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %model.layers.0.post_attention_layernorm.weight = train.read @model.layers.0.post_attention_layernorm.weight : tensor<48xf32>
    %mul_7 = train.mul %model.layers.0.post_attention_layernorm.weight, %mul_6 : (tensor<48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %model.layers.0.mlp.gate_proj.weight = train.read @model.layers.0.mlp.gate_proj.weight : tensor<112x48xf32>
    %mm_4 = train.matmul %mul_7, %model.layers.0.mlp.gate_proj.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<112x48xf32>) -> tensor<2x8x112xf32>
    %silu = train.silu %mm_4 : tensor<2x8x112xf32>
    %model.layers.0.mlp.up_proj.weight = train.read @model.layers.0.mlp.up_proj.weight : tensor<112x48xf32>
    %mm_5 = train.matmul %mul_7, %model.layers.0.mlp.up_proj.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<112x48xf32>) -> tensor<2x8x112xf32>
    %mul_8 = train.mul %silu, %mm_5 : (tensor<2x8x112xf32>, tensor<2x8x112xf32>) -> tensor<2x8x112xf32>
    %model.layers.0.mlp.down_proj.weight = train.read @model.layers.0.mlp.down_proj.weight : tensor<48x112xf32>
    %mm_6 = train.matmul %mul_8, %model.layers.0.mlp.down_proj.weight transpose_rhs : (tensor<2x8x112xf32>, tensor<48x112xf32>) -> tensor<2x8x48xf32>
    %add_6 = train.add %add_4, %mm_6 : (tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %pow_3 = train.pow %add_6 by 2.0 : tensor<2x8x48xf32>
    %mean_2 = train.mean %pow_3 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_2_1 = train.reshape %mean_2 : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_7 = train.add %mean_2_1, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt_2 = train.rsqrt %add_7 : tensor<2x8x1xf32>
    %mul_9 = train.mul %add_6, %rsqrt_2 : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %model.norm.weight = train.read @model.norm.weight : tensor<48xf32>
    %mul_10 = train.mul %model.norm.weight, %mul_9 : (tensor<48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %lm_head.weight = train.read @lm_head.weight : tensor<64x48xf32>
    %mm_7 = train.matmul %mul_10, %lm_head.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<64x48xf32>) -> tensor<2x8x64xf32>
    %nll_loss_forward = train.cross_entropy %mm_7, %targets : (tensor<2x8x64xf32>, tensor<2x8xi32>) -> tensor<f32>
    return %nll_loss_forward : tensor<f32>
  }
}
