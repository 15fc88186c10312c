//===- KernelsCommon.h - helpers shared by the CPU runtime kernels -*- C++ -*-===//
//
// Internal to lib/Runtime/Cpu/Kernels*.cpp: storage-type dispatch (f32 or
// bf16 bit patterns), row conversion to and from f32, a fast exp for the
// non-positive arguments of softmax-like kernels, summation helpers, and the
// OpenMP / OpenBLAS threading glue. docs/runtime-kernels.md explains the
// choices.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_CPU_KERNELSCOMMON_H
#define ZEROC_LIB_RUNTIME_CPU_KERNELSCOMMON_H

#include "zeroc/Runtime/zrt.h"

#include "../Common/KernelArgs.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include <omp.h>

namespace zeroc::rt {

/// Storage of a bf16 element: its bit pattern.
using bf16 = uint16_t;

/// Hot per-row loops are compiled for AVX-512 and AVX2 as well as the
/// baseline, and picked at load time (GCC function multiversioning), so the
/// library runs on any x86-64 and still vectorizes where the CPU can.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZRT_HOT                                                                \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",            \
                               "default")))
#else
#define ZRT_HOT
#endif

/// The row helpers below are called from ZRT_HOT kernels and must be
/// inlined into each clone: a helper the compiler keeps out of line is
/// compiled once, for the baseline (SSE2, no FMA), and the clone calling it
/// runs that code (layernorm's statistics did, at a seventh of
/// AVX-512's speed).
#if defined(__GNUC__)
#define ZRT_INLINE inline __attribute__((always_inline))
#else
#define ZRT_INLINE inline
#endif

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

inline float toF32(float value) { return value; }
inline float toF32(bf16 value) { return zrt_bf16_to_f32(value); }
inline void fromF32(float value, float &out) { out = value; }
inline void fromF32(float value, bf16 &out) { out = zrt_f32_to_bf16(value); }

/// dst[i] = f32(src[i]).
template <typename T>
ZRT_INLINE void loadRow(const T *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = toF32(src[i]);
}
/// dst[i] = T(src[i]), rounded to nearest even for bf16.
template <typename T>
ZRT_INLINE void storeRow(const float *src, T *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    fromF32(src[i], dst[i]);
}

/// A row as f32: `src` itself when T is float, else converted into `scratch`.
inline const float *rowF32(const float *src, float *, int64_t) { return src; }
ZRT_INLINE const float *rowF32(const bf16 *src, float *scratch, int64_t n) {
  loadRow(src, scratch, n);
  return scratch;
}

/// Reads integer id `i` of an i32 or i64 array.
inline int64_t loadId(const void *ids, zrt_dtype idDtype, int64_t i) {
  return idDtype == ZRT_I32 ? static_cast<const int32_t *>(ids)[i]
                            : static_cast<const int64_t *>(ids)[i];
}

/// Fails unless `idDtype` is i32 or i64 and every one of the `n` ids is in
/// [0, limit): "<kernel>: <what> <value> at position <i> is outside [0,
/// limit)". Runs before any parallel work, so zrt_fail is called from the
/// calling thread.
void checkIds(const char *kernel, const char *what, const void *ids,
              zrt_dtype idDtype, int64_t n, int64_t limit);

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

/// c ? a : b, as a select of the bits: GCC 12 does not vectorize a loop in
/// which a float ?: is followed by arithmetic that may trap, except in the
/// AVX-512 clone (its masks), so the AVX2 and baseline clones of every
/// loop over expNonPositive stayed scalar.
ZRT_INLINE float selectBits(bool c, float a, float b) {
  uint32_t m = 0u - static_cast<uint32_t>(c), ab, bb;
  std::memcpy(&ab, &a, sizeof(ab));
  std::memcpy(&bb, &b, sizeof(bb));
  uint32_t r = (ab & m) | (bb & ~m);
  float out;
  std::memcpy(&out, &r, sizeof(out));
  return out;
}

/// exp(x) for x <= 0 (and -inf, which gives 0; NaN stays NaN), written so
/// that loops over it vectorize: Cody-Waite range reduction x = n ln2 + r,
/// |r| <= ln2/2, a degree-6 polynomial for e^r (Cephes' expf coefficients)
/// and 2^n put into the exponent bits. Within 2 ulp of the correctly rounded
/// result on [-87.3, 0] (the tests measure it); below -87.3 the result, which
/// would be subnormal, is 0.
ZRT_INLINE float expNonPositive(float x) {
  const float lo = -87.3365f;
  float xc = selectBits(x < lo, lo, x); // NaN stays
  // fn = round(xc / ln2): adding 1.5 * 2^23 rounds, and leaves n in the
  // low bits of t (t's bits - 0x4B400000), so that no float-to-int
  // conversion (undefined for a NaN, and a possible trap that keeps GCC
  // from vectorizing) is needed.
  float t = xc * 1.44269504088896341f + 12582912.0f;
  float fn = t - 12582912.0f;
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n: n + 127 in the exponent field (unsigned arithmetic: a NaN's bits
  // give some finite or infinite scale, and the result is NaN through p).
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof(bits));
  bits = (bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return selectBits(x < lo, 0.0f, p * scale);
}

// The reductions below vectorize through `omp simd reduction` (compiled with
// -fopenmp), which lets the compiler keep one partial result per vector
// lane: the summation order depends on the vector width of the clone that
// runs (ZRT_HOT), never on the thread count.

/// Largest of x[0..n) (-inf for n == 0; NaNs are skipped).
ZRT_INLINE float rowMax(const float *x, int64_t n) {
  float m = -__builtin_inff();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i)
    m = x[i] > m ? x[i] : m;
  return m;
}

