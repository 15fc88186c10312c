//===- KernelsLlama.cu - RMSNorm, rotary embeddings, slices, dropout ------===//
//
// The CUDA side of KernelsLlama.cpp (zrt.h):
//
// * zrt_rmsnorm: one warp per row, the sum of squares in double, 16-byte
//   vector accesses when the row allows (as KernelsNorm.cu's layernorm);
//   zrt_rmsnorm_grad: per-row 1/rms (kernel 1), dweight as column sums over
//   fixed chunks of rows in double added in chunk order (kernels 2 and 3,
//   deterministic), then dx (kernel 4).
// * zrt_rope: one thread per pair; the angle position * theta^(-2i/d) and
//   its cosine and sine in double, so that long sequences keep their
//   precision; no table in memory.
// * zrt_slice / zrt_slice_grad: one thread per element of the slice, the
//   source offset from its multi-index (rank <= 8); the gradient zeroes dx
//   first.
// * zrt_dropout: one thread per element; the mask from the Philox stream of
//   zeroc/Support/Random.h (shared with the evaluator and the CPU), keyed by
//   the seed, the step and the element's global position.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include "zeroc/Support/Random.h"
#include "zeroc/Support/Rope.h"

#include <algorithm>

using namespace zeroc::rt::cuda;

namespace {

template <typename T, int N>
__device__ float rowRrms(const T *row, int64_t cols, double eps, int lane) {
  double sum = 0;
  for (int64_t c = lane * N; c < cols; c += kWarp * N) {
    float v[N];
    loadChunk<N>(row + c, v);
#pragma unroll
    for (int i = 0; i < N; ++i)
      sum += static_cast<double>(v[i] * v[i]);
  }
  return static_cast<float>(
      1.0 / sqrt(warpSum(sum) / static_cast<double>(cols) + eps));
}

template <typename T, int N>
__global__ void rmsnormKernel(const T *x, const T *__restrict__ weight, T *y,
                              int64_t rows, int64_t cols, double eps) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = x + r * cols;
    T *yr = y + r * cols;
    float rrms = rowRrms<T, N>(xr, cols, eps, lane);
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N], w[N], out[N];
      loadChunk<N>(xr + c, v);
      loadChunk<N>(weight + c, w);
#pragma unroll
      for (int i = 0; i < N; ++i)
        out[i] = v[i] * rrms * w[i];
      storeChunk<N>(yr + c, out);
    }
  }
}

template <typename T, int N>
__global__ void rmsnormStatsKernel(const T *__restrict__ x,
                                   float *__restrict__ rrms, int64_t rows,
                                   int64_t cols, double eps) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    float v = rowRrms<T, N>(x + r * cols, cols, eps, lane);
    if (lane == 0)
      rrms[r] = v;
  }
}

/// partial[chunk][c] = sum over the chunk's rows of dy * x * rrms.
template <typename T>
__global__ void
rmsnormWeightGradKernel(const T *__restrict__ dy, const T *__restrict__ x,
                        const float *__restrict__ rrms,
                        double *__restrict__ partial, int64_t rows,
                        int64_t cols, int64_t chunks) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols)
    return;
  int64_t chunk = blockIdx.y;
  int64_t r0 = rows * chunk / chunks, r1 = rows * (chunk + 1) / chunks;
  double sum = 0;
  for (int64_t r = r0; r < r1; ++r)
    sum += static_cast<double>(toF32(dy[r * cols + c]) *
                               toF32(x[r * cols + c]) * rrms[r]);
  partial[chunk * cols + c] = sum;
}

template <typename T>
__global__ void rmsnormWeightGradFinalKernel(const double *__restrict__ partial,
                                             T *__restrict__ dweight,
                                             int64_t cols, int64_t chunks) {
  for (int64_t c = firstIndex(); c < cols; c += indexStride()) {
    double sum = 0;
    for (int64_t k = 0; k < chunks; ++k)
      sum += partial[k * cols + c];
    fromF32(static_cast<float>(sum), dweight[c]);
  }
}

