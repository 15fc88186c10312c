//===- Preambles.cpp - the helpers each flavour of generated source starts with ===//
//
// The fused elementwise code calls small scalar functions (zc_gelu_tanh,
// zc_relu_grad, ...) by the same names on both targets; each preamble
// defines them for its compiler: branch-free, vectorizable host code for the
// CPU, __device__ functions for CUDA.
//
//===----------------------------------------------------------------------===//

#include "Preambles.h"

namespace zeroc::cpp {

const char *cpuPreamble() {
  return R"cpp(
#include "zeroc/Runtime/zrt.h"

#include <initializer_list>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* An array argument written in place: a pointer into an initializer list. */
#define ZC_LIST(T, ...) (std::initializer_list<T>{__VA_ARGS__}.begin())

/* Scalar functions of the fused elementwise loops. */
/* c ? a : b as a select of bits: GCC 12 does not vectorize a loop in which a
 * float ?: is followed by arithmetic that may trap (without
 * -fno-trapping-math) unless the target has AVX-512's masks. */
static inline float zc_select(int c, float a, float b) {
  uint32_t m = -(uint32_t)(c != 0), ab, bb;
  memcpy(&ab, &a, sizeof ab);
  memcpy(&bb, &b, sizeof bb);
  uint32_t r = (ab & m) | (bb & ~m);
  float out;
  memcpy(&out, &r, sizeof out);
  return out;
}
static inline float zc_relu(float x) { return zc_select(x > 0.0f, x, 0.0f); }
static inline float zc_relu_grad(float dy, float x) { return zc_select(x > 0.0f, dy, 0.0f); }
/* exp for the GELU and SiLU loops: range reduction to r in [-ln2/2, ln2/2]
 * and a degree-6 polynomial (relative error ~2e-7), branch-free and free of
 * libm calls so that the loops vectorize (libm's expf and tanhf do not, and
 * neither does floorf without -fno-trapping-math: GCC 12 keeps such loops
 * scalar; test/Target/Cpp/vectorized.test checks it, for AVX2 and for the
 * host). */
static inline float zc_exp(float x) {
  /* A NaN fails the first comparison and becomes -87: (int32_t)n below
   * must never see a NaN (undefined behaviour); the GELUs stay NaN through
   * their factor x. */
  x = zc_select(x > -87.0f, x, -87.0f);
  x = zc_select(x < 88.0f, x, 88.0f);
  /* n = x / ln2 rounded to the nearest integer: adding and subtracting
   * 1.5 * 2^23 rounds a float of magnitude under 2^22 (here under 128). */
  const float round = 12582912.0f;
  float n = (x * 1.4426950408889634f + round) - round;
  float r = fmaf(n, -0.693145751953125f, x);
  r = fmaf(n, -1.428606765330187e-06f, r);
  float p = 1.3888889e-3f;
  p = fmaf(p, r, 8.3333333e-3f);
  p = fmaf(p, r, 4.1666667e-2f);
  p = fmaf(p, r, 1.6666667e-1f);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  int32_t bits = ((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
/* tanh(u) = 1 - 2 / (exp(2u) + 1). */
static inline float zc_tanh(float u) { return 1.0f - 2.0f / (zc_exp(2.0f * u) + 1.0f); }
static inline float zc_gelu_tanh(float x) {
  const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
  return 0.5f * x * (1.0f + zc_tanh(c * (x + 0.044715f * x * x * x)));
}
static inline float zc_gelu_tanh_grad(float dy, float x) {
  const float c = 0.7978845608028654f;
  float t = zc_tanh(c * (x + 0.044715f * x * x * x));
  return dy * (0.5f * (1.0f + t) +
               0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x));
}
static inline float zc_gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}
static inline float zc_gelu_erf_grad(float dy, float x) {
  return dy * (0.5f * (1.0f + erff(x * 0.7071067811865476f)) +
               x * expf(-0.5f * x * x) * 0.3989422804014327f);
}
/* SiLU, x * sigmoid(x), and its cotangent dy * s * (1 + x * (1 - s)). */
static inline float zc_silu(float x) { return x / (1.0f + zc_exp(-x)); }
static inline float zc_silu_grad(float dy, float x) {
  float s = 1.0f / (1.0f + zc_exp(-x));
  return dy * s * (1.0f + x * (1.0f - s));
}
)cpp";
}

const char *cudaPreamble() {
  return R"cpp(
#include "zeroc/Runtime/zrt.h"

#include <cuda_runtime.h>
#include <initializer_list>
#include <math.h>
#include <stdint.h>

/* An array argument written in place: a pointer into an initializer list. */
#define ZC_LIST(T, ...) (std::initializer_list<T>{__VA_ARGS__}.begin())

/* bf16 bit patterns <-> f32 on the device, rounding to nearest even as
 * zrt_f32_to_bf16 does on the host. */
__device__ __forceinline__ float zc_bf16_to_f32(uint16_t v) {
  return __uint_as_float((uint32_t)v << 16);
}
__device__ __forceinline__ uint16_t zc_f32_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
    return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Scalar functions of the fused elementwise kernels. */
__device__ __forceinline__ float zc_relu(float x) { return x > 0.0f ? x : 0.0f; }
__device__ __forceinline__ float zc_relu_grad(float dy, float x) { return x > 0.0f ? dy : 0.0f; }
__device__ __forceinline__ float zc_gelu_tanh(float x) {
  const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
  return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float zc_gelu_tanh_grad(float dy, float x) {
  const float c = 0.7978845608028654f;
  float t = tanhf(c * (x + 0.044715f * x * x * x));
  return dy * (0.5f * (1.0f + t) +
               0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x));
}
__device__ __forceinline__ float zc_gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}
__device__ __forceinline__ float zc_gelu_erf_grad(float dy, float x) {
  return dy * (0.5f * (1.0f + erff(x * 0.7071067811865476f)) +
               x * expf(-0.5f * x * x) * 0.3989422804014327f);
}
__device__ __forceinline__ float zc_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float zc_silu_grad(float dy, float x) {
  float s = 1.0f / (1.0f + expf(-x));
  return dy * s * (1.0f + x * (1.0f - s));
}

/* A grid-stride loop with an index of type T: int32_t below 2^31 elements,
 * so that the broadcast index arithmetic needs no 64-bit division. */
#define ZC_FOR(T, i, n)                                                        \
  for (T i = (T)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                \
       i += (T)gridDim.x * blockDim.x)
)cpp";
}

} // namespace zeroc::cpp
