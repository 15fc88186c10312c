//===- KernelsFlashAttention.cu - fused bf16 attention (opt-in) -----------===//
//
// A FlashAttention-2-style path for bf16 attention with head size d in
// {32, 64, 128}: the scores never leave the chip. Tensor cores through
// WMMA (16 x 16 x 16 bf16 fragments, f32 accumulation); blocks of 64 query
// rows (forward) or 64 keys (backward), 4 warps of 16 rows each.
//
// Forward: per block of queries, for every block of keys it may see
// (causal: up to the diagonal), S = Q K^T (f32) in shared memory, an online
// softmax per row (running max m and sum l, in f32; P rounded to bf16 for
// the P V product, as FlashAttention does), O = alpha O + P V in f32; at the
// end O / l and, for the backward, the row's logsumexp m + log l.
//
// Backward (zrt.h passes no saved statistics): the forward runs again for
// O (f32) and the logsumexp L, D_i = rowsum(dO_i * O_i); then per block of
// keys, for every block of queries that sees it, P = exp(scale S - L),
// dV += P^T dO, dP = dO V^T, dS = P (dP - D), dK += scale dS^T Q (in
// registers), and dQ += scale dS K by f32 atomics into scratch, converted
// to bf16 at the end.
//
// Enabled by ZEROC_FLASH_ATTENTION=1 (read at each call) until it has been
// validated on a GPU (the conformance suite, test/Runtime/Kernels, runs
// both paths); otherwise, and for f32 or other head sizes,
// KernelsAttention.cu's cuBLASLt path runs.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include <cuda_bf16.h>
#include <mma.h>

#include <cstdlib>

using namespace zeroc::rt::cuda;
namespace wmma = nvcuda::wmma;

namespace {

using nvbf16 = __nv_bfloat16;

constexpr int kRows = 64;        // query rows or keys per block
constexpr int kWarps = 4;        // 16 rows each
constexpr int kThreads = kWarps * kWarp;
constexpr int kSLd = kRows + 4;  // f32 score rows in shared memory
constexpr int kPLd = kRows + 8;  // bf16 P / dS rows

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, nvbf16, wmma::row_major>;
using FragAT =
    wmma::fragment<wmma::matrix_a, 16, 16, 16, nvbf16, wmma::col_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, nvbf16, wmma::row_major>;
using FragBT =
    wmma::fragment<wmma::matrix_b, 16, 16, 16, nvbf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

/// Shared memory of one block, carved in 32-byte aligned pieces (WMMA
/// needs 256-bit aligned tile pointers; every size below is a multiple).
template <int D> struct Layout {
  static constexpr int kLd = D + 8;  // bf16 rows of Q, K, V, dO tiles
  static constexpr int kOLd = D + 4; // f32 rows of O-sized warp tiles
  static constexpr size_t kTile = size_t{kRows} * kLd * sizeof(nvbf16);
  static constexpr size_t kPTile = size_t{kRows} * kPLd * sizeof(nvbf16);
  static constexpr size_t kWarpS = size_t{16} * kSLd * sizeof(float);
  static constexpr size_t kWarpO = size_t{16} * kOLd * sizeof(float);
  static constexpr size_t kWarpP = size_t{16} * kPLd * sizeof(nvbf16);
  static constexpr size_t kWarpRows = 3 * 16 * sizeof(float) + 64;
  // Forward: Q, K, V tiles; per warp S, O, PV, P and row statistics.
  static constexpr size_t kForwardWarp = kWarpS + 2 * kWarpO + kWarpP + kWarpRows;
  static constexpr size_t kForward = 3 * kTile + kWarps * kForwardWarp;
  // Backward: K, V, Q, dO tiles, P and dS of the block, per warp S and a
  // staging tile, L and D of the block's query rows.
  static constexpr size_t kBackwardWarp = kWarpS + kWarpO;
  static constexpr size_t kBackward =
      4 * kTile + 2 * kPTile + kWarps * kBackwardWarp + 2 * kRows * sizeof(float);
  static_assert(kTile % 32 == 0 && kPTile % 32 == 0 && kWarpS % 32 == 0 &&
                    kWarpO % 32 == 0 && kWarpP % 32 == 0 && kWarpRows % 32 == 0,
                "shared memory pieces keep 32-byte alignment");
};

/// tile[r][0..D) = g[row0 + r][0..D) for r < 64 (zeros past `rows`), by the
/// whole block, 16 bytes at a time (g's rows are 16-byte aligned).
template <int D>
__device__ void loadTile(const bf16 *__restrict__ g, int64_t rows, int64_t row0,
                         nvbf16 *tile) {
  constexpr int kLd = Layout<D>::kLd;
  constexpr int kVecs = D / 8;
  for (int idx = threadIdx.x; idx < kRows * kVecs; idx += blockDim.x) {
    int r = idx / kVecs, c = (idx % kVecs) * 8;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (row0 + r < rows)
      value = *reinterpret_cast<const uint4 *>(g + (row0 + r) * D + c);
    *reinterpret_cast<uint4 *>(tile + r * kLd + c) = value;
  }
}

/// out[16 x 64] (f32, ld kSLd) = A[16 rows of a, D] B[64 rows of b, D]^T.
template <int D>
__device__ __forceinline__ void rowsTimesTileT(const nvbf16 *a, const nvbf16 *b,
                                               float *out) {
  constexpr int kLd = Layout<D>::kLd;
#pragma unroll
  for (int n = 0; n < kRows / 16; ++n) {
    FragC acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      FragA fa;
      FragBT fb;
      wmma::load_matrix_sync(fa, a + kk * 16, kLd);
      wmma::load_matrix_sync(fb, b + n * 16 * kLd + kk * 16, kLd);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out + n * 16, acc, kSLd, wmma::mem_row_major);
  }
}

