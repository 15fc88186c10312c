//===- KernelsMatmul.cpp - zrt_matmul on OpenBLAS -------------------------===//
//
// Every product goes through cblas_sgemm, always on one OpenBLAS thread
// (BlasSingleThreaded): the outputs of the whole batch are cut into tiles
// (tilesFor), one OpenMP task each, so OpenMP is the only thread pool that
// runs (OpenBLAS's own pthreads would fight OpenMP's spinning workers for
// the cores between kernels), and batches of small products and single
// large ones parallelize alike. Before each tile the task
// lets the collectives in flight progress (Progress.h: a relaxed load when
// none is, an MPI_Testall at most every 0.1 ms on the MPI thread).
// On one thread (the usual rank per core) f32 tiles are only there for that
// polling, and each re-packs its operands, so they are as large as a few
// milliseconds of sgemm: whole products at GPT-2's sizes. Results do not
// depend on the thread count: cutting m and n changes which sgemm computes
// an output, not its sum over k, and bf16's chunks of k depend on the
// shapes only (kernels.test compares 1 and 3 threads bitwise).
//
// f32: a tile is one sgemm on the operands in place.
// zrt_matmul_bias: each tile's rows are first set to the bias and the
// sgemm accumulates into them (beta = 1): OpenBLAS then skips its zeroing
// of C (beta = 0), and the bias is added in the tile's own pass instead of
// a separate one over the whole output.
// bf16: a tile widens the blocks of A and B it needs into f32 scratch, chunk
// by chunk of k, accumulates in f32 through sgemm, and is rounded once.
// Scratch stays under 4 MiB per thread whatever the shapes (an lm_head's
// [50257, 768] weight is never widened whole).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"
#include "Progress.h"

#include <cblas.h>

#include <climits>
#include <cstring>
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

/// Tile sizes: at most mc x nc outputs per task; bf16 sums over k in chunks
/// of at most kc (f32 takes k whole).
struct Tiles {
  int64_t mc, nc, kc;
};
/// bf16's are bounded by its f32 scratch (mc kc + kc nc + mc nc floats,
/// 3.5 MiB); f32 tiles need none.
const Tiles kDefaultTiles = {256, 512, 1024};
const Tiles kDefaultTilesF32 = {512, 1024, 1024};
/// The largest tiles, set for tests (setMatmulTilesForTesting), else the
/// defaults above by dtype.
bool testTiles = false;
Tiles baseTiles = kDefaultTiles;

/// Tasks a product aims for, by shrinking tiles (never below kMinRows x
/// kMinCols unless the matrix or the largest tile is smaller), so that 16
/// threads or so stay balanced: from the shapes and dtype only, so that
/// results do not depend on the thread count.
constexpr int64_t kTargetTiles = 64;
/// Each tile's sgemm packs its rows of A and its columns of B again:
/// k (mc + nc) copies for 2 mc nc k flops. At 64 x 128 that cost a quarter
/// of one core's sgemm rate (a 512 x 1152 x 384 product cut into 64 x 128
/// tiles ran at 136 GFLOP/s, at 256 x 256 at 174, whole at 186:
/// docs/benchmarks.md); over the 6-layer, 384-wide GPT-2's GEMMs, 256 x 256
/// tiles took 6-8 % longer than one sgemm per product, 512 x 256 ones 1-2 %.
constexpr int64_t kMinRows = 512;
constexpr int64_t kMinCols = 256;

/// On one thread, the f32 tiles' largest size in flops: about 4 ms of one
/// core's sgemm, the longest the collectives in flight go without a poll
/// inside a product. The 6-layer, 384-wide GPT-2's products (0.45-0.6
/// GFLOP) then run whole: 512 x 256 tiles had made its wide ones (n 1152
/// and 1536) 4-7 % slower than one sgemm, 2-3 ms of its 140 ms of GEMMs a
/// step (docs/benchmarks.md).
constexpr double kOneThreadTileFlops = 1 << 30;

Tiles tilesFor(int64_t batch, const Gemm &g, bool isF32, int threads) {
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if (threads == 1 && isF32 && !testTiles) {
    Tiles t{g.m, g.n, g.k};
    while (2.0 * t.mc * t.nc * g.k > kOneThreadTileFlops &&
           (t.mc > kMinRows || t.nc > kMinCols)) {
      if (t.nc > kMinCols && (t.nc >= t.mc || t.mc <= kMinRows))
        t.nc = ceilDiv(t.nc, 2);
      else
        t.mc = ceilDiv(t.mc, 2);
    }
    return t;
  }
  Tiles base = testTiles || !isF32 ? baseTiles : kDefaultTilesF32;
  Tiles t = base;
  t.mc = std::min(t.mc, g.m);
  t.nc = std::min(t.nc, g.n);
  auto count = [&] { return batch * ceilDiv(g.m, t.mc) * ceilDiv(g.n, t.nc); };
  while (count() < kTargetTiles) {
    int64_t minM = std::min<int64_t>(kMinRows, base.mc);
    int64_t minN = std::min<int64_t>(kMinCols, base.nc);
    if (t.nc >= t.mc && t.nc / 2 >= minN)
      t.nc = ceilDiv(t.nc, 2);
    else if (t.mc / 2 >= minM)
      t.mc = ceilDiv(t.mc, 2);
    else if (t.nc / 2 >= minN)
      t.nc = ceilDiv(t.nc, 2);
    else
      break;
  }
  int64_t chunks = ceilDiv(g.k, t.kc);
  t.kc = ceilDiv(g.k, chunks);
  return t;
}

