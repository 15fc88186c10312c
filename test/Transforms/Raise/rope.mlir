// RUN: zeroc-opt %s --split-input-file --train-raise=families=rope | FileCheck %s
//
// Rotary embeddings with constant cos/sin tables (computed here as PyTorch
// computes them in f32: Hugging Face's LlamaRotaryEmbedding and Meta's
// precompute_freqs_cis) raised to train.rope; near-misses stay generic.

// Hugging Face: q * cos + rotate_half(q) * sin, theta 10000, positions on dim 2.
// CHECK-LABEL: func.func @hf_rotate_half
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.rope %[[X]] theta = 1.000000e+04 seq_dim = 2 rotate_half : tensor<2x2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @hf_rotate_half(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Llama 3's theta, fitted from the table; -x as train.scale by -1.
// CHECK-LABEL: func.func @hf_theta_500000
// CHECK-NEXT: train.rope %{{.*}} theta = 5.000000e+05 seq_dim = 2 rotate_half
// CHECK-NEXT: return
func.func @hf_theta_500000(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9992929697036743, 0.9999989867210388, 1.0, 0.5403022766113281, 0.9992929697036743, 0.9999989867210388, 1.0], [-0.41614681482315063, 0.9971728920936584, 0.9999960064888, 1.0, -0.41614681482315063, 0.9971728920936584, 0.9999960064888, 1.0], [-0.9899924993515015, 0.9936428070068359, 0.9999909996986389, 1.0, -0.9899924993515015, 0.9936428070068359, 0.9999909996986389, 1.0]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0375971682369709, 0.0014142129803076386, 5.318296462064609e-05, 0.8414710164070129, 0.0375971682369709, 0.0014142129803076386, 5.318296462064609e-05], [0.9092974066734314, 0.07514116913080215, 0.0028284231666475534, 0.00010636592924129218, 0.9092974066734314, 0.07514116913080215, 0.0028284231666475534, 0.00010636592924129218], [0.14112000167369843, 0.11257892102003098, 0.004242627881467342, 0.00015954888658598065, 0.14112000167369843, 0.11257892102003098, 0.004242627881467342, 0.00015954888658598065]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.scale %x2 by -1.0 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: tables of positions 1..4 (an offset train.rope has not).
// CHECK-LABEL: func.func @hf_offset_positions
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_offset_positions(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418], [-0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001, -0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027], [-0.756802499294281, 0.3894183337688446, 0.03998933359980583, 0.003999989479780197, -0.756802499294281, 0.3894183337688446, 0.03998933359980583, 0.003999989479780197]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: one cosine 2e-4 off (every entry is checked).
// CHECK-LABEL: func.func @hf_one_entry_off
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_one_entry_off(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9555364847183228, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: frequencies halved (linear scaling is not raised).
// CHECK-LABEL: func.func @hf_scaled_frequencies
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_scaled_frequencies(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.8775825500488281, 0.9987502694129944, 0.9999874830245972, 0.9999998807907104, 0.8775825500488281, 0.9987502694129944, 0.9999874830245972, 0.9999998807907104], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [0.07073719799518585, 0.9887710809707642, 0.9998875260353088, 0.9999988675117493, 0.07073719799518585, 0.9887710809707642, 0.9998875260353088, 0.9999988675117493]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.4794255495071411, 0.04997916892170906, 0.004999978933483362, 0.0005000000237487257, 0.4794255495071411, 0.04997916892170906, 0.004999978933483362, 0.0005000000237487257], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9974949955940247, 0.14943814277648926, 0.014999437145888805, 0.001499999430961907, 0.9974949955940247, 0.14943814277648926, 0.014999437145888805, 0.001499999430961907]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: cos and sin swapped.
// CHECK-LABEL: func.func @hf_swapped_tables
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_swapped_tables(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: the sign on the other half: concat(-x1, x2).
// CHECK-LABEL: func.func @hf_sign_error
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_sign_error(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x1 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x2 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Near-miss: halves taken at the wrong offset (x[..., 2:6]).
// CHECK-LABEL: func.func @hf_halves_not_split
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_halves_not_split(%x: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x1x4x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x1x4x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<2x2x4x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 2] strides = [1, 1, 1, 1] : tensor<2x2x4x8xf32> -> tensor<2x2x4x4xf32>
  %n = train.neg %x2 : tensor<2x2x4x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x8xf32>
  %rs = train.mul %sin, %r : (tensor<1x1x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// Positions on dim 1 ([B, T, H, D], the tables [1, T, 1, D]).
// CHECK-LABEL: func.func @hf_seq_dim_1
// CHECK-NEXT: train.rope %{{.*}} theta = 1.000000e+04 seq_dim = 1 rotate_half : tensor<2x4x2x8xf32>
// CHECK-NEXT: return
func.func @hf_seq_dim_1(%x: tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], [[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295]], [[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x4x1x8xf32>
  %xc = train.mul %cos, %x : (tensor<1x4x1x8xf32>, tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x4x2x8xf32> -> tensor<2x4x2x4xf32>
  %x2 = train.slice %x offsets = [0, 0, 0, 4] strides = [1, 1, 1, 1] : tensor<2x4x2x8xf32> -> tensor<2x4x2x4xf32>
  %n = train.neg %x2 : tensor<2x4x2x4xf32>
  %r = train.concat %n, %x1 dim = 3 : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32> -> tensor<2x4x2x8xf32>
  %rs = train.mul %r, %sin : (tensor<2x4x2x8xf32>, tensor<1x4x1x8xf32>) -> tensor<2x4x2x8xf32>
  %y = train.add %rs, %xc : (tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}

// -----

// Near-miss: the halves and the concat on the positions (dim 2), not
// the features: rotate_half of the wrong axis.
// CHECK-LABEL: func.func @hf_wrong_axis
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @hf_wrong_axis(%x: tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> {
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418, 0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418], [-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776, -0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776], [-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418, -0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418], [-0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001, -0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001], [0.28366217017173767, 0.8775825500488281, 0.9987502694129944, 0.9999874830245972, 0.28366217017173767, 0.8775825500488281, 0.9987502694129944, 0.9999874830245972], [0.9601702690124512, 0.8253356218338013, 0.998200535774231, 0.9999819993972778, 0.9601702690124512, 0.8253356218338013, 0.998200535774231, 0.9999819993972778], [0.7539022564888, 0.7648422122001648, 0.9975510239601135, 0.9999755024909973, 0.7539022564888, 0.7648422122001648, 0.9975510239601135, 0.9999755024909973]]]]> : tensor<1x1x8x8xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295, 0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295], [0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407, 0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407], [0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027, 0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027], [-0.756802499294281, 0.3894183337688446, 0.03998933359980583, 0.003999989479780197, -0.756802499294281, 0.3894183337688446, 0.03998933359980583, 0.003999989479780197], [-0.9589242935180664, 0.4794255495071411, 0.04997916519641876, 0.0049999793991446495, -0.9589242935180664, 0.4794255495071411, 0.04997916519641876, 0.0049999793991446495], [-0.279415488243103, 0.5646424889564514, 0.059964004904031754, 0.0059999641962349415, -0.279415488243103, 0.5646424889564514, 0.059964004904031754, 0.0059999641962349415], [0.6569865942001343, 0.6442176699638367, 0.06994284689426422, 0.0069999429397284985, 0.6569865942001343, 0.6442176699638367, 0.06994284689426422, 0.0069999429397284985]]]]> : tensor<1x1x8x8xf32>
  %xc = train.mul %x, %cos : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
  %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x2x8x8xf32> -> tensor<2x2x4x8xf32>
  %x2 = train.slice %x offsets = [0, 0, 4, 0] strides = [1, 1, 1, 1] : tensor<2x2x8x8xf32> -> tensor<2x2x4x8xf32>
  %n = train.neg %x2 : tensor<2x2x4x8xf32>
  %r = train.concat %n, %x1 dim = 2 : tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x8x8xf32>
  %rs = train.mul %r, %sin : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
  %y = train.add %xc, %rs : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  return %y : tensor<2x2x8x8xf32>
}

