//===- KernelsNorm.cpp - layernorm and softmax over the last dimension ----===//
//
// Row-wise kernels: each row is widened to f32 (bf16) or read in place
// (f32), its statistics (mean, variance, dot products) accumulated in double
// lanes, softmax's exps in f32 lanes over short blocks added in double, and
// the results written back rounded once. Rows run in
// parallel; the parameter gradients of layernorm are summed per fixed block
// of rows in double and the blocks added in order, so results do not depend
// on the thread count.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"

#include <cmath>
#include <type_traits>
#include <vector>

using namespace zeroc::rt;

namespace {

/// The mean of a row as hi + lo (hi = the f32 nearest the mean, lo the f32
/// nearest the rest), so that (x - hi) - lo is x - mean to within f32
/// rounding of the difference even when the mean is large; and
/// 1/sqrt(biased variance + eps), two-pass.
struct Moments {
  float hi, lo, rstd;
  float centered(float x) const { return (x - hi) - lo; }
};

ZRT_INLINE Moments rowMoments(const float *x, int64_t cols, double eps) {
  double m = rowSum(x, cols) / static_cast<double>(cols);
  Moments mo;
  mo.hi = static_cast<float>(m);
  mo.lo = static_cast<float>(m - static_cast<double>(mo.hi));
  double var = 0;
#pragma omp simd reduction(+ : var)
  for (int64_t i = 0; i < cols; ++i) {
    float d = mo.centered(x[i]);
    var += static_cast<double>(d * d);
  }
  var /= static_cast<double>(cols);
  mo.rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
  return mo;
}

template <typename T>
ZRT_HOT void layernormRows(const T *x, const float *w, const float *b, T *y,
                           int64_t r0, int64_t r1, int64_t cols, double eps,
                           float *scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(x + r * cols, scratch, cols);
    Moments mo = rowMoments(xr, cols, eps);
    T *yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(mo.centered(xr[c]) * mo.rstd * w[c] + b[c], yr[c]);
  }
}

/// dx for rows [r0, r1), and the rows' contributions to dweight and dbias
/// added to dw and db.
template <typename T>
ZRT_HOT void layernormGradRows(const T *dy, const T *x, const float *w, T *dx,
                               double *dw, double *db, int64_t r0, int64_t r1,
                               int64_t cols, double eps, float *scratch) {
  float *xs = scratch, *dys = scratch + cols, *xhat = scratch + 2 * cols,
        *g = scratch + 3 * cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(x + r * cols, xs, cols);
    const float *dyr = rowF32(dy + r * cols, dys, cols);
    Moments mo = rowMoments(xr, cols, eps);
    float rstd = mo.rstd;
    for (int64_t c = 0; c < cols; ++c) {
      xhat[c] = mo.centered(xr[c]) * rstd;
      g[c] = dyr[c] * w[c];
    }
    float meanG = static_cast<float>(rowSum(g, cols) / cols);
    float meanGX = static_cast<float>(rowDot(g, xhat, cols) / cols);
    for (int64_t c = 0; c < cols; ++c) {
      dw[c] += static_cast<double>(dyr[c] * xhat[c]);
      db[c] += static_cast<double>(dyr[c]);
    }
    T *dxr = dx + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(rstd * (g[c] - meanG - xhat[c] * meanGX), dxr[c]);
  }
}

template <typename T>
ZRT_HOT void softmaxRows(const T *x, T *y, int64_t r0, int64_t r1,
                         int64_t cols, float *scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(x + r * cols, scratch, cols);
    float max = rowMax(xr, cols);
    float *e;
    if constexpr (std::is_same_v<T, float>)
      e = y + r * cols; // exps straight into y (safe when y == x)
    else
      e = scratch; // widened row, overwritten in place
    float inv = static_cast<float>(1.0 / expShiftedSum(xr, e, cols, max));
    T *yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(e[c] * inv, yr[c]);
  }
}

