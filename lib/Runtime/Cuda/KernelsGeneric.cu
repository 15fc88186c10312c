//===- KernelsGeneric.cu - the reductions and gathers of ATen, GPU --------===//
//
// zrt_reduce_max (+ _grad), zrt_reduce_var, zrt_log_softmax and zrt_gather
// (+ _grad), the kernels of the generic ops of TrainGenericOps.td. Simple
// and exact rather than fast (the fast ops cover the hot paths): a thread
// per result, which walks its slice in order, so the reductions are
// deterministic; statistics in double. The gather kernels check indices on
// the device as the embedding kernels do (an index out of range is never
// read, and the device error record names it). gather_grad adds with f32
// atomics (duplicate indices add in any order), through f32 scratch for
// bf16, rounded once.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"
#include "../Common/Shapes.h"

#include <cmath>
#include <type_traits>
#include <vector>

using namespace zeroc::rt::cuda;
using zeroc::rt::checkedNumel;

namespace {

constexpr int kMaxRank = 8;
constexpr int kThreads = 256;

/// A reduction's walk, by value: the kept dimensions (the result's, in
/// order) and the reduced ones, with their strides in the dense input.
struct ReduceShape {
  int kept, red;
  int64_t keptSize[kMaxRank], keptStride[kMaxRank];
  int64_t redSize[kMaxRank], redStride[kMaxRank];
  int64_t outputs, count;
};

ReduceShape reduceShape(const char *kernel, int rank, const int64_t *shape,
                        const uint8_t *reduced) {
  checkedNumel(kernel, rank, shape);
  if (rank > 0 && !reduced)
    zrt_fail("%s: reduced flags pointer is NULL", kernel);
  if (rank > kMaxRank)
    zrt_fail("%s: rank %d exceeds the %d dimensions the CUDA kernels handle",
             kernel, rank, kMaxRank);
  ReduceShape s = {};
  s.outputs = 1;
  s.count = 1;
  std::vector<int64_t> strides(rank);
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  for (int i = 0; i < rank; ++i) {
    if (reduced[i]) {
      s.redSize[s.red] = shape[i];
      s.redStride[s.red++] = strides[i];
      s.count *= shape[i];
    } else {
      s.keptSize[s.kept] = shape[i];
      s.keptStride[s.kept++] = strides[i];
      s.outputs *= shape[i];
    }
  }
  return s;
}

__device__ __forceinline__ int64_t walk(const int64_t *size,
                                        const int64_t *stride, int rank,
                                        int64_t linear) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (linear % size[d]) * stride[d];
    linear /= size[d];
  }
  return offset;
}

template <typename T>
__global__ void reduceMaxKernel(const T *__restrict__ x, T *__restrict__ y,
                                ReduceShape s) {
  for (int64_t o = firstIndex(); o < s.outputs; o += indexStride()) {
    int64_t base = walk(s.keptSize, s.keptStride, s.kept, o);
    float m = -INFINITY;
    for (int64_t k = 0; k < s.count; ++k) {
      float v = toF32(x[base + walk(s.redSize, s.redStride, s.red, k)]);
      if (v != v) { // NaN
        m = v;
        break;
      }
      m = v > m ? v : m;
    }
    fromF32(m, y[o]);
  }
}

template <typename T>
__global__ void reduceMaxGradKernel(const T *__restrict__ dy,
                                    const T *__restrict__ x,
                                    const T *__restrict__ y,
                                    T *__restrict__ dx, ReduceShape s) {
  for (int64_t o = firstIndex(); o < s.outputs; o += indexStride()) {
    int64_t base = walk(s.keptSize, s.keptStride, s.kept, o);
    float m = toF32(y[o]);
    int64_t ties = 0;
    for (int64_t k = 0; k < s.count; ++k)
      ties += toF32(x[base + walk(s.redSize, s.redStride, s.red, k)]) == m;
    float share = ties ? toF32(dy[o]) / static_cast<float>(ties) : 0.0f;
    for (int64_t k = 0; k < s.count; ++k) {
      int64_t i = base + walk(s.redSize, s.redStride, s.red, k);
      fromF32(toF32(x[i]) == m ? share : 0.0f, dx[i]);
    }
  }
}

