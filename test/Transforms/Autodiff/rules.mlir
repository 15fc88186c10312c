// RUN: zeroc-opt %s --split-input-file --train-autodiff | FileCheck %s

// The description's example: y = x * w, loss = mean(y). The token-free input
// %x gets no cotangent; dw = broadcast(1/4) * x.
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @w : tensor<4xf32> init = ones
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<4xf32>
    %y = train.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %l = train.mean %y dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @loss_and_grads
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {train.gradients = [@w]}
// CHECK:         %[[ONE:.*]] = train.fill 1.000000e+00 : tensor<f32>
// CHECK:         %[[W:.*]] = train.read @w
// CHECK:         %[[L:.*]] = train.mean
// CHECK:         %[[S:.*]] = train.scale %[[ONE]] by 2.500000e-01 : tensor<f32>
// CHECK:         %[[K:.*]] = train.reshape %[[S]] : tensor<f32> -> tensor<1xf32>
// CHECK:         %[[B:.*]] = train.broadcast %[[K]] : tensor<1xf32> -> tensor<4xf32>
// CHECK:         %[[DW:.*]] = train.mul %[[B]], %[[X]]
// CHECK:         return %[[L]], %[[DW]] : tensor<f32>, tensor<4xf32>

// -----

// Broadcasting is undone by summing over the broadcast dimensions, and a
// parameter read twice accumulates both uses.
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @b : tensor<1x3xf32> init = zeros
  func.func @forward(%x: tensor<2x5x3xf32>) -> tensor<f32> attributes {train.forward} {
    %b = train.read @b : tensor<1x3xf32>
    %y = train.add %x, %b : (tensor<2x5x3xf32>, tensor<1x3xf32>) -> tensor<2x5x3xf32>
    %b2 = train.read @b : tensor<1x3xf32>
    %z = train.mul %y, %b2 : (tensor<2x5x3xf32>, tensor<1x3xf32>) -> tensor<2x5x3xf32>
    %l = train.sum %z dims = [0, 1, 2] : tensor<2x5x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
// CHECK-LABEL: func.func @loss_and_grads
// CHECK-SAME:    attributes {train.gradients = [@b]}
// CHECK:         %[[DZ:.*]] = train.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x5x3xf32>
// CHECK:         %[[DY:.*]] = train.mul %[[DZ]], %{{.*}} : (tensor<2x5x3xf32>, tensor<1x3xf32>) -> tensor<2x5x3xf32>
// CHECK:         %[[DB2:.*]] = train.mul %[[DZ]], %{{.*}} : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
// CHECK:         %[[R2:.*]] = train.sum %[[DB2]] dims = [0, 1] : tensor<2x5x3xf32> -> tensor<3xf32>
// CHECK:         %[[G2:.*]] = train.reshape %[[R2]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK:         %[[R1:.*]] = train.sum %[[DY]] dims = [0, 1] : tensor<2x5x3xf32> -> tensor<3xf32>
// CHECK:         %[[G1:.*]] = train.reshape %[[R1]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK:         %[[G:.*]] = train.add %[[G2]], %[[G1]]
// CHECK:         return %{{.*}}, %[[G]]

// -----

// A linear layer: the rank-2 weight is shared by the batch, so its gradient
// folds the batch into rows; the bias sums over them. Token ids get none.
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @emb : tensor<7x5xf32> init = normal std = 2.0e-02
  train.param @w : tensor<3x5xf32> init = normal std = 2.0e-02
  train.param @unused : tensor<2xf32> init = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %t: tensor<2x4xi32>) -> tensor<f32> attributes {train.forward} {
    %e = train.read @emb : tensor<7x5xf32>
    %x = train.embedding %e[%ids] : (tensor<7x5xf32>, tensor<2x4xi32>) -> tensor<2x4x5xf32>
    %w = train.read @w : tensor<3x5xf32>
    %y = train.matmul %x, %w transpose_rhs : (tensor<2x4x5xf32>, tensor<3x5xf32>) -> tensor<2x4x3xf32>
    %l = train.cross_entropy %y, %t : (tensor<2x4x3xf32>, tensor<2x4xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
// CHECK-LABEL: func.func @loss_and_grads
// CHECK-SAME:    (%[[IDS:.*]]: tensor<2x4xi32>, %[[T:.*]]: tensor<2x4xi32>)
// CHECK-SAME:    attributes {train.gradients = [@emb, @w, @unused]}
// CHECK-DAG:     %[[ZERO:.*]] = train.fill 0.000000e+00 : tensor<2xf32>
// CHECK-DAG:     %[[ONE:.*]] = train.fill 1.000000e+00 : tensor<f32>
// CHECK:         %[[DY:.*]] = train.cross_entropy_grad %[[ONE]], %[[Y:.*]], %[[T]]
// CHECK:         %[[DX:.*]] = train.matmul %[[DY]], %[[W:.*]] : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
// CHECK:         %[[X2:.*]] = train.reshape %{{.*}} : tensor<2x4x5xf32> -> tensor<8x5xf32>
// CHECK:         %[[DY2:.*]] = train.reshape %[[DY]] : tensor<2x4x3xf32> -> tensor<8x3xf32>
// CHECK:         %[[DW:.*]] = train.matmul %[[DY2]], %[[X2]] transpose_lhs : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
// CHECK:         %[[DE:.*]] = train.embedding_grad %[[DX]][%[[IDS]]] : (tensor<2x4x5xf32>, tensor<2x4xi32>) -> tensor<7x5xf32>
// CHECK:         return %{{.*}}, %[[DE]], %[[DW]], %[[ZERO]]

// -----

// Attention, layernorm, gelu, split and transposes each get their rule; the
// unused third part of the split contributes zeros.
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.0
  train.param @p : tensor<2x5x12xf32> init = normal std = 1.0
  train.param @g : tensor<4xf32> init = ones
  train.param @b : tensor<4xf32> init = zeros
  func.func @forward() -> tensor<f32> attributes {train.forward} {
    %p = train.read @p : tensor<2x5x12xf32>
    %q, %k, %v = train.split %p dim = 2 : tensor<2x5x12xf32> -> tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
    %g = train.read @g : tensor<4xf32>
    %b = train.read @b : tensor<4xf32>
    %n = train.layernorm %q, %g, %b eps = 1.0e-05 : (tensor<2x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
    %a = train.gelu %n erf : tensor<2x5x4xf32>
    %a4 = train.reshape %a : tensor<2x5x4xf32> -> tensor<2x5x2x2xf32>
    %k4 = train.reshape %k : tensor<2x5x4xf32> -> tensor<2x5x2x2xf32>
    %ah = train.transpose %a4 [0, 2, 1, 3] : tensor<2x5x2x2xf32> -> tensor<2x2x5x2xf32>
    %kh = train.transpose %k4 [0, 2, 1, 3] : tensor<2x5x2x2xf32> -> tensor<2x2x5x2xf32>
    %o = train.attention %ah, %kh, %kh causal scale = 0.5 : (tensor<2x2x5x2xf32>, tensor<2x2x5x2xf32>, tensor<2x2x5x2xf32>) -> tensor<2x2x5x2xf32>
    %l = train.mean %o dims = [0, 1, 2, 3] : tensor<2x2x5x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
// CHECK-LABEL: func.func @loss_and_grads() -> (tensor<f32>, tensor<2x5x12xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = train.fill 0.000000e+00 : tensor<2x5x4xf32>
// CHECK:         %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = train.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} causal scale = 5.000000e-01
// The key and the value are one tensor: both cotangents meet.
// CHECK:         %[[KV:.*]] = train.add %[[DK]], %[[DV]]
// CHECK:         train.transpose %[[KV]] [0, 2, 1, 3]
// CHECK:         %[[DA:.*]] = train.transpose %[[DQ]] [0, 2, 1, 3]
// CHECK:         %[[DA3:.*]] = train.reshape %[[DA]] : tensor<2x5x2x2xf32> -> tensor<2x5x4xf32>
// CHECK:         %[[DN:.*]] = train.gelu_grad %[[DA3]], %{{.*}} erf : tensor<2x5x4xf32>
// CHECK:         %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = train.layernorm_grad %[[DN]], %{{.*}}, %{{.*}} eps = 1.000000e-05
// CHECK:         %[[DP:.*]] = train.concat %[[DX]], %{{.*}}, %[[ZERO]] dim = 2
// CHECK:         return %{{.*}}, %[[DP]], %[[DG]], %[[DB]]
