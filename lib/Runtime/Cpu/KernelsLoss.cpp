//===- KernelsLoss.cpp - cross-entropy over the last dimension ------------===//
//
// Per row: max, the max-subtracted exps summed (f32 lanes, blocks added in
// double), logsumexp = max + log(sum). The forward kernel keeps each row's
// loss in double and adds them in row order; the gradient is
// dloss / rows * (softmax - onehot) rounded once. Targets are checked
// before any parallel work.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace zeroc::rt;

namespace {

template <typename T>
ZRT_HOT void crossEntropyRows(const T *logits, const void *targets,
                              zrt_dtype targetDtype, double *losses,
                              int64_t r0, int64_t r1, int64_t cols,
                              float *scratch) {
  float *widened = scratch, *exps = scratch + cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(logits + r * cols, widened, cols);
    float max = rowMax(xr, cols);
    double sum = expShiftedSum(xr, exps, cols, max);
    int64_t target = loadId(targets, targetDtype, r);
    losses[r] = static_cast<double>(max) + std::log(sum) -
                static_cast<double>(xr[target]);
  }
}

template <typename T>
ZRT_HOT void crossEntropyGradRows(float dloss, const T *logits,
                                  const void *targets, zrt_dtype targetDtype,
                                  T *dlogits, int64_t r0, int64_t r1,
                                  int64_t rows, int64_t cols, float *scratch) {
  float *widened = scratch, *exps = scratch + cols;
  double coef = static_cast<double>(dloss) / static_cast<double>(rows);
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(logits + r * cols, widened, cols);
    float max = rowMax(xr, cols);
    double sum = expShiftedSum(xr, exps, cols, max);
    float inv = static_cast<float>(1.0 / sum);
    float scale = static_cast<float>(coef / sum);
    int64_t target = loadId(targets, targetDtype, r);
    T *out = dlogits + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(exps[c] * scale, out[c]);
    // (p - 1) * coef at the target, from p itself rather than p * coef.
    fromF32((exps[target] * inv - 1.0f) * static_cast<float>(coef),
            out[target]);
  }
}

} // namespace

extern "C" void zrt_cross_entropy(zrt_dtype dtype, const void *logits,
                                  const void *targets, zrt_dtype target_dtype,
                                  int64_t rows, int64_t cols, float *loss) {
  const char *kernel = "zrt_cross_entropy";
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
  checkIds(kernel, "target", targets, target_dtype, rows, cols);
  float result = std::numeric_limits<float>::quiet_NaN(); // mean of nothing
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0)
      return;
    std::vector<double> losses(rows);
    parallelFor(rows, cols * 4, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      crossEntropyRows(static_cast<const T *>(logits), targets, target_dtype,
                       losses.data(), r0, r1, cols, scratch.get());
    });
    double total = 0;
    for (double loss : losses)
      total += loss;
    result = static_cast<float>(total / static_cast<double>(rows));
  });
  *loss = result;
}

extern "C" void zrt_cross_entropy_grad(zrt_dtype dtype, const float *dloss,
                                       const void *logits, const void *targets,
                                       zrt_dtype target_dtype, void *dlogits,
                                       int64_t rows, int64_t cols) {
  const char *kernel = "zrt_cross_entropy_grad";
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
  checkIds(kernel, "target", targets, target_dtype, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(rows, cols * 4, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      crossEntropyGradRows(*dloss, static_cast<const T *>(logits), targets,
                           target_dtype, static_cast<T *>(dlogits), r0, r1,
                           rows, cols, scratch.get());
    });
  });
}