template <typename T>
__global__ void reduceVarKernel(const T *__restrict__ x, T *__restrict__ y,
                                ReduceShape s, double divisor) {
  for (int64_t o = firstIndex(); o < s.outputs; o += indexStride()) {
    int64_t base = walk(s.keptSize, s.keptStride, s.kept, o);
    double sum = 0;
    for (int64_t k = 0; k < s.count; ++k)
      sum += toF32(x[base + walk(s.redSize, s.redStride, s.red, k)]);
    double mean = sum / static_cast<double>(s.count), squares = 0;
    for (int64_t k = 0; k < s.count; ++k) {
      double d = toF32(x[base + walk(s.redSize, s.redStride, s.red, k)]) - mean;
      squares += d * d;
    }
    fromF32(static_cast<float>(squares / divisor), y[o]);
  }
}

template <typename T>
__global__ void logSoftmaxKernel(const T *__restrict__ x, T *__restrict__ y,
                                 int64_t rows, int64_t cols) {
  for (int64_t r = firstIndex(); r < rows; r += indexStride()) {
    const T *xr = x + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c)
      m = fmaxf(m, toF32(xr[c]));
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += expf(toF32(xr[c]) - m);
    float shift = m + static_cast<float>(log(sum));
    T *yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      fromF32(toF32(xr[c]) - shift, yr[c]);
  }
}

/// torch.gather's walk, by value: the index's shape and the input's
/// strides.
struct GatherShape {
  int rank, dim;
  int64_t idxSize[kMaxRank], xStride[kMaxRank];
  int64_t limit, n;
};

GatherShape gatherShape(const char *kernel, const void *idx,
                        zrt_dtype idxDtype, int rank, const int64_t *xShape,
                        const int64_t *idxShape, int dim) {
  checkedNumel(kernel, rank, xShape);
  int64_t n = checkedNumel(kernel, rank, idxShape);
  if (rank > kMaxRank)
    zrt_fail("%s: rank %d exceeds the %d dimensions the CUDA kernels handle",
             kernel, rank, kMaxRank);
  if (dim < 0 || dim >= rank)
    zrt_fail("%s: dim %d is out of range for rank %d", kernel, dim, rank);
  for (int d = 0; d < rank; ++d)
    if (d != dim && idxShape[d] > xShape[d])
      zrt_fail("%s: index shape %s exceeds the input shape %s outside dim %d",
               kernel, zeroc::rt::formatShape(rank, idxShape).c_str(),
               zeroc::rt::formatShape(rank, xShape).c_str(), dim);
  checkIdDtype(kernel, "index", idx, idxDtype, n);
  GatherShape s = {};
  s.rank = rank;
  s.dim = dim;
  s.limit = xShape[dim];
  s.n = n;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    s.idxSize[d] = idxShape[d];
    s.xStride[d] = stride;
    stride *= xShape[d];
  }
  return s;
}

/// The input offset index element p reads, or -1 (recorded) when its index
/// is out of range.
__device__ __forceinline__ int64_t gatheredOffset(const void *idx, bool i64,
                                                  const GatherShape &s,
                                                  int64_t p, int kernel,
                                                  DeviceError *errors) {
  int64_t id = loadId(idx, i64, p);
  if (id < 0 || id >= s.limit) {
    recordIdError(errors, kernel, id, p, s.limit);
    return -1;
  }
  int64_t rest = p, offset = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    int64_t c = rest % s.idxSize[d];
    rest /= s.idxSize[d];
    offset += (d == s.dim ? id : c) * s.xStride[d];
  }
  return offset;
}

template <typename T>
__global__ void gatherKernel(const T *__restrict__ x,
                             const void *__restrict__ idx, bool i64,
                             T *__restrict__ y, GatherShape s,
                             DeviceError *errors) {
  for (int64_t p = firstIndex(); p < s.n; p += indexStride()) {
    int64_t offset = gatheredOffset(idx, i64, s, p, kIdGather, errors);
    y[p] = offset < 0 ? T{} : x[offset];
  }
}

template <typename T>
__global__ void gatherGradKernel(const T *__restrict__ dy,
                                 const void *__restrict__ idx, bool i64,
                                 float *__restrict__ acc, GatherShape s,
                                 DeviceError *errors) {
  for (int64_t p = firstIndex(); p < s.n; p += indexStride()) {
    int64_t offset = gatheredOffset(idx, i64, s, p, kIdGatherGrad, errors);
    if (offset >= 0)
      atomicAdd(acc + offset, toF32(dy[p]));
  }
}

} // namespace

extern "C" void zrt_reduce_max(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced) {
  const char *kernel = "zrt_reduce_max";
  ReduceShape s = reduceShape(kernel, rank, shape, reduced);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (s.outputs == 0)
      return;
    reduceMaxKernel<T><<<blocksFor(s.outputs, kThreads), kThreads, 0,
                         computeStream()>>>(static_cast<const T *>(x),
                                            static_cast<T *>(y), s);
    checkLaunch("reduceMaxKernel");
  });
}

