// What the ops of TrainMathOps.td cost (TrainCostOpInterface,
// lib/Analysis/CostModels.cpp), as the performance model's JSON lists them.
// x and y are 2x4x8 f32 (64 elements, 256 B).
//
// RUN: zeroc %s --no-pipeline --emit=perf-model-json --machine=%S/Inputs/unit.machine | FileCheck %s

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @x : tensor<64xf32> init = zeros
  train.param @y : tensor<64xf32> init = zeros
  func.func @train_step(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %xf = train.read @x : tensor<64xf32>
    %x = train.reshape %xf : tensor<64xf32> -> tensor<2x4x8xf32>
    %yf = train.read @y : tensor<64xf32>
    %y = train.reshape %yf : tensor<64xf32> -> tensor<2x4x8xf32>
    // exp, pow, compare are computed inside select's loop: x and y read
    // once, the result written: 768 B; (10 + 10 + 1 + 1) * 64 = 1408.
    // CHECK-NOT: "kind":"exp"
    // CHECK-NOT: "kind":"pow"
    // CHECK-NOT: "kind":"compare"
    // CHECK: {"kind":"select","engine":"memory",{{.*}}"flops":0,"vector_flops":1408,"bytes":768}
    %e = train.exp %x : tensor<2x4x8xf32>
    %p = train.pow %e by 2.0 : tensor<2x4x8xf32>
    %c = train.compare %p, %x gt : tensor<2x4x8xf32>
    %s = train.select %c, %x, %y : tensor<2x4x8xf32>
    // tril and triu: kernels of their own, input read and result written
    // (512 B), an index comparison per element (64).
    // CHECK: {"kind":"tril","engine":"memory",{{.*}}"flops":0,"vector_flops":64,"bytes":512}
    // CHECK: {"kind":"triu","engine":"memory",{{.*}}"flops":0,"vector_flops":64,"bytes":512}
    %l = train.tril %y diagonal = 0 : tensor<2x4x8xf32>
    %u = train.triu %l diagonal = 1 : tensor<2x4x8xf32>
    // A constant: its array copied into its buffer, 2 * 256 B.
    // CHECK: {"kind":"constant","engine":"memory",{{.*}}"flops":0,"vector_flops":0,"bytes":512}
    %k = train.constant dense<0.5> : tensor<2x4x8xf32>
    %a = train.add %u, %k : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %n = train.squared_norm %s : tensor<2x4x8xf32> -> tensor<f32>
    %n2 = train.squared_norm %a : tensor<2x4x8xf32> -> tensor<f32>
    return %n, %n2 : tensor<f32>, tensor<f32>
  }
}
