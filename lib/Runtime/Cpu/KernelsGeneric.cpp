//===- KernelsGeneric.cpp - the reductions and gathers of ATen, CPU -------===//
//
// zrt_reduce_max (+ _grad), zrt_reduce_var, zrt_log_softmax and zrt_gather
// (+ _grad): the kernels of the generic ops of TrainGenericOps.td. The
// reductions walk each result's slice through a table of the reduced
// elements' offsets; statistics are accumulated in double. Every result is
// independent of the thread count (each output is computed by one thread,
// in one order; gather_grad scatters on the calling thread).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"

#include "../Common/Shapes.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace zeroc::rt;

namespace {

/// A reduction of a dense row-major x over the flagged dimensions: for
/// output o, the elements x[base[o] + inner[k]] for k < inner.size().
struct ReducePlan {
  std::vector<int64_t> base, inner;
};

ReducePlan planReduction(const char *kernel, int rank, const int64_t *shape,
                         const uint8_t *reduced) {
  checkedNumel(kernel, rank, shape);
  if (rank > 0 && !reduced)
    zrt_fail("%s: reduced flags pointer is NULL", kernel);
  std::vector<int64_t> strides(rank);
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  ReducePlan plan;
  plan.base = {0};
  plan.inner = {0};
  for (int i = 0; i < rank; ++i) {
    std::vector<int64_t> &table = reduced[i] ? plan.inner : plan.base;
    std::vector<int64_t> next;
    next.reserve(table.size() * shape[i]);
    for (int64_t offset : table)
      for (int64_t c = 0; c < shape[i]; ++c)
        next.push_back(offset + c * strides[i]);
    table.swap(next);
  }
  return plan;
}

template <typename T>
inline float at(const void *p, int64_t i) {
  return toF32(static_cast<const T *>(p)[i]);
}

} // namespace

extern "C" void zrt_reduce_max(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced) {
  const char *kernel = "zrt_reduce_max";
  ReducePlan plan = planReduction(kernel, rank, shape, reduced);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t outputs = static_cast<int64_t>(plan.base.size());
    int64_t count = static_cast<int64_t>(plan.inner.size());
    parallelFor(outputs, count, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t k = 0; k < count; ++k) {
          float v = at<T>(x, plan.base[o] + plan.inner[k]);
          if (std::isnan(v)) {
            m = v;
            break;
          }
          m = v > m ? v : m;
        }
        fromF32(m, static_cast<T *>(y)[o]);
      }
    });
  });
}

extern "C" void zrt_reduce_max_grad(zrt_dtype dtype, const void *dy,
                                    const void *x, const void *y, void *dx,
                                    int rank, const int64_t *shape,
                                    const uint8_t *reduced) {
  const char *kernel = "zrt_reduce_max_grad";
  ReducePlan plan = planReduction(kernel, rank, shape, reduced);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t outputs = static_cast<int64_t>(plan.base.size());
    int64_t count = static_cast<int64_t>(plan.inner.size());
    parallelFor(outputs, 2 * count, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        float m = at<T>(y, o);
        int64_t ties = 0;
        for (int64_t k = 0; k < count; ++k)
          ties += at<T>(x, plan.base[o] + plan.inner[k]) == m;
        float share = ties ? at<T>(dy, o) / static_cast<float>(ties) : 0.0f;
        for (int64_t k = 0; k < count; ++k) {
          int64_t i = plan.base[o] + plan.inner[k];
          fromF32(at<T>(x, i) == m ? share : 0.0f, static_cast<T *>(dx)[i]);
        }
      }
    });
  });
}

extern "C" void zrt_reduce_var(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced, int64_t correction) {
  const char *kernel = "zrt_reduce_var";
  ReducePlan plan = planReduction(kernel, rank, shape, reduced);
  int64_t count = static_cast<int64_t>(plan.inner.size());
  if (correction < 0 || count <= correction)
    zrt_fail("%s: correction %lld must be in [0, %lld) (the elements each "
             "result reduces)",
             kernel, static_cast<long long>(correction),
             static_cast<long long>(count));
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t outputs = static_cast<int64_t>(plan.base.size());
    double divisor = static_cast<double>(count - correction);
    parallelFor(outputs, 2 * count, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        double sum = 0;
        for (int64_t k = 0; k < count; ++k)
          sum += at<T>(x, plan.base[o] + plan.inner[k]);
        double mean = sum / static_cast<double>(count), squares = 0;
        for (int64_t k = 0; k < count; ++k) {
          double d = at<T>(x, plan.base[o] + plan.inner[k]) - mean;
          squares += d * d;
        }
        fromF32(static_cast<float>(squares / divisor),
                static_cast<T *>(y)[o]);
      }
    });
  });
}

