//===- KernelsNorm.cu - layernorm and softmax over the last dimension -----===//
//
// Row kernels: one warp per row (grid-stride over rows), 16-byte vector
// accesses when the rows allow (cols a multiple of 4 f32 / 8 bf16 and the
// pointers 16-byte aligned), the row read again from L1/L2 for each pass
// rather than held in registers, so any width works. As on the CPU:
// layernorm's mean, variance and gradient row means accumulate in double
// (cheap next to the memory traffic) with the mean subtracted as hi + lo;
// softmax keeps an online (max, sum of exps) in f32 per lane, combined
// across the warp. In place (y == x, dx == dy) works: every element is
// read and written by the same lane, after the row's reductions.
//
// layernorm_grad: per-row statistics (kernel 1), dweight and dbias as
// column sums over fixed chunks of rows in double (kernel 2) added in chunk
// order (kernel 3, so the result is deterministic), then dx (kernel 4,
// last: dx may overwrite dy, which kernel 2 reads).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include <algorithm>

using namespace zeroc::rt::cuda;

namespace {

/// A row's mean as hi + lo (two f32s) and 1/sqrt(biased variance + eps),
/// both accumulated in double; every lane of the warp gets them.
struct Moments {
  float hi, lo, rstd;
  __device__ __forceinline__ float centered(float x) const {
    return (x - hi) - lo;
  }
};

template <typename T, int N>
__device__ Moments rowMoments(const T *row, int64_t cols, double eps,
                              int lane) {
  double sum = 0;
  for (int64_t c = lane * N; c < cols; c += kWarp * N) {
    float v[N];
    loadChunk<N>(row + c, v);
#pragma unroll
    for (int i = 0; i < N; ++i)
      sum += static_cast<double>(v[i]);
  }
  double mean = warpSum(sum) / static_cast<double>(cols);
  Moments mo;
  mo.hi = static_cast<float>(mean);
  mo.lo = static_cast<float>(mean - static_cast<double>(mo.hi));
  double var = 0;
  for (int64_t c = lane * N; c < cols; c += kWarp * N) {
    float v[N];
    loadChunk<N>(row + c, v);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      float d = mo.centered(v[i]);
      var += static_cast<double>(d * d);
    }
  }
  var = warpSum(var) / static_cast<double>(cols);
  mo.rstd = static_cast<float>(1.0 / sqrt(var + eps));
  return mo;
}

template <typename T, int N>
__global__ void layernormKernel(const T *x, const T *__restrict__ weight,
                                const T *__restrict__ bias, T *y, int64_t rows,
                                int64_t cols, double eps) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = x + r * cols;
    T *yr = y + r * cols;
    Moments mo = rowMoments<T, N>(xr, cols, eps, lane);
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N], w[N], b[N], out[N];
      loadChunk<N>(xr + c, v);
      loadChunk<N>(weight + c, w);
      loadChunk<N>(bias + c, b);
#pragma unroll
      for (int i = 0; i < N; ++i)
        out[i] = mo.centered(v[i]) * mo.rstd * w[i] + b[i];
      storeChunk<N>(yr + c, out);
    }
  }
}

/// stats[3r .. 3r+3) = hi, lo, rstd of row r.
template <typename T, int N>
__global__ void layernormStatsKernel(const T *__restrict__ x,
                                     float *__restrict__ stats, int64_t rows,
                                     int64_t cols, double eps) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    Moments mo = rowMoments<T, N>(x + r * cols, cols, eps, lane);
    if (lane == 0) {
      stats[3 * r] = mo.hi;
      stats[3 * r + 1] = mo.lo;
      stats[3 * r + 2] = mo.rstd;
    }
  }
}

