// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=2 world-size=2 bucket-bytes=64" | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=1 world-size=2 bucket-bytes=1000" | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-mixed-precision=precision=bf16 --train-data-parallel=world-size=2 --train-autodiff --train-accumulate=micro-batches=3 --train-optimizer "--train-zero=stage=2 world-size=2 bucket-bytes=1000" | FileCheck %s --check-prefix=BF16
// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=0 world-size=2 bucket-bytes=64" | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %S/Inputs/mlp.mlir --train-mixed-precision=precision=bf16 --train-data-parallel=world-size=2 --train-autodiff --train-optimizer "--train-zero=stage=0 world-size=2 bucket-bytes=1000" | FileCheck %s --check-prefix=S0BF16

// zeroc's one layout (Megatron's), here at stages 1-2: each bucket's
// parameters, gradients and optimizer states are members of per-bucket
// train.buffer declarations, end to end in the order backward produces
// the gradients (b2 then w2), padded to N equal shards; the states are
// sharded contiguously (shards = 2 on the buffer, none on the members,
// which keep their names and shapes for checkpoints).
// S2-NOT: shards = 2{{$}}
// S2: train.state @w1.grad : tensor<4x3xf32> grad of @w1{{$}}
// S2: train.buffer @zero.flat0.params : tensor<26xf32> <parameters> members [@b2, @w2] offsets [0, 5]{{$}}
// S2-NEXT: train.buffer @zero.flat0.grads : tensor<26xf32> <gradients> members [@b2.grad, @w2.grad] offsets [0, 5] shards = 2
// S2-NEXT: train.buffer @zero.flat0.exp_avg : tensor<26xf32> <optimizer_states> members [@b2.exp_avg, @w2.exp_avg] offsets [0, 5] shards = 2
// S2-NEXT: train.buffer @zero.flat0.exp_avg_sq : tensor<26xf32> <optimizer_states> members [@b2.exp_avg_sq, @w2.exp_avg_sq] offsets [0, 5] shards = 2
// S2-NEXT: train.buffer @zero.flat1.params : tensor<16xf32> <parameters> members [@b1, @w1] offsets [0, 4]{{$}}
// Backward: the bucket's gradients packed end to end with a zero tail
// (25 elements to 26), reduce-scattered (each rank gets its contiguous
// 13), averaged and kept in the sharded gradient buffer; no unpack.
// S2-LABEL: func.func @train_step
// S2: %[[PAD:.*]] = train.fill 0.000000e+00 : tensor<1xf32>
// S2-NEXT: %[[B:.*]] = train.pack %{{.*}}, %{{.*}}, %[[PAD]] : tensor<5xf32>, tensor<5x4xf32>, tensor<1xf32> -> tensor<26xf32>
// S2-NEXT: %[[RS:.*]] = shard.reduce_scatter %[[B]] {{.*}} : tensor<26xf32> -> tensor<13xf32>
// S2-NEXT: %[[AVG:.*]] = train.scale %[[RS]] by 5.000000e-01 : tensor<13xf32>
// S2-NEXT: train.write %[[AVG]] to @zero.flat0.grads : tensor<13xf32>
// S2-NOT: train.unpack
// The optimizer: the norm over the buckets' shards; one update per bucket
// on this rank's 13 elements of the f32 parameters (their own master),
// weight decay only on w2's range [5, 25); one all-gather back into the
// parameter buffer.
// S2: %[[G0:.*]] = train.read @zero.flat0.grads : tensor<13xf32>
// S2: train.squared_norm %[[G0]] : tensor<13xf32> -> tensor<f32>
// S2: %[[P:.*]] = train.read @zero.flat0.params : tensor<26xf32>
// S2-NEXT: %[[MINE:.*]] = shard.all_slice %[[P]] {{.*}} : tensor<26xf32> -> tensor<13xf32>
// S2: %[[NEW:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[MINE]], {{.*}} weight_decay = 1.000000e-01 decay_ranges [5, 25] : tensor<13xf32>
// S2: %[[ALL:.*]] = shard.all_gather %[[NEW]] {{.*}} : tensor<13xf32> -> tensor<26xf32>
// S2-NEXT: train.write %[[ALL]] to @zero.flat0.params : tensor<26xf32>
// S2: train.adamw_update {{.*}} decay_ranges [4, 16] : tensor<8xf32>
// S2-NOT: train.unpack
// S2: return

// Stage 1: one bucket of all four; the full local gradients are kept in a
// replicated gradient buffer, and the optimizer reads the reduced shard.
// Adjacent decay ranges are one ([5, 25) and [29, 41): b1 between them
// takes none).
// S1: train.buffer @zero.flat0.grads : tensor<42xf32> <gradients> members [@b2.grad, @w2.grad, @b1.grad, @w1.grad] offsets [0, 5, 25, 29]{{$}}
// S1-LABEL: func.func @train_step
// S1: %[[B:.*]] = train.pack {{.*}} -> tensor<42xf32>
// S1-NEXT: train.write %[[B]] to @zero.flat0.grads : tensor<42xf32>
// S1-NEXT: %[[RS:.*]] = shard.reduce_scatter %[[B]]
// S1-NEXT: %[[AVG:.*]] = train.scale %[[RS]]
// S1: train.squared_norm %[[AVG]] : tensor<21xf32>
// S1: train.adamw_update {{.*}} decay_ranges [5, 25, 29, 41] : tensor<21xf32>

