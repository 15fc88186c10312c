//===- Memory.cu - zrt_alloc and zrt_free of the CUDA runtime -------------===//
//
// Stream-ordered device memory: cudaMallocAsync / cudaFreeAsync on the
// compute stream, from the device's default memory pool, whose release
// threshold Device.cu raised to UINT64_MAX. The pool therefore caches what
// it once reserved: a training step allocates the same sizes in the same
// order every step, so after the first one every allocation is a reuse, and
// a block freed on the compute stream is reused by the next allocation in
// stream order without the host waiting.
//
// The accounting (Runtime.cpp) is the CPU runtime's: bytes handed out, per
// category, current and peak. Allocations are rounded up to 64 bytes
// (never 0: every allocation is a distinct pointer); cudaMallocAsync
// aligns to at least 256.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include "Services.h"

#include <string>

using namespace zeroc::rt;
using namespace zeroc::rt::cuda;

extern "C" void *zrt_alloc(size_t bytes, zrt_mem_category category) {
  checkCategory("zrt_alloc", category);
  size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  if (rounded < bytes)
    zrt_fail("zrt_alloc: %zu bytes of %s is too large", bytes,
             categoryName(category));
  void *ptr = nullptr;
  cudaError_t status = cudaMallocAsync(&ptr, rounded, computeStream());
  if (status == cudaErrorMemoryAllocation || (status == cudaSuccess && !ptr)) {
    (void)cudaGetLastError(); // not sticky; clear it anyway
    size_t freeBytes = 0, totalBytes = 0;
    (void)cudaMemGetInfo(&freeBytes, &totalBytes);
    uint64_t reserved = 0;
    (void)cudaMemPoolGetAttribute(memoryPool(),
                                  cudaMemPoolAttrReservedMemCurrent, &reserved);
    zrt_fail("zrt_alloc: out of GPU memory allocating %s (%zu bytes) of %s "
             "on GPU %d: %s already in use in that category, %s by zrt_alloc "
             "in all; the memory pool holds %s; the device has %s free of %s",
             humanBytes(static_cast<int64_t>(bytes)).c_str(), bytes,
             categoryName(category), deviceOrdinal(),
             humanBytes(zrt_mem_current(category)).c_str(),
             humanBytes(totalAllocated()).c_str(),
             humanBytes(static_cast<int64_t>(reserved)).c_str(),
             humanBytes(static_cast<int64_t>(freeBytes)).c_str(),
             humanBytes(static_cast<int64_t>(totalBytes)).c_str());
  }
  if (status != cudaSuccess)
    zrt_fail("%s",
             cudaFailure(status, "zrt_alloc: cudaMallocAsync of " +
                                     std::to_string(bytes) + " bytes of " +
                                     categoryName(category))
                 .c_str());
  countAllocation(category, bytes);
  return ptr;
}

extern "C" void zrt_free(void *ptr, size_t bytes, zrt_mem_category category) {
  checkCategory("zrt_free", category);
  if (!ptr)
    return;
  ZRT_CUDA(cudaFreeAsync(ptr, computeStream()));
  countFree(category, bytes);
}
