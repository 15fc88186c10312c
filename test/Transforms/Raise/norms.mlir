// RUN: zeroc-opt %s --split-input-file --train-raise=families=norms | FileCheck %s

// Llama's RMSNorm written out: x * (1 / sqrt(mean(x * x, -1, keepdim) + eps)) * w.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.rmsnorm %[[X]], %[[W]] eps = 9.9999999747524271E-7 : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rmsnorm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %sq = train.mul %x, %x : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %ms = train.mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %ms : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 9.9999999747524271E-7 : tensor<f32>
  %t = train.add %mk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %one = train.fill 1.0 : tensor<f32>
  %r = train.div %one, %s : (tensor<f32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = train.mul %x, %r : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = train.mul %w, %n : (tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// nn.LayerNorm written out (the deviation computed once, / sqrt, affine).
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.layernorm %[[X]], %[[W]], %[[B]] eps = 1.000000e-05 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layernorm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = train.mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %m : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %d = train.sub %x, %mk : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %sq = train.mul %d, %d : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %v = train.mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = train.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 1.0e-5 : tensor<f32>
  %t = train.add %eps, %vk : (tensor<f32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %n = train.div %d, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %nw = train.mul %n, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %y = train.add %nw, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Without a bias (nanoGPT's bias=False): a zero bias. The deviation
// computed twice for the variance.
// CHECK-LABEL: func.func @layernorm_no_bias
// CHECK: %[[Z:.*]] = train.fill 0.000000e+00 : tensor<8xf32>
// CHECK-NEXT: %[[Y:.*]] = train.layernorm %{{.*}}, %{{.*}}, %[[Z]] eps = 1.000000e-05
// CHECK-NEXT: return %[[Y]]
func.func @layernorm_no_bias(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = train.mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %m : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %d = train.sub %x, %mk : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %m2 = train.mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk2 = train.reshape %m2 : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %d2 = train.sub %x, %mk2 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %sq = train.mul %d2, %d2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %v = train.mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = train.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 1.0e-5 : tensor<f32>
  %t = train.add %vk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %n = train.div %d, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = train.mul %n, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Near misses, left generic.
// The mean of squares over the wrong axis.
// CHECK-LABEL: func.func @rms_wrong_axis
// CHECK-NOT: train.rmsnorm
// CHECK: return
func.func @rms_wrong_axis(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>) -> tensor<2x8x8xf32> {
  %sq = train.mul %x, %x : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ms = train.mean %sq dims = [1] : tensor<2x8x8xf32> -> tensor<2x8xf32>
  %mk = train.reshape %ms : tensor<2x8xf32> -> tensor<2x8x1xf32>
  %eps = train.fill 1.0e-6 : tensor<f32>
  %t = train.add %mk, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = train.sqrt %t : tensor<2x8x1xf32>
  %n = train.div %x, %s : (tensor<2x8x8xf32>, tensor<2x8x1xf32>) -> tensor<2x8x8xf32>
  %y = train.mul %n, %w : (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// The mean of the square of another value than the one normalized.
// CHECK-LABEL: func.func @rms_other_value
// CHECK-NOT: train.rmsnorm
// CHECK: return
func.func @rms_other_value(%x: tensor<2x3x8xf32>, %z: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %sq = train.mul %z, %z : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %ms = train.mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %ms : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 1.0e-6 : tensor<f32>
  %t = train.add %mk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %n = train.div %x, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = train.mul %n, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// eps subtracted instead of added (a wrong constant: -eps).
// CHECK-LABEL: func.func @rms_negative_eps
// CHECK-NOT: train.rmsnorm
// CHECK: return
func.func @rms_negative_eps(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %sq = train.mul %x, %x : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %ms = train.mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %ms : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill -1.0e-6 : tensor<f32>
  %t = train.add %mk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %n = train.div %x, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = train.mul %n, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// The variance of a deviation from another mean (over another axis): not
// a LayerNorm; what is written is the RMSNorm of that deviation, plus b.
// CHECK-LABEL: func.func @ln_other_mean
// CHECK-NOT: train.layernorm
// CHECK: %[[D:.*]] = train.sub
// CHECK-NEXT: %[[N:.*]] = train.rmsnorm %[[D]], %{{.*}} eps = 1.000000e-05
// CHECK-NEXT: train.add %[[N]], %{{.*}}
// CHECK: return
func.func @ln_other_mean(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x8xf32> {
  %m = train.mean %x dims = [1] : tensor<2x8x8xf32> -> tensor<2x8xf32>
  %mk = train.reshape %m : tensor<2x8xf32> -> tensor<2x8x1xf32>
  %d = train.sub %x, %mk : (tensor<2x8x8xf32>, tensor<2x8x1xf32>) -> tensor<2x8x8xf32>
  %sq = train.mul %d, %d : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %v = train.mean %sq dims = [2] : tensor<2x8x8xf32> -> tensor<2x8xf32>
  %vk = train.reshape %v : tensor<2x8xf32> -> tensor<2x8x1xf32>
  %eps = train.fill 1.0e-5 : tensor<f32>
  %t = train.add %vk, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = train.sqrt %t : tensor<2x8x1xf32>
  %n = train.div %d, %s : (tensor<2x8x8xf32>, tensor<2x8x1xf32>) -> tensor<2x8x8xf32>
  %nw = train.mul %n, %w : (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %y = train.add %nw, %b : (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

// minGPT-style LayerNorm with torch.var(x, -1, unbiased=False) (correction
// = 0) and rsqrt-free 1 / sqrt.
// CHECK-LABEL: func.func @layernorm_var
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = train.layernorm %[[X]], %[[W]], %[[B]] eps = 1.000000e-05
// CHECK-NEXT: return %[[Y]]
func.func @layernorm_var(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = train.mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %m : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %d = train.sub %x, %mk : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %v = train.var %x dims = [2] correction = 0 : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = train.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 1.0e-5 : tensor<f32>
  %t = train.add %vk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %one = train.fill 1.0 : tensor<f32>
  %r = train.div %one, %s : (tensor<f32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = train.mul %d, %r : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %nw = train.mul %w, %n : (tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y = train.add %b, %nw : (tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// The unbiased variance (torch.var's default, correction = 1) is not
// nn.LayerNorm's.
// CHECK-LABEL: func.func @layernorm_unbiased
// CHECK-NOT: train.layernorm
// CHECK: train.var %{{.*}} dims = [2] correction = 1
func.func @layernorm_unbiased(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = train.mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = train.reshape %m : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %d = train.sub %x, %mk : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %v = train.var %x dims = [2] correction = 1 : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = train.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = train.fill 1.0e-5 : tensor<f32>
  %t = train.add %vk, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = train.sqrt %t : tensor<2x3x1xf32>
  %n = train.div %d, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %nw = train.mul %n, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %y = train.add %nw, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
