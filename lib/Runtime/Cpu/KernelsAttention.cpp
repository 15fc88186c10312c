//===- KernelsAttention.cpp - causal mask and fused attention -------------===//
//
// zrt_attention: per (batch * head) and block of kRowBlock query rows, the
// scores S = scale * Q K^T (sgemm), a causal-masked, max-subtracted softmax
// in place, and O = P V (sgemm). A causal block only computes the key
// columns its rows can see. Tasks are independent, run dynamically over
// OpenMP threads with OpenBLAS held to one thread each, and need a scratch
// of kRowBlock * s floats (plus widened operands for bf16).
//
// zrt_attention_grad recomputes P block by block (nothing is saved by the
// forward kernel) and forms dV += P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(P * dP)), dQ = scale dS K and dK += scale dS^T Q.
// dK and dV sum over every query row of the query heads that share a
// key/value head (one, or `group` with grouped-query attention), so a task
// owns whole key/value heads, or, when there are fewer of them than
// kTargetTasks, an interleaved share of their row blocks with its own dK/dV
// partial sums, added in a fixed order afterwards. Both partitions depend
// only on the shapes, so results do not depend on the thread count.
//
// zrt_attention_dropout(_grad) multiply each block of P by the dropout
// factors M (0 or 1 / (1 - p)) of its elements, drawn as zrt_dropout draws
// them at their place in the [bh, t, s] probabilities: O = (P * M) V, and
// backward dV += (P * M)^T dO, dP = M * (dO V^T).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"
#include "Progress.h"

#include "zeroc/Support/Random.h"

#include <cblas.h>

#include <cmath>
#include <type_traits>
#include <vector>

using namespace zeroc::rt;

namespace {

constexpr int64_t kRowBlock = 64;
/// Backward tasks wanted: below this many key/value heads, a head's row
/// blocks are shared by several tasks, each with its own dK/dV partials
/// (zeroed, accumulated and summed afterwards: about a tenth of the
/// backward's time at 24 heads of 128 x 64).
constexpr int64_t kTargetTasks = 16;

struct Attention {
  int64_t bh, group, t, s, d; // bh query heads, bh / group key/value heads
  float scale;
  bool causal;
  // Dropout of the probabilities (zrt_attention_dropout): zrt_dropout's
  // arguments for the [bh, t, s] tensor.
  bool dropout = false;
  uint32_t threshold = 0;
  float keepScale = 1.0f;
  uint64_t seed = 0, step = 0;
  int64_t inner = 1, rows = 1, rowOffset = 0, globalRows = 1;

  /// The dropout factors of rows [i0, i0 + bi) of query head h, columns
  /// [0, se), into m (bi x se).
  void dropoutFactors(int64_t h, int64_t i0, int64_t bi, int64_t se,
                      float *m) const {
    for (int64_t r = 0; r < bi; ++r)
      for (int64_t j = 0; j < se; ++j) {
        uint64_t position = zeroc::random::dropoutPosition(
            static_cast<uint64_t>((h * t + i0 + r) * s + j),
            static_cast<uint64_t>(inner), static_cast<uint64_t>(rows),
            static_cast<uint64_t>(rowOffset),
            static_cast<uint64_t>(globalRows));
        m[r * se + j] =
            zeroc::random::dropoutKeeps(seed, step, position, threshold)
                ? keepScale
                : 0.0f;
      }
  }

  /// Key columns query row i attends to.
  int64_t validCols(int64_t i) const {
    return causal ? std::min(i + 1, s) : s;
  }
  /// Key columns that rows [.., i1) need.
  int64_t blockCols(int64_t i1) const { return causal ? std::min(i1, s) : s; }
  int64_t blocks() const { return (t + kRowBlock - 1) / kRowBlock; }
};

/// c (m x n) = alpha * op(a) op(b) + beta * c, row-major, dense.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
          float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}

/// Softmax in place of the scores of rows [i0, i0 + rows), each of `cols`
/// stored columns of which validCols(i) take part; the rest become 0.
/// The masked columns are set to -inf and every pass runs over the whole
/// row (exp(-inf) is 0, and adding 0 changes no sum), so the loops run at
/// the block's width, a multiple of the vector's for the usual head sizes:
/// over the causal rows' own lengths (1 to 128), the scalar remainders
/// and per-row reductions were most of the softmax's time.
ZRT_HOT void softmaxBlock(float *scores, int64_t rows, int64_t cols,
                          int64_t i0, const Attention &at) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = scores + r * cols;
    int64_t valid = at.validCols(i0 + r);
    for (int64_t j = valid; j < cols; ++j)
      row[j] = -__builtin_inff();
    float max = rowMax(row, cols);
    float inv = static_cast<float>(1.0 / expShiftedSum(row, row, cols, max));
    for (int64_t j = 0; j < cols; ++j)
      row[j] *= inv;
  }
}