/// Rows [i0, i0 + mc) of c (row length n), columns [j0, j0 + nc), set to
/// bias[j0, j0 + nc).
template <typename T>
inline void presetRows(T *c, const T *bias, int64_t n, int64_t i0,
                        int64_t mc, int64_t j0, int64_t nc) {
  for (int64_t i = 0; i < mc; ++i)
    std::memcpy(c + (i0 + i) * n + j0, bias + j0, nc * sizeof(T));
}

/// One output tile of an f32 product: one sgemm over the whole of k, on the
/// operands in place; with a bias, into the tile preset to it.
void gemmTile(const Gemm &g, const Tiles &t, const float *a, const float *b,
              const float *bias, float *c, int64_t i0, int64_t j0, float *) {
  int64_t mc = std::min(t.mc, g.m - i0), nc = std::min(t.nc, g.n - j0);
  if (bias)
    presetRows(c, bias, g.n, i0, mc, j0, nc);
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
              g.transB ? CblasTrans : CblasNoTrans, static_cast<int>(mc),
              static_cast<int>(nc), static_cast<int>(g.k), 1.0f,
              a + (g.transA ? i0 : i0 * g.k), static_cast<int>(g.lda()),
              b + (g.transB ? j0 * g.k : j0), static_cast<int>(g.ldb()),
              bias ? 1.0f : 0.0f, c + i0 * g.n + j0, static_cast<int>(g.n));
}

/// One output tile of a bf16 product: rows [i0, i0 + mc) and columns
/// [j0, j0 + nc) of c = op(a) op(b). The operands' blocks are widened into
/// f32 scratch per chunk of k, the sgemm (single-threaded) accumulates into
/// an f32 tile (preset to the widened bias when there is one), which is
/// rounded once. `scratch` holds mc*kc + kc*nc + mc*nc floats.
void gemmTile(const Gemm &g, const Tiles &t, const bf16 *a, const bf16 *b,
              const bf16 *bias, bf16 *c, int64_t i0, int64_t j0,
              float *scratch) {
  int64_t mc = std::min(t.mc, g.m - i0), nc = std::min(t.nc, g.n - j0);
  float *af = scratch, *bf = af + t.mc * t.kc, *cf = bf + t.kc * t.nc;
  if (bias)
    for (int64_t i = 0; i < mc; ++i)
      bf16ToF32(bias + j0, cf + i * nc, nc);
  for (int64_t p0 = 0; p0 < g.k; p0 += t.kc) {
    int64_t kc = std::min(t.kc, g.k - p0);
    int64_t lda, ldb;
    if (!g.transA) { // stored [m, k]: mc rows of kc
      for (int64_t i = 0; i < mc; ++i)
        bf16ToF32(a + (i0 + i) * g.k + p0, af + i * kc, kc);
      lda = kc;
    } else { // stored [k, m]: kc rows of mc
      for (int64_t p = 0; p < kc; ++p)
        bf16ToF32(a + (p0 + p) * g.m + i0, af + p * mc, mc);
      lda = mc;
    }
    if (!g.transB) { // stored [k, n]: kc rows of nc
      for (int64_t p = 0; p < kc; ++p)
        bf16ToF32(b + (p0 + p) * g.n + j0, bf + p * nc, nc);
      ldb = nc;
    } else { // stored [n, k]: nc rows of kc
      for (int64_t j = 0; j < nc; ++j)
        bf16ToF32(b + (j0 + j) * g.k + p0, bf + j * kc, kc);
      ldb = kc;
    }
    cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
                g.transB ? CblasTrans : CblasNoTrans, static_cast<int>(mc),
                static_cast<int>(nc), static_cast<int>(kc), 1.0f, af,
                static_cast<int>(lda), bf, static_cast<int>(ldb),
                p0 == 0 && !bias ? 0.0f : 1.0f, cf, static_cast<int>(nc));
  }
  for (int64_t i = 0; i < mc; ++i)
    f32ToBf16(cf + i * nc, c + (i0 + i) * g.n + j0, nc);
}

} // namespace

