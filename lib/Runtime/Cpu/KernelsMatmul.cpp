//===- KernelsMatmul.cpp - zrt_matmul on OpenBLAS -------------------------===//
//
// Every product goes through cblas_sgemm. bf16 operands are widened into f32
// scratch (B whole, A and C in row chunks that bound the scratch), the
// product accumulates in f32 inside the BLAS, and C is rounded once.
//
// Threading: a single large product calls the BLAS from the calling thread
// and lets OpenBLAS thread it; a batch of small products runs one product
// per OpenMP task with OpenBLAS held to one thread (BlasSingleThreaded).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"

#include <cblas.h>

#include <climits>
#include <type_traits>

using namespace zeroc::rt;

namespace {

/// A product's operand layout, row-major as stored.
struct Gemm {
  int64_t m, n, k;
  bool transA, transB;
  int64_t lda() const { return transA ? m : k; }
  int64_t ldb() const { return transB ? k : n; }
};

/// c = op(a) @ op(b) for m rows, all f32.
void sgemm(const Gemm &g, int64_t m, const float *a, int64_t lda,
           const float *b, float *c) {
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
              g.transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(g.n), static_cast<int>(g.k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(g.ldb()), 0.0f, c,
              static_cast<int>(g.n));
}

/// Floats of scratch for one chunk of A and C rows in the bf16 path.
int64_t chunkFloats = int64_t{1} << 24; // 64 MiB

/// Rows of A and C converted at a time in the bf16 path.
int64_t chunkRows(const Gemm &g) {
  return std::min(std::max<int64_t>(chunkFloats / (g.k + g.n), 1), g.m);
}

/// One bf16 product; `bf` is op(b)'s storage already widened to f32.
/// `parallel`: conversions may use OpenMP (the BLAS threads itself too).
void bf16Gemm(const Gemm &g, const bf16 *a, const float *bf, bf16 *c,
              bool parallel) {
  int64_t rows = chunkRows(g);
  std::unique_ptr<float[]> af = scratchF32(rows * g.k);
  std::unique_ptr<float[]> cf = scratchF32(rows * g.n);
  for (int64_t i0 = 0; i0 < g.m; i0 += rows) {
    int64_t mc = std::min(rows, g.m - i0);
    int64_t lda;
    if (!g.transA) {
      // Rows i0.. of the stored [m, k] matrix are contiguous.
      if (parallel)
        parallelBf16ToF32(a + i0 * g.k, af.get(), mc * g.k);
      else
        bf16ToF32(a + i0 * g.k, af.get(), mc * g.k);
      lda = g.k;
    } else {
      // Columns i0.. of the stored [k, m] matrix: k segments of mc.
      auto convert = [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
          bf16ToF32(a + p * g.m + i0, af.get() + p * mc, mc);
      };
      if (parallel)
        parallelFor(g.k, mc, convert);
      else
        convert(0, g.k);
      lda = mc;
    }
    sgemm(g, mc, af.get(), lda, bf, cf.get());
    if (parallel)
      parallelF32ToBf16(cf.get(), c + i0 * g.n, mc * g.n);
    else
      f32ToBf16(cf.get(), c + i0 * g.n, mc * g.n);
  }
}

} // namespace

void zeroc::rt::setMatmulChunkFloats(int64_t floats) {
  chunkFloats = floats > 0 ? floats : int64_t{1} << 24;
}

extern "C" void zrt_matmul(zrt_dtype dtype, const void *a, const void *b,
                           void *c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, int trans_a, int trans_b,
                           int64_t stride_a, int64_t stride_b,
                           int64_t stride_c) {
  const char *kernel = "zrt_matmul";
  checkNonNegative(kernel, "batch", batch);
  checkNonNegative(kernel, "m", m);
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "k", k);
  checkNonNegative(kernel, "stride_a", stride_a);
  checkNonNegative(kernel, "stride_b", stride_b);
  checkNonNegative(kernel, "stride_c", stride_c);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    zrt_fail("%s: m, n and k must fit the BLAS's 32-bit int, got %lld x %lld "
             "x %lld",
             kernel, static_cast<long long>(m), static_cast<long long>(n),
             static_cast<long long>(k));
  if (batch > 1 && stride_c < m * n)
    zrt_fail("%s: stride_c %lld is less than m * n = %lld with batch %lld: "
             "the outputs would overlap",
             kernel, static_cast<long long>(stride_c),
             static_cast<long long>(m * n), static_cast<long long>(batch));
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (!c || (k > 0 && (!a || !b)))
    zrt_fail("%s: NULL operand", kernel);

  Gemm g{m, n, k, trans_a != 0, trans_b != 0};
  // A batch of row blocks sharing B with contiguous A and C is one product
  // with batch * m rows (a linear layer's [B, T, C] x [N, C]^T).
  if (batch > 1 && stride_b == 0 && !g.transA && stride_a == m * k &&
      stride_c == m * n) {
    g.m = m * batch;
    batch = 1;
  }
  size_t esz = zrt_dtype_size(dtype);
  if (k == 0) { // empty sums
    dispatchFloat(kernel, dtype, [&](auto) {});
    for (int64_t i = 0; i < batch; ++i)
      parallelZero(static_cast<char *>(c) + i * stride_c * esz,
                   static_cast<size_t>(g.m * n) * esz);
    return;
  }

  int threads = maxThreads();
  double flops = 2.0 * static_cast<double>(g.m) * g.n * g.k;
  // One product per OpenMP task when the batch fills the threads evenly or
  // the products are too small for the BLAS to thread well.
  bool overBatch = batch > 1 && threads > 1 &&
                   (batch % threads == 0 || batch >= 4 * threads ||
                    flops < 4.0e6);

  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *at = static_cast<const T *>(a);
    const T *bt = static_cast<const T *>(b);
    T *ct = static_cast<T *>(c);
    if constexpr (std::is_same_v<T, float>) {
      auto one = [&](int64_t i) {
        sgemm(g, g.m, at + i * stride_a, g.lda(), bt + i * stride_b,
              ct + i * stride_c);
      };
      if (overBatch) {
        BlasSingleThreaded single;
        parallelTasks(batch, static_cast<int64_t>(flops / 8), one);
      } else {
        for (int64_t i = 0; i < batch; ++i)
          one(i);
      }
    } else {
      int64_t bSize = g.k * g.n;
      std::unique_ptr<float[]> shared;
      if (stride_b == 0) { // one B for the whole batch: widen it once
        shared = scratchF32(bSize);
        parallelBf16ToF32(bt, shared.get(), bSize);
      }
      if (overBatch) {
        BlasSingleThreaded single;
        parallelTasks(batch, static_cast<int64_t>(flops / 8), [&](int64_t i) {
          std::unique_ptr<float[]> own;
          const float *bf = shared.get();
          if (!bf) {
            own = scratchF32(bSize);
            bf16ToF32(bt + i * stride_b, own.get(), bSize);
            bf = own.get();
          }
          bf16Gemm(g, at + i * stride_a, bf, ct + i * stride_c, false);
        });
      } else {
        std::unique_ptr<float[]> own;
        if (!shared)
          own = scratchF32(bSize);
        for (int64_t i = 0; i < batch; ++i) {
          const float *bf = shared.get();
          if (!bf) {
            parallelBf16ToF32(bt + i * stride_b, own.get(), bSize);
            bf = own.get();
          }
          bf16Gemm(g, at + i * stride_a, bf, ct + i * stride_c, true);
        }
      }
    }
  });
}
