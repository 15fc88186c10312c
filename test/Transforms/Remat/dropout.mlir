// A recomputed dropout is the forward's op again: same p, seed and place
// in the global batch (batch_dim, ranks), so that with the step
// train-optimizer gives both, it draws the same mask (the mask depends on
// nothing else; the losses of test/Integration/remat.py check it).
//
// RUN: zeroc-opt %s --train-remat=policy=full | FileCheck %s
// RUN: zeroc-opt %s --train-remat=policy=selective | FileCheck %s
// RUN: zeroc-opt %s --train-remat=policy=full --train-optimizer | FileCheck %s --check-prefix=STEP

// CHECK-LABEL: func.func @loss_and_grads
// CHECK:      %[[N:.*]] = train.rmsnorm %arg0
// CHECK-NEXT: %[[D:.*]] = train.dropout %[[N]] p = 2.500000e-01 seed = 4 batch_dim = 0 ranks = 2 : tensor<2x4xf32>
// CHECK:      %[[M:.*]] = train.matmul %[[D]], %[[W:.*]] transpose_rhs
// CHECK:      %[[RN:.*]] = train.rmsnorm %arg0, %{{.*}} eps = 1.000000e-05 {train.recomputed}
// CHECK-NEXT: %[[RD:.*]] = train.dropout %[[RN]] p = 2.500000e-01 seed = 4 batch_dim = 0 ranks = 2 {train.recomputed} : tensor<2x4xf32>
// CHECK-NEXT: train.matmul %{{.*}}, %[[RD]] transpose_lhs

// STEP-LABEL: func.func @train_step
// STEP:       train.dropout %{{.*}}, %arg1 p = 2.500000e-01 seed = 4 batch_dim = 0 ranks = 2 : tensor<2x4xf32>
// STEP:       train.dropout %{{.*}}, %arg1 p = 2.500000e-01 seed = 4 batch_dim = 0 ranks = 2 {train.recomputed} : tensor<2x4xf32>

module attributes {train.batch_split = 2 : i64} {
  train.optimizer sgd lr = 0.1
  train.param @h.0.ln.weight : tensor<4xf32> init = ones
  train.param @h.0.fc.weight : tensor<3x4xf32> init = zeros
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> attributes {train.forward} {
    %g = train.read @h.0.ln.weight : tensor<4xf32>
    %n = train.rmsnorm %x, %g eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %d = train.dropout %n p = 0.25 seed = 4 batch_dim = 0 ranks = 2 : tensor<2x4xf32>
    %w = train.read @h.0.fc.weight : tensor<3x4xf32>
    %m = train.matmul %d, %w transpose_rhs : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %l = train.mean %m dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<3x4xf32>) attributes {train.gradients = [@h.0.ln.weight, @h.0.fc.weight]} {
    %one = train.fill 1.0 : tensor<f32>
    %g = train.read @h.0.ln.weight : tensor<4xf32>
    %n = train.rmsnorm %x, %g eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %d = train.dropout %n p = 0.25 seed = 4 batch_dim = 0 ranks = 2 : tensor<2x4xf32>
    %w = train.read @h.0.fc.weight : tensor<3x4xf32>
    %m = train.matmul %d, %w transpose_rhs : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %l = train.mean %m dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    // Backward.
    %s = train.scale %one by 0.16666666666666666 : tensor<f32>
    %s2 = train.reshape %s : tensor<f32> -> tensor<1x1xf32>
    %dm = train.broadcast %s2 : tensor<1x1xf32> -> tensor<2x3xf32>
    %dd = train.matmul %dm, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %dw = train.matmul %dm, %d transpose_lhs : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
    %dn = train.dropout %dd p = 0.25 seed = 4 batch_dim = 0 ranks = 2 : tensor<2x4xf32>
    %dx, %dg = train.rmsnorm_grad %dn, %x, %g eps = 1.0e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>)
    return %l, %dg, %dw : tensor<f32>, tensor<4xf32>, tensor<3x4xf32>
  }
}
