//===- Runtime.cpp - errors, element sizes and accounted memory -----------===//
//
// zrt_fail, zrt_dtype_size and zrt_alloc/zrt_free with per-category current
// and peak byte counts, plus the process helpers of Services.h (agreeing on
// an error across ranks, exiting every rank cleanly).
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <atomic>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <mpi.h>

using namespace zeroc::rt;

//===----------------------------------------------------------------------===//
// Element sizes and errors
//===----------------------------------------------------------------------===//

// Weak: the kernel library may define it too; then its definition wins and
// the two never clash in the archive.
extern "C" __attribute__((weak)) size_t zrt_dtype_size(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
  case ZRT_I32:
    return 4;
  case ZRT_BF16:
    return 2;
  case ZRT_I64:
    return 8;
  }
  zrt_fail("zrt_dtype_size: unknown dtype %d", static_cast<int>(dtype));
}

namespace {

bool mpiIsUp() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

} // namespace

extern "C" void zrt_fail(const char *format, ...) {
  char message[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fflush(stdout);
  if (worldSize() > 1)
    std::fprintf(stderr, "zeroc: error: rank %d: %s\n", worldRank(), message);
  else
    std::fprintf(stderr, "zeroc: error: %s\n", message);
  std::fflush(stderr);
  if (mpiIsUp())
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {

std::atomic<int64_t> currentBytes[ZRT_MEM_CATEGORIES];
std::atomic<int64_t> peakBytes[ZRT_MEM_CATEGORIES];

const char *categoryName(int category) {
  static const char *names[] = {"parameters",       "gradients",
                                "optimizer_states", "gathered_parameters",
                                "gradient_buckets", "activations"};
  return category >= 0 && category < ZRT_MEM_CATEGORIES ? names[category] : "?";
}

void checkCategory(const char *function, zrt_mem_category category) {
  if (static_cast<int>(category) < 0 || category >= ZRT_MEM_CATEGORIES)
    zrt_fail("%s: unknown memory category %d", function,
             static_cast<int>(category));
}

} // namespace

namespace {
/// Freed blocks by rounded size. A training step allocates the same sizes
/// in the same order every time, so after the first step every allocation
/// is a reuse: no mmap/munmap and page faults per step. The accounting
/// stays logical (bytes handed out), as the static report counts.
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
             humanBytes(currentBytes[category].load()).c_str());
  int64_t now = currentBytes[category] += static_cast<int64_t>(bytes);
  int64_t peak = peakBytes[category].load();
  while (now > peak && !peakBytes[category].compare_exchange_weak(peak, now)) {
  }
  return ptr;
}

extern "C" void zrt_free(void *ptr, size_t bytes, zrt_mem_category category) {
  checkCategory("zrt_free", category);
  if (!ptr)
    return;
  currentBytes[category] -= static_cast<int64_t>(bytes);
  pool().give(ptr, roundedSize(bytes));
}

extern "C" int64_t zrt_mem_current(zrt_mem_category category) {
  checkCategory("zrt_mem_current", category);
  return currentBytes[category].load();
}

extern "C" int64_t zrt_mem_peak(zrt_mem_category category) {
  checkCategory("zrt_mem_peak", category);
  return peakBytes[category].load();
}

//===----------------------------------------------------------------------===//
// Process helpers
//===----------------------------------------------------------------------===//

namespace zeroc::rt {

int worldRank() {
  int rank = 0;
  if (mpiIsUp())
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 1;
  if (mpiIsUp())
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void exitAll(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpiIsUp()) {
    commFinalize();
    MPI_Finalize();
  }
  std::exit(status);
}

void failEverywhere(const std::string &message) {
  if (worldRank() == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "zeroc: error: %s\n", message.c_str());
  }
  exitAll(1);
}

void agree(const std::string &error) {
  int mine = error.empty() ? INT_MAX : worldRank();
  int first = mine;
  if (mpiIsUp())
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX)
    return;
  if (mine == first) {
    std::fflush(stdout);
    std::fprintf(stderr, "zeroc: error: %s\n", error.c_str());
  }
  exitAll(1);
}

std::string humanBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%" PRId64 " B", bytes);
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

} // namespace zeroc::rt