/// out[16 x D] (f32, ld kOLd) = P[16 x 64] (bf16, ld kPLd) V[64 x D].
template <int D>
__device__ __forceinline__ void rowsTimesTile(const nvbf16 *p, const nvbf16 *v,
                                              float *out) {
  constexpr int kLd = Layout<D>::kLd, kOLd = Layout<D>::kOLd;
#pragma unroll
  for (int n = 0; n < D / 16; ++n) {
    FragC acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll
    for (int kk = 0; kk < kRows / 16; ++kk) {
      FragA fa;
      FragB fb;
      wmma::load_matrix_sync(fa, p + kk * 16, kPLd);
      wmma::load_matrix_sync(fb, v + kk * 16 * kLd + n * 16, kLd);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out + n * 16, acc, kOLd, wmma::mem_row_major);
  }
}

__device__ __forceinline__ int64_t validKeys(int64_t i, int64_t t, int64_t s,
                                             bool causal) {
  if (i >= t)
    return 0;
  return causal ? (i + 1 < s ? i + 1 : s) : s;
}

/// One block: 64 query rows of head blockIdx.y. Writes out (bf16) and/or
/// outF (f32) and lse (the rows' logsumexp of the scaled scores) when not
/// NULL.
template <int D>
__global__ void __launch_bounds__(kThreads)
    flashForwardKernel(const bf16 *__restrict__ q, const bf16 *__restrict__ k,
                       const bf16 *__restrict__ v, bf16 *__restrict__ out,
                       float *__restrict__ outF, float *__restrict__ lse,
                       int64_t t, int64_t s, float scale, bool causal) {
  using L = Layout<D>;
  constexpr int kLd = L::kLd, kOLd = L::kOLd;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t h = blockIdx.y, i0 = static_cast<int64_t>(blockIdx.x) * kRows;

  nvbf16 *qs = reinterpret_cast<nvbf16 *>(smem);
  nvbf16 *ks = reinterpret_cast<nvbf16 *>(smem + L::kTile);
  nvbf16 *vs = reinterpret_cast<nvbf16 *>(smem + 2 * L::kTile);
  unsigned char *mine = smem + 3 * L::kTile + warp * L::kForwardWarp;
  float *sw = reinterpret_cast<float *>(mine);
  float *ow = reinterpret_cast<float *>(mine + L::kWarpS);
  float *pvw = reinterpret_cast<float *>(mine + L::kWarpS + L::kWarpO);
  nvbf16 *pw = reinterpret_cast<nvbf16 *>(mine + L::kWarpS + 2 * L::kWarpO);
  float *rowM = reinterpret_cast<float *>(mine + L::kWarpS + 2 * L::kWarpO +
                                          L::kWarpP);
  float *rowL = rowM + 16, *rowA = rowM + 32;

  loadTile<D>(q + h * t * D, t, i0, qs);
  for (int idx = lane; idx < 16 * kOLd; idx += kWarp)
    ow[idx] = 0.0f;
  if (lane < 16) {
    rowM[lane] = -INFINITY;
    rowL[lane] = 0.0f;
  }
  // Two lanes per row, on interleaved columns.
  const int r = lane >> 1, half = lane & 1;
  const int64_t valid = validKeys(i0 + warp * 16 + r, t, s, causal);
  const int64_t keyEnd = causal ? (i0 + kRows < s ? i0 + kRows : s) : s;

  for (int64_t j0 = 0; j0 < keyEnd; j0 += kRows) {
    __syncthreads(); // Q loaded; the last block's K, V no longer read
    loadTile<D>(k + h * s * D, s, j0, ks);
    loadTile<D>(v + h * s * D, s, j0, vs);
    __syncthreads();
    rowsTimesTileT<D>(qs + warp * 16 * kLd, ks, sw);
    __syncwarp();
    float mOld = rowM[r], mx = -INFINITY;
#pragma unroll 8
    for (int jj = 0; jj < kRows / 2; ++jj) {
      int c = 2 * jj + half;
      if (j0 + c < valid)
        mx = fmaxf(mx, sw[r * kSLd + c] * scale);
    }
    mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, 1));
    float mNew = fmaxf(mOld, mx);
    float alpha = mNew == -INFINITY ? 1.0f : expf(mOld - mNew);
    float sum = 0.0f;
