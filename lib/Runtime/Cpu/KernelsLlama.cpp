//===- KernelsLlama.cpp - RMSNorm, rotary embeddings, slices, dropout -----===//
//
// The kernels of Llama-class models (zrt.h): row-wise RMSNorm and its
// gradient in f32 with double statistics (bf16 rows widened first);
// rotary embeddings from a small table of angles computed per call in
// double (no cos/sin tensors in the program); static strided slices and
// their scatter-into-zeros gradient; dropout from the counter-based
// Philox generator of zeroc/Support/Random.h, which the evaluator and the
// CUDA kernels share. Results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "../Common/Shapes.h"
#include "KernelsCommon.h"

#include "zeroc/Support/Random.h"
#include "zeroc/Support/Rope.h"

#include <cmath>
#include <vector>

using namespace zeroc::rt;

namespace {

template <typename T> std::vector<float> widen(const T *v, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = toF32(v[i]);
  return out;
}

/// 1 / sqrt(mean(x^2) + eps) of a row, accumulated in double.
ZRT_INLINE float rowRrms(const float *x, int64_t cols, double eps) {
  double sum = rowDot(x, x, cols);
  return static_cast<float>(1.0 /
                            std::sqrt(sum / static_cast<double>(cols) + eps));
}

template <typename T>
ZRT_HOT void rmsnormRows(const T *x, const float *w, T *y, int64_t r0,
                         int64_t r1, int64_t cols, double eps, float *scratch) {
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(x + r * cols, scratch, cols);
    float rrms = rowRrms(xr, cols, eps);
    T *yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(xr[c] * rrms * w[c], yr[c]);
  }
}

/// dx of rows [r0, r1) and their dweight contributions added to dw:
/// with g = dy * w, dx = rrms * (g - x * rrms^2 * mean(g * x)).
template <typename T>
ZRT_HOT void rmsnormGradRows(const T *dy, const T *x, const float *w, T *dx,
                             double *dw, int64_t r0, int64_t r1, int64_t cols,
                             double eps, float *scratch) {
  float *xs = scratch, *dys = scratch + cols, *g = scratch + 2 * cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = rowF32(x + r * cols, xs, cols);
    const float *dyr = rowF32(dy + r * cols, dys, cols);
    float rrms = rowRrms(xr, cols, eps);
    for (int64_t c = 0; c < cols; ++c)
      g[c] = dyr[c] * w[c];
    float meanGX = static_cast<float>(rowDot(g, xr, cols) / cols);
    float k = rrms * rrms * meanGX;
    for (int64_t c = 0; c < cols; ++c)
      dw[c] += static_cast<double>(dyr[c] * xr[c] * rrms);
    T *dxr = dx + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(rrms * (g[c] - xr[c] * k), dxr[c]);
  }
}

/// Walks the row-major multi-indices of `sizes`, tracking the offset
/// sum(index[d] * strides[d]).
class StridedWalk {
public:
  StridedWalk(std::vector<int64_t> sizes, std::vector<int64_t> strides)
      : sizes(std::move(sizes)), strides(std::move(strides)),
        index(this->sizes.size(), 0) {}
  void seek(int64_t linear) {
    offset = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      index[d] = linear % sizes[d];
      linear /= sizes[d];
      offset += index[d] * strides[d];
    }
  }
  void next() {
    for (size_t d = sizes.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < sizes[d])
        return;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
  int64_t offset = 0;

private:
  std::vector<int64_t> sizes, strides;
  std::vector<int64_t> index;
};

/// The walk of a slice: its last dimension (of stride `inner`, a run of
/// `rowLen` elements), the other dimensions' strides in the input, and the
/// input offset of the first element. Checks the arguments.
struct SlicePlan {
  std::vector<int64_t> outerSizes, outerStrides;
  int64_t base = 0, rowLen = 1, rowStride = 1, rows = 1, numel = 1;
};

