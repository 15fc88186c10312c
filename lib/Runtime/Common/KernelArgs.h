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

#include <cstdint>

namespace zeroc::rt {

/// The name of a dtype for messages.
inline const char *dtypeName(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return "f32";
  case ZRT_BF16:
    return "bf16";
  case ZRT_I32:
    return "i32";
  case ZRT_I64:
    return "i64";
  }
  return "unknown";
}

/// Calls fn(float{}) or fn(uint16_t{}) (bf16 bit patterns) by `dtype`; any
/// other dtype fails naming the kernel.
template <typename Fn>
inline void dispatchFloat(const char *kernel, zrt_dtype dtype, Fn &&fn) {
  switch (dtype) {
  case ZRT_F32:
    fn(float{});
    return;
  case ZRT_BF16:
    fn(uint16_t{});
    return;
  default:
    zrt_fail("%s: unsupported dtype %s (%d); expected f32 or bf16", kernel,
             dtypeName(dtype), static_cast<int>(dtype));
  }
}

/// Calls fn(uintN_t{}) with the unsigned type of `dtype`'s element size:
/// for kernels that only move elements.
template <typename Fn>
inline void dispatchSize(const char *kernel, zrt_dtype dtype, Fn &&fn) {
  switch (dtype) {
  case ZRT_BF16:
    fn(uint16_t{});
    return;
  case ZRT_F32:
  case ZRT_I32:
    fn(uint32_t{});
    return;
  case ZRT_I64:
    fn(uint64_t{});
    return;
  }
  zrt_fail("%s: unknown dtype %d", kernel, static_cast<int>(dtype));
}

/// Fails unless `value` >= 0.
inline void checkNonNegative(const char *kernel, const char *what,
                             int64_t value) {
  if (value < 0)
    zrt_fail("%s: %s must be >= 0, got %lld", kernel, what,
             static_cast<long long>(value));
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

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_KERNELARGS_H