#pragma unroll 8
    for (int jj = 0; jj < kRows / 2; ++jj) {
      int c = 2 * jj + half;
      float p = j0 + c < valid ? expf(sw[r * kSLd + c] * scale - mNew) : 0.0f;
      pw[r * kPLd + c] = __float2bfloat16_rn(p);
      sum += p;
    }
    sum += __shfl_xor_sync(kFullMask, sum, 1);
    __syncwarp(); // every lane has read rowM
    if (half == 0) {
      rowM[r] = mNew;
      rowL[r] = rowL[r] * alpha + sum;
      rowA[r] = alpha;
    }
    __syncwarp();
    rowsTimesTile<D>(pw, vs, pvw);
    __syncwarp();
    for (int idx = lane; idx < 16 * D; idx += kWarp) {
      int rr = idx / D, cc = idx % D;
      ow[rr * kOLd + cc] = ow[rr * kOLd + cc] * rowA[rr] + pvw[rr * kOLd + cc];
    }
    __syncwarp();
  }

  for (int idx = lane; idx < 16 * D; idx += kWarp) {
    int rr = idx / D, cc = idx % D;
    int64_t i = i0 + warp * 16 + rr;
    if (i < t) {
      float o = ow[rr * kOLd + cc] / rowL[rr];
      if (out)
        out[(h * t + i) * D + cc] = bf16Bits(o);
      if (outF)
        outF[(h * t + i) * D + cc] = o;
    }
  }
  if (lse && lane < 16) {
    int64_t i = i0 + warp * 16 + lane;
    if (i < t)
      lse[h * t + i] = rowM[lane] + logf(rowL[lane]);
  }
}

