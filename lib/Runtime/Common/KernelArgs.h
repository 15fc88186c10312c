//===- KernelArgs.h - argument checks and dtype dispatch of the kernels -*- C++ -*-===//
//
// Host code shared by the CPU kernels (lib/Runtime/Cpu/Kernels*.cpp) and the
// CUDA kernels' host wrappers (lib/Runtime/Cuda/Kernels*.cu): both check
// zrt.h's arguments the same way and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_KERNELARGS_H
#define ZEROC_LIB_RUNTIME_COMMON_KERNELARGS_H

#include "zeroc/Runtime/zrt.h"

#include <cstring>

#include <cmath>
#include <cstdint>

namespace zeroc::rt {

/// The name of a dtype for messages (zrt.h's table).
inline const char *dtypeName(zrt_dtype dtype) { return zrt_dtype_name(dtype); }

/// Calls fn(C_TYPE{}) with the storage type of `dtype` when the table says
/// it is a float (f32: float, bf16: uint16_t bit patterns); any other dtype
/// fails naming the kernel.
template <typename Fn>
inline void dispatchFloat(const char *kernel, zrt_dtype dtype, Fn &&fn) {
  switch (dtype) {
#define ZRT_DISPATCH_FLOAT_(e, value, ctype, bytes, name, is_float)           \
  case e:                                                                      \
    if constexpr (is_float) {                                                  \
      fn(ctype{});                                                             \
      return;                                                                  \
    }                                                                          \
    break;
    ZRT_DTYPES(ZRT_DISPATCH_FLOAT_)
#undef ZRT_DISPATCH_FLOAT_
  }
  zrt_fail("%s: unsupported dtype %s (%d); expected f32 or bf16", kernel,
           dtypeName(dtype), static_cast<int>(dtype));
}

/// The unsigned integer of `Bytes` bytes.
template <int Bytes> struct UnsignedOfSize;
template <> struct UnsignedOfSize<1> { using type = uint8_t; };
template <> struct UnsignedOfSize<2> { using type = uint16_t; };
template <> struct UnsignedOfSize<4> { using type = uint32_t; };
template <> struct UnsignedOfSize<8> { using type = uint64_t; };

/// Calls fn(uintN_t{}) with the unsigned type of `dtype`'s element size:
/// for kernels that only move elements.
template <typename Fn>
inline void dispatchSize(const char *kernel, zrt_dtype dtype, Fn &&fn) {
  switch (dtype) {
#define ZRT_DISPATCH_SIZE_(e, value, ctype, bytes, name, is_float)            \
  case e:                                                                      \
    static_assert(sizeof(ctype) == bytes, "zrt.h's dtype table");              \
    fn(typename UnsignedOfSize<bytes>::type{});                                \
    return;
    ZRT_DTYPES(ZRT_DISPATCH_SIZE_)
#undef ZRT_DISPATCH_SIZE_
  }
  zrt_fail("%s: unknown dtype %d", kernel, static_cast<int>(dtype));
}

/// Fails unless `value` is one of an enum's `count` values 0, 1, ...
/// (`choices` names them).
inline void checkChoice(const char *kernel, const char *what, int value,
                        int count, const char *choices) {
  if (value < 0 || value >= count)
    zrt_fail("%s: %s must be %s, got %d", kernel, what, choices, value);
}

/// The bits of an enum argument, read without loading it as the enum: a C
/// caller may pass any int, and in C++ loading a value outside the
/// enumerators is undefined behaviour (UBSan's enum check). Take the
/// argument by reference, check it, then use it.
template <typename Enum> inline int enumBits(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int), "zrt.h's enums are ints");
  int bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline void checkTrans(const char *kernel, const char *what,
                       const zrt_trans &trans) {
  checkChoice(kernel, what, enumBits(trans), 2,
              "ZRT_NO_TRANS (0) or ZRT_TRANS (1)");
}

inline void checkAttentionMask(const char *kernel,
                               const zrt_attention_mask &mask) {
  checkChoice(kernel, "mask", enumBits(mask), 2,
              "ZRT_ATTENTION_FULL (0) or ZRT_ATTENTION_CAUSAL (1)");
}

