//===- KernelsAttention.cu - causal mask and attention on cuBLASLt --------===//
//
// zrt_attention, per chunk of heads (the scores of a chunk stay within
// kScratchBytes): S = scale * Q K^T by a batched cuBLASLt GEMM into f32
// scratch, a masked row softmax (one warp per row; entry (i, j) is masked
// when j > i, top-left aligned for t != s, as on the CPU) written as P in
// the tensors' dtype (bf16 P feeds the tensor cores, as flash attention
// does), then O = P V.
//
// zrt_attention_grad recomputes P (zrt.h passes no saved statistics), keeps
// it in f32 as well, and forms dV = P^T dO, dP = dO V^T (f32),
// dS = P * (dP - rowsum(P * dP)) in the dtype, dQ = scale dS K and
// dK = scale dS^T Q: five batched GEMMs and two row kernels per chunk.
//
// Grouped-query attention (`group` query heads per key/value head): the
// group's query heads are contiguous, so each key/value head is one GEMM
// batch of group * t query rows (the mask's row index is r % t); dK and dV
// then sum over the group inside the GEMMs.
//
// zrt_attention_dropout(_grad) multiply P by the dropout factors M (0 or
// 1 / (1 - p)) of its elements, drawn as zrt_dropout draws them at their
// place in the [bh, t, s] probabilities (a chunk of key/value heads starts
// at element h0 * group * t * s): O = (P * M) V; backward, dV = (P * M)^T dO
// and dP = M * (dO V^T), the softmax's backward reading P itself.
//
// Causal products are computed whole (their masked half is wasted work).
// With ZEROC_FLASH_ATTENTION=1, bf16 attention with d in {32, 64, 128}
// runs fused instead (KernelsFlashAttention.cu): no scores in memory.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include "zeroc/Support/Random.h"

#include <algorithm>
#include <type_traits>

using namespace zeroc::rt::cuda;

namespace {

/// Scores scratch of one chunk of heads, at most (unless one head needs
/// more).
constexpr size_t kScratchBytes = size_t{256} << 20;

/// Chunk width of the score row kernels: 8 elements (two float4 of f32
/// scores, one uint4 of bf16) when s and the buffers allow.
constexpr int kScoreVec = 8;

__device__ __forceinline__ int64_t validCols(int64_t i, int64_t s,
                                             bool causal) {
  return causal ? (i + 1 < s ? i + 1 : s) : s;
}

/// P = softmax of each row of S over its valid columns (0 beyond): rows of
/// s scores, row r is query i = r % t. P is written in the dtype T (may be S
/// itself when T is float) and, when pf is not NULL, in f32 to pf (may be S).
template <typename T, int N>
__global__ void attentionSoftmaxKernel(const float *scores, T *p, float *pf,
                                       int64_t rows, int64_t t, int64_t s,
                                       bool causal) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const float *sr = scores + r * s;
    int64_t valid = validCols(r % t, s, causal);
    MaxSum ms;
    for (int64_t c = lane * N; c < valid; c += kWarp * N) {
      float v[N];
      loadChunk<N>(sr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i)
        if (c + i < valid)
          ms.add(v[i]);
    }
    ms.warpReduce();
    float inv = 1.0f / ms.s;
    for (int64_t c = lane * N; c < s; c += kWarp * N) {
      float v[N];
      if (c < valid)
        loadChunk<N>(sr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[i] = c + i < valid ? expf(v[i] - ms.m) * inv : 0.0f;
      storeChunk<N>(p + r * s + c, v);
      if (pf)
        storeChunk<N>(pf + r * s + c, v);
    }
  }
}

/// dS = P * (dP - rowsum(P * dP)) in the dtype T (may overwrite dP when T
/// is float).
template <typename T, int N>
__global__ void attentionSoftmaxGradKernel(const float *p, const float *dp,
                                           T *ds, int64_t rows, int64_t s) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const float *pr = p + r * s, *dpr = dp + r * s;
    double dot = 0;
    for (int64_t c = lane * N; c < s; c += kWarp * N) {
      float a[N], b[N];
      loadChunk<N>(pr + c, a);
      loadChunk<N>(dpr + c, b);
#pragma unroll
      for (int i = 0; i < N; ++i)
        dot += static_cast<double>(a[i] * b[i]);
    }
    float d = static_cast<float>(warpSum(dot));
    for (int64_t c = lane * N; c < s; c += kWarp * N) {
      float a[N], b[N];
      loadChunk<N>(pr + c, a);
      loadChunk<N>(dpr + c, b);
#pragma unroll
      for (int i = 0; i < N; ++i)
        b[i] = a[i] * (b[i] - d);
      storeChunk<N>(ds + r * s + c, b);
    }
  }
}

