//===- Memory.cpp - zrt_alloc and zrt_free of the CPU runtime -------------===//
//
// 64-byte aligned host memory, reused by size: a training step allocates the
// same sizes in the same order every time, so after the first step every
// allocation is a reuse (no mmap/munmap and page faults per step). The
// accounting (Runtime.cpp) stays logical: bytes handed out, as the static
// report counts.
//
// Since no block is ever given back to the system, new blocks are carved end
// to end out of large chunks mapped 2 MiB aligned and advised
// MADV_HUGEPAGE, so that the kernel backs them with transparent huge pages
// in its default `madvise` mode: the GEMMs and the optimizer stream through
// the flat parameter, gradient and moment buffers and the activations, and
// with 4 KiB pages every GEMM panel spans hundreds of pages (TLB misses).
// On the 6-layer GPT-2 of docs/benchmarks.md ("Where the stage-0 step goes
// against the GEMM bound") the AdamW update runs about 3% faster; the
// step's change was below that machine's noise. Carving
// (instead of rounding each block up to whole huge pages) keeps the
// resident memory what it was. Where THP is off, or not on Linux, the advice
// fails or is absent and the chunks are ordinary memory; under
// AddressSanitizer every block stays its own aligned_alloc, with redzones.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#if defined(__linux__)
#include <sys/mman.h>
#endif
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

// AddressSanitizer: GCC defines __SANITIZE_ADDRESS__, Clang answers
// __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define ZRT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZRT_ASAN 1
#endif
#endif

#if defined(__linux__) && !defined(ZRT_ASAN)
#define ZRT_HUGE_PAGE_ARENA 1
#endif

#ifdef ZRT_HUGE_PAGE_ARENA
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kChunk = size_t(32) << 20;

/// `bytes` (a multiple of kHugePage) of fresh zeroed memory at a 2 MiB
/// boundary, advised MADV_HUGEPAGE; null when the mapping fails.
char *mapHuge(size_t bytes) {
  size_t span = bytes + kHugePage;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  // The unaligned head and the tail beyond `bytes` go back.
  if (aligned > start)
    munmap(raw, aligned - start);
  if (start + span > aligned + bytes)
    munmap(reinterpret_cast<void *>(aligned + bytes),
           start + span - (aligned + bytes));
  // Only a hint: EINVAL where the kernel has no THP, which changes nothing.
  (void)madvise(reinterpret_cast<void *>(aligned), bytes, MADV_HUGEPAGE);
  return reinterpret_cast<char *>(aligned);
}

/// New blocks, carved end to end out of huge-page chunks. A block larger
/// than a chunk gets a mapping of its own; when a block does not fit in what
/// is left of the current chunk, the rest of that chunk stays unused (never
/// touched, so never resident).
struct Arena {
  std::mutex mutex;
  char *next = nullptr;
  size_t left = 0;

  void *take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex);
    if (rounded <= left) {
      void *ptr = next;
      next += rounded;
      left -= rounded;
      return ptr;
    }
    size_t whole = (rounded + kHugePage - 1) / kHugePage * kHugePage;
    if (whole >= kChunk)
      return mapHuge(whole);
    char *chunk = mapHuge(kChunk);
    if (!chunk)
      return nullptr;
    next = chunk + rounded;
    left = kChunk - rounded;
    return chunk;
  }
};

Arena &arena() {
  static Arena *instance = new Arena; // never destroyed, like the pool
  return *instance;
}
#endif

void *newBlock(size_t rounded) {
#ifdef ZRT_HUGE_PAGE_ARENA
  return arena().take(rounded);
#else
  return std::aligned_alloc(64, rounded);
#endif
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
    ptr = newBlock(rounded);
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
