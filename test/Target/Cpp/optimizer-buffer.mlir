// The printers' optimizer call over a rank's shard of a sharded flat
// buffer (decay_ranges): zrt_adamw_buffer / zrt_sgd_buffer with the
// shard's first logical index (rank * n) and one static segment per decay
// range; without decay_ranges, the per-tensor zrt_adamw. The source
// compiles warning-free (the hand-written step reads no data, hence
// -Wno-unused-parameter).
//
// RUN: zeroc %s --no-pipeline --emit=source | FileCheck %s
// RUN: zeroc %s --no-pipeline --emit=source -o %t.cpp
// RUN: mpicxx -std=c++17 -fopenmp -Wall -Wextra -Werror -Wno-unused-parameter -I%zeroc_src/include -c %t.cpp -o %t.o

// CHECK-LABEL: static void train_step(
// CHECK: zrt_lr_schedule(
// CHECK: {{^  \{$}}
// CHECK-NEXT: static const int64_t zc_begin[] = {0, 6};
// CHECK-NEXT: static const int64_t zc_end[] = {3, 8};
// CHECK-NEXT: static const uint8_t zc_decay[] = {1, 1};
// CHECK-NEXT: zrt_adamw_buffer(((float *)B[0].data), [[G:v[0-9]+]], nullptr, ((float *)B[1].data), ((float *)B[2].data), 4, (int64_t)zrt_rank(comm) * 4, 2, zc_begin, zc_end, zc_decay, lr[0], step_arg[0], 9.00000000000000022e-01, 9.49999999999999956e-01, 1.00000000000000002e-08, 1.00000000000000006e-01);
// CHECK-NEXT: }
// No range at all: one placeholder entry, zero segments.
// CHECK-NEXT: {
// CHECK-NEXT: static const int64_t zc_begin[] = {0};
// CHECK-NEXT: static const int64_t zc_end[] = {0};
// CHECK-NEXT: static const uint8_t zc_decay[] = {0};
// CHECK-NEXT: zrt_sgd_buffer(((float *)B[3].data), [[G]], ((float *)B[4].data), 4, (int64_t)zrt_rank(comm) * 4, 0, zc_begin, zc_end, zc_decay, lr[0], 9.00000000000000022e-01, 1.00000000000000006e-01);
// CHECK-NEXT: }
// CHECK-NEXT: zrt_adamw(((float *)B[0].data), [[G]], nullptr, ((float *)B[1].data), ((float *)B[2].data), 4, lr[0], step_arg[0],
// grad_scale: the kernel reads the scalar's buffer.
// CHECK: [[C:v[0-9]+]] = (float *)zrt_alloc(
// CHECK: zrt_adamw_buffer(((float *)B[0].data), [[G]], [[C]], ((float *)B[1].data), ((float *)B[2].data), 4, (int64_t)zrt_rank(comm) * 4, 1, zc_begin, zc_end, zc_decay, lr[0], step_arg[0],
module attributes {train.world_size = 2 : i64, train.zero_stage = 1 : i64} {
  shard.grid @dp(shape = 2)
  train.param @w : tensor<8xf32> init = zeros
  train.state @w.exp_avg : tensor<8xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<8xf32> exp_avg_sq of @w
  train.param @u : tensor<8xf32> init = zeros
  train.state @u.momentum_buffer : tensor<8xf32> momentum_buffer of @u
  train.buffer @zero.flat0.params : tensor<8xf32> <parameters> members [@w] offsets [0] shards = 2
  train.buffer @zero.flat0.exp_avg : tensor<8xf32> <optimizer_states> members [@w.exp_avg] offsets [0] shards = 2
  train.buffer @zero.flat0.exp_avg_sq : tensor<8xf32> <optimizer_states> members [@w.exp_avg_sq] offsets [0] shards = 2
  train.buffer @zero.flat1.params : tensor<8xf32> <parameters> members [@u] offsets [0] shards = 2
  train.buffer @zero.flat1.momentum_buffer : tensor<8xf32> <optimizer_states> members [@u.momentum_buffer] offsets [0] shards = 2
  func.func @train_step(%tokens: memref<2x2xi32>, %targets: memref<2x2xi32>, %step: memref<i64, #train.host>, %loss: memref<f32, #train.host>, %norm: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.step, train.planned} {
    train.kernel ins(%step : memref<i64, #train.host>) outs(%lr : memref<f32, #train.host>) {
    ^bb0(%s: tensor<i64>):
      %v = train.lr_schedule %s lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
      train.yield %v : tensor<f32>
    }
    %g = memref.alloc() {train.category = #train.category<gradients>} : memref<4xf32>
    train.kernel ins() outs(%g : memref<4xf32>) {
      %f = train.fused : () -> tensor<4xf32> {
        %z = train.fill 0.0 : tensor<4xf32>
        train.yield %z : tensor<4xf32>
      }
      train.yield %f : tensor<4xf32>
    }
    %w = train.storage @zero.flat0.params : memref<4xf32>
    %m = train.storage @zero.flat0.exp_avg : memref<4xf32>
    %v = train.storage @zero.flat0.exp_avg_sq : memref<4xf32>
    train.kernel ins(%w, %g, %m, %v, %lr, %step : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32, #train.host>, memref<i64, #train.host>) outs(%w, %m, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>) {
    ^bb0(%p: tensor<4xf32>, %gr: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %l: tensor<f32>, %t: tensor<i64>):
      %p1, %a1, %b1 = train.adamw_update %p, %gr, %a, %b, %l, %t beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 3, 6, 8] : tensor<4xf32>
      train.yield %p1, %a1, %b1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
    %u = train.storage @zero.flat1.params : memref<4xf32>
    %mb = train.storage @zero.flat1.momentum_buffer : memref<4xf32>
    train.kernel ins(%u, %g, %mb, %lr : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32, #train.host>) outs(%u, %mb : memref<4xf32>, memref<4xf32>) {
    ^bb0(%p: tensor<4xf32>, %gr: tensor<4xf32>, %b: tensor<4xf32>, %l: tensor<f32>):
      %p1, %b1 = train.sgd_update %p, %gr, %b, %l momentum = 0.9 weight_decay = 0.1 decay_ranges [] : tensor<4xf32>
      train.yield %p1, %b1 : tensor<4xf32>, tensor<4xf32>
    }
    train.kernel ins(%w, %g, %m, %v, %lr, %step : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32, #train.host>, memref<i64, #train.host>) outs(%w, %m, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>) {
    ^bb0(%p: tensor<4xf32>, %gr: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %l: tensor<f32>, %t: tensor<i64>):
      %p1, %a1, %b1 = train.adamw_update %p, %gr, %a, %b, %l, %t beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 : tensor<4xf32>
      train.yield %p1, %a1, %b1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
    %l0 = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins() outs(%l0 : memref<f32>) {
      %f = train.fused : () -> tensor<f32> {
        %z = train.fill 0.0 : tensor<f32>
        train.yield %z : tensor<f32>
      }
      train.yield %f : tensor<f32>
    }
    // With grad_scale (train-fuse-optimizer): its buffer, read by the kernel.
    train.kernel ins(%w, %g, %m, %v, %lr, %step, %l0 : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32, #train.host>, memref<i64, #train.host>, memref<f32>) outs(%w, %m, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>) {
    ^bb0(%p: tensor<4xf32>, %gr: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %l: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>):
      %p1, %a1, %b1 = train.adamw_update %p, %gr, %a, %b, %l, %t grad_scale %c beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 3] : tensor<4xf32>
      train.yield %p1, %a1, %b1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
    train.read_back %l0, %loss : memref<f32>, memref<f32, #train.host>
    train.read_back %l0, %norm : memref<f32>, memref<f32, #train.host>
    memref.dealloc %g : memref<4xf32>
    memref.dealloc %l0 : memref<f32>
    return
  }
}