/// zrt_dropout's arguments, for the probabilities of zrt_attention_dropout.
struct DropoutArgs {
  int64_t inner, rows, rowOffset, globalRows;
  double p;
  uint64_t seed;
  int64_t step;
};

/// y[e] = x[e] * M(base + e) for e < n: the dropout factor of element
/// base + e of the [bh, t, s] probabilities (y may be x).
template <typename U>
__global__ void attentionDropoutKernel(const U *x, U *y, int64_t n,
                                       int64_t base, int64_t inner,
                                       int64_t rows, int64_t rowOffset,
                                       int64_t globalRows, uint32_t threshold,
                                       float keepScale, uint64_t seed,
                                       uint64_t step) {
  for (int64_t e = firstIndex(); e < n; e += indexStride()) {
    uint64_t position = zeroc::random::dropoutPosition(
        static_cast<uint64_t>(base + e), static_cast<uint64_t>(inner),
        static_cast<uint64_t>(rows), static_cast<uint64_t>(rowOffset),
        static_cast<uint64_t>(globalRows));
    bool keep = zeroc::random::dropoutKeeps(seed, step, position, threshold);
    fromF32(keep ? toF32(x[e]) * keepScale : 0.0f, y[e]);
  }
}

template <typename U>
void applyDropout(const DropoutArgs &dr, const U *x, U *y, int64_t n,
                  int64_t base) {
  attentionDropoutKernel<U><<<blocksFor(n), 256, 0, computeStream()>>>(
      x, y, n, base, dr.inner, dr.rows, dr.rowOffset, dr.globalRows,
      zeroc::random::dropoutThreshold(dr.p),
      static_cast<float>(1.0 / (1.0 - dr.p)), dr.seed,
      static_cast<uint64_t>(dr.step));
  checkLaunch("attentionDropoutKernel");
}

void checkDropout(const char *kernel, const DropoutArgs &dr, int64_t n) {
  checkNonNegative(kernel, "step", dr.step);
  checkNonNegative(kernel, "row_offset", dr.rowOffset);
  if (!(dr.p >= 0.0 && dr.p < 1.0))
    zrt_fail("%s: p = %g is outside [0, 1)", kernel, dr.p);
  if (n > 0 && (dr.inner <= 0 || dr.rows <= 0 ||
                n % (dr.inner * dr.rows) != 0 ||
                dr.rowOffset + dr.rows > dr.globalRows))
    zrt_fail("%s: %lld probabilities are not whole rows of %lld x %lld at "
             "rows [%lld, %lld) of %lld",
             kernel, static_cast<long long>(n),
             static_cast<long long>(dr.rows), static_cast<long long>(dr.inner),
             static_cast<long long>(dr.rowOffset),
             static_cast<long long>(dr.rowOffset + dr.rows),
             static_cast<long long>(dr.globalRows));
}

template <typename T>
__global__ void causalMaskKernel(const T *x, T *y, int64_t rows, int64_t t,
                                 int64_t s, T masked) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t keep = validCols(r % t, s, true);
    for (int64_t j = threadIdx.x; j < s; j += blockDim.x)
      y[r * s + j] = j < keep ? x[r * s + j] : masked;
  }
}

void checkAttention(const char *kernel, int64_t bh, int64_t group, int64_t t,
                    int64_t s, int64_t d) {
  checkNonNegative(kernel, "bh", bh);
  if (group < 1 || bh % group != 0)
    zrt_fail("%s: %lld query heads do not form groups of %lld", kernel,
             static_cast<long long>(bh), static_cast<long long>(group));
  checkNonNegative(kernel, "t", t);
  checkNonNegative(kernel, "s", s);
  checkNonNegative(kernel, "d", d);
}

/// Heads per chunk so that `perHead` bytes of scratch each stay within
/// kScratchBytes (at least one).
int64_t chunkHeads(int64_t bh, size_t perHead) {
  int64_t heads = static_cast<int64_t>(kScratchBytes / std::max<size_t>(perHead, 1));
  return std::max<int64_t>(1, std::min(bh, heads));
}

template <typename T, typename Fn>
void withScoreChunk(int64_t s, std::initializer_list<const void *> ptrs,
                    Fn &&fn) {
  bool vec = s % kScoreVec == 0;
  for (const void *p : ptrs)
    vec = vec && (!p || aligned16(p));
  if (vec)
    fn(std::integral_constant<int, kScoreVec>{});
  else
    fn(std::integral_constant<int, 1>{});
}