/// rows x cols: dS = P * (dP - rowsum(P * dP)), written over dP.
ZRT_HOT void softmaxGradBlock(const float *p, float *dp, int64_t rows,
                              int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *pr = p + r * cols;
    float *dr = dp + r * cols;
    float dot = static_cast<float>(rowDot(pr, dr, cols));
    for (int64_t j = 0; j < cols; ++j)
      dr[j] = pr[j] * (dr[j] - dot);
  }
}

/// Row j of head h's dK and dV: the sum over `groups` partials (each dK
/// then dV, s x d) in group order, through the f32 `row` (2 d floats).
template <typename T>
ZRT_HOT void sumPartials(const float *partial, int64_t h, int64_t j,
                         int64_t groups, int64_t s, int64_t d, float *row,
                         T *dk, T *dv) {
  float *sk = row, *sv = row + d;
  std::fill(sk, sk + 2 * d, 0.0f);
  for (int64_t g = 0; g < groups; ++g) {
    const float *base = partial + (h * groups + g) * 2 * s * d;
    for (int64_t c = 0; c < d; ++c) {
      sk[c] += base[j * d + c];
      sv[c] += base[s * d + j * d + c];
    }
  }
  storeRow(sk, dk, d);
  storeRow(sv, dv, d);
}

/// Probabilities P (bi x se) of query rows [i0, i0 + bi) of one head, from
/// f32 q rows and keys.
void probabilities(const Attention &at, const float *q, const float *k,
                   int64_t i0, int64_t bi, int64_t se, float *p) {
  gemm(false, true, bi, se, at.d, at.scale, q, at.d, k, at.d, 0.0f, p, se);
  softmaxBlock(p, bi, se, i0, at);
}

/// The f32 view of `count` elements at `src`: itself, or widened into
/// `scratch`.
const float *asF32(const float *src, float *, int64_t) { return src; }
const float *asF32(const bf16 *src, float *scratch, int64_t count) {
  bf16ToF32(src, scratch, count);
  return scratch;
}

template <typename T>
void attentionForward(const Attention &at, const T *q, const T *k, const T *v,
                      T *out) {
  constexpr bool isF32 = std::is_same_v<T, float>;
  int64_t t = at.t, s = at.s, d = at.d, nb = at.blocks();
  BlasSingleThreaded single;
  parallelTasks(at.bh * nb, kRowBlock * s * d / 2, [&](int64_t task) {
    pollCollectives(); // Progress.h: collectives in flight move on
    int64_t h = task / nb, i0 = (task % nb) * kRowBlock, kv = h / at.group;
    int64_t bi = std::min(kRowBlock, t - i0), se = at.blockCols(i0 + bi);
    std::unique_ptr<float[]> p = scratchF32(bi * se);
    std::unique_ptr<float[]> conv;
    float *qs = nullptr, *ks = nullptr, *vs = nullptr, *os = nullptr;
    if constexpr (!isF32) {
      conv = scratchF32(2 * bi * d + 2 * se * d);
      qs = conv.get();
      os = qs + bi * d;
      ks = os + bi * d;
      vs = ks + se * d;
    }
    const float *qf = asF32(q + (h * t + i0) * d, qs, bi * d);
    const float *kf = asF32(k + kv * s * d, ks, se * d);
    const float *vf = asF32(v + kv * s * d, vs, se * d);
    probabilities(at, qf, kf, i0, bi, se, p.get());
    if (at.dropout) {
      std::unique_ptr<float[]> m = scratchF32(bi * se);
      at.dropoutFactors(h, i0, bi, se, m.get());
      for (int64_t e = 0; e < bi * se; ++e)
        p[e] *= m[e];
    }
    float *of;
    if constexpr (isF32)
      of = out + (h * t + i0) * d;
    else
      of = os;
    gemm(false, false, bi, d, se, 1.0f, p.get(), se, vf, d, 0.0f, of, d);
    if constexpr (!isF32)
      f32ToBf16(os, out + (h * t + i0) * d, bi * d);
  });
}

