// What each op costs (TrainCostOpInterface, lib/Analysis/CostModels.cpp),
// as the performance model's JSON lists it: FLOPs of products, other
// arithmetic, bytes moved. Figures worked out by hand below each op.
//
// RUN: zeroc %s --no-pipeline --emit=perf-model-json --machine=%S/Inputs/unit.machine | FileCheck %s

module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @p : tensor<64xf32> init = zeros
  train.state @p.exp_avg : tensor<64xf32> exp_avg of @p
  train.state @p.exp_avg_sq : tensor<64xf32> exp_avg_sq of @p
  train.param @b : tensor<8xf32> init = zeros
  func.func @train_step(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %q = train.read @p : tensor<64xf32>
    %q4 = train.reshape %q : tensor<64xf32> -> tensor<2x1x8x4xf32>
    // Causal attention, B*H = 2, T = S = 8, D = 4: row i sees i + 1 keys,
    // 36 of 64 scores per head, 72 in all. Products 4 * 72 * 4 = 1152,
    // softmax 10 * 72 = 720, bytes 4 tensors * 64 * 4 = 1024.
    // CHECK: {"kind":"attention","engine":"gemm","phase":"forward",{{.*}}"flops":1152,"vector_flops":720,"bytes":1024}
    %att = train.attention %q4, %q4, %q4 causal scale = 5.000000e-01 : (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x8x4xf32>
    %x = train.reshape %att : tensor<2x1x8x4xf32> -> tensor<8x8xf32>
    %bias = train.read @b : tensor<8xf32>
    // One loop: the add and the GELU are computed inside the scale's. It
    // reads x (256 B) and the bias (32 B) once, writes 256 B: 544 B, and
    // does (1 + 20 + 1) * 64 = 1408 operations.
    // CHECK-NOT: "kind":"add"
    // CHECK-NOT: "kind":"gelu"
    // CHECK: {"kind":"scale","engine":"memory","phase":"forward",{{.*}}"flops":0,"vector_flops":1408,"bytes":544}
    %s = train.add %x, %bias : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
    %g = train.gelu %s tanh : tensor<8x8xf32>
    %y = train.scale %g by 2.000000e+00 : tensor<8x8xf32>
    // A matmul 8x8 @ 8x8: 2 * 8 * 8 * 8 = 1024 FLOPs, 3 * 256 B.
    // CHECK: {"kind":"matmul","engine":"gemm","phase":"forward",{{.*}}"flops":1024,"vector_flops":0,"bytes":768}
    %z = train.matmul %y, %y : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %flat = train.reshape %z : tensor<8x8xf32> -> tensor<64xf32>
    // A reduce-scatter of 64 f32 over the 2 ranks of @dp: 32 elements, 128 B
    // sent.
    // CHECK: {"kind":"reduce_scatter_start","engine":"collective","phase":"forward",{{.*}}"collective":"reduce_scatter","elements":64,"bytes_sent":128,"algorithm":"ring"}
    %f = train.reduce_scatter_start %flat on @dp : tensor<64xf32> -> !train.future<tensor<32xf32>>
    // CHECK: {"kind":"wait","engine":"wait"
    %r = train.wait %f : !train.future<tensor<32xf32>>
    %lr = train.lr_schedule %step lr = 1.000000e-03 schedule = constant : (tensor<i64>) -> tensor<f32>
    %p = train.read @p : tensor<64xf32>
    %m = train.read @p.exp_avg : tensor<64xf32>
    %v = train.read @p.exp_avg_sq : tensor<64xf32>
    %grad = train.concat %r, %r dim = 0 : tensor<32xf32>, tensor<32xf32> -> tensor<64xf32>
    // AdamW reads p, g, m, v (and the learning rate and step, 12 B) and
    // writes p, m, v: 7 * 256 + 12 B, 15 * 64 operations.
    // CHECK: {"kind":"adamw_update","engine":"memory","phase":"optimizer",{{.*}}"flops":0,"vector_flops":960,"bytes":1804}
    %p1, %m1, %v1 = train.adamw_update %p, %grad, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<64xf32>
    // Written in place on the state each update read: no copy. The write of
    // a value computed elsewhere copies it (read and write: 512 B).
    // CHECK-NOT: "kind":"write"
    // CHECK: {"kind":"write","engine":"memory","phase":"optimizer",{{.*}}"bytes":512}
    // CHECK-NOT: "kind":"write"
    train.write %p1 to @p : tensor<64xf32>
    train.write %m1 to @p.exp_avg : tensor<64xf32>
    train.write %v1 to @p.exp_avg_sq : tensor<64xf32>
    train.write %grad to @p.exp_avg : tensor<64xf32>
    %n = train.squared_norm %grad : tensor<64xf32> -> tensor<f32>
    return %n, %n : tensor<f32>, tensor<f32>
  }
}