extern "C" void zrt_reduce_max_grad(zrt_dtype dtype, const void *dy,
                                    const void *x, const void *y, void *dx,
                                    int rank, const int64_t *shape,
                                    const uint8_t *reduced) {
  const char *kernel = "zrt_reduce_max_grad";
  ReduceShape s = reduceShape(kernel, rank, shape, reduced);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (s.outputs == 0)
      return;
    reduceMaxGradKernel<T><<<blocksFor(s.outputs, kThreads), kThreads, 0,
                             computeStream()>>>(
        static_cast<const T *>(dy), static_cast<const T *>(x),
        static_cast<const T *>(y), static_cast<T *>(dx), s);
    checkLaunch("reduceMaxGradKernel");
  });
}

extern "C" void zrt_reduce_var(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced, int64_t correction) {
  const char *kernel = "zrt_reduce_var";
  ReduceShape s = reduceShape(kernel, rank, shape, reduced);
  if (correction < 0 || s.count <= correction)
    zrt_fail("%s: correction %lld must be in [0, %lld) (the elements each "
             "result reduces)",
             kernel, static_cast<long long>(correction),
             static_cast<long long>(s.count));
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (s.outputs == 0)
      return;
    reduceVarKernel<T><<<blocksFor(s.outputs, kThreads), kThreads, 0,
                         computeStream()>>>(
        static_cast<const T *>(x), static_cast<T *>(y), s,
        static_cast<double>(s.count - correction));
    checkLaunch("reduceVarKernel");
  });
}

extern "C" void zrt_log_softmax(zrt_dtype dtype, const void *x, void *y,
                                int64_t rows, int64_t cols) {
  const char *kernel = "zrt_log_softmax";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    logSoftmaxKernel<T><<<blocksFor(rows, kThreads), kThreads, 0,
                          computeStream()>>>(static_cast<const T *>(x),
                                             static_cast<T *>(y), rows, cols);
    checkLaunch("logSoftmaxKernel");
  });
}

extern "C" void zrt_gather(zrt_dtype dtype, const void *x, const void *idx,
                           zrt_dtype idx_dtype, void *y, int rank,
                           const int64_t *x_shape, const int64_t *idx_shape,
                           int dim) {
  const char *kernel = "zrt_gather";
  dispatchFloat(kernel, dtype, [](auto) {});
  GatherShape s =
      gatherShape(kernel, idx, idx_dtype, rank, x_shape, idx_shape, dim);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (s.n == 0)
      return;
    gatherKernel<T><<<blocksFor(s.n, kThreads), kThreads, 0,
                      computeStream()>>>(static_cast<const T *>(x), idx,
                                         idx_dtype == ZRT_I64,
                                         static_cast<T *>(y), s,
                                         deviceErrors());
    checkLaunch("gatherKernel");
  });
}

extern "C" void zrt_gather_grad(zrt_dtype dtype, const void *dy,
                                const void *idx, zrt_dtype idx_dtype, void *dx,
                                int rank, const int64_t *x_shape,
                                const int64_t *idx_shape, int dim) {
  const char *kernel = "zrt_gather_grad";
  dispatchFloat(kernel, dtype, [](auto) {});
  GatherShape s =
      gatherShape(kernel, idx, idx_dtype, rank, x_shape, idx_shape, dim);
  int64_t numel = checkedNumel(kernel, rank, x_shape);
  if (numel == 0)
    return;
  cudaStream_t stream = computeStream();
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    size_t elems = static_cast<size_t>(numel);
    // f32 sums straight into dx; bf16 through f32 scratch, rounded once.
    Scratch scratch(std::is_same_v<T, float> ? 0 : elems * sizeof(float));
    float *acc = std::is_same_v<T, float> ? static_cast<float *>(dx)
                                          : scratch.as<float>();
    ZRT_CUDA(cudaMemsetAsync(acc, 0, elems * sizeof(float), stream));
    if (s.n > 0) {
      gatherGradKernel<T><<<blocksFor(s.n, kThreads), kThreads, 0, stream>>>(
          static_cast<const T *>(dy), idx, idx_dtype == ZRT_I64, acc, s,
          deviceErrors());
      checkLaunch("gatherGradKernel");
    }
    if constexpr (!std::is_same_v<T, float>)
      convertF32ToBf16(acc, static_cast<bf16 *>(dx), numel);
  });
}