extern "C" void zrt_log_softmax(zrt_dtype dtype, const void *x, void *y,
                                int64_t rows, int64_t cols) {
  const char *kernel = "zrt_log_softmax";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(rows, cols * 4, [&](int64_t r0, int64_t r1) {
      std::unique_ptr<float[]> scratch = scratchF32(2 * cols);
      for (int64_t r = r0; r < r1; ++r) {
        const float *xr =
            rowF32(static_cast<const T *>(x) + r * cols, scratch.get(), cols);
        float max = rowMax(xr, cols);
        // A row of -inf (max -inf) gives NaN, as torch.log_softmax.
        double sum = expShiftedSum(xr, scratch.get() + cols, cols, max);
        float shift = max + static_cast<float>(std::log(sum));
        T *yr = static_cast<T *>(y) + r * cols;
        for (int64_t c = 0; c < cols; ++c)
          fromF32(xr[c] - shift, yr[c]);
      }
    });
  });
}

namespace {

/// Checks zrt_gather's shapes and indices; returns the index elements.
int64_t checkGather(const char *kernel, const void *idx, zrt_dtype idxDtype,
                    int rank, const int64_t *xShape, const int64_t *idxShape,
                    int dim) {
  checkedNumel(kernel, rank, xShape);
  int64_t n = checkedNumel(kernel, rank, idxShape);
  if (dim < 0 || dim >= rank)
    zrt_fail("%s: dim %d is out of range for rank %d", kernel, dim, rank);
  for (int d = 0; d < rank; ++d)
    if (d != dim && idxShape[d] > xShape[d])
      zrt_fail("%s: index shape %s exceeds the input shape %s outside dim %d",
               kernel, formatShape(rank, idxShape).c_str(),
               formatShape(rank, xShape).c_str(), dim);
  checkIds(kernel, "index", idx, idxDtype, n, xShape[dim]);
  return n;
}

/// Calls visit(p, offset in x) for every index element p, in order.
template <typename Visit>
void forEachGathered(const void *idx, zrt_dtype idxDtype, int rank,
                     const int64_t *xShape, const int64_t *idxShape, int dim,
                     int64_t p0, int64_t p1, Visit &&visit) {
  std::vector<int64_t> xStride(rank);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    xStride[d] = stride;
    stride *= xShape[d];
  }
  for (int64_t p = p0; p < p1; ++p) {
    int64_t rest = p, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rest % idxShape[d];
      rest /= idxShape[d];
      offset += (d == dim ? loadId(idx, idxDtype, p) : c) * xStride[d];
    }
    visit(p, offset);
  }
}

} // namespace

extern "C" void zrt_gather(zrt_dtype dtype, const void *x, const void *idx,
                           zrt_dtype idx_dtype, void *y, int rank,
                           const int64_t *x_shape, const int64_t *idx_shape,
                           int dim) {
  const char *kernel = "zrt_gather";
  dispatchFloat(kernel, dtype, [](auto) {});
  int64_t n =
      checkGather(kernel, idx, idx_dtype, rank, x_shape, idx_shape, dim);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    parallelFor(n, rank + 1, [&](int64_t p0, int64_t p1) {
      forEachGathered(idx, idx_dtype, rank, x_shape, idx_shape, dim, p0, p1,
                      [&](int64_t p, int64_t offset) {
                        static_cast<T *>(y)[p] =
                            static_cast<const T *>(x)[offset];
                      });
    });
  });
}

extern "C" void zrt_gather_grad(zrt_dtype dtype, const void *dy,
                                const void *idx, zrt_dtype idx_dtype, void *dx,
                                int rank, const int64_t *x_shape,
                                const int64_t *idx_shape, int dim) {
  const char *kernel = "zrt_gather_grad";
  dispatchFloat(kernel, dtype, [](auto) {});
  int64_t n =
      checkGather(kernel, idx, idx_dtype, rank, x_shape, idx_shape, dim);
  int64_t numel = checkedNumel(kernel, rank, x_shape);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    // Sums in f32 (widened for bf16), on the calling thread, in position
    // order: the result does not depend on the thread count.
    std::vector<float> acc(numel, 0.0f);
    forEachGathered(idx, idx_dtype, rank, x_shape, idx_shape, dim, 0, n,
                    [&](int64_t p, int64_t offset) {
                      acc[offset] += at<T>(dy, p);
                    });
    T *out = static_cast<T *>(dx);
    parallelFor(numel, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        fromF32(acc[i], out[i]);
    });
  });
}