/// partial[chunk][0][c] = sum over the chunk's rows of dy * xhat,
/// partial[chunk][1][c] = sum of dy; one thread per column, blockIdx.y the
/// chunk of rows.
template <typename T>
__global__ void layernormParamGradKernel(const T *__restrict__ dy,
                                         const T *__restrict__ x,
                                         const float *__restrict__ stats,
                                         double *__restrict__ partial,
                                         int64_t rows, int64_t cols,
                                         int64_t chunks) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols)
    return;
  int64_t chunk = blockIdx.y;
  int64_t r0 = rows * chunk / chunks, r1 = rows * (chunk + 1) / chunks;
  double sw = 0, sb = 0;
  for (int64_t r = r0; r < r1; ++r) {
    float g = toF32(dy[r * cols + c]);
    float xhat =
        ((toF32(x[r * cols + c]) - stats[3 * r]) - stats[3 * r + 1]) *
        stats[3 * r + 2];
    sw += static_cast<double>(g * xhat);
    sb += static_cast<double>(g);
  }
  partial[(2 * chunk) * cols + c] = sw;
  partial[(2 * chunk + 1) * cols + c] = sb;
}

template <typename T>
__global__ void layernormParamGradFinalKernel(const double *__restrict__ partial,
                                              T *__restrict__ dweight,
                                              T *__restrict__ dbias,
                                              int64_t cols, int64_t chunks) {
  for (int64_t c = firstIndex(); c < cols; c += indexStride()) {
    double sw = 0, sb = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      sw += partial[(2 * k) * cols + c];
      sb += partial[(2 * k + 1) * cols + c];
    }
    fromF32(static_cast<float>(sw), dweight[c]);
    fromF32(static_cast<float>(sb), dbias[c]);
  }
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight.
template <typename T, int N>
__global__ void layernormDxKernel(const T *dy, const T *__restrict__ x,
                                  const T *__restrict__ weight,
                                  const float *__restrict__ stats, T *dx,
                                  int64_t rows, int64_t cols) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *dyr = dy + r * cols, *xr = x + r * cols;
    T *dxr = dx + r * cols;
    float hi = stats[3 * r], lo = stats[3 * r + 1], rstd = stats[3 * r + 2];
    double sumG = 0, sumGX = 0;
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], xv[N], w[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(xr + c, xv);
      loadChunk<N>(weight + c, w);
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float gi = g[i] * w[i];
        float xhat = ((xv[i] - hi) - lo) * rstd;
        sumG += static_cast<double>(gi);
        sumGX += static_cast<double>(gi * xhat);
      }
    }
    float meanG = static_cast<float>(warpSum(sumG) / static_cast<double>(cols));
    float meanGX =
        static_cast<float>(warpSum(sumGX) / static_cast<double>(cols));
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], xv[N], w[N], out[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(xr + c, xv);
      loadChunk<N>(weight + c, w);
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float gi = g[i] * w[i];
        float xhat = ((xv[i] - hi) - lo) * rstd;
        out[i] = rstd * (gi - meanG - xhat * meanGX);
      }
      storeChunk<N>(dxr + c, out);
    }
  }
}

template <typename T, int N>
__global__ void softmaxKernel(const T *x, T *y, int64_t rows, int64_t cols) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = x + r * cols;
    T *yr = y + r * cols;
    MaxSum ms;
#pragma unroll 4
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N];
      loadChunk<N>(xr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i)
        ms.add(v[i]);
    }
    ms.warpReduce();
    float inv = 1.0f / ms.s;
#pragma unroll 4
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N];
      loadChunk<N>(xr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[i] = expf(v[i] - ms.m) * inv;
      storeChunk<N>(yr + c, v);
    }
  }
}

template <typename T, int N>
__global__ void softmaxGradKernel(const T *dy, const T *y, T *dx, int64_t rows,
                                  int64_t cols) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *dyr = dy + r * cols, *yr = y + r * cols;
    T *dxr = dx + r * cols;
    double dot = 0;
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], p[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(yr + c, p);
#pragma unroll
      for (int i = 0; i < N; ++i)
        dot += static_cast<double>(g[i] * p[i]);
    }
    float d = static_cast<float>(warpSum(dot));
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float g[N], p[N];
      loadChunk<N>(dyr + c, g);
      loadChunk<N>(yr + c, p);
#pragma unroll
      for (int i = 0; i < N; ++i)
        g[i] = p[i] * (g[i] - d);
      storeChunk<N>(dxr + c, g);
    }
  }
}

} // namespace

