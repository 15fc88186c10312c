//===- KernelsLoss.cpp - cross-entropy over the last dimension ------------===//
//
// Per row: max, the max-subtracted exps summed (f32 lanes, blocks added in
// double), logsumexp = max + log(sum). The forward kernel keeps each row's
// loss in double and adds them in row order; the gradient is
// dloss / rows * (softmax - onehot) rounded once. Targets are checked
// before any parallel work. The _ex forms add ignore_index (rows whose
// target equals it count for nothing; the mean is over the others) and
// label smoothing (the loss (1 - e) * nll + e * mean over classes of
// -log p, the gradient softmax - (1 - e) * onehot - e / cols).
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

/// Checks the targets that are not ignored, as checkIds does.
void checkTargets(const char *kernel, const void *targets,
                  zrt_dtype targetDtype, int64_t rows, int64_t cols,
                  int hasIgnore, int64_t ignoreIndex) {
  if (!hasIgnore) {
    checkIds(kernel, "target", targets, targetDtype, rows, cols);
    return;
  }
  checkIds(kernel, "target", targets, targetDtype, 0, cols); // its dtype
  if (rows > 0 && !targets)
    zrt_fail("%s: target pointer is NULL", kernel);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t id = loadId(targets, targetDtype, r);
    if (id != ignoreIndex && (id < 0 || id >= cols))
      zrt_fail("%s: target %lld at position %lld is outside [0, %lld)",
               kernel, static_cast<long long>(id), static_cast<long long>(r),
               static_cast<long long>(cols));
  }
}

/// Rows whose target is not ignored.
int64_t countedRows(const void *targets, zrt_dtype targetDtype, int64_t rows,
                    int hasIgnore, int64_t ignoreIndex) {
  if (!hasIgnore)
    return rows;
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r)
    counted += loadId(targets, targetDtype, r) != ignoreIndex ? 1 : 0;
  return counted;
}

template <typename T>
ZRT_HOT void crossEntropyRowsEx(const T *logits, const void *targets,
                                zrt_dtype targetDtype, int hasIgnore,
                                int64_t ignoreIndex, double smoothing,
                                double *losses, int64_t r0, int64_t r1,
                                int64_t cols, float *scratch) {
  float *widened = scratch, *exps = scratch + cols;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t target = loadId(targets, targetDtype, r);
    if (hasIgnore && target == ignoreIndex) {
      losses[r] = 0;
      continue;
    }
    const float *xr = rowF32(logits + r * cols, widened, cols);
    float max = rowMax(xr, cols);
    double sum = expShiftedSum(xr, exps, cols, max);
    double all = 0;
    for (int64_t c = 0; c < cols; ++c)
      all += static_cast<double>(xr[c]);
    double logsumexp = static_cast<double>(max) + std::log(sum);
    losses[r] = logsumexp -
                (1.0 - smoothing) * static_cast<double>(xr[target]) -
                smoothing * all / static_cast<double>(cols);
  }
}

template <typename T>
ZRT_HOT void crossEntropyGradRowsEx(double coef, const T *logits,
                                    const void *targets, zrt_dtype targetDtype,
                                    int hasIgnore, int64_t ignoreIndex,
                                    double smoothing, T *dlogits, int64_t r0,
                                    int64_t r1, int64_t cols, float *scratch) {
  float *widened = scratch, *exps = scratch + cols;
  float uniform = static_cast<float>(smoothing / static_cast<double>(cols));
  for (int64_t r = r0; r < r1; ++r) {
    int64_t target = loadId(targets, targetDtype, r);
    T *out = dlogits + r * cols;
    if (hasIgnore && target == ignoreIndex) {
      for (int64_t c = 0; c < cols; ++c)
        fromF32(0.0f, out[c]);
      continue;
    }
    const float *xr = rowF32(logits + r * cols, widened, cols);
    float max = rowMax(xr, cols);
    double sum = expShiftedSum(xr, exps, cols, max);
    float inv = static_cast<float>(1.0 / sum);
    float scale = static_cast<float>(coef);
    for (int64_t c = 0; c < cols; ++c)
      fromF32((exps[c] * inv - uniform) * scale, out[c]);
    fromF32((exps[target] * inv - uniform -
             static_cast<float>(1.0 - smoothing)) *
                scale,
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

extern "C" void zrt_cross_entropy_ex(zrt_dtype dtype, const void *logits,
                                     const void *targets,
                                     zrt_dtype target_dtype, int64_t rows,
                                     int64_t cols, int has_ignore_index,
                                     int64_t ignore_index,
                                     double label_smoothing,
                                     const float *count, float *loss) {
  const char *kernel = "zrt_cross_entropy_ex";
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
  checkTargets(kernel, targets, target_dtype, rows, cols, has_ignore_index,
               ignore_index);
  int64_t counted =
      countedRows(targets, target_dtype, rows, has_ignore_index, ignore_index);
  float result = std::numeric_limits<float>::quiet_NaN(); // mean of nothing
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (counted == 0)
      return;
    std::vector<double> losses(rows);
    parallelFor(rows, cols * 5, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      crossEntropyRowsEx(static_cast<const T *>(logits), targets,
                         target_dtype, has_ignore_index, ignore_index,
                         label_smoothing, losses.data(), r0, r1, cols,
                         scratch.get());
    });
    double total = 0;
    for (double value : losses)
      total += value;
    result = static_cast<float>(
        total / (count ? static_cast<double>(*count)
                       : static_cast<double>(counted)));
  });
  // With a given count (the global batch's), a part with nothing counted
  // contributes 0, unless nothing counts globally either (0 / 0, NaN, as
  // PyTorch's mean).
  if (count && counted == 0 && *count != 0.0f)
    result = 0.0f;
  *loss = result;
}

extern "C" void zrt_cross_entropy_grad_ex(
    zrt_dtype dtype, const float *dloss, const void *logits,
    const void *targets, zrt_dtype target_dtype, void *dlogits, int64_t rows,
    int64_t cols, int has_ignore_index, int64_t ignore_index,
    double label_smoothing, const float *count) {
  const char *kernel = "zrt_cross_entropy_grad_ex";
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
  checkTargets(kernel, targets, target_dtype, rows, cols, has_ignore_index,
               ignore_index);
  int64_t counted =
      countedRows(targets, target_dtype, rows, has_ignore_index, ignore_index);
  // With nothing counted every row is ignored, and every gradient 0.
  double divisor =
      count ? static_cast<double>(*count) : static_cast<double>(counted);
  double coef =
      counted == 0 ? 0.0 : static_cast<double>(*dloss) / divisor;
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(rows, cols * 4, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      crossEntropyGradRowsEx(coef, static_cast<const T *>(logits), targets,
                             target_dtype, has_ignore_index, ignore_index,
                             label_smoothing, static_cast<T *>(dlogits), r0,
                             r1, cols, scratch.get());
    });
  });
}

extern "C" void zrt_count_targets(const void *targets, zrt_dtype target_dtype,
                                  int64_t n, int64_t ignore_index,
                                  float *count) {
  const char *kernel = "zrt_count_targets";
  checkNonNegative(kernel, "n", n);
  checkIds(kernel, "target", targets, target_dtype, 0, 0); // its dtype
  if (n > 0 && !targets)
    zrt_fail("%s: target pointer is NULL", kernel);
  *count = static_cast<float>(
      countedRows(targets, target_dtype, n, 1, ignore_index));
}