/// delta[r] = sum over c of dout[r][c] * o[r][c]; one warp per row.
template <int D>
__global__ void rowDotKernel(const bf16 *__restrict__ dout,
                             const float *__restrict__ o,
                             float *__restrict__ delta, int64_t rows) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    float sum = 0.0f;
    for (int c = lane; c < D; c += kWarp)
      sum += toF32(dout[r * D + c]) * o[r * D + c];
    sum = warpSum(sum);
    if (lane == 0)
      delta[r] = sum;
  }
}

/// One block: 64 keys of head blockIdx.y, over every block of queries that
/// sees them. dK, dV written (bf16); dQ added to dqAcc (f32 atomics).
template <int D>
__global__ void __launch_bounds__(kThreads)
    flashBackwardKernel(const bf16 *__restrict__ q, const bf16 *__restrict__ k,
                        const bf16 *__restrict__ v,
                        const bf16 *__restrict__ dout,
                        const float *__restrict__ lse,
                        const float *__restrict__ delta,
                        float *__restrict__ dqAcc, bf16 *__restrict__ dk,
                        bf16 *__restrict__ dv, int64_t t, int64_t s,
                        float scale, bool causal) {
  using L = Layout<D>;
  constexpr int kLd = L::kLd, kOLd = L::kOLd;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t h = blockIdx.y, j0 = static_cast<int64_t>(blockIdx.x) * kRows;

  nvbf16 *ks = reinterpret_cast<nvbf16 *>(smem);
  nvbf16 *vs = reinterpret_cast<nvbf16 *>(smem + L::kTile);
  nvbf16 *qs = reinterpret_cast<nvbf16 *>(smem + 2 * L::kTile);
  nvbf16 *dos = reinterpret_cast<nvbf16 *>(smem + 3 * L::kTile);
  nvbf16 *ps = reinterpret_cast<nvbf16 *>(smem + 4 * L::kTile);
  nvbf16 *dss = reinterpret_cast<nvbf16 *>(smem + 4 * L::kTile + L::kPTile);
  unsigned char *warps = smem + 4 * L::kTile + 2 * L::kPTile;
  float *sw = reinterpret_cast<float *>(warps + warp * L::kBackwardWarp);
  float *tw = reinterpret_cast<float *>(warps + warp * L::kBackwardWarp +
                                        L::kWarpS);
  float *rowL = reinterpret_cast<float *>(warps + kWarps * L::kBackwardWarp);
  float *rowD = rowL + kRows;

  loadTile<D>(k + h * s * D, s, j0, ks);
  loadTile<D>(v + h * s * D, s, j0, vs);
  FragC dkAcc[D / 16], dvAcc[D / 16];
#pragma unroll
  for (int n = 0; n < D / 16; ++n) {
    wmma::fill_fragment(dkAcc[n], 0.0f);
    wmma::fill_fragment(dvAcc[n], 0.0f);
  }
  const int r = lane >> 1, half = lane & 1;
  // Causal: query rows before j0 see none of these keys.
  for (int64_t i0 = causal ? j0 : 0; i0 < t; i0 += kRows) {
    __syncthreads(); // K, V loaded; the last query block no longer read
    loadTile<D>(q + h * t * D, t, i0, qs);
    loadTile<D>(dout + h * t * D, t, i0, dos);
    for (int idx = threadIdx.x; idx < kRows; idx += blockDim.x) {
      int64_t i = i0 + idx;
      rowL[idx] = i < t ? lse[h * t + i] : 0.0f;
      rowD[idx] = i < t ? delta[h * t + i] : 0.0f;
    }
    __syncthreads();
    // This warp's 16 query rows: P and dS against the block's 64 keys.
    rowsTimesTileT<D>(qs + warp * 16 * kLd, ks, sw);
    __syncwarp();
    const int row = warp * 16 + r;
    const int64_t valid = validKeys(i0 + row, t, s, causal);
    const float lseRow = rowL[row], deltaRow = rowD[row];
    float p[kRows / 2];
#pragma unroll
    for (int jj = 0; jj < kRows / 2; ++jj) {
      int c = 2 * jj + half;
      p[jj] = j0 + c < valid ? expf(sw[r * kSLd + c] * scale - lseRow) : 0.0f;
      ps[row * kPLd + c] = __float2bfloat16_rn(p[jj]);
    }
    __syncwarp(); // S read before dP overwrites it
    rowsTimesTileT<D>(dos + warp * 16 * kLd, vs, sw);
    __syncwarp();
#pragma unroll
    for (int jj = 0; jj < kRows / 2; ++jj) {
      int c = 2 * jj + half;
      dss[row * kPLd + c] =
          __float2bfloat16_rn(p[jj] * (sw[r * kSLd + c] - deltaRow));
    }
    __syncthreads(); // P and dS of all 64 query rows
    // This warp's 16 keys: dV += P^T dO, dK += dS^T Q.
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
#pragma unroll 1
      for (int kk = 0; kk < kRows / 16; ++kk) {
        FragAT fa;
        FragB fb;
        wmma::load_matrix_sync(fa, ps + kk * 16 * kPLd + warp * 16, kPLd);
        wmma::load_matrix_sync(fb, dos + kk * 16 * kLd + n * 16, kLd);
        wmma::mma_sync(dvAcc[n], fa, fb, dvAcc[n]);
        wmma::load_matrix_sync(fa, dss + kk * 16 * kPLd + warp * 16, kPLd);
        wmma::load_matrix_sync(fb, qs + kk * 16 * kLd + n * 16, kLd);
        wmma::mma_sync(dkAcc[n], fa, fb, dkAcc[n]);
      }
    }
    // This warp's 16 query rows: dQ += scale dS K.
    rowsTimesTile<D>(dss + warp * 16 * kPLd, ks, tw);
    __syncwarp();
    for (int idx = lane; idx < 16 * D; idx += kWarp) {
      int rr = idx / D, cc = idx % D;
      int64_t i = i0 + warp * 16 + rr;
      if (i < t)
        atomicAdd(dqAcc + (h * t + i) * D + cc, scale * tw[rr * kOLd + cc]);
    }
  }

  // dK (scaled) and dV of this warp's 16 keys.
  __syncwarp();
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      wmma::store_matrix_sync(tw + n * 16, pass == 0 ? dkAcc[n] : dvAcc[n],
                              kOLd, wmma::mem_row_major);
    __syncwarp();
    bf16 *dst = pass == 0 ? dk : dv;
    float factor = pass == 0 ? scale : 1.0f;
    for (int idx = lane; idx < 16 * D; idx += kWarp) {
      int rr = idx / D, cc = idx % D;
      int64_t j = j0 + warp * 16 + rr;
      if (j < s)
        dst[(h * s + j) * D + cc] = bf16Bits(factor * tw[rr * kOLd + cc]);
    }
    __syncwarp();
  }
}

