// Imported from PyTorch by zeroc.importer: test/python/Inputs/llama_models.py:MetaLlama
// batch 2 x block 8, i32 ids, vocabulary 64, f32; 29,328 parameters.

module attributes {train.model = "metallama"} {
  train.optimizer adamw lr = 0.0006 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1

  train.param @tok_embeddings.weight : tensor<64x48xf32> init = normal std = 0.01994 decay
  train.param @layers.0.attention.wq.weight : tensor<48x48xf32> init = normal std = 0.3997 decay
  train.param @layers.0.attention.wk.weight : tensor<24x48xf32> init = normal std = 0.3971 decay
  train.param @layers.0.attention.wv.weight : tensor<24x48xf32> init = normal std = 0.02039 decay
  train.param @layers.0.attention.wo.weight : tensor<48x48xf32> init = normal std = 0.01402 decay
  train.param @layers.0.feed_forward.w1.weight : tensor<112x48xf32> init = normal std = 0.01974 decay
  train.param @layers.0.feed_forward.w2.weight : tensor<48x112xf32> init = normal std = 0.01995 decay
  train.param @layers.0.feed_forward.w3.weight : tensor<112x48xf32> init = normal std = 0.01415 decay
  train.param @layers.0.attention_norm.weight : tensor<48xf32> init = ones
  train.param @layers.0.ffn_norm.weight : tensor<48xf32> init = ones
  train.param @norm.weight : tensor<48xf32> init = ones
  train.param @output.weight : tensor<64x48xf32> init = normal std = 0.02002 decay

