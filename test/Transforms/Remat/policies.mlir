// Two blocks (layers.0, layers.1: an RMSNorm, a GEMM, a GELU and the
// residual add) between an embedding add and a mean, differentiated as
// train-autodiff writes it. Backward reads, per block: the norm's input
// (the block's input), the norm's output (for the GEMM's weight gradient)
// and the GEMM's output (for the GELU's derivative).
//
// RUN: zeroc-opt %s --train-remat=policy=full | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: zeroc-opt %s --train-remat=policy=selective | FileCheck %s --check-prefixes=CHECK,SEL
// RUN: zeroc-opt %s --train-remat=policy=none | FileCheck %s --check-prefix=NONE
// RUN: zeroc-opt %s | FileCheck %s --check-prefix=NONE

// The module records the policy; none leaves it as it is.
// FULL:        module attributes {train.remat = "full"}
// SEL:         module attributes {train.remat = "selective"}
// NONE-NOT:    train.remat
// NONE-NOT:    recomputed

// The forward pass is left as it is.
// CHECK-LABEL: func.func @loss_and_grads
// CHECK:       %[[X0:.*]] = train.add %arg0, %{{.*}} : (tensor<2x4xf32>, tensor<4xf32>)
// CHECK:       %[[G0:.*]] = train.read @layers.0.norm.weight
// CHECK:       %[[N0:.*]] = train.rmsnorm %[[X0]], %[[G0]]
// CHECK:       %[[W0:.*]] = train.read @layers.0.proj.weight
// CHECK:       %[[M0:.*]] = train.matmul %[[N0]], %[[W0]] transpose_rhs
// CHECK:       %[[X1:.*]] = train.add %[[X0]], %{{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:       %[[G1:.*]] = train.read @layers.1.norm.weight
// CHECK:       %[[N1:.*]] = train.rmsnorm %[[X1]], %[[G1]]
// CHECK:       %[[W1:.*]] = train.read @layers.1.proj.weight
// CHECK:       %[[M1:.*]] = train.matmul %[[N1]], %[[W1]] transpose_rhs
// CHECK:       train.mean

// Block 1's backward. full: the norm and the GEMM are recomputed from the
// block's input %x1 (kept: block 1 reads it, and so does block 0's residual
// add), just before their first use; selective keeps the GEMM's output and
// recomputes the norm only, before the weight gradient that reads it.
// FULL:        %[[RN1:.*]] = train.rmsnorm %[[X1]], %[[G1]] eps = 1.000000e-05 {train.recomputed}
// FULL-NEXT:   %[[RM1:.*]] = train.matmul %[[RN1]], %[[W1]] transpose_rhs {train.recomputed}
// FULL-NEXT:   %[[D1:.*]] = train.gelu_grad %{{.*}}, %[[RM1]] tanh
// SEL:         %[[D1:.*]] = train.gelu_grad %{{.*}}, %[[M1]] tanh
// CHECK-NEXT:  train.matmul %[[D1]], %[[W1]] :
// SEL-NEXT:    %[[RN1:.*]] = train.rmsnorm %[[X1]], %[[G1]] eps = 1.000000e-05 {train.recomputed}
// CHECK-NEXT:  train.matmul %[[D1]], %[[RN1]] transpose_lhs
// The norm's derivative reads the kept block input.
// CHECK-NEXT:  train.rmsnorm_grad %{{.*}}, %[[X1]], %[[G1]]

// Block 0's, likewise, from %x0 (computed outside blocks: always kept).
// FULL:        %[[RN0:.*]] = train.rmsnorm %[[X0]], %[[G0]] eps = 1.000000e-05 {train.recomputed}
// FULL-NEXT:   %[[RM0:.*]] = train.matmul %[[RN0]], %[[W0]] transpose_rhs {train.recomputed}
// FULL-NEXT:   %[[D0:.*]] = train.gelu_grad %{{.*}}, %[[RM0]] tanh
// SEL:         %[[D0:.*]] = train.gelu_grad %{{.*}}, %[[M0]] tanh
// CHECK-NEXT:  train.matmul %[[D0]], %[[W0]] :
// SEL-NEXT:    %[[RN0:.*]] = train.rmsnorm %[[X0]], %[[G0]] eps = 1.000000e-05 {train.recomputed}
// CHECK-NEXT:  train.matmul %[[D0]], %[[RN0]] transpose_lhs
// CHECK-NEXT:  train.rmsnorm_grad %{{.*}}, %[[X0]], %[[G0]]
// CHECK-NOT:   train.recomputed
// CHECK:       return