/// dx = rrms * (g - x * rrms^2 * mean(g * x)), g = dy * weight.
template <typename T, int N>
__global__ void rmsnormDxKernel(const T *dy, const T *__restrict__ x,
                                const T *__restrict__ weight,
                                const float *__restrict__ rrmsRows, T *dx,
                                int64_t rows, int64_t cols) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *dyr = dy + r * cols, *xr = x + r * cols;
    T *dxr = dx + r * cols;
    float rrms = rrmsRows[r];
    double sumGX = 0;
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], xv[N], w[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(xr + c, xv);
      loadChunk<N>(weight + c, w);
#pragma unroll
      for (int i = 0; i < N; ++i)
        sumGX += static_cast<double>(g[i] * w[i] * xv[i]);
    }
    float k = rrms * rrms *
              static_cast<float>(warpSum(sumGX) / static_cast<double>(cols));
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], xv[N], w[N], out[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(xr + c, xv);
      loadChunk<N>(weight + c, w);
#pragma unroll
      for (int i = 0; i < N; ++i)
        out[i] = rrms * (g[i] * w[i] - xv[i] * k);
      storeChunk<N>(dxr + c, out);
    }
  }
}

template <typename T>
__global__ void ropeKernel(const T *x, T *y, int64_t pairs, int64_t d,
                           int64_t positions, int64_t period, double logTheta,
                           bool interleaved, bool inverse,
                           zeroc::rope::Scaling scaling) {
  int64_t half = d / 2;
  for (int64_t j = firstIndex(); j < pairs; j += indexStride()) {
    int64_t r = j / half, i = j % half;
    int64_t p = (r / period) % positions;
    double angle =
        static_cast<double>(p) *
        zeroc::rope::scaledInvFreq(exp(-2.0 * static_cast<double>(i) /
                                       static_cast<double>(d) * logTheta),
                                   scaling);
    double s, c;
    sincos(angle, &s, &c);
    float cf = static_cast<float>(c), sf = static_cast<float>(inverse ? -s : s);
    int64_t a = r * d + (interleaved ? 2 * i : i);
    int64_t b = r * d + (interleaved ? 2 * i + 1 : i + half);
    float xa = toF32(x[a]), xb = toF32(x[b]);
    fromF32(xa * cf - xb * sf, y[a]);
    fromF32(xb * cf + xa * sf, y[b]);
  }
}

constexpr int kMaxSliceRank = 8;

/// A slice's walk: the slice's sizes and, per dimension, the input stride
/// of one step along it; `base` is the input offset of its first element.
struct SliceArgs {
  int rank;
  int64_t sizes[kMaxSliceRank];
  int64_t steps[kMaxSliceRank];
  int64_t base;
};

__device__ __forceinline__ int64_t sliceSource(const SliceArgs &a, int64_t o) {
  int64_t offset = a.base;
  for (int dim = a.rank - 1; dim >= 0; --dim) {
    offset += (o % a.sizes[dim]) * a.steps[dim];
    o /= a.sizes[dim];
  }
  return offset;
}

template <typename E>
__global__ void sliceKernel(const E *__restrict__ x, E *__restrict__ y,
                            int64_t n, SliceArgs a) {
  for (int64_t o = firstIndex(); o < n; o += indexStride())
    y[o] = x[sliceSource(a, o)];
}

template <typename E>
__global__ void sliceGradKernel(const E *__restrict__ dy, E *__restrict__ dx,
                                int64_t n, SliceArgs a) {
  for (int64_t o = firstIndex(); o < n; o += indexStride())
    dx[sliceSource(a, o)] = dy[o];
}