template <typename T>
void attentionForward(const char *kernel, const T *q, const T *k, const T *v,
                      T *out, int64_t bh, int64_t group, int64_t t, int64_t s,
                      int64_t d, float scale, bool causal,
                      const DropoutArgs *dr) {
  constexpr bool isF32 = std::is_same_v<T, float>;
  cudaStream_t stream = computeStream();
  // Per key/value head: tq = group * t query rows.
  int64_t tq = group * t;
  bh /= group;
  size_t scores = static_cast<size_t>(tq) * s;
  size_t perHead = scores * (sizeof(float) + (isF32 ? 0 : sizeof(T)));
  int64_t heads = chunkHeads(bh, perHead);
  Scratch sbuf(static_cast<size_t>(heads) * scores * sizeof(float));
  Scratch pbuf(isF32 ? 0 : static_cast<size_t>(heads) * scores * sizeof(T));
  float *S = sbuf.as<float>();
  T *P = isF32 ? reinterpret_cast<T *>(S) : pbuf.as<T>();
  cudaDataType_t type = cudaType(T{});
  for (int64_t h0 = 0; h0 < bh; h0 += heads) {
    int64_t hb = std::min(heads, bh - h0);
    gemm(kernel,
         GemmOp{type, CUDA_R_32F, hb, tq, s, d, false, true, tq * d, s * d,
                static_cast<int64_t>(scores), scale},
         q + h0 * tq * d, k + h0 * s * d, S);
    withScoreChunk<T>(s, {S, P}, [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      attentionSoftmaxKernel<T, N><<<rowBlocks(hb * tq), kRowThreads, 0,
                                     stream>>>(S, P, nullptr, hb * tq, t, s,
                                               causal);
      checkLaunch("attentionSoftmaxKernel");
    });
    if (dr)
      applyDropout<T>(*dr, P, P, hb * static_cast<int64_t>(scores),
                      h0 * static_cast<int64_t>(scores));
    gemm(kernel,
         GemmOp{type, type, hb, tq, d, s, false, false,
                static_cast<int64_t>(scores), s * d, tq * d, 1.0f},
         P, v + h0 * s * d, out + h0 * tq * d);
  }
}

template <typename T>
void attentionBackward(const char *kernel, const T *dout, const T *q,
                       const T *k, const T *v, T *dq, T *dk, T *dv, int64_t bh,
                       int64_t group, int64_t t, int64_t s, int64_t d,
                       float scale, bool causal, const DropoutArgs *dr) {
  constexpr bool isF32 = std::is_same_v<T, float>;
  cudaStream_t stream = computeStream();
  // Per key/value head: tq = group * t query rows.
  int64_t tq = group * t;
  bh /= group;
  size_t scores = static_cast<size_t>(tq) * s;
  size_t perHead = scores * (2 * sizeof(float) + (isF32 ? 0 : sizeof(T)));
  int64_t heads = chunkHeads(bh, perHead);
  Scratch sbuf(static_cast<size_t>(heads) * scores * sizeof(float));
  Scratch dpbuf(static_cast<size_t>(heads) * scores * sizeof(float));
  Scratch pbuf(isF32 ? 0 : static_cast<size_t>(heads) * scores * sizeof(T));
  float *S = sbuf.as<float>(), *dP = dpbuf.as<float>();
  // P in the dtype (the GEMMs' operand); for f32, S itself. dS reuses it
  // for bf16 (P is consumed by dV first), dP for f32.
  T *P = isF32 ? reinterpret_cast<T *>(S) : pbuf.as<T>();
  T *dS = isF32 ? reinterpret_cast<T *>(dP) : P;
  // With dropout, P * M for dV: in place over P for bf16 (the softmax's
  // backward reads the f32 copy in S), in its own buffer for f32 (P is S).
  Scratch dbuf(dr && isF32 ? static_cast<size_t>(heads) * scores * sizeof(T)
                           : 0);
  T *PM = dr && isF32 ? dbuf.as<T>() : P;
  cudaDataType_t type = cudaType(T{});
  int64_t ts = static_cast<int64_t>(scores);
  for (int64_t h0 = 0; h0 < bh; h0 += heads) {
    int64_t hb = std::min(heads, bh - h0);
    const T *qh = q + h0 * tq * d, *kh = k + h0 * s * d, *vh = v + h0 * s * d;
    const T *doh = dout + h0 * tq * d;
    // S = scale Q K^T; P (and its f32 copy, over S, for bf16).
    gemm(kernel,
         GemmOp{type, CUDA_R_32F, hb, tq, s, d, false, true, tq * d, s * d, ts,
                scale},
         qh, kh, S);
    withScoreChunk<T>(s, {S, P}, [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      attentionSoftmaxKernel<T, N><<<rowBlocks(hb * tq), kRowThreads, 0,
                                     stream>>>(S, P, isF32 ? nullptr : S,
                                               hb * tq, t, s, causal);
      checkLaunch("attentionSoftmaxKernel");
    });
    if (dr)
      applyDropout<T>(*dr, P, PM, hb * ts, h0 * ts);
    // dV = P^T dO: [s, tq] x [tq, d] (summing over the group's heads).
    gemm(kernel,
         GemmOp{type, type, hb, s, d, tq, true, false, ts, tq * d, s * d, 1.0f},
         PM, doh, dv + h0 * s * d);
    // dP = dO V^T: [tq, d] x [d, s], f32.
    gemm(kernel,
         GemmOp{type, CUDA_R_32F, hb, tq, s, d, false, true, tq * d, s * d, ts,
                1.0f},
         doh, vh, dP);
    if (dr)
      applyDropout<float>(*dr, dP, dP, hb * ts, h0 * ts);
    withScoreChunk<T>(s, {S, dP, dS}, [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      attentionSoftmaxGradKernel<T, N><<<rowBlocks(hb * tq), kRowThreads, 0,
                                         stream>>>(S, dP, dS, hb * tq, s);
      checkLaunch("attentionSoftmaxGradKernel");
    });
    // dQ = scale dS K: [tq, s] x [s, d]; dK = scale dS^T Q: [s, tq] x [tq, d].
    gemm(kernel,
         GemmOp{type, type, hb, tq, d, s, false, false, ts, s * d, tq * d,
                scale},
         dS, kh, dq + h0 * tq * d);
    gemm(kernel,
         GemmOp{type, type, hb, s, d, tq, true, false, ts, tq * d, s * d, scale},
         dS, qh, dk + h0 * s * d);
  }
}

} // namespace

