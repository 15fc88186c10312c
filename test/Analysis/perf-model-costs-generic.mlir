// What the generic reductions and gathers of TrainGenericOps.td cost
// (TrainCostOpInterface, lib/Analysis/CostModels.cpp), as the performance
// model's JSON lists them: each a streaming kernel that reads its operands
// and writes its result once (bytes), with a few vector operations per
// element of the largest of them. x is 4x8 f32 (32 elements, 128 B).
//
// RUN: zeroc %s --no-pipeline --emit=perf-model-json --machine=%S/Inputs/unit.machine | FileCheck %s

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @x : tensor<32xf32> init = zeros
  func.func @train_step(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>, %i: tensor<4x1xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %xf = train.read @x : tensor<32xf32>
    %x = train.reshape %xf : tensor<32xf32> -> tensor<4x8xf32>
    // amax over the rows: 128 B read, 16 B written; a comparison per input
    // element (32).
    // CHECK: {"kind":"amax","engine":"memory",{{.*}}"flops":0,"vector_flops":32,"bytes":144}
    %m = train.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    // Its gradient reads dy (16 B), x (128 B) and the max (16 B) and
    // writes dx (128 B); 3 per element of x (96).
    // CHECK: {"kind":"amax_grad","engine":"memory",{{.*}}"flops":0,"vector_flops":96,"bytes":288}
    %dm = train.amax_grad %m, %x, %m dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    // var: mean, deviation, square, sum: 4 per element (128); 144 B.
    // CHECK: {"kind":"var","engine":"memory",{{.*}}"flops":0,"vector_flops":128,"bytes":144}
    %v = train.var %dm dims = [1] correction = 1 : tensor<4x8xf32> -> tensor<4xf32>
    // log_softmax: max, exp, sum, log, subtract: 10 per element (320);
    // 128 B in, 128 B out.
    // CHECK: {"kind":"log_softmax","engine":"memory",{{.*}}"flops":0,"vector_flops":320,"bytes":256}
    %l = train.log_softmax %x : tensor<4x8xf32>
    // gather of one column per row: the indices (16 B of i32) and the
    // picked values; no arithmetic. x is read as a whole operand (128 B)
    // and 16 B written: 160 B.
    // CHECK: {"kind":"gather","engine":"memory",{{.*}}"flops":0,"vector_flops":0,"bytes":160}
    %g = train.gather %l[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
    // Its gradient scatters into a zeroed 4x8 (a write per element of the
    // result: 32 operations): 16 + 16 B in, 128 B out.
    // CHECK: {"kind":"gather_grad","engine":"memory",{{.*}}"flops":0,"vector_flops":32,"bytes":160}
    %gg = train.gather_grad %g[%i] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
    %n = train.squared_norm %v : tensor<4xf32> -> tensor<f32>
    %n2 = train.squared_norm %gg : tensor<4x8xf32> -> tensor<f32>
    return %n, %n2 : tensor<f32>, tensor<f32>
  }
}