/// Checks a slice's arguments (as the CPU runtime does) and plans its walk;
/// returns the number of its elements.
int64_t planSlice(const char *kernel, int rank, const int64_t *inShape,
                  const int64_t *offsets, const int64_t *strides,
                  const int64_t *outShape, SliceArgs &a) {
  if (rank < 0 || rank > kMaxSliceRank)
    zrt_fail("%s: rank %d is outside [0, %d]", kernel, rank, kMaxSliceRank);
  if (rank > 0 && (!inShape || !outShape || !offsets || !strides))
    zrt_fail("%s: NULL shape, offsets or strides", kernel);
  a.rank = rank;
  a.base = 0;
  int64_t n = 1, stride = 1;
  for (int dim = rank - 1; dim >= 0; --dim) {
    checkNonNegative(kernel, "in_shape", inShape[dim]);
    checkNonNegative(kernel, "out_shape", outShape[dim]);
    if (offsets[dim] < 0 || strides[dim] < 1 ||
        (outShape[dim] > 0 &&
         (offsets[dim] >= inShape[dim] ||
          outShape[dim] - 1 >
              (inShape[dim] - 1 - offsets[dim]) / strides[dim])))
      zrt_fail("%s: dimension %d: %lld elements from offset %lld with stride "
               "%lld do not fit in %lld",
               kernel, dim, static_cast<long long>(outShape[dim]),
               static_cast<long long>(offsets[dim]),
               static_cast<long long>(strides[dim]),
               static_cast<long long>(inShape[dim]));
    a.sizes[dim] = outShape[dim];
    a.steps[dim] = stride * strides[dim];
    a.base += offsets[dim] * stride;
    stride *= inShape[dim];
    n *= outShape[dim];
  }
  return n;
}

template <typename T>
__global__ void dropoutKernel(const T *x, T *y, int64_t n, int64_t inner,
                              int64_t rows, int64_t rowOffset,
                              int64_t globalRows, uint32_t threshold,
                              float scale, uint64_t seed, uint64_t step) {
  for (int64_t i = firstIndex(); i < n; i += indexStride()) {
    uint64_t position = zeroc::random::dropoutPosition(
        static_cast<uint64_t>(i), static_cast<uint64_t>(inner),
        static_cast<uint64_t>(rows), static_cast<uint64_t>(rowOffset),
        static_cast<uint64_t>(globalRows));
    bool keep = zeroc::random::dropoutKeeps(seed, step, position, threshold);
    fromF32(keep ? toF32(x[i]) * scale : 0.0f, y[i]);
  }
}

} // namespace

extern "C" void zrt_rmsnorm(zrt_dtype dtype, const void *x, const void *weight,
                            void *y, int64_t rows, int64_t cols, double eps) {
  const char *kernel = "zrt_rmsnorm";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    withChunk<T>(rowsVectorizable<T>(cols, {x, weight, y}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      rmsnormKernel<T, N><<<rowBlocks(rows), kRowThreads, 0, computeStream()>>>(
          static_cast<const T *>(x), static_cast<const T *>(weight),
          static_cast<T *>(y), rows, cols, eps);
      checkLaunch("rmsnormKernel");
    });
  });
}