SlicePlan planSlice(const char *kernel, int rank, const int64_t *inShape,
                    const int64_t *offsets, const int64_t *strides,
                    const int64_t *outShape) {
  checkedNumel(kernel, rank, inShape);
  SlicePlan plan;
  plan.numel = checkedNumel(kernel, rank, outShape);
  if (rank > 0 && (!offsets || !strides))
    zrt_fail("%s: NULL offsets or strides", kernel);
  std::vector<int64_t> inStride(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    inStride[d] = inStride[d + 1] * inShape[d + 1];
  for (int d = 0; d < rank; ++d) {
    if (offsets[d] < 0 || strides[d] < 1 ||
        (outShape[d] > 0 &&
         (offsets[d] >= inShape[d] ||
          outShape[d] - 1 > (inShape[d] - 1 - offsets[d]) / strides[d])))
      zrt_fail("%s: dimension %d: %lld elements from offset %lld with stride "
               "%lld do not fit in %lld (input %s)",
               kernel, d, static_cast<long long>(outShape[d]),
               static_cast<long long>(offsets[d]),
               static_cast<long long>(strides[d]),
               static_cast<long long>(inShape[d]),
               formatShape(rank, inShape).c_str());
    plan.base += offsets[d] * inStride[d];
  }
  if (rank == 0)
    return plan;
  plan.rowLen = outShape[rank - 1];
  plan.rowStride = strides[rank - 1];
  for (int d = 0; d + 1 < rank; ++d) {
    plan.outerSizes.push_back(outShape[d]);
    plan.outerStrides.push_back(inStride[d] * strides[d]);
  }
  plan.rows = plan.rowLen == 0 ? 0 : plan.numel / plan.rowLen;
  return plan;
}

} // namespace

extern "C" void zrt_rmsnorm(zrt_dtype dtype, const void *x, const void *weight,
                            void *y, int64_t rows, int64_t cols, double eps) {
  checkRows("zrt_rmsnorm", rows, cols);
  dispatchFloat("zrt_rmsnorm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    std::vector<float> w = widen(static_cast<const T *>(weight), cols);
    parallelFor(rows, cols * 2, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(cols);
      rmsnormRows(static_cast<const T *>(x), w.data(), static_cast<T *>(y), r0,
                  r1, cols, eps, scratch.get());
    });
  });
}

extern "C" void zrt_rmsnorm_grad(zrt_dtype dtype, const void *dy, const void *x,
                                 const void *weight, void *dx, void *dweight,
                                 int64_t rows, int64_t cols, double eps) {
  checkRows("zrt_rmsnorm_grad", rows, cols);
  dispatchFloat("zrt_rmsnorm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols == 0)
      return;
    std::vector<float> w = widen(static_cast<const T *>(weight), cols);
    // Fixed blocks of rows with their own dweight partial sums, added in
    // order: the result does not depend on the thread count.
    int64_t perBlock = std::max<int64_t>(32, (rows + 63) / 64);
    int64_t blocks = rows == 0 ? 0 : (rows + perBlock - 1) / perBlock;
    std::vector<double> partial(static_cast<size_t>(blocks) * cols, 0.0);
    parallelTasks(blocks, perBlock * cols * 4, [&](int64_t blk) {
      std::unique_ptr<float[]> scratch = scratchF32(3 * cols);
      rmsnormGradRows(
          static_cast<const T *>(dy), static_cast<const T *>(x), w.data(),
          static_cast<T *>(dx), partial.data() + blk * cols, blk * perBlock,
          std::min(rows, (blk + 1) * perBlock), cols, eps, scratch.get());
    });
    T *dwOut = static_cast<T *>(dweight);
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (int64_t blk = 0; blk < blocks; ++blk)
        sum += partial[blk * cols + c];
      fromF32(static_cast<float>(sum), dwOut[c]);
    }
  });
}

extern "C" void zrt_rope(zrt_dtype dtype, const void *x, void *y, int64_t rows,
                         int64_t d, int64_t positions, int64_t period,
                         double theta, int style, int inverse) {
  zrt_rope_scaled(dtype, x, y, rows, d, positions, period, theta, style,
                  inverse, 1.0, 0.0, 0.0, 0.0);
}

extern "C" void zrt_rope_scaled(zrt_dtype dtype, const void *x, void *y,
                                int64_t rows, int64_t d, int64_t positions,
                                int64_t period, double theta, int style,
                                int inverse, double factor,
                                double low_freq_factor,
                                double high_freq_factor, double original) {
  const char *kernel = "zrt_rope";
  checkRopeArgs(kernel, rows, d, positions, period, theta, style);
  checkRopeScaling(kernel, factor, low_freq_factor, high_freq_factor,
                   original);
  zeroc::rope::Scaling scaling{factor, low_freq_factor, high_freq_factor,
                               original};
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || d == 0)
      return;
    checkRopePositions(kernel, rows, positions, period);
    int64_t half = d / 2;
    // cos and sin of every (position, pair), in double then rounded.
    std::vector<float> table(static_cast<size_t>(positions) * half * 2);
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t i = 0; i < half; ++i) {
        double angle =
            static_cast<double>(p) *
            zeroc::rope::scaledInvFreq(
                std::pow(theta, -2.0 * static_cast<double>(i) /
                                    static_cast<double>(d)),
                scaling);
        table[(p * half + i) * 2] = static_cast<float>(std::cos(angle));
        table[(p * half + i) * 2 + 1] =
            static_cast<float>(inverse ? -std::sin(angle) : std::sin(angle));
      }
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    bool interleaved = style == 0;
    parallelFor(rows, d * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float *cs = table.data() + ((r / period) % positions) * half * 2;
        const T *xr = xt + r * d;
        T *yr = yt + r * d;
        for (int64_t i = 0; i < half; ++i) {
          int64_t a = interleaved ? 2 * i : i,
                  b = interleaved ? 2 * i + 1 : i + half;
          float xa = toF32(xr[a]), xb = toF32(xr[b]);
          float c = cs[2 * i], s = cs[2 * i + 1];
          fromF32(xa * c - xb * s, yr[a]);
          fromF32(xb * c + xa * s, yr[b]);
        }
      }
    });
  });
}