/// Sum of x[0..n), accumulated in double (statistics such as a layernorm
/// mean, where f32 partial sums would lose digits to a large offset).
ZRT_INLINE double rowSum(const float *x, int64_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(x[i]);
  return sum;
}

/// Sum of x[i] * y[i]: f32 products accumulated in double.
ZRT_INLINE double rowDot(const float *x, const float *y, int64_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(x[i] * y[i]);
  return sum;
}

/// y[i] = exp(x[i] - shift) for x[i] <= shift; returns their sum, in f32
/// over blocks of 256 terms (each in [0, 1]) whose sums are added in double.
/// y may be x.
ZRT_INLINE double expShiftedSum(const float *x, float *y, int64_t n, float shift) {
  double total = 0;
  for (int64_t b = 0; b < n; b += 256) {
    int64_t e = std::min<int64_t>(n, b + 256);
    float block = 0;
#pragma omp simd reduction(+ : block)
    for (int64_t i = b; i < e; ++i) {
      float v = expNonPositive(x[i] - shift);
      y[i] = v;
      block += v;
    }
    total += block;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Threading
//===----------------------------------------------------------------------===//

/// Below this many elements touched (or flops / 8), a kernel stays on the
/// calling thread: an OpenMP fork-join costs a few microseconds.
constexpr int64_t kParallelWork = 1 << 15;

inline int maxThreads() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

/// Runs fn(begin, end) over [0, n) in one contiguous range per thread, or on
/// the calling thread when n * workPerItem < kParallelWork. fn must not
/// depend on how the range is cut (every kernel's results are independent of
/// the thread count).
template <typename Fn>
inline void parallelFor(int64_t n, int64_t workPerItem, Fn &&fn) {
  if (n <= 0)
    return;
  int threads = maxThreads();
  if (threads <= 1 || n == 1 || n * std::max<int64_t>(workPerItem, 1) <
                                    kParallelWork) {
    fn(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(n, threads);
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
  for (int64_t c = 0; c < chunks; ++c)
    fn(n * c / chunks, n * (c + 1) / chunks);
}

/// Runs fn(item) for every item in [0, n), handed out dynamically (for
/// tasks of uneven cost), or on the calling thread when the work is small.
template <typename Fn>
inline void parallelTasks(int64_t n, int64_t workPerItem, Fn &&fn) {
  if (n <= 0)
    return;
  int threads = maxThreads();
  if (threads <= 1 || n == 1 ||
      n * std::max<int64_t>(workPerItem, 1) < kParallelWork) {
    for (int64_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1)                                  \
    num_threads(std::min<int64_t>(n, threads))
  for (int64_t i = 0; i < n; ++i)
    fn(i);
}

/// While alive, OpenBLAS runs every call on its calling thread: for GEMMs
/// issued from inside an OpenMP parallel region (one per task), which must
/// not each fork OpenBLAS's own thread pool. Kernels are called from one
/// thread per rank, so flipping the global setting is safe.
class BlasSingleThreaded {
public:
  BlasSingleThreaded();
  ~BlasSingleThreaded();
  BlasSingleThreaded(const BlasSingleThreaded &) = delete;
  BlasSingleThreaded &operator=(const BlasSingleThreaded &) = delete;

private:
  int saved;
};

/// Uninitialized f32 scratch owned by the caller (no zeroing pass).
inline std::unique_ptr<float[]> scratchF32(int64_t n) {
  return std::unique_ptr<float[]>(new float[std::max<int64_t>(n, 1)]);
}

/// Conversions of n contiguous elements (vectorized, on the calling thread).
void bf16ToF32(const bf16 *src, float *dst, int64_t n);
void f32ToBf16(const float *src, bf16 *dst, int64_t n);
/// The same, split across threads when large.
void parallelBf16ToF32(const bf16 *src, float *dst, int64_t n);
void parallelF32ToBf16(const float *src, bf16 *dst, int64_t n);

/// For tests: y[i] = exp(x[i]) for x[i] <= 0 through expShiftedSum, in the
/// clone (AVX-512, AVX2 or baseline) that the kernels run on this CPU.
double expRowForTesting(const float *x, float *y, int64_t n);

/// For tests: the largest output tile (mc x nc) and k chunk (kc) of a bf16
/// zrt_matmul task; mc <= 0 restores the defaults (256, 512, 1024).
void setMatmulTilesForTesting(int64_t mc, int64_t nc, int64_t kc);

/// memcpy of `bytes`, split across threads when large.
void parallelCopy(void *dst, const void *src, size_t bytes);
/// memset to zero of `bytes`, split across threads when large.
void parallelZero(void *dst, size_t bytes);

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_CPU_KERNELSCOMMON_H
