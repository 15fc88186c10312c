// RUN: zeroc-opt %s --train-trace-sites | FileCheck %s
// RUN: zeroc-opt %s --train-trace-sites --train-fuse-elementwise --train-bufferize | FileCheck %s --check-prefix=PLANNED

// Every op of the train.step function gets its --trace site: named after
// the parameter's layer it reads (the matmul), the block of the op before
// it otherwise (the gelu), a collective and its wait with their number,
// kind (1: reduce-scatter), whole buffer and the bytes this rank sends
// (ring: (N-1)/N of 8 f32 = 16 bytes at N = 2). Functions that are not the
// step get none.

// CHECK-LABEL: func.func @forward(
// CHECK-NOT: train.trace
// CHECK-LABEL: func.func @train_step(
// CHECK: train.matmul {{.*}}train.trace = {bytes = 0 : i64, collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64, kind = "matmul", location = "sites.mlir:{{[0-9]+}}:{{[0-9]+}}", name = "matmul transformer.h.0.fc", phase = "{{[a-z]+}}"}
// CHECK: train.gelu {{.*}}name = "gelu transformer.h.0"
// CHECK: train.reduce_scatter_start {{.*}}train.trace = {bytes = 16 : i64, collective = 0 : i64, collective_kind = 1 : i64, elements = 8 : i64, kind = "reduce_scatter_start", {{.*}}name = "reduce_scatter"
// CHECK: train.wait {{.*}}train.trace = {bytes = 16 : i64, collective = 0 : i64, collective_kind = 1 : i64, elements = 8 : i64, kind = "wait", {{.*}}name = "wait reduce_scatter"

// The planning passes carry the sites to what the back ends print: the
// kernel's op, the fused region (its root's), the collective's start and
// wait.
// PLANNED-LABEL: func.func @train_step(
// PLANNED: train.matmul {{.*}}name = "matmul transformer.h.0.fc"
// PLANNED: train.fused {{.*}}name = "gelu transformer.h.0"
// PLANNED: train.collective_start {{.*}}name = "reduce_scatter"
// PLANNED: train.collective_wait {{.*}}name = "wait reduce_scatter"

module attributes {train.world_size = 2 : i64, train.zero_stage = 2 : i64} {
  shard.grid @dp(shape = 2)
  train.param @transformer.h.0.fc.weight : tensor<4x8xf32> init = zeros
  func.func @forward(%x: tensor<2x8xf32>, %t: tensor<2x8xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @transformer.h.0.fc.weight : tensor<4x8xf32>
    %y = train.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    %l = train.mean %y dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step(%x: tensor<2x8xf32>, %t: tensor<2x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %w = train.read @transformer.h.0.fc.weight : tensor<4x8xf32>
    %y = train.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    %g = train.gelu %y tanh : tensor<2x4xf32>
    %l = train.mean %g dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    %b = train.reshape %y : tensor<2x4xf32> -> tensor<8xf32>
    %f = train.reduce_scatter_start %b on @dp : tensor<8xf32> -> !train.future<tensor<4xf32>>
    %r = train.wait %f : !train.future<tensor<4xf32>>
    %n = train.mean %r dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %n : tensor<f32>, tensor<f32>
  }
}