extern "C" void zrt_layernorm(zrt_dtype dtype, const void *x,
                              const void *weight, const void *bias, void *y,
                              int64_t rows, int64_t cols, double eps) {
  const char *kernel = "zrt_layernorm";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    bool vec = rowsVectorizable<T>(cols, {x, weight, bias, y});
    withChunk<T>(vec, [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      layernormKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                              computeStream()>>>(
          static_cast<const T *>(x), static_cast<const T *>(weight),
          static_cast<const T *>(bias), static_cast<T *>(y), rows, cols, eps);
      checkLaunch("layernormKernel");
    });
  });
}

extern "C" void zrt_layernorm_grad(zrt_dtype dtype, const void *dy,
                                   const void *x, const void *weight,
                                   void *dx, void *dweight, void *dbias,
                                   int64_t rows, int64_t cols, double eps) {
  const char *kernel = "zrt_layernorm_grad";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols == 0)
      return;
    cudaStream_t stream = computeStream();
    const T *dyT = static_cast<const T *>(dy), *xT = static_cast<const T *>(x);
    const T *wT = static_cast<const T *>(weight);
    bool vec = rowsVectorizable<T>(cols, {dy, x, weight, dx});
    // Chunks of rows for the parameter gradients: about 4 blocks per SM,
    // at least 32 rows each.
    constexpr int colThreads = 256;
    int64_t colBlocks = (cols + colThreads - 1) / colThreads;
    int64_t chunks = 0;
    if (rows > 0) {
      int64_t want = (4 * static_cast<int64_t>(multiprocessors()) +
                      colBlocks - 1) / colBlocks;
      chunks = std::min<int64_t>({want, (rows + 31) / 32, 65535});
      chunks = std::max<int64_t>(chunks, 1);
    }
    Scratch stats(static_cast<size_t>(rows) * 3 * sizeof(float));
    Scratch partial(static_cast<size_t>(chunks) * 2 * cols * sizeof(double));
    if (rows > 0) {
      withChunk<T>(vec, [&](auto chunk) {
        constexpr int N = decltype(chunk)::value;
        layernormStatsKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                     stream>>>(xT, stats.as<float>(), rows,
                                               cols, eps);
        checkLaunch("layernormStatsKernel");
      });
      layernormParamGradKernel<T><<<dim3(static_cast<unsigned>(colBlocks),
                                         static_cast<unsigned>(chunks)),
                                    colThreads, 0, stream>>>(
          dyT, xT, stats.as<float>(), partial.as<double>(), rows, cols,
          chunks);
      checkLaunch("layernormParamGradKernel");
    }
    layernormParamGradFinalKernel<T><<<blocksFor(cols), 256, 0, stream>>>(
        partial.as<double>(), static_cast<T *>(dweight),
        static_cast<T *>(dbias), cols, chunks);
    checkLaunch("layernormParamGradFinalKernel");
    if (rows > 0) {
      withChunk<T>(vec, [&](auto chunk) {
        constexpr int N = decltype(chunk)::value;
        layernormDxKernel<T, N><<<rowBlocks(rows), kRowThreads, 0, stream>>>(
            dyT, xT, wT, stats.as<float>(), static_cast<T *>(dx), rows, cols);
        checkLaunch("layernormDxKernel");
      });
    }
  });
}

extern "C" void zrt_softmax(zrt_dtype dtype, const void *x, void *y,
                            int64_t rows, int64_t cols) {
  const char *kernel = "zrt_softmax";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    withChunk<T>(rowsVectorizable<T>(cols, {x, y}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      softmaxKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                            computeStream()>>>(
          static_cast<const T *>(x), static_cast<T *>(y), rows, cols);
      checkLaunch("softmaxKernel");
    });
  });
}

extern "C" void zrt_softmax_grad(zrt_dtype dtype, const void *dy,
                                 const void *y, void *dx, int64_t rows,
                                 int64_t cols) {
  const char *kernel = "zrt_softmax_grad";
  checkRows(kernel, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || cols == 0)
      return;
    withChunk<T>(rowsVectorizable<T>(cols, {dy, y, dx}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      softmaxGradKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                computeStream()>>>(
          static_cast<const T *>(dy), static_cast<const T *>(y),
          static_cast<T *>(dx), rows, cols);
      checkLaunch("softmaxGradKernel");
    });
  });
}