template <typename T>
ZRT_HOT void softmaxGradRows(const T *dy, const T *y, T *dx, int64_t r0,
                             int64_t r1, int64_t cols, float *scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float *dyr = rowF32(dy + r * cols, scratch, cols);
    const float *yr = rowF32(y + r * cols, scratch + cols, cols);
    float dot = static_cast<float>(rowDot(dyr, yr, cols));
    T *dxr = dx + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(yr[c] * (dyr[c] - dot), dxr[c]);
  }
}

/// A [cols] vector of `T` widened to f32.
template <typename T>
std::vector<float> widen(const T *v, int64_t cols) {
  std::vector<float> out(cols);
  for (int64_t c = 0; c < cols; ++c)
    out[c] = toF32(v[c]);
  return out;
}

} // namespace

extern "C" void zrt_layernorm(zrt_dtype dtype, const void *x,
                              const void *weight, const void *bias, void *y,
                              int64_t rows, int64_t cols, double eps) {
  checkRows("zrt_layernorm", rows, cols);
  dispatchFloat("zrt_layernorm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    std::vector<float> w = widen(static_cast<const T *>(weight), cols);
    std::vector<float> b = widen(static_cast<const T *>(bias), cols);
    parallelFor(rows, cols, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(cols);
      layernormRows(static_cast<const T *>(x), w.data(), b.data(),
                    static_cast<T *>(y), r0, r1, cols, eps, scratch.get());
    });
  });
}

extern "C" void zrt_layernorm_grad(zrt_dtype dtype, const void *dy,
                                   const void *x, const void *weight,
                                   void *dx, void *dweight, void *dbias,
                                   int64_t rows, int64_t cols, double eps) {
  checkRows("zrt_layernorm_grad", rows, cols);
  dispatchFloat("zrt_layernorm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols == 0)
      return;
    std::vector<float> w = widen(static_cast<const T *>(weight), cols);
    // Fixed blocks of rows, each with its own dweight/dbias partial sums.
    int64_t perBlock = std::max<int64_t>(32, (rows + 63) / 64);
    int64_t blocks = rows == 0 ? 0 : (rows + perBlock - 1) / perBlock;
    std::vector<double> partial(static_cast<size_t>(blocks) * 2 * cols, 0.0);
    parallelTasks(blocks, perBlock * cols * 4, [&](int64_t blk) {
      std::unique_ptr<float[]> scratch = scratchF32(4 * cols);
      double *dw = partial.data() + blk * 2 * cols, *db = dw + cols;
      layernormGradRows(static_cast<const T *>(dy), static_cast<const T *>(x),
                        w.data(), static_cast<T *>(dx), dw, db,
                        blk * perBlock, std::min(rows, (blk + 1) * perBlock),
                        cols, eps, scratch.get());
    });
    T *dwOut = static_cast<T *>(dweight), *dbOut = static_cast<T *>(dbias);
    for (int64_t c = 0; c < cols; ++c) {
      double sw = 0, sb = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        sw += partial[blk * 2 * cols + c];
        sb += partial[blk * 2 * cols + cols + c];
      }
      fromF32(static_cast<float>(sw), dwOut[c]);
      fromF32(static_cast<float>(sb), dbOut[c]);
    }
  });
}

extern "C" void zrt_softmax(zrt_dtype dtype, const void *x, void *y,
                            int64_t rows, int64_t cols) {
  checkRows("zrt_softmax", rows, cols);
  dispatchFloat("zrt_softmax", dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(rows, cols * 4, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(cols);
      softmaxRows(static_cast<const T *>(x), static_cast<T *>(y), r0, r1, cols,
                  scratch.get());
    });
  });
}

extern "C" void zrt_softmax_grad(zrt_dtype dtype, const void *dy,
                                 const void *y, void *dx, int64_t rows,
                                 int64_t cols) {
  checkRows("zrt_softmax_grad", rows, cols);
  dispatchFloat("zrt_softmax_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(rows, cols * 2, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      softmaxGradRows(static_cast<const T *>(dy), static_cast<const T *>(y),
                      static_cast<T *>(dx), r0, r1, cols, scratch.get());
    });
  });
}