// -----

// Meta / llama2.c: the pairs of x viewed [B, T, H, D/2, 2], rotated, stacked
// and flattened back (x arrives as [B, T, H*D], the heads split by the view).
// CHECK-LABEL: func.func @meta_interleaved
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK-NEXT: %[[V:.*]] = train.reshape %[[X]] : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
// CHECK-NEXT: %[[Y:.*]] = train.rope %[[V]] theta = 1.000000e+04 seq_dim = 1 interleaved : tensor<2x4x2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @meta_interleaved(%x: tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32> {
  %r = train.reshape %x : tensor<2x4x16xf32> -> tensor<2x4x2x4x2xf32>
  %s0 = train.slice %r offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %s1 = train.slice %r offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %a = train.reshape %s0 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %b = train.reshape %s1 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0]], [[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295]], [[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x4x1x4xf32>
  %cos2 = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %ac = train.mul %a, %cos : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %bs = train.mul %b, %sin : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %re = train.sub %ac, %bs : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %as = train.mul %sin, %a : (tensor<1x4x1x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %bc = train.mul %b, %cos2 : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %im = train.add %bc, %as : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %re1 = train.reshape %re : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %im1 = train.reshape %im : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %c = train.concat %re1, %im1 dim = 4 : tensor<2x4x2x4x1xf32>, tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4x2xf32>
  %y = train.reshape %c : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}

// -----

// Near-miss: the pairing reversed (a = r[..., 1], b = r[..., 0]).
// CHECK-LABEL: func.func @meta_swapped_pairs
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @meta_swapped_pairs(%x: tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32> {
  %r = train.reshape %x : tensor<2x4x16xf32> -> tensor<2x4x2x4x2xf32>
  %s0 = train.slice %r offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %s1 = train.slice %r offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %a = train.reshape %s0 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %b = train.reshape %s1 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0]], [[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295]], [[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x4x1x4xf32>
  %cos2 = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %ac = train.mul %a, %cos : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %bs = train.mul %b, %sin : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %re = train.sub %ac, %bs : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %as = train.mul %sin, %a : (tensor<1x4x1x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %bc = train.mul %b, %cos2 : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %im = train.add %bc, %as : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %re1 = train.reshape %re : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %im1 = train.reshape %im : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %c = train.concat %re1, %im1 dim = 4 : tensor<2x4x2x4x1xf32>, tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4x2xf32>
  %y = train.reshape %c : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}

// -----

// Near-miss: a * cos + b * sin in the first component.
// CHECK-LABEL: func.func @meta_sign_error
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @meta_sign_error(%x: tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32> {
  %r = train.reshape %x : tensor<2x4x16xf32> -> tensor<2x4x2x4x2xf32>
  %s0 = train.slice %r offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %s1 = train.slice %r offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %a = train.reshape %s0 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %b = train.reshape %s1 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0]], [[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295]], [[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x4x1x4xf32>
  %cos2 = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %ac = train.mul %a, %cos : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %bs = train.mul %b, %sin : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %re = train.add %ac, %bs : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %as = train.mul %sin, %a : (tensor<1x4x1x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %bc = train.mul %b, %cos2 : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %im = train.add %bc, %as : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %re1 = train.reshape %re : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %im1 = train.reshape %im : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %c = train.concat %re1, %im1 dim = 4 : tensor<2x4x2x4x1xf32>, tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4x2xf32>
  %y = train.reshape %c : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}

// -----

// Near-miss: the second component's cosines of another theta.
// CHECK-LABEL: func.func @meta_other_theta_in_second
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @meta_other_theta_in_second(%x: tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32> {
  %r = train.reshape %x : tensor<2x4x16xf32> -> tensor<2x4x2x4x2xf32>
  %s0 = train.slice %r offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %s1 = train.slice %r offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %a = train.reshape %s0 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %b = train.reshape %s1 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %cos = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9950041770935059, 0.9999499917030334, 0.9999995231628418]], [[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]]]]> : tensor<1x4x1x4xf32>
  %sin = train.constant dense<[[[[0.0, 0.0, 0.0, 0.0]], [[0.8414710164070129, 0.0998334214091301, 0.009999833069741726, 0.0009999999310821295]], [[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]]]]> : tensor<1x4x1x4xf32>
  %cos2 = train.constant dense<[[[[1.0, 1.0, 1.0, 1.0]], [[0.5403022766113281, 0.9964665770530701, 0.9999750256538391, 0.9999998211860657]], [[-0.41614681482315063, 0.9858911633491516, 0.9998999834060669, 0.9999992847442627]], [[-0.9899924993515015, 0.9683485627174377, 0.9997749924659729, 0.9999983906745911]]]]> : tensor<1x4x1x4xf32>
  %ac = train.mul %a, %cos : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %bs = train.mul %b, %sin : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %re = train.sub %ac, %bs : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %as = train.mul %sin, %a : (tensor<1x4x1x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %bc = train.mul %b, %cos2 : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %im = train.add %bc, %as : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %re1 = train.reshape %re : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %im1 = train.reshape %im : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %c = train.concat %re1, %im1 dim = 4 : tensor<2x4x2x4x1xf32>, tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4x2xf32>
  %y = train.reshape %c : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}

// -----

// Near-miss: tables of positions 2..5.
// CHECK-LABEL: func.func @meta_offset_positions
// CHECK-NOT: train.rope
// CHECK: train.concat
func.func @meta_offset_positions(%x: tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32> {
  %r = train.reshape %x : tensor<2x4x16xf32> -> tensor<2x4x2x4x2xf32>
  %s0 = train.slice %r offsets = [0, 0, 0, 0, 0] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %s1 = train.slice %r offsets = [0, 0, 0, 0, 1] strides = [1, 1, 1, 1, 1] : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x4x1xf32>
  %a = train.reshape %s0 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %b = train.reshape %s1 : tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4xf32>
  %cos = train.constant dense<[[[[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]], [[-0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001]], [[0.28366217017173767, 0.8775825500488281, 0.9987502694129944, 0.9999874830245972]]]]> : tensor<1x4x1x4xf32>
  %sin = train.constant dense<[[[[0.9092974066734314, 0.19866932928562164, 0.019998665899038315, 0.0019999986980110407]], [[0.14112000167369843, 0.29552021622657776, 0.029995499178767204, 0.0029999956022948027]], [[-0.756802499294281, 0.3894183337688446, 0.03998933359980583, 0.003999989479780197]], [[-0.9589242935180664, 0.4794255495071411, 0.04997916519641876, 0.0049999793991446495]]]]> : tensor<1x4x1x4xf32>
  %cos2 = train.constant dense<[[[[-0.41614681482315063, 0.9800665974617004, 0.9998000264167786, 0.9999979734420776]], [[-0.9899924993515015, 0.9553365111351013, 0.9995500445365906, 0.9999955296516418]], [[-0.6536436080932617, 0.9210609793663025, 0.9992001056671143, 0.9999920129776001]], [[0.28366217017173767, 0.8775825500488281, 0.9987502694129944, 0.9999874830245972]]]]> : tensor<1x4x1x4xf32>
  %ac = train.mul %a, %cos : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %bs = train.mul %b, %sin : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %re = train.sub %ac, %bs : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %as = train.mul %sin, %a : (tensor<1x4x1x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %bc = train.mul %b, %cos2 : (tensor<2x4x2x4xf32>, tensor<1x4x1x4xf32>) -> tensor<2x4x2x4xf32>
  %im = train.add %bc, %as : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>) -> tensor<2x4x2x4xf32>
  %re1 = train.reshape %re : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %im1 = train.reshape %im : tensor<2x4x2x4xf32> -> tensor<2x4x2x4x1xf32>
  %c = train.concat %re1, %im1 dim = 4 : tensor<2x4x2x4x1xf32>, tensor<2x4x2x4x1xf32> -> tensor<2x4x2x4x2xf32>
  %y = train.reshape %c : tensor<2x4x2x4x2xf32> -> tensor<2x4x2x8xf32>
  return %y : tensor<2x4x2x8xf32>
}