inline void checkMaskFill(const char *kernel, const zrt_mask_fill &fill) {
  checkChoice(kernel, "fill", enumBits(fill), 2,
              "ZRT_MASK_NEG_INF (0) or ZRT_MASK_ZERO (1)");
}

/// Fails unless `value` >= 0.
inline void checkNonNegative(const char *kernel, const char *what,
                             int64_t value) {
  if (value < 0)
    zrt_fail("%s: %s must be >= 0, got %lld", kernel, what,
             static_cast<long long>(value));
}

/// A row kernel's rows and columns (zrt_layernorm, zrt_softmax,
/// zrt_rmsnorm, zrt_rope, ...) are >= 0.
inline void checkRows(const char *kernel, int64_t rows, int64_t cols) {
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
}

/// zrt_rope's arguments, before its dtype is dispatched: rows and head
/// dimension >= 0 and the dimension even, positions and period >= 0, theta
/// finite and positive, style 0 (interleaved) or 1 (rotate_half).
inline void checkRopeArgs(const char *kernel, int64_t rows, int64_t d,
                          int64_t positions, int64_t period, double theta,
                          int style) {
  checkRows(kernel, rows, d);
  checkNonNegative(kernel, "positions", positions);
  checkNonNegative(kernel, "period", period);
  if (d % 2 != 0)
    zrt_fail("%s: the head dimension %lld is odd", kernel,
             static_cast<long long>(d));
  if (!(theta > 0.0) || !std::isfinite(theta))
    zrt_fail("%s: theta %g must be finite and positive", kernel, theta);
  if (style != 0 && style != 1)
    zrt_fail("%s: style %d is neither 0 (interleaved) nor 1 (rotate_half)",
             kernel, style);
}

/// zrt_rope_scaled's scaling: a finite positive factor; original 0 (none or
/// linear) or positive (llama3) with positive frequency factors, low below
/// high.
inline void checkRopeScaling(const char *kernel, double factor, double low,
                             double high, double original) {
  if (!(factor > 0.0) || !std::isfinite(factor))
    zrt_fail("%s: scaling factor %g must be finite and positive", kernel,
             factor);
  if (original == 0.0)
    return;
  if (!(original > 0.0) || !std::isfinite(original) || !(low > 0.0) ||
      !(low < high) || !std::isfinite(high))
    zrt_fail("%s: llama3 scaling needs 0 < low_freq_factor (%g) < "
             "high_freq_factor (%g) and a positive original context (%g)",
             kernel, low, high, original);
}

/// zrt_rope with rows to rotate needs a positive number of positions and
/// period (checked once the dtype is known to be valid).
inline void checkRopePositions(const char *kernel, int64_t rows,
                               int64_t positions, int64_t period) {
  if (positions <= 0 || period <= 0)
    zrt_fail("%s: %lld rows need positive positions and period", kernel,
             static_cast<long long>(rows));
}

/// zrt_matmul's sizes and strides are all >= 0.
inline void checkMatmulSizes(const char *kernel, int64_t batch, int64_t m,
                             int64_t n, int64_t k, int64_t stride_a,
                             int64_t stride_b, int64_t stride_c) {
  checkNonNegative(kernel, "batch", batch);
  checkNonNegative(kernel, "m", m);
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "k", k);
  checkNonNegative(kernel, "stride_a", stride_a);
  checkNonNegative(kernel, "stride_b", stride_b);
  checkNonNegative(kernel, "stride_c", stride_c);
}

/// zrt_matmul's batch of outputs do not overlap.
inline void checkMatmulOutputs(const char *kernel, int64_t batch, int64_t m,
                               int64_t n, int64_t stride_c) {
  if (batch > 1 && stride_c < m * n)
    zrt_fail("%s: stride_c %lld is less than m * n = %lld with batch %lld: "
             "the outputs would overlap",
             kernel, static_cast<long long>(stride_c),
             static_cast<long long>(m * n), static_cast<long long>(batch));
}

/// zrt_matmul_bias has a bias whenever it has outputs to compute.
inline void checkMatmulBias(const char *kernel, const void *bias, int64_t batch,
                            int64_t m, int64_t n) {
  if (!bias && batch > 0 && m > 0 && n > 0)
    zrt_fail("%s: NULL bias", kernel);
}

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_KERNELARGS_H