extern "C" void zrt_rmsnorm_grad(zrt_dtype dtype, const void *dy, const void *x,
                                 const void *weight, void *dx, void *dweight,
                                 int64_t rows, int64_t cols, double eps) {
  const char *kernel = "zrt_rmsnorm_grad";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols == 0)
      return;
    cudaStream_t stream = computeStream();
    const T *dyT = static_cast<const T *>(dy), *xT = static_cast<const T *>(x);
    bool vec = rowsVectorizable<T>(cols, {dy, x, weight, dx});
    constexpr int colThreads = 256;
    int64_t colBlocks = (cols + colThreads - 1) / colThreads;
    int64_t chunks = 0;
    if (rows > 0) {
      int64_t want =
          (4 * static_cast<int64_t>(multiprocessors()) + colBlocks - 1) /
          colBlocks;
      chunks = std::max<int64_t>(
          1, std::min<int64_t>({want, (rows + 31) / 32, 65535}));
    }
    Scratch rrms(static_cast<size_t>(rows) * sizeof(float));
    Scratch partial(static_cast<size_t>(chunks) * cols * sizeof(double));
    if (rows > 0) {
      withChunk<T>(vec, [&](auto chunk) {
        constexpr int N = decltype(chunk)::value;
        rmsnormStatsKernel<T, N><<<rowBlocks(rows), kRowThreads, 0, stream>>>(
            xT, rrms.as<float>(), rows, cols, eps);
        checkLaunch("rmsnormStatsKernel");
      });
      rmsnormWeightGradKernel<T><<<dim3(static_cast<unsigned>(colBlocks),
                                        static_cast<unsigned>(chunks)),
                                   colThreads, 0, stream>>>(
          dyT, xT, rrms.as<float>(), partial.as<double>(), rows, cols, chunks);
      checkLaunch("rmsnormWeightGradKernel");
    }
    rmsnormWeightGradFinalKernel<T><<<blocksFor(cols), 256, 0, stream>>>(
        partial.as<double>(), static_cast<T *>(dweight), cols, chunks);
    checkLaunch("rmsnormWeightGradFinalKernel");
    if (rows > 0) {
      withChunk<T>(vec, [&](auto chunk) {
        constexpr int N = decltype(chunk)::value;
        rmsnormDxKernel<T, N><<<rowBlocks(rows), kRowThreads, 0, stream>>>(
            dyT, xT, static_cast<const T *>(weight), rrms.as<float>(),
            static_cast<T *>(dx), rows, cols);
        checkLaunch("rmsnormDxKernel");
      });
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
  zeroc::rt::checkRopeScaling(kernel, factor, low_freq_factor,
                              high_freq_factor, original);
  zeroc::rope::Scaling scaling{factor, low_freq_factor, high_freq_factor,
                               original};
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || d == 0)
      return;
    checkRopePositions(kernel, rows, positions, period);
    int64_t pairs = rows * (d / 2);
    ropeKernel<T><<<blocksFor(pairs), 256, 0, computeStream()>>>(
        static_cast<const T *>(x), static_cast<T *>(y), pairs, d, positions,
        period, std::log(theta), style == 0, inverse != 0, scaling);
    checkLaunch("ropeKernel");
  });
}

extern "C" void zrt_slice(zrt_dtype dtype, const void *x, void *y, int rank,
                          const int64_t *in_shape, const int64_t *offsets,
                          const int64_t *strides, const int64_t *out_shape) {
  const char *kernel = "zrt_slice";
  SliceArgs a;
  int64_t n = planSlice(kernel, rank, in_shape, offsets, strides, out_shape, a);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    if (n == 0)
      return;
    sliceKernel<E><<<blocksFor(n), 256, 0, computeStream()>>>(
        static_cast<const E *>(x), static_cast<E *>(y), n, a);
    checkLaunch("sliceKernel");
  });
}

extern "C" void zrt_slice_grad(zrt_dtype dtype, const void *dy, void *dx,
                               int rank, const int64_t *in_shape,
                               const int64_t *offsets, const int64_t *strides,
                               const int64_t *out_shape) {
  const char *kernel = "zrt_slice_grad";
  SliceArgs a;
  int64_t n = planSlice(kernel, rank, in_shape, offsets, strides, out_shape, a);
  int64_t inNumel = 1;
  for (int dim = 0; dim < rank; ++dim)
    inNumel *= in_shape[dim];
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    cudaStream_t stream = computeStream();
    ZRT_CUDA(cudaMemsetAsync(dx, 0, static_cast<size_t>(inNumel) * sizeof(E),
                             stream));
    if (n == 0)
      return;
    sliceGradKernel<E><<<blocksFor(n), 256, 0, stream>>>(
        static_cast<const E *>(dy), static_cast<E *>(dx), n, a);
    checkLaunch("sliceGradKernel");
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
    if (n == 0)
      return;
    dropoutKernel<T><<<blocksFor(n), 256, 0, computeStream()>>>(
        static_cast<const T *>(x), static_cast<T *>(y), n, inner, rows,
        row_offset, global_rows, zeroc::random::dropoutThreshold(p),
        static_cast<float>(1.0 / (1.0 - p)), seed, static_cast<uint64_t>(step));
    checkLaunch("dropoutKernel");
  });
}
