// The memory report of a hand-written ZeRO stage 3 step on 4 ranks, every
// figure worked out by hand below.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s
// RUN: zeroc %s --no-pipeline --emit=memory-table | FileCheck %s --check-prefix=TABLE

// Ψ = 10*6 + 7 = 67. With shards = 4 rank 0 stores ceil(60/4) = 15 and
// ceil(7/4) = 2 elements of each declaration.
//   parameters        bf16: (15 + 2) * 2               =  34
//   gradients         bf16: (15 + 2) * 2               =  34
//   optimizer states  f32:  3 kinds * (15 + 2) * 4     = 204
//   model states                                       = 272
//
// Liveness (op index: bytes, category G/B/A; [def, end]). The train.unpack
// at 5 has shards = 4, so it copies: %f dies there, and %w and %b are new
// gathered buffers that the train.release of %g at 10 frees.
//   2 %seg    34 G [2, 4]   its all-gather runs until the wait at 4
//   3 %f     136 G [3, 5]   the wait %g is a view of it; its last use is the
//                           unpack at 5 (the release does not use it)
//   5 %w     120 G [5, 10]  copied out of %g, released at 10
//   5 %b      14 G [5, 10]
//   6 %h      60 A [6, 8]
//   7 %loss    4 A [7, 17]
//   8 %dw    120 A [8, 11]
//   9 %db     14 A [9, 11]
//  11 %bucket 136 B [11, 13] its reduce-scatter runs until the wait at 13
//  12 %rf     34 B [12, 16] the unpack at 14 has shards = 1: a view of it
//  17 %l       4 B [17, 18] an upstream all-reduce's result is a bucket
// Peaks: G 136 + 120 + 14 = 270 at 5 (the gathered buffer and its copy);
// A 60 + 4 + 120 = 184 at 8; B 136 + 34 = 170 at 12; combined at 8:
// 134 (G) + 184 (A) = 318 (at 5 only 270; at 11 138 (A) + 136 (B) = 274).
// Model states + peak: 272 + 318 = 590.
//
// Communication, N = 4, padding excluded (n = 67 real elements, not 68):
//   all_gather     3/4 * 67 = 50.25 -> 50 elements, 100 bytes (bf16)
//   reduce_scatter 3/4 * 67 = 50.25 -> 50 elements, 100 bytes
//   all_reduce     2 * 3/4 * 1 = 1.5 -> 2 elements,    8 bytes (f32)
//   total 102 elements, 208 bytes.

// CHECK:      "parameters": 67,
// CHECK-NEXT: "world_size": 4,
// CHECK-NEXT: "stage": 3,
// CHECK-NEXT: "precision": "bf16",
// CHECK-NEXT: "step_function": "train_step",
// CHECK-NEXT: "per_rank_bytes": {
// CHECK-NEXT:   "parameters": 34,
// CHECK-NEXT:   "gradients": 34,
// CHECK-NEXT:   "optimizer_states": 204,
// CHECK-NEXT:   "model_states": 272
// CHECK-NEXT: },
// CHECK-NEXT: "transient_bytes": {
// CHECK-NEXT:   "gathered_parameters": 270,
// CHECK-NEXT:   "gradient_buckets": 170,
// CHECK-NEXT:   "activations": 184,
// CHECK-NEXT:   "peak": 318
// CHECK-NEXT: },
// CHECK-NEXT: "peak_bytes_per_rank": 590,
// CHECK-NEXT: "communication_per_rank_per_step": {
// CHECK-NEXT:   "elements": 102,
// CHECK-NEXT:   "bytes": 208,
// CHECK-NEXT:   "all_reduce": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 2,
// CHECK-NEXT:     "bytes": 8
// CHECK-NEXT:   },
// CHECK-NEXT:   "reduce_scatter": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 50,
// CHECK-NEXT:     "bytes": 100
// CHECK-NEXT:   },
// CHECK-NEXT:   "all_gather": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 50,
// CHECK-NEXT:     "bytes": 100
// CHECK-NEXT:   }
// CHECK-NEXT: },
// CHECK-NEXT: "collectives": [
// CHECK-NEXT:   {"op":"all_gather","elements":50,"bytes":100,"tensors":2,"payload_elements":67,"buffer_elements":68,"ranks":4,"async":true},
// CHECK-NEXT:   {"op":"reduce_scatter","elements":50,"bytes":100,"tensors":2,"payload_elements":67,"buffer_elements":68,"ranks":4,"async":true},
// CHECK-NEXT:   {"op":"all_reduce","elements":2,"bytes":8,"tensors":1,"payload_elements":1,"buffer_elements":1,"ranks":4,"async":false}
// CHECK-NEXT: ]