void zeroc::rt::setMatmulTilesForTesting(int64_t mc, int64_t nc, int64_t kc) {
  testTiles = mc > 0;
  baseTiles = testTiles ? Tiles{mc, nc, kc} : kDefaultTiles;
}

namespace {

/// zrt_matmul (bias NULL) and zrt_matmul_bias.
void matmul(const char *kernel, zrt_dtype dtype, const void *a, const void *b,
            const void *bias, void *c, int64_t batch, int64_t m, int64_t n,
            int64_t k, const zrt_trans &trans_a, const zrt_trans &trans_b,
            int64_t stride_a, int64_t stride_b, int64_t stride_c) {
  // trans_a/trans_b by reference: checkTrans reads their bits before
  // anything loads them as a zrt_trans (an invalid value is UB to load).
  checkTrans(kernel, "trans_a", trans_a);
  checkTrans(kernel, "trans_b", trans_b);
  checkMatmulSizes(kernel, batch, m, n, k, stride_a, stride_b, stride_c);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    zrt_fail("%s: m, n and k must fit the BLAS's 32-bit int, got %lld x %lld "
             "x %lld",
             kernel, static_cast<long long>(m), static_cast<long long>(n),
             static_cast<long long>(k));
  checkMatmulOutputs(kernel, batch, m, n, stride_c);
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (!c || (k > 0 && (!a || !b)))
    zrt_fail("%s: NULL operand", kernel);

  Gemm g{m, n, k, trans_a == ZRT_TRANS, trans_b == ZRT_TRANS};
  // A batch of row blocks sharing B with contiguous A and C is one product
  // with batch * m rows (a linear layer's [B, T, C] x [N, C]^T).
  if (batch > 1 && stride_b == 0 && !g.transA && stride_a == m * k &&
      stride_c == m * n) {
    g.m = m * batch;
    batch = 1;
  }
  size_t esz = zrt_dtype_size(dtype);
  if (k == 0) { // empty sums: zeros, or the bias
    dispatchFloat(kernel, dtype, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < batch; ++i) {
        T *ci = static_cast<T *>(c) + i * stride_c;
        if (!bias)
          parallelZero(ci, static_cast<size_t>(g.m * n) * esz);
        else
          presetRows(ci, static_cast<const T *>(bias), n, 0, g.m, 0, n);
      }
    });
    return;
  }

  // Output tiles of every product in the batch, one OpenMP task each, with
  // OpenBLAS on the task's thread.
  Tiles t = tilesFor(batch, g, dtype == ZRT_F32, maxThreads());
  int64_t tm = (g.m + t.mc - 1) / t.mc, tn = (g.n + t.nc - 1) / t.nc;
  int64_t perBatch = tm * tn;
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *at = static_cast<const T *>(a);
    const T *bt = static_cast<const T *>(b);
    const T *biast = static_cast<const T *>(bias);
    T *ct = static_cast<T *>(c);
    BlasSingleThreaded single;
    parallelFor(batch * perBatch, t.mc * t.nc * g.k / 4,
                [&](int64_t t0, int64_t t1) {
      std::unique_ptr<float[]> scratch;
      if constexpr (!std::is_same_v<T, float>)
        scratch = scratchF32(t.mc * t.kc + t.kc * t.nc + t.mc * t.nc);
      for (int64_t task = t0; task < t1; ++task) {
        pollCollectives(); // Progress.h: collectives in flight move on
        int64_t i = task / perBatch, tile = task % perBatch;
        gemmTile(g, t, at + i * stride_a, bt + i * stride_b, biast,
                 ct + i * stride_c, (tile / tn) * t.mc, (tile % tn) * t.nc,
                 scratch.get());
      }
    });
  });
}

} // namespace

extern "C" void zrt_matmul(zrt_dtype dtype, const void *a, const void *b,
                           void *c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, zrt_trans trans_a, zrt_trans trans_b,
                           int64_t stride_a, int64_t stride_b,
                           int64_t stride_c) {
  matmul("zrt_matmul", dtype, a, b, nullptr, c, batch, m, n, k, trans_a,
         trans_b, stride_a, stride_b, stride_c);
}

extern "C" void zrt_matmul_bias(zrt_dtype dtype, const void *a, const void *b,
                                const void *bias, void *c, int64_t batch,
                                int64_t m, int64_t n, int64_t k,
                                zrt_trans trans_a, zrt_trans trans_b,
                                int64_t stride_a, int64_t stride_b,
                                int64_t stride_c) {
  checkMatmulBias("zrt_matmul_bias", bias, batch, m, n);
  matmul("zrt_matmul_bias", dtype, a, b, bias, c, batch, m, n, k, trans_a,
         trans_b, stride_a, stride_b, stride_c);
}
