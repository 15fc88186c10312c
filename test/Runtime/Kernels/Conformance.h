//===- Conformance.h - the kernel conformance suite's framework -*- C++ -*-===//
//
// One set of cases (Conformance.cpp) checks zrt.h's kernels against
// double-precision references and finite differences, whichever runtime
// implements them. The cases see only zrt.h and the Backend below, which
// says where the kernels' memory lives: host memory for the CPU runtime
// (CpuBackend.cpp, zeroc-rt-kernel-tests, run by the suite) or device
// memory for the CUDA runtime (CudaBackend.cu, zeroc-rt-cuda-kernel-tests,
// run on a GPU machine by scripts/gpu/run.sh).
//
// Each check prints one line, "PASS" or "FAIL", what it compared and its
// largest error; the last lines are a digest of every output read back
// (FNV-1a; bitwise the same for any OMP_NUM_THREADS on the CPU) and
// "kernel tests (RUNTIME): N checks, N passed, N failed".
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_TEST_RUNTIME_KERNELS_CONFORMANCE_H
#define ZEROC_TEST_RUNTIME_KERNELS_CONFORMANCE_H

#include "zeroc/Runtime/zrt.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace conformance {

//===----------------------------------------------------------------------===//
// What each runtime's backend provides
//===----------------------------------------------------------------------===//

/// "cpu" or "cuda".
const char *runtimeName();
/// A line describing where the kernels run (the CPU, a GPU's name).
std::string describeDevice();
/// Memory the kernels read and write: 256-byte aligned, `bytes` > 0 or not.
void *deviceAlloc(size_t bytes);
void deviceFree(void *ptr);
/// Copies, ordered with the kernels (they complete before returning).
void toDevice(void *dst, const void *src, size_t bytes);
void toHost(void *dst, const void *src, size_t bytes);
/// Every byte of [dst, dst + bytes) set to `value`.
void deviceFill(void *dst, int value, size_t bytes);
/// Checks only this runtime has (its internal helpers, its opt-in kernels).
void runtimeSpecificTests();

//===----------------------------------------------------------------------===//
// The framework
//===----------------------------------------------------------------------===//

using Vec = std::vector<double>;

/// splitmix64: deterministic inputs.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform();
  double normal();
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % n); }
};

std::string fmt(const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

const char *name(zrt_dtype dtype);
/// x as stored in `dtype` and read back.
double roundTo(zrt_dtype dtype, double x);

/// A tensor of n elements of `dtype` in the kernels' memory (optionally
/// `offset` elements past an aligned allocation, for the unaligned paths),
/// and its values on the host as doubles, `v`.
struct Tensor {
  zrt_dtype dtype;
  int64_t n;
  Vec v;
  char *base = nullptr;
  void *dev = nullptr;

  Tensor(zrt_dtype dtype, int64_t n, int64_t offset = 0);
  ~Tensor();
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  Tensor(Tensor &&o) noexcept;

  size_t bytes() const { return static_cast<size_t>(n) * zrt_dtype_size(dtype); }
  void set(int64_t i, double x) { v[i] = roundTo(dtype, x); }
  void fillNormal(Rng &rng, double mean = 0.0, double std = 1.0);
  /// `v` into the kernels' memory.
  void upload();
  /// NaN everywhere (0xff bytes), to catch elements a kernel does not write.
  void poison();
  /// The kernels' memory as doubles (absorbed into the digest).
  Vec download() const;
  float *f32() { return static_cast<float *>(dev); }
};

/// Random ids in [0, limit) as an uploaded tensor of `dtype` (i32 or i64).
Tensor randomIds(zrt_dtype dtype, int64_t n, int64_t limit, Rng &rng);

/// One f32 scalar in the kernels' memory.
struct Scalar {
  float *dev = nullptr;
  Scalar();
  explicit Scalar(float value);
  ~Scalar();
  Scalar(const Scalar &) = delete;
  Scalar &operator=(const Scalar &) = delete;
  void set(float value);
  double get() const;
};

struct Checker {
  int checks = 0, failed = 0;
  uint64_t digest = 1469598103934665603ull; // FNV-1a over every output

  void absorb(const void *data, size_t bytes);
  bool record(bool ok, const std::string &what, const std::string &detail);
  /// |got - ref| <= rtol * |ref| + atol[i] for every element (a NaN passes
  /// only against a NaN, an infinity only against itself).
  bool close(const std::string &what, const Vec &got, const Vec &ref,
             double rtol, const Vec &atol);
  bool close(const std::string &what, const Vec &got, const Vec &ref,
             double rtol, double atol);
  /// Equal values (NaN equals NaN).
  bool exact(const std::string &what, const Vec &got, const Vec &ref);
  bool truth(const std::string &what, bool ok, const std::string &detail);
};

extern Checker checker;

/// The floating dtypes every float kernel takes.
extern const zrt_dtype kFloatTypes[2];

/// Relative tolerance of a result rounded to `dtype` (half an ulp is at
/// most 2^-8 relative for bf16) on top of `f32` for f32 arithmetic.
double rtolOf(zrt_dtype dtype, double f32);

/// Central differences d loss / d x_i over every element of x.
Vec finiteDiff(Vec x, const std::function<double(const Vec &)> &loss,
               double h);
/// An analytic gradient against finite differences: the tolerance is
/// relative to the gradient's largest entry.
void checkFd(const std::string &what, const Vec &analytic, const Vec &fd,
             double rel = 5e-3);

//===----------------------------------------------------------------------===//
// Cases that a backend's own checks run again in another configuration
//===----------------------------------------------------------------------===//

/// zrt_matmul (zrt_matmul_bias with `bias`: plus a vector of n added to
/// every row) against the double reference; strides of -1 are dense.
void testMatmul(zrt_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool ta, bool tb, int64_t sa = -1, int64_t sb = -1,
                int64_t sc = -1, int64_t offset = 0, const char *note = "",
                bool bias = false);
/// zrt_attention and zrt_attention_grad against the double reference;
/// `group` query heads per key/value head (grouped-query attention).
void testAttention(zrt_dtype dt, int64_t bh, int64_t t, int64_t s, int64_t d,
                   bool causal, const char *note = "", int64_t group = 1);

} // namespace conformance

#endif // ZEROC_TEST_RUNTIME_KERNELS_CONFORMANCE_H
