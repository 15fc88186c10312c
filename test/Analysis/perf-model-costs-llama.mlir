// What the ops of Llama-class models cost (TrainCostOpInterface,
// lib/Analysis/CostModels.cpp), as the performance model's JSON lists them:
// FLOPs of products, other arithmetic, bytes moved. Figures worked out by
// hand below each op; x is 2x4x8 f32 (64 elements, 256 B), the weight 8 f32
// (32 B).
//
// RUN: zeroc %s --no-pipeline --emit=perf-model-json --machine=%S/Inputs/unit.machine | FileCheck %s

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @x : tensor<64xf32> init = zeros
  train.param @w : tensor<8xf32> init = ones
  train.param @q : tensor<128xf32> init = zeros
  train.param @kv : tensor<64xf32> init = zeros
  func.func @train_step(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %xf = train.read @x : tensor<64xf32>
    %x = train.reshape %xf : tensor<64xf32> -> tensor<2x4x8xf32>
    %w = train.read @w : tensor<8xf32>
    // RMSNorm: reads x twice (the sum of squares, then the normalized rows)
    // and the weight, writes y: 2 * 256 + 32 + 256 = 800 B; 4 * 64 = 256
    // operations.
    // CHECK: {"kind":"rmsnorm","engine":"memory",{{.*}}"flops":0,"vector_flops":256,"bytes":800}
    %y = train.rmsnorm %x, %w eps = 1.000000e-05 : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    // Its derivative: dy, x, w read and dx, dw written once (832 B), x read
    // twice more and dy once more (3 * 256 B): 1600 B; 12 * 64 = 768.
    // CHECK: {"kind":"rmsnorm_grad","engine":"memory",{{.*}}"flops":0,"vector_flops":768,"bytes":1600}
    %dx, %dw = train.rmsnorm_grad %y, %x, %w eps = 1.000000e-05 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>)
    // SwiGLU's silu(a) * b is one loop: the silu is computed inside the
    // mul's. It reads a and b once and writes 256 B: 768 B; (10 + 1) * 64 =
    // 704 operations.
    // CHECK-NOT: "kind":"silu"
    // CHECK: {"kind":"mul","engine":"memory",{{.*}}"flops":0,"vector_flops":704,"bytes":768}
    %s = train.silu %y : tensor<2x4x8xf32>
    %m = train.mul %s, %dx : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    // silu_grad as the root of its own loop (its user is not elementwise):
    // dy and x read, the result written: 768 B; 15 * 64 = 960.
    // CHECK: {"kind":"silu_grad","engine":"memory",{{.*}}"flops":0,"vector_flops":960,"bytes":768}
    %g = train.silu_grad %dx, %y : tensor<2x4x8xf32>
    // A slice reads only the 2x2x8 elements it keeps (128 B) and writes
    // them: 256 B.
    // CHECK: {"kind":"slice","engine":"memory",{{.*}}"flops":0,"vector_flops":0,"bytes":256}
    %sl = train.slice %g offsets = [0, 1, 0] strides = [1, 1, 1] : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    // Its derivative zeroes the whole 2x4x8 result (256 B), then reads and
    // scatters the 128 B of the cotangent: 512 B.
    // CHECK: {"kind":"slice_grad","engine":"memory",{{.*}}"flops":0,"vector_flops":0,"bytes":512}
    %sg = train.slice_grad %sl offsets = [0, 1, 0] strides = [1, 1, 1] : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
    // Without a step dropout is the identity (a view): no kernel. With the
    // step it reads x and writes y (512 B), drawing a Philox word per
    // element (40 * 64 = 2560 operations).
    // CHECK-NOT: "kind":"dropout"
    // CHECK: {"kind":"dropout","engine":"memory",{{.*}}"flops":0,"vector_flops":2560,"bytes":512}
    // CHECK-NOT: "kind":"dropout"
    %e = train.dropout %sg p = 1.000000e-01 seed = 3 : tensor<2x4x8xf32>
    %d = train.dropout %e, %step p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : tensor<2x4x8xf32>
    // Rotary embeddings of 2x4x2x4 (64 elements): read and written, 512 B;
    // the angle, its sine and cosine and four products per pair, 12 * 64.
    // CHECK: {"kind":"rope","engine":"memory",{{.*}}"flops":0,"vector_flops":768,"bytes":512}
    %d4 = train.reshape %d : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
    %r = train.rope %d4 theta = 1.000000e+04 seq_dim = 1 rotate_half : tensor<2x4x2x4xf32>
    // Grouped-query attention: 4 query heads, 2 key/value heads, T = S = 8,
    // D = 4, causal: 36 of 64 scores per query head, 144 in all. FLOPs by
    // query heads: 4 * 144 * 4 = 2304 (by key/value heads it would be
    // 1152); softmax 10 * 144 = 1440. Bytes at each operand's own heads: q
    // and the output 512 B each, k and v 256 B each: 1536 B (2048 if k and
    // v were repeated to the query heads).
    // CHECK: {"kind":"attention","engine":"gemm",{{.*}}"flops":2304,"vector_flops":1440,"bytes":1536}
    %qf = train.read @q : tensor<128xf32>
    %q = train.reshape %qf : tensor<128xf32> -> tensor<1x4x8x4xf32>
    %kvf = train.read @kv : tensor<64xf32>
    %kv = train.reshape %kvf : tensor<64xf32> -> tensor<1x2x8x4xf32>
    %att = train.attention %q, %kv, %kv causal scale = 5.000000e-01 : (tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x4x8x4xf32>
    // Its derivative: 10 * 144 * 4 = 5760 FLOPs (the scores recomputed, four
    // more products), 15 * 144 = 2160; dy, q, dq 512 B each, k, v, dk, dv
    // 256 B each: 2560 B.
    // CHECK: {"kind":"attention_grad","engine":"gemm",{{.*}}"flops":5760,"vector_flops":2160,"bytes":2560}
    %dq, %dk, %dv = train.attention_grad %att, %q, %kv, %kv causal scale = 5.000000e-01 : (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
    %n = train.squared_norm %r : tensor<2x4x2x4xf32> -> tensor<f32>
    %n2 = train.squared_norm %m : tensor<2x4x8xf32> -> tensor<f32>
    return %n, %n2 : tensor<f32>, tensor<f32>
  }
}