module {
  train.optimizer sgd lr = 0.1
  train.param @embed.weight : tensor<4xf32> init = zeros
  train.param @layers.0.norm.weight : tensor<4xf32> init = ones
  train.param @layers.0.proj.weight : tensor<4x4xf32> init = zeros
  train.param @layers.1.norm.weight : tensor<4xf32> init = ones
  train.param @layers.1.proj.weight : tensor<4x4xf32> init = zeros
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> attributes {train.forward} {
    %e = train.read @embed.weight : tensor<4xf32>
    %x0 = train.add %x, %e : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %g0 = train.read @layers.0.norm.weight : tensor<4xf32>
    %n0 = train.rmsnorm %x0, %g0 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %w0 = train.read @layers.0.proj.weight : tensor<4x4xf32>
    %m0 = train.matmul %n0, %w0 transpose_rhs : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %a0 = train.gelu %m0 tanh : tensor<2x4xf32>
    %x1 = train.add %x0, %a0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %g1 = train.read @layers.1.norm.weight : tensor<4xf32>
    %n1 = train.rmsnorm %x1, %g1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %w1 = train.read @layers.1.proj.weight : tensor<4x4xf32>
    %m1 = train.matmul %n1, %w1 transpose_rhs : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %a1 = train.gelu %m1 tanh : tensor<2x4xf32>
    %x2 = train.add %x1, %a1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %l = train.mean %x2 dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @loss_and_grads(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>) attributes {train.gradients = [@embed.weight, @layers.0.norm.weight, @layers.0.proj.weight, @layers.1.norm.weight, @layers.1.proj.weight]} {
    %one = train.fill 1.0 : tensor<f32>
    %e = train.read @embed.weight : tensor<4xf32>
    %x0 = train.add %x, %e : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %g0 = train.read @layers.0.norm.weight : tensor<4xf32>
    %n0 = train.rmsnorm %x0, %g0 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %w0 = train.read @layers.0.proj.weight : tensor<4x4xf32>
    %m0 = train.matmul %n0, %w0 transpose_rhs : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %a0 = train.gelu %m0 tanh : tensor<2x4xf32>
    %x1 = train.add %x0, %a0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %g1 = train.read @layers.1.norm.weight : tensor<4xf32>
    %n1 = train.rmsnorm %x1, %g1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %w1 = train.read @layers.1.proj.weight : tensor<4x4xf32>
    %m1 = train.matmul %n1, %w1 transpose_rhs : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %a1 = train.gelu %m1 tanh : tensor<2x4xf32>
    %x2 = train.add %x1, %a1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %l = train.mean %x2 dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    // Backward.
    %s = train.scale %one by 0.125 : tensor<f32>
    %s2 = train.reshape %s : tensor<f32> -> tensor<1x1xf32>
    %dx2 = train.broadcast %s2 : tensor<1x1xf32> -> tensor<2x4xf32>
    %dm1 = train.gelu_grad %dx2, %m1 tanh : tensor<2x4xf32>
    %dn1 = train.matmul %dm1, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %dw1 = train.matmul %dm1, %n1 transpose_lhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %dx1n, %dg1 = train.rmsnorm_grad %dn1, %x1, %g1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>)
    %dx1 = train.add %dx2, %dx1n : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %dm0 = train.gelu_grad %dx1, %m0 tanh : tensor<2x4xf32>
    %dn0 = train.matmul %dm0, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %dw0 = train.matmul %dm0, %n0 transpose_lhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %dx0n, %dg0 = train.rmsnorm_grad %dn0, %x0, %g0 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>)
    %dx0 = train.add %dx1, %dx0n : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %de = train.sum %dx0 dims = [0] : tensor<2x4xf32> -> tensor<4xf32>
    return %l, %de, %dg0, %dw0, %dg1, %dw1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>
  }
}
