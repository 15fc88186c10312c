/*===- cuda_bf16.h - bfloat16 as CUDA defines it, emulated -----------------===*
 *
 * Part of the CPU emulation of CUDA (docs/cuda.md): __nv_bfloat16 holds the
 * bit pattern; conversions from f32 round to nearest even (the _rn forms
 * and the default), NaN stays a quiet NaN, as the hardware's cvt.rn.bf16.f32.
 * Arithmetic goes through f32 and rounds back, as sm_90's bf16 instructions
 * do for one operation.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_CUDA_EMULATION_CUDA_BF16_H
#define ZEROC_CUDA_EMULATION_CUDA_BF16_H

#include "cuda_runtime.h"

#include <cstdint>

namespace zc_emu {
inline uint16_t bf16FromFloat(float value) {
  uint32_t u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16ToFloat(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}
/// Toward zero (truncation), for __float2bfloat16_rz.
inline uint16_t bf16FromFloatRz(float value) {
  uint32_t u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>(u >> 16);
}
} // namespace zc_emu

struct __nv_bfloat16_raw {
  unsigned short x;
};

struct alignas(2) __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(zc_emu::bf16FromFloat(f)) {}
  __nv_bfloat16(double f) : __x(zc_emu::bf16FromFloat(static_cast<float>(f))) {}
  __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}
  operator float() const { return zc_emu::bf16ToFloat(__x); }
  operator __nv_bfloat16_raw() const { return {__x}; }
};
typedef __nv_bfloat16 nv_bfloat16;

struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  return __nv_bfloat16_raw{zc_emu::bf16FromFloatRz(f)};
}
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  return __nv_bfloat16_raw{bits};
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return {float(h.x), float(h.y)};
}
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(float(a) + float(b));
}
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(float(a) * float(b));
}
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(float(a) - float(b));
}
/* fma rounds once: the f32 fma of bf16 operands is exact in its product. */
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __nv_bfloat16(static_cast<float>(static_cast<double>(float(a)) *
                                              float(b) +
                                          float(c)));
}

#endif
