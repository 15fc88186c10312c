// An embedding with padding_idx under a loss (generic-ops.mlir's RULE).
train.param @e : tensor<7x5xf32> init = normal std = 1.0
func.func @forward(%ids: tensor<3x4xi32>, %c0: tensor<3x4x5xf32>) -> tensor<f32> attributes {train.forward} {
  %e = train.read @e : tensor<7x5xf32>
  %y = train.embedding %e[%ids] padding_idx = 2 : (tensor<7x5xf32>, tensor<3x4xi32>) -> tensor<3x4x5xf32>
  %p0 = train.mul %y, %c0 : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %s0 = train.sum %p0 dims = [0, 1, 2] : tensor<3x4x5xf32> -> tensor<f32>
  return %s0 : tensor<f32>
}
