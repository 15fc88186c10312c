// RUN: zeroc-opt %s --train-data-parallel=world-size=4 | FileCheck %s

// The leading (batch) dimension of every argument is divided by 4 and the
// types of everything computed from it follow, through reshapes and
// transposes; parameters and the loss keep theirs.
// CHECK: module attributes {train.batch_split = 4 : i64}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[T:.*]]: tensor<3x5xi32>, %[[Y:.*]]: tensor<3x5xi32>) -> tensor<f32>
// CHECK: train.embedding %{{.*}}[%[[T]]] : (tensor<7x4xf32>, tensor<3x5xi32>) -> tensor<3x5x4xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<3x5x4xf32>, tensor<5x4xf32>) -> tensor<3x5x4xf32>
// CHECK: train.reshape %{{.*}} : tensor<3x5x4xf32> -> tensor<3x5x2x2xf32>
// CHECK: train.transpose %{{.*}} [0, 2, 1, 3] : tensor<3x5x2x2xf32> -> tensor<3x2x5x2xf32>
// CHECK: train.attention {{.*}} -> tensor<3x2x5x2xf32>
// CHECK: train.reshape %{{.*}} : tensor<3x2x5x2xf32> -> tensor<30x2xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<30x2xf32>, tensor<7x2xf32>) -> tensor<30x7xf32>
// CHECK: train.reshape %{{.*}} : tensor<30x7xf32> -> tensor<3x10x7xf32>
// CHECK: train.cross_entropy %{{.*}}, %{{.*}} : (tensor<3x5x7xf32>, tensor<3x5xi32>) -> tensor<f32>
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
    %r = train.reshape %a : tensor<12x2x5x2xf32> -> tensor<120x2xf32>
    %head = train.read @head : tensor<7x2xf32>
    %l = train.matmul %r, %head transpose_rhs : (tensor<120x2xf32>, tensor<7x2xf32>) -> tensor<120x7xf32>
    %l3 = train.reshape %l : tensor<120x7xf32> -> tensor<12x10x7xf32>
    %s, %u = train.split %l3 dim = 1 : tensor<12x10x7xf32> -> tensor<12x5x7xf32>, tensor<12x5x7xf32>
    %loss = train.cross_entropy %s, %y : (tensor<12x5x7xf32>, tensor<12x5xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
