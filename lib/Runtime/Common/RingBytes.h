//===- RingBytes.h - the bytes a collective sends, as both runtimes count -*- C++ -*-===//
//
// zrt_comm_bytes_sent counts every collective by ring-algorithm accounting
// of the counts the program passes (n = the whole buffer, padding
// included): an all-reduce sends round(2(N-1)n/N) elements, a
// reduce-scatter or an all-gather round((N-1)n/N), times the element size.
// The CPU runtime (Cpu/Comm.cpp) and the CUDA runtime (Cuda/Comm.cu) both
// count with this function.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_RINGBYTES_H
#define ZEROC_LIB_RUNTIME_COMMON_RINGBYTES_H

#include "zeroc/Runtime/zrt.h"

#include <cstdint>

namespace zeroc::rt {

/// Bytes one rank of `ranks` sends in collective `kind` over `n` elements
/// of `dtype` (the whole buffer).
inline int64_t ringBytes(zrt_collective kind, int64_t n, int64_t ranks,
                         zrt_dtype dtype) {
  int64_t factor = kind == ZRT_ALL_REDUCE ? 2 : 1;
  int64_t numerator = factor * (ranks - 1) * n;
  int64_t elements = (2 * numerator + ranks) / (2 * ranks);
  return elements * static_cast<int64_t>(zrt_dtype_size(dtype));
}

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_RINGBYTES_H
