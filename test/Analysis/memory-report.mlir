// The memory report of a hand-written ZeRO stage 3 step on 4 ranks in the
// layout train-zero writes (one flat bucket: per-bucket train.buffers
// sharded 4 ways, the collectives on whole buffers), every figure worked
// out by hand below.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s
// RUN: zeroc %s --no-pipeline --emit=memory-table | FileCheck %s --check-prefix=TABLE
// RUN: zeroc %s --no-pipeline --emit=planned | FileCheck %s --check-prefix=PLAN

// Ψ = 10*6 + 7 = 67, laid end to end in each bucket buffer (@b at 0, @w at
// 7) and padded to 68 = 4 x 17: every rank stores a shard of 17 elements of
// each buffer (rank 0's are all real; the padding is the last rank's).
//   parameters        bf16: 17 * 2                     =  34
//   gradients         bf16: 17 * 2                     =  34
//   optimizer states  f32:  3 buffers * 17 * 4         = 204
//   model states                                       = 272
//
// Transient memory: the running sum of the planned allocations (RUN line
// 3 prints them), bytes by category G/B/A, in program order.
//   +136 B   the gradient bucket (68 bf16), allocated at the zero fill of
//            its padding, the first value computed into it (first op)
//   +136 G   the gathered parameter buffer (68 bf16); its members @b and
//            @w are views of it (train.unpack)
//   + 60 A   %h (3x10 bf16)
//   +  4 A   %loss: B + G + A = 136 + 136 + 64 = 336, the combined peak
//            %dw and %db are computed into their slices of the bucket (no
//            bytes); %h dies after %dw, the gathered buffer after %db
//            the reduce-scatter receives in place (the rank's slice of
//            the bucket) and the averaging writes the gradient buffer
//            directly; the bucket dies after it
//   + 68 A   the f32 cast of the gradient shard (17 f32): A = 4 + 68 = 72
//            the AdamW update runs in place on the state shards, the bf16
//            cast writes the parameter shard directly (no bytes)
//   +  4 B   the loss's all-reduce buffer
// Peaks: G 136, B 136, A 72; combined 336.
// Model states + peak: 272 + 336 = 608.
//
// Communication, N = 4. The padding is a packed (zero) tensor of the
// bucket and an unpacked result of the gather, so n is the whole buffer:
//   all_gather     3/4 * 68 = 51 elements, 102 bytes (bf16)
//   reduce_scatter 3/4 * 68 = 51 elements, 102 bytes
//   all_reduce     2 * 3/4 * 1 = 1.5 -> 2 elements, 8 bytes (f32)
//   total 104 elements, 212 bytes.
// tensors: the gather's received buffer is read through 2 views (@b and @w;
// the padding is never read); the bucket is computed in place, no pack
// kernel writes it, so its reduce-scatter counts 1.

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
// CHECK-NEXT:   "gathered_parameters": 136,
// CHECK-NEXT:   "gradient_buckets": 136,
// CHECK-NEXT:   "activations": 72,
// CHECK-NEXT:   "peak": 336
// CHECK-NEXT: },
// CHECK-NEXT: "peak_bytes_per_rank": 608,
// CHECK-NEXT: "communication_per_rank_per_step": {
// CHECK-NEXT:   "elements": 104,
// CHECK-NEXT:   "bytes": 212,
// CHECK-NEXT:   "all_reduce": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 2,
// CHECK-NEXT:     "bytes": 8
// CHECK-NEXT:   },
// CHECK-NEXT:   "reduce_scatter": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 51,
// CHECK-NEXT:     "bytes": 102
// CHECK-NEXT:   },
// CHECK-NEXT:   "all_gather": {
// CHECK-NEXT:     "count": 1,
// CHECK-NEXT:     "elements": 51,
// CHECK-NEXT:     "bytes": 102
// CHECK-NEXT:   }
// CHECK-NEXT: },
// CHECK-NEXT: "collectives": [
// CHECK-NEXT:   {"op":"all_gather","elements":51,"bytes":102,"tensors":2,"payload_elements":68,"buffer_elements":68,"ranks":4,"async":true},
// CHECK-NEXT:   {"op":"reduce_scatter","elements":51,"bytes":102,"tensors":1,"payload_elements":68,"buffer_elements":68,"ranks":4,"async":true},
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
// TABLE-NEXT:   gathered parameters  136
// TABLE-NEXT:   gradient buckets     136
// TABLE-NEXT:   activations          72
// TABLE-NEXT:   combined peak        336
// TABLE:      model states + peak    608
// TABLE:      all_reduce             2      0.00 MiB         1
// TABLE-NEXT: reduce_scatter         51      0.00 MiB         1
// TABLE-NEXT: all_gather             51      0.00 MiB         1
// TABLE:      total                  104      0.00 MiB         3
// TABLE:      #    collective       tensors          elements sent          size
// TABLE-NEXT: 0    all_gather             2                     51      0.00 MiB
// TABLE-NEXT: 1    reduce_scatter         1                     51      0.00 MiB
// TABLE-NEXT: 2    all_reduce             1                      2      0.00 MiB