// bf16 with three micro-batches: an f32 master buffer, each micro-batch's
// bucket reduce-scattered as backward produces it and summed into the
// sharded gradient buffer; the master updated and rounded to bf16 before
// the all-gather.
// BF16: train.buffer @zero.flat0.master : tensor<42xf32> <optimizer_states> members [@b2.master, @w2.master, @b1.master, @w1.master] offsets [0, 5, 25, 29] shards = 2
// BF16-LABEL: func.func @train_step
// BF16: shard.reduce_scatter {{.*}} : tensor<42xbf16> -> tensor<21xbf16>
// BF16: train.write %{{.*}} to @zero.flat0.grads : tensor<21xbf16>
// BF16: %[[ACC:.*]] = train.read @zero.flat0.grads : tensor<21xbf16>
// BF16: %[[RS:.*]] = shard.reduce_scatter {{.*}} : tensor<42xbf16> -> tensor<21xbf16>
// BF16-NEXT: %[[AVG:.*]] = train.scale %[[RS]]
// BF16-NEXT: %[[SUM:.*]] = train.add %[[ACC]], %[[AVG]] {train.accumulate, train.micro_batch = 1 : i64}
// BF16-NEXT: train.write %[[SUM]] to @zero.flat0.grads : tensor<21xbf16>
// BF16: %[[M:.*]] = train.read @zero.flat0.master : tensor<21xf32>
// BF16: %[[NEW:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[M]],
// BF16: train.write %[[NEW]] to @zero.flat0.master : tensor<21xf32>
// BF16-NEXT: %[[R:.*]] = train.cast %[[NEW]] : tensor<21xf32> to tensor<21xbf16>
// BF16-NEXT: %[[ALL:.*]] = shard.all_gather %[[R]]
// BF16-NEXT: train.write %[[ALL]] to @zero.flat0.params : tensor<42xbf16>

// Stage 0: the same buffers as stages 1-3, whole (25 elements, no
// padding, no shards); the gradient buffer is the average of its bucket's
// all-reduce.
// S0: train.buffer @zero.flat0.params : tensor<25xf32> <parameters> members [@b2, @w2] offsets [0, 5]{{$}}
// S0-NEXT: train.buffer @zero.flat0.grads : tensor<25xf32> <gradients> members [@b2.grad, @w2.grad] offsets [0, 5]{{$}}
// S0-NEXT: train.buffer @zero.flat0.exp_avg : tensor<25xf32> <optimizer_states> members [@b2.exp_avg, @w2.exp_avg] offsets [0, 5]{{$}}
// S0-NEXT: train.buffer @zero.flat0.exp_avg_sq : tensor<25xf32> <optimizer_states> members [@b2.exp_avg_sq, @w2.exp_avg_sq] offsets [0, 5]{{$}}
// S0-NEXT: train.buffer @zero.flat1.params : tensor<16xf32> <parameters> members [@b1, @w1] offsets [0, 4]{{$}}
// S0: %[[B:.*]] = train.pack {{.*}} -> tensor<25xf32>
// S0-NEXT: %[[R:.*]] = shard.all_reduce %[[B]]
// S0-NEXT: %[[A:.*]] = train.scale %[[R]]
// S0-NEXT: train.write %[[A]] to @zero.flat0.grads : tensor<25xf32>

// Stage 0 in bf16: a whole fp32 master buffer beside the bf16 parameters;
// the update's rounding is written straight into the parameter buffer (no
// gather, no copy).
// S0BF16: train.buffer @zero.flat0.params : tensor<41xbf16> <parameters> members [@b2, @w2, @b1, @w1] offsets [0, 5, 25, 29]{{$}}
// S0BF16: train.buffer @zero.flat0.master : tensor<41xf32> <optimizer_states> members [@b2.master, @w2.master, @b1.master, @w1.master] offsets [0, 5, 25, 29]{{$}}
// S0BF16: %[[M:.*]] = train.read @zero.flat0.master : tensor<41xf32>
// S0BF16: %[[NEW:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[M]], {{.*}} replicated : tensor<41xf32>
// S0BF16: train.write %[[NEW]] to @zero.flat0.master : tensor<41xf32>
// S0BF16-NEXT: %[[R:.*]] = train.cast %[[NEW]] : tensor<41xf32> to tensor<41xbf16>
// S0BF16-NEXT: train.write %[[R]] to @zero.flat0.params : tensor<41xbf16>
// S0BF16-NOT: shard.all_gather
