// The C++ printer on a hand-written planned step: each op of the buffer
// form becomes its C++ counterpart, nothing more.
//
// RUN: zeroc %s --no-pipeline --emit=source | FileCheck %s
// RUN: zeroc %s --no-pipeline --emit=source -o %t.cpp
// RUN: mpicxx -std=c++17 -fopenmp -Wall -Wextra -Werror -I%zeroc_src/include -c %t.cpp -o %t.o

// CHECK-LABEL: static void train_step(zrt_comm *comm, const void *tokens, const void *targets, int64_t step, float *loss, float *grad_norm, float *lr) {
// CHECK-NEXT: (void)comm;
// CHECK-NEXT: const int64_t step_arg[1] = {step};
// The rank, read once into a local (an expression calling zrt_rank would
// run per element in loops over a rank's slot).
// CHECK-NEXT: const int64_t [[RANK:v[0-9]+]] = (int64_t)zrt_rank(comm);
// An allocation in its category, the embedding kernel into it.
// CHECK-NEXT: float *[[X:v[0-9]+]] = (float *)zrt_alloc(64, ZRT_MEM_ACTIVATIONS); /* tensor<2x2x4xf32> */
// CHECK-NEXT: zrt_embedding(ZRT_F32, ((float *)S[0].data), ((const int32_t *)tokens), ZRT_I32, [[X]], 4, 5, 4);
// A view at a rank's offset; a collective from it; the wait.
// CHECK-NEXT: float *[[B:v[0-9]+]] = (float *)zrt_alloc(16, ZRT_MEM_GRADIENT_BUCKETS); /* tensor<4xf32> */
// CHECK-NEXT: zrt_request *[[R:v[0-9]+]] = zrt_all_gather_start(comm, ([[X]] + ([[RANK]] * 2)), [[B]], 2, ZRT_F32, NULL);
// CHECK-NEXT: zrt_wait([[R]]);
// A fused loop over the view at a static offset, into a state's buffer.
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t i = 0; i < 2; ++i)
// CHECK-NEXT: ((float *)S[1].data)[i] = (([[B]] + 2)[i] * 5.00000000000000000e-01f);
// A copy, the learning rate on the host, the results read back, the frees.
// CHECK-NEXT: zrt_copy(((float *)S[2].data), ((float *)S[1].data), 8);
// CHECK-NEXT: lr[0] = zrt_lr_schedule(step_arg[0], 1.00000000000000002e-02, ZRT_LR_CONSTANT, 0, 0.00000000000000000e+00, 0);
// CHECK-NEXT: float *[[L:v[0-9]+]] = (float *)zrt_alloc(4, ZRT_MEM_ACTIVATIONS); /* tensor<f32> */
// CHECK-NEXT: zrt_cross_entropy(ZRT_F32, [[X]], ((const int32_t *)targets), ZRT_I32, 4, 4, [[L]]);
// CHECK-NEXT: zrt_read_f32(loss, [[L]], ZRT_F32, 1);
// CHECK-NEXT: zrt_read_f32(grad_norm, [[L]], ZRT_F32, 1);
// CHECK-NEXT: zrt_free([[X]], 64, ZRT_MEM_ACTIVATIONS);
// CHECK-NEXT: zrt_free([[B]], 16, ZRT_MEM_GRADIENT_BUCKETS);
// CHECK-NEXT: zrt_free([[L]], 4, ZRT_MEM_ACTIVATIONS);
// CHECK-NEXT: }

module attributes {train.world_size = 2 : i64, train.zero_stage = 0 : i64} {
  shard.grid @dp(shape = 2)
  train.param @emb : tensor<5x4xf32> init = zeros
  train.param @a : tensor<2xf32> init = zeros
  train.param @b : tensor<2xf32> init = zeros
  func.func @train_step(%tokens: memref<2x2xi32>, %targets: memref<2x2xi32>, %step: memref<i64, #train.host>, %loss: memref<f32, #train.host>, %norm: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.step, train.planned} {
    %rank = train.rank on @dp
    %emb = train.storage @emb : memref<5x4xf32>
    %x = memref.alloc() {train.category = #train.category<activations>} : memref<2x2x4xf32>
    train.kernel ins(%emb, %tokens : memref<5x4xf32>, memref<2x2xi32>) outs(%x : memref<2x2x4xf32>) {
    ^bb0(%t: tensor<5x4xf32>, %i: tensor<2x2xi32>):
      %e = train.embedding %t[%i] : (tensor<5x4xf32>, tensor<2x2xi32>) -> tensor<2x2x4xf32>
      train.yield %e : tensor<2x2x4xf32>
    }
    %c2 = arith.constant 2 : index
    %off = arith.muli %rank, %c2 : index
    %mine = memref.reinterpret_cast %x to offset: [%off], sizes: [2], strides: [1] : memref<2x2x4xf32> to memref<2xf32, strided<[1], offset: ?>>
    %b = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<4xf32>
    %r = train.collective_start all_gather %mine, %b on @dp payload = 4 : memref<2xf32, strided<[1], offset: ?>>, memref<4xf32>
    train.collective_wait %r
    %hi = memref.reinterpret_cast %b to offset: [2], sizes: [2], strides: [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
    %sa = train.storage @a : memref<2xf32>
    train.kernel ins(%hi : memref<2xf32, strided<[1], offset: 2>>) outs(%sa : memref<2xf32>) {
    ^bb0(%h: tensor<2xf32>):
      %f = train.fused %h : (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%u: tensor<2xf32>):
        %s = train.scale %u by 0.5 : tensor<2xf32>
        train.yield %s : tensor<2xf32>
      }
      train.yield %f : tensor<2xf32>
    }
    %sb = train.storage @b : memref<2xf32>
    memref.copy %sa, %sb : memref<2xf32> to memref<2xf32>
    train.kernel ins(%step : memref<i64, #train.host>) outs(%lr : memref<f32, #train.host>) {
    ^bb0(%s: tensor<i64>):
      %v = train.lr_schedule %s lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
      train.yield %v : tensor<f32>
    }
    %xl = memref.reinterpret_cast %x to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<2x2x4xf32> to memref<4x4xf32>
    %tl = memref.reinterpret_cast %targets to offset: [0], sizes: [4], strides: [1] : memref<2x2xi32> to memref<4xi32>
    %l = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins(%xl, %tl : memref<4x4xf32>, memref<4xi32>) outs(%l : memref<f32>) {
    ^bb0(%p: tensor<4x4xf32>, %q: tensor<4xi32>):
      %c = train.cross_entropy %p, %q : (tensor<4x4xf32>, tensor<4xi32>) -> tensor<f32>
      train.yield %c : tensor<f32>
    }
    train.read_back %l, %loss : memref<f32>, memref<f32, #train.host>
    train.read_back %l, %norm : memref<f32>, memref<f32, #train.host>
    memref.dealloc %x : memref<2x2x4xf32>
    memref.dealloc %b : memref<4xf32>
    memref.dealloc %l : memref<f32>
    return
  }
}
