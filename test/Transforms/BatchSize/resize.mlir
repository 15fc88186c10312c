// RUN: zeroc-opt %s --split-input-file --train-batch-size=global-batch=6 | FileCheck %s
// RUN: zeroc-opt %s --split-input-file --train-batch-size=global-batch=2 | FileCheck %s --check-prefix=TWO
// RUN: zeroc-opt %s --split-input-file --train-batch-size | FileCheck %s --check-prefix=KEEP

// The leading (batch) dimension of every argument becomes 6 (2) and the
// types of everything computed from it are re-inferred, through reshapes
// that merge the batch with other dimensions, transposes, a slice that
// takes the batch whole and sums that keep it; parameters and the loss keep
// theirs. global-batch=0 (the default) changes nothing.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[T:.*]]: tensor<6x5xi32>, %[[Y:.*]]: tensor<6x5xi32>) -> tensor<f32>
// CHECK: train.embedding %{{.*}}[%[[T]]] : (tensor<7x4xf32>, tensor<6x5xi32>) -> tensor<6x5x4xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<6x5x4xf32>, tensor<5x4xf32>) -> tensor<6x5x4xf32>
// CHECK: train.reshape %{{.*}} : tensor<6x5x4xf32> -> tensor<6x5x2x2xf32>
// CHECK: train.transpose %{{.*}} [0, 2, 1, 3] : tensor<6x5x2x2xf32> -> tensor<6x2x5x2xf32>
// CHECK: train.attention {{.*}} -> tensor<6x2x5x2xf32>
// CHECK: train.slice %{{.*}} offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<6x2x5x2xf32> -> tensor<6x2x5x1xf32>
// CHECK: train.reshape %{{.*}} : tensor<6x2x5x2xf32> -> tensor<60x2xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<60x2xf32>, tensor<7x2xf32>) -> tensor<60x7xf32>
// CHECK: train.reshape %{{.*}} : tensor<60x7xf32> -> tensor<6x10x7xf32>
// CHECK: train.split %{{.*}} dim = 1 : tensor<6x10x7xf32> -> tensor<6x5x7xf32>, tensor<6x5x7xf32>
// CHECK: train.cross_entropy %{{.*}}, %{{.*}} : (tensor<6x5x7xf32>, tensor<6x5xi32>) -> tensor<f32>
// TWO: func.func @forward(%{{.*}}: tensor<2x5xi32>, %{{.*}}: tensor<2x5xi32>) -> tensor<f32>
// TWO: train.reshape %{{.*}} : tensor<2x2x5x2xf32> -> tensor<20x2xf32>
// TWO: train.cross_entropy %{{.*}}, %{{.*}} : (tensor<2x5x7xf32>, tensor<2x5xi32>) -> tensor<f32>
// KEEP: func.func @forward(%{{.*}}: tensor<12x5xi32>, %{{.*}}: tensor<12x5xi32>) -> tensor<f32>
// KEEP: train.reshape %{{.*}} : tensor<12x2x5x2xf32> -> tensor<120x2xf32>
module {
  train.param @wte : tensor<7x4xf32> init = normal std = 0.02
  train.param @wpe : tensor<5x4xf32> init = normal std = 0.02
  train.param @head : tensor<7x2xf32> init = normal std = 0.02
  func.func @forward(%t: tensor<12x5xi32>, %y: tensor<12x5xi32>) -> tensor<f32> attributes {train.forward} {
    %wte = train.read @wte : tensor<7x4xf32>
    %wpe = train.read @wpe : tensor<5x4xf32>
    %e = train.embedding %wte[%t] : (tensor<7x4xf32>, tensor<12x5xi32>) -> tensor<12x5x4xf32>
    %x = train.add %e, %wpe : (tensor<12x5x4xf32>, tensor<5x4xf32>) -> tensor<12x5x4xf32>
    %x4 = train.reshape %x : tensor<12x5x4xf32> -> tensor<12x5x2x2xf32>
    %h = train.transpose %x4 [0, 2, 1, 3] : tensor<12x5x2x2xf32> -> tensor<12x2x5x2xf32>
    %a = train.attention %h, %h, %h causal scale = 0.5 : (tensor<12x2x5x2xf32>, tensor<12x2x5x2xf32>, tensor<12x2x5x2xf32>) -> tensor<12x2x5x2xf32>
    %half = train.slice %a offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<12x2x5x2xf32> -> tensor<12x2x5x1xf32>
    %r = train.reshape %a : tensor<12x2x5x2xf32> -> tensor<120x2xf32>
    %head = train.read @head : tensor<7x2xf32>
    %l = train.matmul %r, %head transpose_rhs : (tensor<120x2xf32>, tensor<7x2xf32>) -> tensor<120x7xf32>
    %l3 = train.reshape %l : tensor<120x7xf32> -> tensor<12x10x7xf32>
    %s, %u = train.split %l3 dim = 1 : tensor<12x10x7xf32> -> tensor<12x5x7xf32>, tensor<12x5x7xf32>
    %loss = train.cross_entropy %s, %y : (tensor<12x5x7xf32>, tensor<12x5xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A sum over the batch follows the new batch too (train-data-parallel, not
// this pass, rejects it); a sum over another dimension keeps the batch.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<6x4xf32>) -> tensor<f32>
// CHECK: train.sum %{{.*}} dims = [1] : tensor<6x4xf32> -> tensor<6xf32>
// CHECK: train.sum %{{.*}} dims = [0] : tensor<6xf32> -> tensor<f32>
module {
  func.func @forward(%x: tensor<3x4xf32>) -> tensor<f32> attributes {train.forward} {
    %r = train.sum %x dims = [1] : tensor<3x4xf32> -> tensor<3xf32>
    %l = train.sum %r dims = [0] : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
