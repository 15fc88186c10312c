//===- CpuBackend.cpp - the conformance suite on the CPU runtime's kernels ===//
//
// zeroc-rt-kernel-tests: Conformance.cpp's cases over host memory, linked
// with the CPU kernels alone (zeroc_rt_cpu_kernels) and FailStub.cpp's
// zrt_fail, plus what only the CPU kernels have: the accuracy of their
// fast exp, and matmul tiles small enough to cut every odd size.
//
//===----------------------------------------------------------------------===//

#include "Conformance.h"

#include "KernelsCommon.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace conformance {

const char *runtimeName() { return "cpu"; }

std::string describeDevice() {
  const char *threads = std::getenv("OMP_NUM_THREADS");
  return std::string("the CPU (OMP_NUM_THREADS=") + (threads ? threads : "") +
         ")";
}

void *deviceAlloc(size_t bytes) {
  size_t rounded = (bytes + 255) / 256 * 256;
  void *ptr = std::aligned_alloc(256, rounded ? rounded : 256);
  if (!ptr) {
    std::fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    std::exit(2);
  }
  return ptr;
}

void deviceFree(void *ptr) { std::free(ptr); }

void toDevice(void *dst, const void *src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void toHost(void *dst, const void *src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void deviceFill(void *dst, int value, size_t bytes) {
  std::memset(dst, value, bytes);
}

namespace {

/// Units in the last place of expNonPositive, as the kernels run it (the
/// vectorized clone for this CPU), against the correctly rounded f32 exp,
/// over every 97th f32 in [-87.3, 0].
void testExp() {
  std::vector<float> xs;
  uint32_t lo = 0x80000000u, hi;
  float loValue = -87.3f;
  std::memcpy(&hi, &loValue, 4);
  for (uint32_t bits = lo; bits <= hi; bits += 97) {
    float x;
    std::memcpy(&x, &bits, 4);
    xs.push_back(x);
  }
  std::vector<float> ys(xs.size());
  zeroc::rt::expRowForTesting(xs.data(), ys.data(),
                              static_cast<int64_t>(xs.size()));
  double worstUlp = 0;
  float at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double exact = std::exp(static_cast<double>(xs[i]));
    float rounded = static_cast<float>(exact);
    if (rounded < std::numeric_limits<float>::min())
      continue; // subnormal results: flushed to 0 below -87.34 only
    float ulp = std::nextafter(rounded, 2 * rounded + 1) - rounded;
    double err = std::fabs(ys[i] - exact) / ulp;
    if (err > worstUlp) {
      worstUlp = err;
      at = xs[i];
    }
  }
  checker.truth("expNonPositive accuracy", worstUlp <= 2.0,
                fmt("%zu arguments, max error %.3f ulp (at %.9g) over "
                    "[-87.3, 0]",
                    xs.size(), worstUlp, at));
  float special[4] = {-INFINITY, 0.0f, -200.0f, NAN}, out[4];
  zeroc::rt::expRowForTesting(special, out, 4);
  bool ok = out[0] == 0.0f && out[1] == 1.0f && out[2] == 0.0f &&
            std::isnan(out[3]) && zeroc::rt::expNonPositive(-INFINITY) == 0 &&
            zeroc::rt::expNonPositive(0.0f) == 1.0f;
  checker.truth("expNonPositive special values", ok,
                "exp(-inf) = 0, exp(0) = 1, exp(-200) = 0, exp(NaN) = NaN");
}

} // namespace

void runtimeSpecificTests() {
  testExp();
  // bf16 products run in output tiles with k in chunks: make them small
  // (5 x 7 outputs, k chunks of 4) to cut every odd size unevenly.
  zeroc::rt::setMatmulTilesForTesting(5, 7, 4);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      testMatmul(ZRT_BF16, 2, 23, 13, 21, ta, tb, -1, -1, -1, 0,
                 " (5x7 tiles, k chunks of 4)");
      testMatmul(ZRT_BF16, 3, 7, 13, 5, ta, tb, 0, 13 * 5 + 1, 7 * 13 + 2, 0,
                 " (5x7 tiles, k chunks of 4, shared a)");
      // The bias preset into the f32 tile before the first chunk.
      testMatmul(ZRT_BF16, 2, 23, 13, 21, ta, tb, -1, -1, -1, 0,
                 " (5x7 tiles, k chunks of 4)", true);
    }
  zeroc::rt::setMatmulTilesForTesting(0, 0, 0);
}

} // namespace conformance