// TABLE:      zeroc memory report: ZeRO stage 3, N = 4 ranks (rank 0, @train_step)
// TABLE-NEXT: model: 67 parameters (Ψ), bf16
// TABLE:      model states (persistent)
// TABLE-NEXT:   parameters           34      0.00 MiB     0.507
// TABLE-NEXT:   gradients            34      0.00 MiB     0.507
// TABLE-NEXT:   optimizer states     204      0.00 MiB     3.045
// TABLE-NEXT:   total                272      0.00 MiB     4.060
// TABLE-NEXT: transient (peak over the step)
// TABLE-NEXT:   gathered parameters  270
// TABLE-NEXT:   gradient buckets     170
// TABLE-NEXT:   activations          184
// TABLE-NEXT:   combined peak        318
// TABLE:      model states + peak    590
// TABLE:      all_reduce             2      0.00 MiB         1
// TABLE-NEXT: reduce_scatter         50      0.00 MiB         1
// TABLE-NEXT: all_gather             50      0.00 MiB         1
// TABLE:      total                  102      0.00 MiB         3
// TABLE:      #    collective       tensors          elements sent          size
// TABLE-NEXT: 0    all_gather             2                     50      0.00 MiB
// TABLE-NEXT: 1    reduce_scatter         2                     50      0.00 MiB
// TABLE-NEXT: 2    all_reduce             1                      2      0.00 MiB

module attributes {train.world_size = 4 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 4)
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08
  train.param @w : tensor<10x6xbf16> init = normal std = 0.02 decay shards = 4
  train.param @b : tensor<7xbf16> init = zeros shards = 4
  train.state @w.grad : tensor<10x6xbf16> grad of @w shards = 4
  train.state @b.grad : tensor<7xbf16> grad of @b shards = 4
  train.state @w.master : tensor<10x6xf32> master of @w shards = 4
  train.state @w.exp_avg : tensor<10x6xf32> exp_avg of @w shards = 4
  train.state @w.exp_avg_sq : tensor<10x6xf32> exp_avg_sq of @w shards = 4
  train.state @b.master : tensor<7xf32> master of @b shards = 4
  train.state @b.exp_avg : tensor<7xf32> exp_avg of @b shards = 4
  train.state @b.exp_avg_sq : tensor<7xf32> exp_avg_sq of @b shards = 4

  func.func @train_step(%x: tensor<3x6xbf16>) -> tensor<f32> attributes {train.step} {
    %ws = train.read @w : tensor<15xbf16>
    %bs = train.read @b : tensor<2xbf16>
    %seg = train.pack %ws, %bs shards = 1 : tensor<15xbf16>, tensor<2xbf16> -> tensor<17xbf16>
    %f = train.all_gather_start %seg on @dp : tensor<17xbf16> -> !train.future<tensor<68xbf16>>
    %g = train.wait %f : !train.future<tensor<68xbf16>>
    %w, %b = train.unpack %g shards = 4 : tensor<68xbf16> -> tensor<10x6xbf16>, tensor<7xbf16>
    %h = train.matmul %x, %w transpose_rhs : (tensor<3x6xbf16>, tensor<10x6xbf16>) -> tensor<3x10xbf16>
    %loss = train.squared_norm %h : tensor<3x10xbf16> -> tensor<f32>
    %dw = train.matmul %h, %x transpose_lhs : (tensor<3x10xbf16>, tensor<3x6xbf16>) -> tensor<10x6xbf16>
    %db = train.scale %b by 2.0 : tensor<7xbf16>
    train.release %g : tensor<68xbf16>
    %bucket = train.pack %dw, %db shards = 4 : tensor<10x6xbf16>, tensor<7xbf16> -> tensor<68xbf16>
    %rf = train.reduce_scatter_start %bucket on @dp : tensor<68xbf16> -> !train.future<tensor<17xbf16>>
    %rs = train.wait %rf : !train.future<tensor<17xbf16>>
    %gw, %gb = train.unpack %rs shards = 1 : tensor<17xbf16> -> tensor<15xbf16>, tensor<2xbf16>
    train.write %gw to @w.grad : tensor<15xbf16>
    train.write %gb to @b.grad : tensor<2xbf16>
    %l = shard.all_reduce %loss on @dp grid_axes = [0] : tensor<f32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