extern "C" void zrt_slice(zrt_dtype dtype, const void *x, void *y, int rank,
                          const int64_t *in_shape, const int64_t *offsets,
                          const int64_t *strides, const int64_t *out_shape) {
  const char *kernel = "zrt_slice";
  SlicePlan plan =
      planSlice(kernel, rank, in_shape, offsets, strides, out_shape);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    const E *src = static_cast<const E *>(x) + plan.base;
    E *dst = static_cast<E *>(y);
    parallelFor(plan.rows, plan.rowLen + 16, [&](int64_t r0, int64_t r1) {
      StridedWalk walk(plan.outerSizes, plan.outerStrides);
      walk.seek(r0);
      for (int64_t r = r0; r < r1; ++r, walk.next()) {
        const E *row = src + walk.offset;
        E *out = dst + r * plan.rowLen;
        if (plan.rowStride == 1)
          std::memcpy(out, row, plan.rowLen * sizeof(E));
        else
          for (int64_t i = 0; i < plan.rowLen; ++i)
            out[i] = row[i * plan.rowStride];
      }
    });
  });
}

extern "C" void zrt_slice_grad(zrt_dtype dtype, const void *dy, void *dx,
                               int rank, const int64_t *in_shape,
                               const int64_t *offsets, const int64_t *strides,
                               const int64_t *out_shape) {
  const char *kernel = "zrt_slice_grad";
  SlicePlan plan =
      planSlice(kernel, rank, in_shape, offsets, strides, out_shape);
  int64_t inNumel = checkedNumel(kernel, rank, in_shape);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    parallelZero(dx, static_cast<size_t>(inNumel) * sizeof(E));
    E *dst = static_cast<E *>(dx) + plan.base;
    const E *src = static_cast<const E *>(dy);
    // Distinct output rows write disjoint elements of dx.
    parallelFor(plan.rows, plan.rowLen + 16, [&](int64_t r0, int64_t r1) {
      StridedWalk walk(plan.outerSizes, plan.outerStrides);
      walk.seek(r0);
      for (int64_t r = r0; r < r1; ++r, walk.next()) {
        E *row = dst + walk.offset;
        const E *in = src + r * plan.rowLen;
        for (int64_t i = 0; i < plan.rowLen; ++i)
          row[i * plan.rowStride] = in[i];
      }
    });
  });
}

extern "C" void zrt_dropout(zrt_dtype dtype, const void *x, void *y, int64_t n,
                            int64_t inner, int64_t rows, int64_t row_offset,
                            int64_t global_rows, double p, uint64_t seed,
                            int64_t step) {
  const char *kernel = "zrt_dropout";
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "step", step);
  checkNonNegative(kernel, "row_offset", row_offset);
  if (!(p >= 0.0 && p < 1.0))
    zrt_fail("%s: p = %g is outside [0, 1)", kernel, p);
  if (n > 0 && (inner <= 0 || rows <= 0 || n % (inner * rows) != 0 ||
                row_offset + rows > global_rows))
    zrt_fail("%s: %lld elements are not whole rows of %lld x %lld at rows "
             "[%lld, %lld) of %lld",
             kernel, static_cast<long long>(n), static_cast<long long>(rows),
             static_cast<long long>(inner), static_cast<long long>(row_offset),
             static_cast<long long>(row_offset + rows),
             static_cast<long long>(global_rows));
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    uint32_t threshold = zeroc::random::dropoutThreshold(p);
    float scale = static_cast<float>(1.0 / (1.0 - p));
    parallelFor(n, 64, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        uint64_t position = zeroc::random::dropoutPosition(
            static_cast<uint64_t>(i), static_cast<uint64_t>(inner),
            static_cast<uint64_t>(rows), static_cast<uint64_t>(row_offset),
            static_cast<uint64_t>(global_rows));
        bool keep = zeroc::random::dropoutKeeps(
            seed, static_cast<uint64_t>(step), position, threshold);
        fromF32(keep ? toF32(xt[i]) * scale : 0.0f, yt[i]);
      }
    });
  });
}
