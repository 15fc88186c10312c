// The memory report of a hand-written ZeRO stage 3 step on 4 ranks, every
// figure worked out by hand below.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s
// RUN: zeroc %s --no-pipeline --emit=memory-table | FileCheck %s --check-prefix=TABLE
// RUN: zeroc %s --no-pipeline --emit=planned | FileCheck %s --check-prefix=PLAN

// Ψ = 10*6 + 7 = 67. With shards = 4 rank 0 stores ceil(60/4) = 15 and
// ceil(7/4) = 2 elements of each declaration.
//   parameters        bf16: (15 + 2) * 2               =  34
//   gradients         bf16: (15 + 2) * 2               =  34
//   optimizer states  f32:  3 kinds * (15 + 2) * 4     = 204
//   model states                                       = 272
//
// Transient memory: the running sum of the planned allocations (RUN line
// 3 prints them), bytes by category G/B/A, in program order. The train.unpack
// has shards = 4, so it copies (its parts are new gathered buffers).
//   + 34 G   %seg, packed for the all-gather (freed after its wait)
//   +136 G   the gathered buffer (freed after the unpack)
//   +120 G   %w    +14 G %b (copied out of it): G = 34 + 136 - 34 + 134 = 270
//   + 60 A   %h           (%w is freed after the matmul that reads it)
//   +  4 A   %loss, +120 A %dw: A = 184 (G = 14: %b only)
//   + 14 A   %db          (%h freed before; %b after): A = 138
//   +136 B   %bucket, packed for the reduce-scatter: 138 A + 136 B = 274
//   + 34 B   its receive buffer (%dw and %db freed before): B = 170
//   +  4 B   the loss's all-reduce buffer
// Peaks: G 270, B 170, A 184; combined 274 (at the bucket's pack).
// Model states + peak: 272 + 274 = 546.
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
// CHECK-NEXT:   "peak": 274
// CHECK-NEXT: },
// CHECK-NEXT: "peak_bytes_per_rank": 546,
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
// CHECK-NEXT:   {"op":"all_reduce","elements":2,"bytes":8,"tensors":1,"payload_elements":1,"buffer_elements":1,"ranks":4,"async":true}
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
// TABLE-NEXT:   combined peak        274
// TABLE:      model states + peak    546
// TABLE:      all_reduce             2      0.00 MiB         1
// TABLE-NEXT: reduce_scatter         50      0.00 MiB         1
// TABLE-NEXT: all_gather             50      0.00 MiB         1
// TABLE:      total                  102      0.00 MiB         3
// TABLE:      #    collective       tensors          elements sent          size
// TABLE-NEXT: 0    all_gather             2                     50      0.00 MiB
// TABLE-NEXT: 1    reduce_scatter         2                     50      0.00 MiB
// TABLE-NEXT: 2    all_reduce             1                      2      0.00 MiB

// The allocations the report sums, in the order above.
// PLAN-LABEL: func.func @train_step
// PLAN: memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<17xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<68xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<10x6xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<7xbf16>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<3x10xbf16>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<f32>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<10x6xbf16>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<7xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<68xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<17xbf16>
// PLAN: memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<1xf32>
// PLAN-NOT: memref.alloc

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
    %l1 = train.reshape %loss : tensor<f32> -> tensor<1xf32>
    %lf = train.all_reduce_start %l1 on @dp : tensor<1xf32> -> !train.future<tensor<1xf32>>
    %lw = train.wait %lf : !train.future<tensor<1xf32>>
    %l = train.reshape %lw : tensor<1xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