  func.func @forward(%tokens: tensor<2x8xi32>, %targets: tensor<2x8xi32>) -> tensor<f32> attributes {train.forward} {
    %tok_embeddings.weight = train.read @tok_embeddings.weight : tensor<64x48xf32>
    %embedding = train.embedding %tok_embeddings.weight[%tokens] : (tensor<64x48xf32>, tensor<2x8xi32>) -> tensor<2x8x48xf32>
    %pow_1 = train.pow %embedding by 2.0 : tensor<2x8x48xf32>
    %mean = train.mean %pow_1 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_1 = train.reshape %mean : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_fill = train.fill 1.0e-05 : tensor<f32>
    %add = train.add %mean_1, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt = train.rsqrt %add : tensor<2x8x1xf32>
    %mul = train.mul %embedding, %rsqrt : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %layers.0.attention_norm.weight = train.read @layers.0.attention_norm.weight : tensor<48xf32>
    %mul_1 = train.mul %mul, %layers.0.attention_norm.weight : (tensor<2x8x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
    %layers.0.attention.wq.weight = train.read @layers.0.attention.wq.weight : tensor<48x48xf32>
    %mm = train.matmul %mul_1, %layers.0.attention.wq.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<48x48xf32>) -> tensor<2x8x48xf32>
    %layers.0.attention.wk.weight = train.read @layers.0.attention.wk.weight : tensor<24x48xf32>
    %mm_1_1 = train.matmul %mul_1, %layers.0.attention.wk.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<24x48xf32>) -> tensor<2x8x24xf32>
    %layers.0.attention.wv.weight = train.read @layers.0.attention.wv.weight : tensor<24x48xf32>
    %mm_2 = train.matmul %mul_1, %layers.0.attention.wv.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<24x48xf32>) -> tensor<2x8x24xf32>
    %_reshape_alias_3 = train.reshape %mm : tensor<2x8x48xf32> -> tensor<2x8x4x6x2xf32>
    %slice_3 = train.slice %_reshape_alias_3 offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x8x4x6x2xf32> -> tensor<2x8x4x6x1xf32>
    %slice_4 = train.slice %_reshape_alias_3 offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x8x4x6x2xf32> -> tensor<2x8x4x6x1xf32>
    %squeeze = train.reshape %slice_3 : tensor<2x8x4x6x1xf32> -> tensor<2x8x4x6xf32>
    %squeeze_1 = train.reshape %slice_4 : tensor<2x8x4x6x1xf32> -> tensor<2x8x4x6xf32>
    %_reshape_alias_4 = train.reshape %mm_1_1 : tensor<2x8x24xf32> -> tensor<2x8x2x6x2xf32>
    %slice_5 = train.slice %_reshape_alias_4 offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x8x2x6x2xf32> -> tensor<2x8x2x6x1xf32>
    %slice_6 = train.slice %_reshape_alias_4 offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x8x2x6x2xf32> -> tensor<2x8x2x6x1xf32>
    %squeeze_2 = train.reshape %slice_5 : tensor<2x8x2x6x1xf32> -> tensor<2x8x2x6xf32>
    %squeeze_3 = train.reshape %slice_6 : tensor<2x8x2x6x1xf32> -> tensor<2x8x2x6xf32>
    %mul_2_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F41510A3F95637E3FCCFA7F3FF0FF7F3F0000803F0000803F3311D5BE8593793F32EB7F3FBDFF7F3FFFFF7F3F0000803F26707DBF529F713F31D17F3F69FF7F3FFEFF7F3F0000803F305527BF9CA0663FCBAC7F3FF4FE7F3FFDFF7F3F0000803F2C3C913ED1BA583F017E7F3F5DFE7F3FFBFF7F3F0000803FB8CD753FB71A483FD5447F3FA4FD7F3FF9FF7F3F0000803FBDFF403FE1F5343F49017F3FCAFC7F3FF6FF7F3F0000803F"> : tensor<1x8x1x6xf32>
    %mul_2 = train.mul %squeeze, %mul_2_const : (tensor<2x8x4x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x4x6xf32>
    %mul_3_const = train.constant dense<"0x000000000000000000000000000000000000000000000000A46A573FD665E53D836B4E3C1D5DB93A76732639D2779537B7C7683F46F4633E5167CE3C115D393B7673A639D2771538C381103E942BA93E3FC81A3DBE058B3B30ADF939BB336038CFBD41BFF43BDE3E8B564E3DE05CB93B7573263AD2779538107C75BF2440083F3BEE803DEAB3E73B5310503AC6D5BA388C0F8FBE4FAB1F3FF2AB9A3D6C050B3C2FAD793ABB33E0384630283F0414353F6063B43DCF30223C05A5913AD8C80239"> : tensor<1x8x1x6xf32>
    %mul_3 = train.mul %squeeze_1, %mul_3_const : (tensor<2x8x4x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x4x6xf32>
    %sub = train.sub %mul_2, %mul_3 : (tensor<2x8x4x6xf32>, tensor<2x8x4x6xf32>) -> tensor<2x8x4x6xf32>
    %mul_4_const = train.constant dense<"0x000000000000000000000000000000000000000000000000A46A573FD665E53D836B4E3C1D5DB93A76732639D2779537B7C7683F46F4633E5167CE3C115D393B7673A639D2771538C381103E942BA93E3FC81A3DBE058B3B30ADF939BB336038CFBD41BFF43BDE3E8B564E3DE05CB93B7573263AD2779538107C75BF2440083F3BEE803DEAB3E73B5310503AC6D5BA388C0F8FBE4FAB1F3FF2AB9A3D6C050B3C2FAD793ABB33E0384630283F0414353F6063B43DCF30223C05A5913AD8C80239"> : tensor<1x8x1x6xf32>
    %mul_4 = train.mul %squeeze, %mul_4_const : (tensor<2x8x4x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x4x6xf32>
    %mul_5_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F41510A3F95637E3FCCFA7F3FF0FF7F3F0000803F0000803F3311D5BE8593793F32EB7F3FBDFF7F3FFFFF7F3F0000803F26707DBF529F713F31D17F3F69FF7F3FFEFF7F3F0000803F305527BF9CA0663FCBAC7F3FF4FE7F3FFDFF7F3F0000803F2C3C913ED1BA583F017E7F3F5DFE7F3FFBFF7F3F0000803FB8CD753FB71A483FD5447F3FA4FD7F3FF9FF7F3F0000803FBDFF403FE1F5343F49017F3FCAFC7F3FF6FF7F3F0000803F"> : tensor<1x8x1x6xf32>
    %mul_5 = train.mul %squeeze_1, %mul_5_const : (tensor<2x8x4x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x4x6xf32>
    %add_1 = train.add %mul_4, %mul_5 : (tensor<2x8x4x6xf32>, tensor<2x8x4x6xf32>) -> tensor<2x8x4x6xf32>
    %mul_6_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F41510A3F95637E3FCCFA7F3FF0FF7F3F0000803F0000803F3311D5BE8593793F32EB7F3FBDFF7F3FFFFF7F3F0000803F26707DBF529F713F31D17F3F69FF7F3FFEFF7F3F0000803F305527BF9CA0663FCBAC7F3FF4FE7F3FFDFF7F3F0000803F2C3C913ED1BA583F017E7F3F5DFE7F3FFBFF7F3F0000803FB8CD753FB71A483FD5447F3FA4FD7F3FF9FF7F3F0000803FBDFF403FE1F5343F49017F3FCAFC7F3FF6FF7F3F0000803F"> : tensor<1x8x1x6xf32>
    %mul_6 = train.mul %squeeze_2, %mul_6_const : (tensor<2x8x2x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x2x6xf32>
    %mul_7_const = train.constant dense<"0x000000000000000000000000000000000000000000000000A46A573FD665E53D836B4E3C1D5DB93A76732639D2779537B7C7683F46F4633E5167CE3C115D393B7673A639D2771538C381103E942BA93E3FC81A3DBE058B3B30ADF939BB336038CFBD41BFF43BDE3E8B564E3DE05CB93B7573263AD2779538107C75BF2440083F3BEE803DEAB3E73B5310503AC6D5BA388C0F8FBE4FAB1F3FF2AB9A3D6C050B3C2FAD793ABB33E0384630283F0414353F6063B43DCF30223C05A5913AD8C80239"> : tensor<1x8x1x6xf32>
    %mul_7 = train.mul %squeeze_3, %mul_7_const : (tensor<2x8x2x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x2x6xf32>
    %sub_1 = train.sub %mul_6, %mul_7 : (tensor<2x8x2x6xf32>, tensor<2x8x2x6xf32>) -> tensor<2x8x2x6xf32>
    %mul_8_const = train.constant dense<"0x000000000000000000000000000000000000000000000000A46A573FD665E53D836B4E3C1D5DB93A76732639D2779537B7C7683F46F4633E5167CE3C115D393B7673A639D2771538C381103E942BA93E3FC81A3DBE058B3B30ADF939BB336038CFBD41BFF43BDE3E8B564E3DE05CB93B7573263AD2779538107C75BF2440083F3BEE803DEAB3E73B5310503AC6D5BA388C0F8FBE4FAB1F3FF2AB9A3D6C050B3C2FAD793ABB33E0384630283F0414353F6063B43DCF30223C05A5913AD8C80239"> : tensor<1x8x1x6xf32>
    %mul_8 = train.mul %squeeze_2, %mul_8_const : (tensor<2x8x2x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x2x6xf32>
    %mul_9_const = train.constant dense<"0x0000803F0000803F0000803F0000803F0000803F0000803F41510A3F95637E3FCCFA7F3FF0FF7F3F0000803F0000803F3311D5BE8593793F32EB7F3FBDFF7F3FFFFF7F3F0000803F26707DBF529F713F31D17F3F69FF7F3FFEFF7F3F0000803F305527BF9CA0663FCBAC7F3FF4FE7F3FFDFF7F3F0000803F2C3C913ED1BA583F017E7F3F5DFE7F3FFBFF7F3F0000803FB8CD753FB71A483FD5447F3FA4FD7F3FF9FF7F3F0000803FBDFF403FE1F5343F49017F3FCAFC7F3FF6FF7F3F0000803F"> : tensor<1x8x1x6xf32>
    %mul_9 = train.mul %squeeze_3, %mul_9_const : (tensor<2x8x2x6xf32>, tensor<1x8x1x6xf32>) -> tensor<2x8x2x6xf32>
    %add_2 = train.add %mul_8, %mul_9 : (tensor<2x8x2x6xf32>, tensor<2x8x2x6xf32>) -> tensor<2x8x2x6xf32>
    %unsqueeze = train.reshape %sub : tensor<2x8x4x6xf32> -> tensor<2x8x4x6x1xf32>
    %unsqueeze_1 = train.reshape %add_1 : tensor<2x8x4x6xf32> -> tensor<2x8x4x6x1xf32>
    %cat = train.concat %unsqueeze, %unsqueeze_1 dim = 4 : tensor<2x8x4x6x1xf32>, tensor<2x8x4x6x1xf32> -> tensor<2x8x4x6x2xf32>
    %_reshape_alias_5 = train.reshape %cat : tensor<2x8x4x6x2xf32> -> tensor<2x8x4x12xf32>
    %unsqueeze_2 = train.reshape %sub_1 : tensor<2x8x2x6xf32> -> tensor<2x8x2x6x1xf32>
    %unsqueeze_3 = train.reshape %add_2 : tensor<2x8x2x6xf32> -> tensor<2x8x2x6x1xf32>
    %cat_1 = train.concat %unsqueeze_2, %unsqueeze_3 dim = 4 : tensor<2x8x2x6x1xf32>, tensor<2x8x2x6x1xf32> -> tensor<2x8x2x6x2xf32>
    %unsqueeze_4 = train.reshape %cat_1 : tensor<2x8x2x6x2xf32> -> tensor<2x8x2x1x12xf32>
    %expand = train.broadcast %unsqueeze_4 : tensor<2x8x2x1x12xf32> -> tensor<2x8x2x2x12xf32>
    %_unsafe_view_3 = train.reshape %expand : tensor<2x8x2x2x12xf32> -> tensor<2x8x4x12xf32>
    %unsqueeze_5 = train.reshape %mm_2 : tensor<2x8x24xf32> -> tensor<2x8x2x1x12xf32>
    %expand_1 = train.broadcast %unsqueeze_5 : tensor<2x8x2x1x12xf32> -> tensor<2x8x2x2x12xf32>
    %_unsafe_view_4 = train.reshape %expand_1 : tensor<2x8x2x2x12xf32> -> tensor<2x8x4x12xf32>
    %transpose = train.transpose %_reshape_alias_5 [0, 2, 1, 3] : tensor<2x8x4x12xf32> -> tensor<2x4x8x12xf32>
    %transpose_1 = train.transpose %_unsafe_view_3 [0, 2, 1, 3] : tensor<2x8x4x12xf32> -> tensor<2x4x8x12xf32>
    %transpose_2 = train.transpose %_unsafe_view_4 [0, 2, 1, 3] : tensor<2x8x4x12xf32> -> tensor<2x4x8x12xf32>
    %bmm = train.matmul %transpose, %transpose_1 transpose_rhs : (tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>) -> tensor<2x4x8x8xf32>
    %div = train.scale %bmm by 0.2886751345948129 : tensor<2x4x8x8xf32>
    %add_3 = train.causal_mask %div : tensor<2x4x8x8xf32>
    %_softmax = train.softmax %add_3 : tensor<2x4x8x8xf32>
    %bmm_1_1 = train.matmul %_softmax, %transpose_2 : (tensor<2x4x8x8xf32>, tensor<2x4x8x12xf32>) -> tensor<2x4x8x12xf32>
    %transpose_4 = train.transpose %bmm_1_1 [0, 2, 1, 3] : tensor<2x4x8x12xf32> -> tensor<2x8x4x12xf32>
    %layers.0.attention.wo.weight = train.read @layers.0.attention.wo.weight : tensor<48x48xf32>
    %_reshape_alias_8 = train.reshape %transpose_4 : tensor<2x8x4x12xf32> -> tensor<16x48xf32>
    %mm_3 = train.matmul %_reshape_alias_8, %layers.0.attention.wo.weight transpose_rhs : (tensor<16x48xf32>, tensor<48x48xf32>) -> tensor<16x48xf32>
    %_unsafe_view_10 = train.reshape %mm_3 : tensor<16x48xf32> -> tensor<2x8x48xf32>
    %add_4 = train.add %embedding, %_unsafe_view_10 : (tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %pow_2 = train.pow %add_4 by 2.0 : tensor<2x8x48xf32>
    %mean_1_1 = train.mean %pow_2 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_1_2 = train.reshape %mean_1_1 : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_5 = train.add %mean_1_2, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt_1 = train.rsqrt %add_5 : tensor<2x8x1xf32>
    %mul_10 = train.mul %add_4, %rsqrt_1 : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %layers.0.ffn_norm.weight = train.read @layers.0.ffn_norm.weight : tensor<48xf32>
    %mul_11 = train.mul %mul_10, %layers.0.ffn_norm.weight : (tensor<2x8x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
    %layers.0.feed_forward.w1.weight = train.read @layers.0.feed_forward.w1.weight : tensor<112x48xf32>
    %mm_4 = train.matmul %mul_11, %layers.0.feed_forward.w1.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<112x48xf32>) -> tensor<2x8x112xf32>
    %silu = train.silu %mm_4 : tensor<2x8x112xf32>
    %layers.0.feed_forward.w3.weight = train.read @layers.0.feed_forward.w3.weight : tensor<112x48xf32>
    %mm_5 = train.matmul %mul_11, %layers.0.feed_forward.w3.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<112x48xf32>) -> tensor<2x8x112xf32>
    %mul_12 = train.mul %silu, %mm_5 : (tensor<2x8x112xf32>, tensor<2x8x112xf32>) -> tensor<2x8x112xf32>
    %layers.0.feed_forward.w2.weight = train.read @layers.0.feed_forward.w2.weight : tensor<48x112xf32>
    %mm_6 = train.matmul %mul_12, %layers.0.feed_forward.w2.weight transpose_rhs : (tensor<2x8x112xf32>, tensor<48x112xf32>) -> tensor<2x8x48xf32>
    %add_6 = train.add %add_4, %mm_6 : (tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
    %pow_3 = train.pow %add_6 by 2.0 : tensor<2x8x48xf32>
    %mean_2 = train.mean %pow_3 dims = [2] : tensor<2x8x48xf32> -> tensor<2x8xf32>
    %mean_2_1 = train.reshape %mean_2 : tensor<2x8xf32> -> tensor<2x8x1xf32>
    %add_7 = train.add %mean_2_1, %add_fill : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
    %rsqrt_2 = train.rsqrt %add_7 : tensor<2x8x1xf32>
    %mul_13 = train.mul %add_6, %rsqrt_2 : (tensor<2x8x48xf32>, tensor<2x8x1xf32>) -> tensor<2x8x48xf32>
    %norm.weight = train.read @norm.weight : tensor<48xf32>
    %mul_14 = train.mul %mul_13, %norm.weight : (tensor<2x8x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
    %output.weight = train.read @output.weight : tensor<64x48xf32>
    %mm_7 = train.matmul %mul_14, %output.weight transpose_rhs : (tensor<2x8x48xf32>, tensor<64x48xf32>) -> tensor<2x8x64xf32>
    %nll_loss_forward = train.cross_entropy %mm_7, %targets : (tensor<2x8x64xf32>, tensor<2x8xi32>) -> tensor<f32>
    return %nll_loss_forward : tensor<f32>
  }
}