bool enabled() {
  const char *flag = std::getenv("ZEROC_FLASH_ATTENTION");
  return flag && flag[0] == '1';
}

bool applies(int64_t bh, int64_t t, int64_t s, int64_t d,
             std::initializer_list<const void *> ptrs) {
  if (!enabled() || (d != 32 && d != 64 && d != 128) || bh < 1 ||
      bh > 65535 || t < 1 || s < 1 || (t + kRows - 1) / kRows > INT32_MAX ||
      (s + kRows - 1) / kRows > INT32_MAX)
    return false;
  for (const void *p : ptrs)
    if (!aligned16(p))
      return false;
  return true;
}

/// Raises the kernel's dynamic shared memory limit once.
template <typename Kernel> void allowSharedMemory(Kernel kernel, size_t bytes) {
  ZRT_CUDA(cudaFuncSetAttribute(kernel,
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(bytes)));
}

template <int D>
void forward(const bf16 *q, const bf16 *k, const bf16 *v, bf16 *out,
             float *outF, float *lse, int64_t bh, int64_t t, int64_t s,
             float scale, bool causal) {
  static bool ready = false;
  if (!ready) {
    allowSharedMemory(flashForwardKernel<D>, Layout<D>::kForward);
    ready = true;
  }
  dim3 grid(static_cast<unsigned>((t + kRows - 1) / kRows),
            static_cast<unsigned>(bh));
  flashForwardKernel<D><<<grid, kThreads, Layout<D>::kForward,
                          computeStream()>>>(q, k, v, out, outF, lse, t, s,
                                             scale, causal);
  checkLaunch("flashForwardKernel");
}

