//===- KernelsCommon.cpp - out-of-line helpers of the CPU kernels ---------===//

#include "KernelsCommon.h"
#include "Progress.h"

#include <cblas.h>

namespace zeroc::rt {

// Progress.h: Comm.cpp counts the collectives and installs the hook.
std::atomic<int> collectivesInFlight{0};
void (*collectiveProgressHook)() = nullptr;

void checkIds(const char *kernel, const char *what, const void *ids,
              zrt_dtype idDtype, int64_t n, int64_t limit) {
  if (idDtype != ZRT_I32 && idDtype != ZRT_I64)
    zrt_fail("%s: %s dtype must be i32 or i64, got %s (%d)", kernel, what,
             dtypeName(idDtype), static_cast<int>(idDtype));
  if (n > 0 && !ids)
    zrt_fail("%s: %s pointer is NULL", kernel, what);
  // One pass that only detects, then a second that names the first culprit.
  bool bad = false;
  if (idDtype == ZRT_I32) {
    const int32_t *p = static_cast<const int32_t *>(ids);
    for (int64_t i = 0; i < n; ++i)
      bad |= p[i] < 0 || p[i] >= limit;
  } else {
    const int64_t *p = static_cast<const int64_t *>(ids);
    for (int64_t i = 0; i < n; ++i)
      bad |= p[i] < 0 || p[i] >= limit;
  }
  if (!bad)
    return;
  for (int64_t i = 0; i < n; ++i) {
    int64_t id = loadId(ids, idDtype, i);
    if (id < 0 || id >= limit)
      zrt_fail("%s: %s %lld at position %lld is outside [0, %lld)", kernel,
               what, static_cast<long long>(id), static_cast<long long>(i),
               static_cast<long long>(limit));
  }
}

BlasSingleThreaded::BlasSingleThreaded() : saved(openblas_get_num_threads()) {
  if (saved != 1)
    openblas_set_num_threads(1);
}

BlasSingleThreaded::~BlasSingleThreaded() {
  if (saved != 1)
    openblas_set_num_threads(saved);
}

ZRT_HOT double expRowForTesting(const float *x, float *y, int64_t n) {
  return expShiftedSum(x, y, n, 0.0f);
}

ZRT_HOT void bf16ToF32(const bf16 *src, float *dst, int64_t n) {
  loadRow(src, dst, n);
}

ZRT_HOT void f32ToBf16(const float *src, bf16 *dst, int64_t n) {
  storeRow(src, dst, n);
}

void parallelBf16ToF32(const bf16 *src, float *dst, int64_t n) {
  constexpr int64_t block = 1 << 14;
  parallelFor((n + block - 1) / block, block, [&](int64_t b0, int64_t b1) {
    int64_t end = std::min(n, b1 * block);
    bf16ToF32(src + b0 * block, dst + b0 * block, end - b0 * block);
  });
}

void parallelF32ToBf16(const float *src, bf16 *dst, int64_t n) {
  constexpr int64_t block = 1 << 14;
  parallelFor((n + block - 1) / block, block, [&](int64_t b0, int64_t b1) {
    int64_t end = std::min(n, b1 * block);
    f32ToBf16(src + b0 * block, dst + b0 * block, end - b0 * block);
  });
}

namespace {
constexpr size_t kCopyChunk = size_t{1} << 20; // bytes per task
}

void parallelCopy(void *dst, const void *src, size_t bytes) {
  if (bytes == 0 || dst == src)
    return;
  int64_t chunks = static_cast<int64_t>((bytes + kCopyChunk - 1) / kCopyChunk);
  char *d = static_cast<char *>(dst);
  const char *s = static_cast<const char *>(src);
  parallelFor(chunks, kParallelWork, [&](int64_t c0, int64_t c1) {
    size_t begin = static_cast<size_t>(c0) * kCopyChunk;
    size_t end = std::min(bytes, static_cast<size_t>(c1) * kCopyChunk);
    std::memcpy(d + begin, s + begin, end - begin);
  });
}

void parallelZero(void *dst, size_t bytes) {
  if (bytes == 0)
    return;
  int64_t chunks = static_cast<int64_t>((bytes + kCopyChunk - 1) / kCopyChunk);
  char *d = static_cast<char *>(dst);
  parallelFor(chunks, kParallelWork, [&](int64_t c0, int64_t c1) {
    size_t begin = static_cast<size_t>(c0) * kCopyChunk;
    size_t end = std::min(bytes, static_cast<size_t>(c1) * kCopyChunk);
    std::memset(d + begin, 0, end - begin);
  });
}

} // namespace zeroc::rt

using namespace zeroc::rt;

extern "C" void zrt_copy(void *dst, const void *src, size_t bytes) {
  parallelCopy(dst, src, bytes);
}

extern "C" void zrt_read_f32(float *host, const void *src, zrt_dtype dtype,
                             int64_t n) {
  checkNonNegative("zrt_read_f32", "n", n);
  dispatchFloat("zrt_read_f32", dtype, [&](auto tag) {
    using T = decltype(tag);
    loadRow(static_cast<const T *>(src), host, n);
  });
}