template <typename T>
void attentionBackward(const Attention &at, const T *dout, const T *q,
                       const T *k, const T *v, T *dq, T *dk, T *dv) {
  constexpr bool isF32 = std::is_same_v<T, float>;
  int64_t t = at.t, s = at.s, d = at.d, nb = at.blocks();
  // Key/value heads, and the row blocks of one: `group` query heads of nb.
  int64_t kvHeads = at.bh / at.group, kvBlocks = at.group * nb;
  // Tasks per key/value head: 1 when those heads keep the threads busy.
  int64_t groups =
      kvHeads >= kTargetTasks
          ? 1
          : std::min(kvBlocks, (kTargetTasks + kvHeads - 1) / kvHeads);
  // With several groups per head, each keeps dK and dV partials here.
  std::unique_ptr<float[]> partial;
  if (groups > 1)
    partial = scratchF32(kvHeads * groups * 2 * s * d);

  {
    BlasSingleThreaded single;
    parallelTasks(kvHeads * groups, kvBlocks / groups * kRowBlock * s * d,
                  [&](int64_t task) {
      int64_t h = task / groups, g = task % groups; // h: a key/value head
      pollCollectives(); // Progress.h
      // Widened inputs of the head (bf16), dQ rows of a block, P, dP.
      std::unique_ptr<float[]> conv, acc;
      float *qs = nullptr, *dos = nullptr, *dqs = nullptr, *ks = nullptr,
            *vs = nullptr;
      if constexpr (!isF32) {
        conv = scratchF32(3 * kRowBlock * d + 2 * s * d);
        qs = conv.get();
        dos = qs + kRowBlock * d;
        dqs = dos + kRowBlock * d;
        ks = dqs + kRowBlock * d;
        vs = ks + s * d;
      }
      const float *kf = asF32(k + h * s * d, ks, s * d);
      const float *vf = asF32(v + h * s * d, vs, s * d);
      // Where dK and dV of this task accumulate.
      float *dka, *dva;
      if (groups > 1) {
        dka = partial.get() + (h * groups + g) * 2 * s * d;
        dva = dka + s * d;
      } else if constexpr (isF32) {
        dka = dk + h * s * d;
        dva = dv + h * s * d;
      } else {
        acc = scratchF32(2 * s * d);
        dka = acc.get();
        dva = dka + s * d;
      }
      std::fill(dka, dka + s * d, 0.0f);
      std::fill(dva, dva + s * d, 0.0f);
      std::unique_ptr<float[]> p = scratchF32(kRowBlock * s);
      std::unique_ptr<float[]> dp = scratchF32(kRowBlock * s);
      // With dropout: the factors M and P * M.
      std::unique_ptr<float[]> m, pm;
      if (at.dropout) {
        m = scratchF32(kRowBlock * s);
        pm = scratchF32(kRowBlock * s);
      }
      for (int64_t kb = g; kb < kvBlocks; kb += groups) {
        // Block blk of query head qh, one of the heads reading head h.
        int64_t qh = h * at.group + kb / nb, blk = kb % nb;
        int64_t i0 = blk * kRowBlock;
        int64_t bi = std::min(kRowBlock, t - i0), se = at.blockCols(i0 + bi);
        const float *qf = asF32(q + (qh * t + i0) * d, qs, bi * d);
        const float *dof = asF32(dout + (qh * t + i0) * d, dos, bi * d);
        probabilities(at, qf, kf, i0, bi, se, p.get());
        const float *pv = p.get();
        if (at.dropout) {
          at.dropoutFactors(qh, i0, bi, se, m.get());
          for (int64_t e = 0; e < bi * se; ++e)
            pm[e] = p[e] * m[e];
          pv = pm.get();
        }
        // dV += P^T dO; dP = dO V^T; dS = softmax'(dP) (with dropout,
        // P * M in dV and M * dP).
        gemm(true, false, se, d, bi, 1.0f, pv, se, dof, d, 1.0f, dva, d);
        gemm(false, true, bi, se, d, 1.0f, dof, d, vf, d, 0.0f, dp.get(), se);
        if (at.dropout)
          for (int64_t e = 0; e < bi * se; ++e)
            dp[e] *= m[e];
        softmaxGradBlock(p.get(), dp.get(), bi, se);
        // dQ = scale dS K; dK += scale dS^T Q.
        float *dqf;
        if constexpr (isF32)
          dqf = dq + (qh * t + i0) * d;
        else
          dqf = dqs;
        gemm(false, false, bi, d, se, at.scale, dp.get(), se, kf, d, 0.0f, dqf,
             d);
        if constexpr (!isF32)
          f32ToBf16(dqs, dq + (qh * t + i0) * d, bi * d);
        gemm(true, false, se, d, bi, at.scale, dp.get(), se, qf, d, 1.0f, dka,
             d);
      }
      if constexpr (!isF32) {
        if (groups == 1) {
          f32ToBf16(dka, dk + h * s * d, s * d);
          f32ToBf16(dva, dv + h * s * d, s * d);
        }
      }
    });
  }

  if (groups > 1) {
    // dK, dV of head h = the sum of its groups' partials, in group order.
    parallelFor(kvHeads * s, groups * d * 2, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> row = scratchF32(2 * d);
      for (int64_t r = r0; r < r1; ++r)
        sumPartials(partial.get(), r / s, r % s, groups, s, d, row.get(),
                    dk + r * d, dv + r * d);
    });
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

} // namespace