extern "C" void zrt_causal_mask(zrt_dtype dtype, const void *x, void *y,
                                int64_t batch, int64_t t, int64_t s,
                                zrt_mask_fill fill) {
  const char *kernel = "zrt_causal_mask";
  checkMaskFill(kernel, fill);
  checkNonNegative(kernel, "batch", batch);
  checkNonNegative(kernel, "t", t);
  checkNonNegative(kernel, "s", s);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t rows = batch * t;
    if (rows == 0 || s == 0)
      return;
    T masked;
    if constexpr (std::is_same_v<T, float>)
      masked = fill == ZRT_MASK_ZERO ? 0.0f : -__builtin_inff();
    else
      masked = fill == ZRT_MASK_ZERO ? bf16{0} : bf16{0xff80}; // -inf
    unsigned blocks = static_cast<unsigned>(
        std::min<int64_t>(rows, static_cast<int64_t>(multiprocessors()) * 32));
    causalMaskKernel<T><<<blocks, 256, 0, computeStream()>>>(
        static_cast<const T *>(x), static_cast<T *>(y), rows, t, s, masked);
    checkLaunch("causalMaskKernel");
  });
}

namespace {

void attention(const char *kernel, zrt_dtype dtype, const void *q,
               const void *k, const void *v, void *out, int64_t bh,
               int64_t group, int64_t t, int64_t s, int64_t d, double scale,
               const zrt_attention_mask &mask, const DropoutArgs *dr) {
  // By reference: the mask's bits are checked before it is read as the enum.
  checkAttentionMask(kernel, mask);
  bool causal = mask == ZRT_ATTENTION_CAUSAL;
  checkAttention(kernel, bh, group, t, s, d);
  if (dr)
    checkDropout(kernel, *dr, bh * t * s);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (bh == 0 || t == 0 || d == 0)
      return;
    if (s == 0) { // softmax over no keys: the empty sum
      ZRT_CUDA(cudaMemsetAsync(out, 0,
                               static_cast<size_t>(bh * t * d) * sizeof(T),
                               computeStream()));
      return;
    }
    if constexpr (std::is_same_v<T, bf16>) {
      if (group == 1 && !dr && flashAttentionForward(
              static_cast<const bf16 *>(q), static_cast<const bf16 *>(k),
              static_cast<const bf16 *>(v), static_cast<bf16 *>(out), bh, t, s,
              d, static_cast<float>(scale), causal))
        return;
    }
    attentionForward<T>(kernel, static_cast<const T *>(q),
                        static_cast<const T *>(k), static_cast<const T *>(v),
                        static_cast<T *>(out), bh, group, t, s, d,
                        static_cast<float>(scale), causal, dr);
  });
}