// The allocations the report sums, in the order above; the collectives run
// on the whole buffers.
// PLAN-LABEL: func.func @train_step
// PLAN: %[[BUCKET:.*]] = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<68xbf16>
// PLAN: %[[SHARD:.*]] = train.storage @zero.flat0.params : memref<17xbf16>
// PLAN: %[[GATHERED:.*]] = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<68xbf16>
// PLAN: train.collective_start all_gather %[[SHARD]], %[[GATHERED]] on @dp payload = 68 : memref<17xbf16>, memref<68xbf16>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<3x10xbf16>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<f32>
// PLAN: train.collective_start reduce_scatter %[[BUCKET]], %{{.*}} on @dp payload = 68 : memref<68xbf16>, memref<17xbf16, strided<[1], offset: ?>>
// PLAN: memref.alloc() {train.category = #train.category<activations>} : memref<17xf32>
// PLAN: memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<1xf32>
// PLAN-NOT: memref.alloc

module attributes {train.world_size = 4 : i64, train.zero_stage = 3 : i64} {
  shard.grid @dp(shape = 4)
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08
  train.param @w : tensor<10x6xbf16> init = normal std = 0.02 decay
  train.param @b : tensor<7xbf16> init = zeros
  train.state @w.grad : tensor<10x6xbf16> grad of @w
  train.state @b.grad : tensor<7xbf16> grad of @b
  train.state @w.master : tensor<10x6xf32> master of @w
  train.state @w.exp_avg : tensor<10x6xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<10x6xf32> exp_avg_sq of @w
  train.state @b.master : tensor<7xf32> master of @b
  train.state @b.exp_avg : tensor<7xf32> exp_avg of @b
  train.state @b.exp_avg_sq : tensor<7xf32> exp_avg_sq of @b
  train.buffer @zero.flat0.params : tensor<68xbf16> <parameters> members [@b, @w] offsets [0, 7] shards = 4
  train.buffer @zero.flat0.grads : tensor<68xbf16> <gradients> members [@b.grad, @w.grad] offsets [0, 7] shards = 4
  train.buffer @zero.flat0.master : tensor<68xf32> <optimizer_states> members [@b.master, @w.master] offsets [0, 7] shards = 4
  train.buffer @zero.flat0.exp_avg : tensor<68xf32> <optimizer_states> members [@b.exp_avg, @w.exp_avg] offsets [0, 7] shards = 4
  train.buffer @zero.flat0.exp_avg_sq : tensor<68xf32> <optimizer_states> members [@b.exp_avg_sq, @w.exp_avg_sq] offsets [0, 7] shards = 4

  func.func @train_step(%x: tensor<3x6xbf16>, %step: tensor<i64>) -> tensor<f32> attributes {train.step} {
    %pad = train.fill 0.0 : tensor<1xbf16>
    %s = train.read @zero.flat0.params : tensor<17xbf16>
    %f = train.all_gather_start %s on @dp : tensor<17xbf16> -> !train.future<tensor<68xbf16>>
    %g = train.wait %f : !train.future<tensor<68xbf16>>
    %b, %w, %p = train.unpack %g : tensor<68xbf16> -> tensor<7xbf16>, tensor<10x6xbf16>, tensor<1xbf16>
    %h = train.matmul %x, %w transpose_rhs : (tensor<3x6xbf16>, tensor<10x6xbf16>) -> tensor<3x10xbf16>
    %loss = train.squared_norm %h : tensor<3x10xbf16> -> tensor<f32>
    %dw = train.matmul %h, %x transpose_lhs : (tensor<3x10xbf16>, tensor<3x6xbf16>) -> tensor<10x6xbf16>
    %db = train.scale %b by 2.0 : tensor<7xbf16>
    train.release %g : tensor<68xbf16>
    %bucket = train.pack %db, %dw, %pad : tensor<7xbf16>, tensor<10x6xbf16>, tensor<1xbf16> -> tensor<68xbf16>
    %rf = train.reduce_scatter_start %bucket on @dp : tensor<68xbf16> -> !train.future<tensor<17xbf16>>
    %rs = train.wait %rf : !train.future<tensor<17xbf16>>
    %avg = train.scale %rs by 0.25 : tensor<17xbf16>
    train.write %avg to @zero.flat0.grads : tensor<17xbf16>
    %gr = train.read @zero.flat0.grads : tensor<17xbf16>
    %lr = train.lr_schedule %step lr = 1.0e-03 schedule = constant : (tensor<i64>) -> tensor<f32>
    %g32 = train.cast %gr : tensor<17xbf16> to tensor<17xf32>
    %m = train.read @zero.flat0.master : tensor<17xf32>
    %ea = train.read @zero.flat0.exp_avg : tensor<17xf32>
    %eas = train.read @zero.flat0.exp_avg_sq : tensor<17xf32>
    %nm, %nea, %neas = train.adamw_update %m, %g32, %ea, %eas, %lr, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.0 : tensor<17xf32>
    train.write %nea to @zero.flat0.exp_avg : tensor<17xf32>
    train.write %neas to @zero.flat0.exp_avg_sq : tensor<17xf32>
    train.write %nm to @zero.flat0.master : tensor<17xf32>
    %np = train.cast %nm : tensor<17xf32> to tensor<17xbf16>
    train.write %np to @zero.flat0.params : tensor<17xbf16>
    %l1 = train.reshape %loss : tensor<f32> -> tensor<1xf32>
    %lf = train.all_reduce_start %l1 on @dp : tensor<1xf32> -> !train.future<tensor<1xf32>>
    %lw = train.wait %lf : !train.future<tensor<1xf32>>
    %l = train.reshape %lw : tensor<1xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