extern "C" void zrt_causal_mask(zrt_dtype dtype, const void *x, void *y,
                                int64_t batch, int64_t t, int64_t s,
                                zrt_mask_fill fill) {
  checkMaskFill("zrt_causal_mask", fill);
  checkNonNegative("zrt_causal_mask", "batch", batch);
  checkNonNegative("zrt_causal_mask", "t", t);
  checkNonNegative("zrt_causal_mask", "s", s);
  dispatchFloat("zrt_causal_mask", dtype, [&](auto tag) {
    using T = decltype(tag);
    T masked;
    fromF32(fill == ZRT_MASK_ZERO ? 0.0f : -__builtin_inff(), masked);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    parallelFor(batch * t, s, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t keep = std::min(r % t + 1, s);
        if (xt != yt)
          std::memcpy(yt + r * s, xt + r * s, keep * sizeof(T));
        std::fill(yt + r * s + keep, yt + (r + 1) * s, masked);
      }
    });
  });
}

namespace {

/// zrt_dropout's arguments, for the probabilities of zrt_attention_dropout.
struct DropoutArgs {
  int64_t inner, rows, rowOffset, globalRows;
  double p;
  uint64_t seed;
  int64_t step;
};

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

void setDropout(Attention &at, const DropoutArgs *dr) {
  if (!dr)
    return;
  at.dropout = true;
  at.threshold = zeroc::random::dropoutThreshold(dr->p);
  at.keepScale = static_cast<float>(1.0 / (1.0 - dr->p));
  at.seed = dr->seed;
  at.step = static_cast<uint64_t>(dr->step);
  at.inner = dr->inner;
  at.rows = dr->rows;
  at.rowOffset = dr->rowOffset;
  at.globalRows = dr->globalRows;
}

void attention(const char *kernel, zrt_dtype dtype, const void *q,
               const void *k, const void *v, void *out, int64_t bh,
               int64_t group, int64_t t, int64_t s, int64_t d, double scale,
               const zrt_attention_mask &mask, const DropoutArgs *dr) {
  // By reference: the mask's bits are checked before it is read as the
  // enum (a value outside it is an error, not undefined behaviour).
  checkAttentionMask(kernel, mask);
  checkAttention(kernel, bh, group, t, s, d);
  if (dr)
    checkDropout(kernel, *dr, bh * t * s);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (bh == 0 || t == 0 || d == 0)
      return;
    if (s == 0) { // softmax over no keys: the empty sum
      parallelZero(out, static_cast<size_t>(bh * t * d) * sizeof(T));
      return;
    }
    Attention at{bh, group, t, s, d, static_cast<float>(scale),
                 mask == ZRT_ATTENTION_CAUSAL};
    setDropout(at, dr);
    attentionForward(at, static_cast<const T *>(q), static_cast<const T *>(k),
                     static_cast<const T *>(v), static_cast<T *>(out));
  });
}

void attentionGrad(const char *kernel, zrt_dtype dtype, const void *dout,
                   const void *q, const void *k, const void *v, void *dq,
                   void *dk, void *dv, int64_t bh, int64_t group, int64_t t,
                   int64_t s, int64_t d, double scale,
                   const zrt_attention_mask &mask, const DropoutArgs *dr) {
  checkAttentionMask(kernel, mask);
  checkAttention(kernel, bh, group, t, s, d);
  if (dr)
    checkDropout(kernel, *dr, bh * t * s);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (bh == 0 || d == 0)
      return;
    if (t == 0 || s == 0) { // no scores: every cotangent is an empty sum
      parallelZero(dq, static_cast<size_t>(bh * t * d) * sizeof(T));
      parallelZero(dk, static_cast<size_t>(bh / group * s * d) * sizeof(T));
      parallelZero(dv, static_cast<size_t>(bh / group * s * d) * sizeof(T));
      return;
    }
    Attention at{bh, group, t, s, d, static_cast<float>(scale),
                 mask == ZRT_ATTENTION_CAUSAL};
    setDropout(at, dr);
    attentionBackward(at, static_cast<const T *>(dout),
                      static_cast<const T *>(q), static_cast<const T *>(k),
                      static_cast<const T *>(v), static_cast<T *>(dq),
                      static_cast<T *>(dk), static_cast<T *>(dv));
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