template <int D>
void backward(const bf16 *dout, const bf16 *q, const bf16 *k, const bf16 *v,
              bf16 *dq, bf16 *dk, bf16 *dv, int64_t bh, int64_t t, int64_t s,
              float scale, bool causal) {
  static bool ready = false;
  if (!ready) {
    allowSharedMemory(flashBackwardKernel<D>, Layout<D>::kBackward);
    ready = true;
  }
  cudaStream_t stream = computeStream();
  size_t rows = static_cast<size_t>(bh * t);
  Scratch o(rows * D * sizeof(float)), lse(rows * sizeof(float)),
      delta(rows * sizeof(float)), dqAcc(rows * D * sizeof(float));
  forward<D>(q, k, v, nullptr, o.as<float>(), lse.as<float>(), bh, t, s,
             scale, causal);
  rowDotKernel<D><<<rowBlocks(bh * t), kRowThreads, 0, stream>>>(
      dout, o.as<float>(), delta.as<float>(), bh * t);
  checkLaunch("rowDotKernel");
  ZRT_CUDA(cudaMemsetAsync(dqAcc.as<float>(), 0, rows * D * sizeof(float),
                           stream));
  dim3 grid(static_cast<unsigned>((s + kRows - 1) / kRows),
            static_cast<unsigned>(bh));
  flashBackwardKernel<D><<<grid, kThreads, Layout<D>::kBackward, stream>>>(
      q, k, v, dout, lse.as<float>(), delta.as<float>(), dqAcc.as<float>(), dk,
      dv, t, s, scale, causal);
  checkLaunch("flashBackwardKernel");
  convertF32ToBf16(dqAcc.as<float>(), dq, static_cast<int64_t>(rows) * D);
}

} // namespace

namespace zeroc::rt::cuda {

bool flashAttentionForward(const bf16 *q, const bf16 *k, const bf16 *v,
                           bf16 *out, int64_t bh, int64_t t, int64_t s,
                           int64_t d, float scale, bool causal) {
  if (!applies(bh, t, s, d, {q, k, v, out}))
    return false;
  switch (d) {
  case 32:
    forward<32>(q, k, v, out, nullptr, nullptr, bh, t, s, scale, causal);
    break;
  case 64:
    forward<64>(q, k, v, out, nullptr, nullptr, bh, t, s, scale, causal);
    break;
  default:
    forward<128>(q, k, v, out, nullptr, nullptr, bh, t, s, scale, causal);
    break;
  }
  return true;
}

bool flashAttentionBackward(const bf16 *dout, const bf16 *q, const bf16 *k,
                            const bf16 *v, bf16 *dq, bf16 *dk, bf16 *dv,
                            int64_t bh, int64_t t, int64_t s, int64_t d,
                            float scale, bool causal) {
  if (!applies(bh, t, s, d, {dout, q, k, v, dq, dk, dv}))
    return false;
  switch (d) {
  case 32:
    backward<32>(dout, q, k, v, dq, dk, dv, bh, t, s, scale, causal);
    break;
  case 64:
    backward<64>(dout, q, k, v, dq, dk, dv, bh, t, s, scale, causal);
    break;
  default:
    backward<128>(dout, q, k, v, dq, dk, dv, bh, t, s, scale, causal);
    break;
  }
  return true;
}

} // namespace zeroc::rt::cuda
