//===- Memory.cpp - zrt_alloc and zrt_free of the CPU runtime -------------===//
//
// 64-byte aligned host memory, reused by size: a training step allocates the
// same sizes in the same order every time, so after the first step every
// allocation is a reuse (no mmap/munmap and page faults per step). The
// accounting (Runtime.cpp) stays logical: bytes handed out, as the static
// report counts.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace zeroc::rt;

namespace {

/// Freed blocks by rounded size.
struct BlockPool {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> free;

  void *take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = free.find(rounded);
    if (it == free.end() || it->second.empty())
      return nullptr;
    void *ptr = it->second.back();
    it->second.pop_back();
    return ptr;
  }
  void give(void *ptr, size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex);
    free[rounded].push_back(ptr);
  }
};

BlockPool &pool() {
  static BlockPool *instance = new BlockPool; // never destroyed: no exit-order issues
  return *instance;
}

size_t roundedSize(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  return rounded == 0 ? 64 : rounded;
}

} // namespace

extern "C" void *zrt_alloc(size_t bytes, zrt_mem_category category) {
  checkCategory("zrt_alloc", category);
  // aligned_alloc wants a multiple of the alignment; never 0 bytes, so that
  // every allocation is a distinct pointer.
  size_t rounded = roundedSize(bytes);
  if (rounded < bytes)
    zrt_fail("zrt_alloc: %zu bytes of %s is too large", bytes,
             categoryName(category));
  void *ptr = pool().take(rounded);
  if (!ptr)
    ptr = std::aligned_alloc(64, rounded);
  if (!ptr)
    zrt_fail("zrt_alloc: out of memory allocating %zu bytes of %s (%s "
             "already in use in that category)",
             bytes, categoryName(category),
             humanBytes(zrt_mem_current(category)).c_str());
  countAllocation(category, bytes);
  return ptr;
}

extern "C" void zrt_free(void *ptr, size_t bytes, zrt_mem_category category) {
  checkCategory("zrt_free", category);
  if (!ptr)
    return;
  countFree(category, bytes);
  pool().give(ptr, roundedSize(bytes));
}