void attentionGrad(const char *kernel, zrt_dtype dtype, const void *dout,
                   const void *q, const void *k, const void *v, void *dq,
                   void *dk, void *dv, int64_t bh, int64_t group, int64_t t,
                   int64_t s, int64_t d, double scale,
                   const zrt_attention_mask &mask, const DropoutArgs *dr) {
  checkAttentionMask(kernel, mask);
  bool causal = mask == ZRT_ATTENTION_CAUSAL;
  checkAttention(kernel, bh, group, t, s, d);
  if (dr)
    checkDropout(kernel, *dr, bh * t * s);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (bh == 0 || d == 0)
      return;
    if (t == 0 || s == 0) { // no scores: every cotangent is an empty sum
      cudaStream_t stream = computeStream();
      ZRT_CUDA(cudaMemsetAsync(dq, 0,
                               static_cast<size_t>(bh * t * d) * sizeof(T),
                               stream));
      ZRT_CUDA(cudaMemsetAsync(
          dk, 0, static_cast<size_t>(bh / group * s * d) * sizeof(T), stream));
      ZRT_CUDA(cudaMemsetAsync(
          dv, 0, static_cast<size_t>(bh / group * s * d) * sizeof(T), stream));
      return;
    }
    if constexpr (std::is_same_v<T, bf16>) {
      if (group == 1 && !dr && flashAttentionBackward(
              static_cast<const bf16 *>(dout), static_cast<const bf16 *>(q),
              static_cast<const bf16 *>(k), static_cast<const bf16 *>(v),
              static_cast<bf16 *>(dq), static_cast<bf16 *>(dk),
              static_cast<bf16 *>(dv), bh, t, s, d, static_cast<float>(scale),
              causal))
        return;
    }
    attentionBackward<T>(kernel, static_cast<const T *>(dout),
                         static_cast<const T *>(q), static_cast<const T *>(k),
                         static_cast<const T *>(v), static_cast<T *>(dq),
                         static_cast<T *>(dk), static_cast<T *>(dv), bh, group,
                         t, s, d, static_cast<float>(scale), causal, dr);
  });
}

} // namespace

extern "C" void zrt_attention(zrt_dtype dtype, const void *q, const void *k,
                              const void *v, void *out, int64_t bh,
                              int64_t group, int64_t t, int64_t s, int64_t d,
                              double scale, zrt_attention_mask mask) {
  attention("zrt_attention", dtype, q, k, v, out, bh, group, t, s, d, scale,
            mask, nullptr);
}

extern "C" void zrt_attention_grad(zrt_dtype dtype, const void *dout,
                                   const void *q, const void *k,
                                   const void *v, void *dq, void *dk, void *dv,
                                   int64_t bh, int64_t group, int64_t t,
                                   int64_t s, int64_t d, double scale,
                                   zrt_attention_mask mask) {
  attentionGrad("zrt_attention_grad", dtype, dout, q, k, v, dq, dk, dv, bh,
                group, t, s, d, scale, mask, nullptr);
}

extern "C" void zrt_attention_dropout(
    zrt_dtype dtype, const void *q, const void *k, const void *v, void *out,
    int64_t bh, int64_t group, int64_t t, int64_t s, int64_t d, double scale,
    zrt_attention_mask mask, int64_t inner, int64_t rows, int64_t row_offset,
    int64_t global_rows, double p, uint64_t seed, int64_t step) {
  DropoutArgs dr{inner, rows, row_offset, global_rows, p, seed, step};
  attention("zrt_attention_dropout", dtype, q, k, v, out, bh, group, t, s, d,
            scale, mask, &dr);
}

extern "C" void zrt_attention_dropout_grad(
    zrt_dtype dtype, const void *dout, const void *q, const void *k,
    const void *v, void *dq, void *dk, void *dv, int64_t bh, int64_t group,
    int64_t t, int64_t s, int64_t d, double scale, zrt_attention_mask mask,
    int64_t inner, int64_t rows, int64_t row_offset, int64_t global_rows,
    double p, uint64_t seed, int64_t step) {
  DropoutArgs dr{inner, rows, row_offset, global_rows, p, seed, step};
  attentionGrad("zrt_attention_dropout_grad", dtype, dout, q, k, v, dq, dk,
                dv, bh, group, t, s, d, scale, mask, &dr);
}
