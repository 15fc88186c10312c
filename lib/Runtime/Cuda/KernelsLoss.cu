//===- KernelsLoss.cu - cross-entropy over the last dimension -------------===//
//
// One warp per row (a vocabulary-wide row: 16-byte vectors when aligned):
// an online (max, sum of exps) in f32 per lane, combined across the warp,
// logsumexp = max + log(sum). The forward kernel writes each row's loss in
// double to scratch, and a one-block kernel adds them in a fixed order and
// writes the mean to *loss (device memory: nothing waits on the host). The
// gradient reads *dloss on the device and writes
// dloss / rows * (softmax - onehot) in the same pass that recomputes the
// exps (in place over the logits works).
//
// The _ex forms add ignore_index and label smoothing: a one-block kernel
// counts the rows whose target is not ignore_index into device scratch,
// the forward divides the rows' sum by it and the gradient scales by
// dloss / count (0 when nothing counts); ignored rows have loss and
// gradient 0.
//
// A target outside [0, cols) is not read: its row's loss is NaN (its
// gradient row has no onehot term) and the device error record names it,
// which zrt_read_f32 reports (the CPU fails at once; a GPU kernel cannot
// without a host synchronisation).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

using namespace zeroc::rt::cuda;

namespace {

template <typename T, int N>
__device__ MaxSum rowMaxSum(const T *row, int64_t cols, int lane) {
  MaxSum ms;
#pragma unroll 4
  for (int64_t c = lane * N; c < cols; c += kWarp * N) {
    float v[N];
    loadChunk<N>(row + c, v);
#pragma unroll
    for (int i = 0; i < N; ++i)
      ms.add(v[i]);
  }
  ms.warpReduce();
  return ms;
}

template <typename T, int N>
__global__ void crossEntropyRowsKernel(const T *__restrict__ logits,
                                       const void *__restrict__ targets,
                                       bool targetsI64,
                                       double *__restrict__ losses,
                                       int64_t rows, int64_t cols,
                                       DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = logits + r * cols;
    MaxSum ms = rowMaxSum<T, N>(xr, cols, lane);
    if (lane == 0) {
      int64_t target = loadId(targets, targetsI64, r);
      double loss;
      if (target < 0 || target >= cols) {
        recordIdError(errors, kIdCrossEntropy, target, r, cols);
        loss = __longlong_as_double(0x7ff8000000000000ll); // NaN
      } else {
        loss = static_cast<double>(ms.m) + log(static_cast<double>(ms.s)) -
               static_cast<double>(toF32(xr[target]));
      }
      losses[r] = loss;
    }
  }
}

/// *out = mean of values[0..n), summed in double in a fixed order (one
/// block).
__global__ void meanKernel(const double *__restrict__ values, int64_t n,
                           float *__restrict__ out) {
  __shared__ double shared[kWarp];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += values[i];
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    *out = static_cast<float>(sum / static_cast<double>(n));
}

template <typename T, int N>
__global__ void crossEntropyGradKernel(const float *__restrict__ dloss,
                                       const T *logits,
                                       const void *__restrict__ targets,
                                       bool targetsI64, T *dlogits,
                                       int64_t rows, int64_t cols,
                                       DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  double coef = static_cast<double>(*dloss) / static_cast<double>(rows);
  float coefF = static_cast<float>(coef);
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = logits + r * cols;
    T *out = dlogits + r * cols;
    MaxSum ms = rowMaxSum<T, N>(xr, cols, lane);
    int64_t target = loadId(targets, targetsI64, r);
    if (target < 0 || target >= cols) {
      if (lane == 0)
        recordIdError(errors, kIdCrossEntropyGrad, target, r, cols);
      target = -1; // no onehot term
    }
    float inv = static_cast<float>(1.0 / static_cast<double>(ms.s));
    float scale = static_cast<float>(coef / static_cast<double>(ms.s));
#pragma unroll 4
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N];
      loadChunk<N>(xr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float e = expf(v[i] - ms.m);
        // (p - 1) * coef at the target, from p itself rather than p * coef.
        v[i] = c + i == target ? (e * inv - 1.0f) * coefF : e * scale;
      }
      storeChunk<N>(out + c, v);
    }
  }
}

/// One block: *count = the number of rows whose target is not ignoreIndex.
__global__ void countKernel(const void *__restrict__ targets, bool targetsI64,
                            int64_t rows, bool hasIgnore, int64_t ignoreIndex,
                            double *__restrict__ count) {
  __shared__ double shared[kWarp];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < rows; i += blockDim.x)
    sum += !hasIgnore || loadId(targets, targetsI64, i) != ignoreIndex ? 1.0
                                                                      : 0.0;
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    *count = sum;
}

/// One block: *out = sum of values[0..n) / *counted (NaN when 0 / 0), or
/// / *given when given (0 when nothing is counted here, NaN when *given is
/// 0 as well: nothing counts in the global batch).
__global__ void sumOverKernel(const double *__restrict__ values, int64_t n,
                              const double *__restrict__ counted,
                              const float *__restrict__ given,
                              float *__restrict__ out) {
  __shared__ double shared[kWarp];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += values[i];
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0) {
    if (!given)
      *out = static_cast<float>(sum / *counted);
    else
      *out = *counted != 0 ? static_cast<float>(
                                 sum / static_cast<double>(*given))
             : *given == 0.0f ? __builtin_nanf("")
                              : 0.0f;
  }
}

/// One block: *count = the number of targets that are not ignoreIndex.
__global__ void countF32Kernel(const void *__restrict__ targets,
                               bool targetsI64, int64_t n,
                               int64_t ignoreIndex, float *__restrict__ count) {
  __shared__ double shared[kWarp];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += loadId(targets, targetsI64, i) != ignoreIndex ? 1.0 : 0.0;
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    *count = static_cast<float>(sum);
}

template <typename T, int N>
__global__ void crossEntropyRowsExKernel(
    const T *__restrict__ logits, const void *__restrict__ targets,
    bool targetsI64, bool hasIgnore, int64_t ignoreIndex, double smoothing,
    double *__restrict__ losses, int64_t rows, int64_t cols,
    DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    int64_t target = loadId(targets, targetsI64, r);
    if (hasIgnore && target == ignoreIndex) {
      if (lane == 0)
        losses[r] = 0;
      continue;
    }
    const T *xr = logits + r * cols;
    MaxSum ms = rowMaxSum<T, N>(xr, cols, lane);
    double all = 0;
    for (int64_t c = lane; c < cols; c += kWarp)
      all += static_cast<double>(toF32(xr[c]));
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      all += __shfl_xor_sync(kFullMask, all, offset);
    if (lane == 0) {
      double loss;
      if (target < 0 || target >= cols) {
        recordIdError(errors, kIdCrossEntropy, target, r, cols);
        loss = __longlong_as_double(0x7ff8000000000000ll); // NaN
      } else {
        double logsumexp =
            static_cast<double>(ms.m) + log(static_cast<double>(ms.s));
        loss = logsumexp -
               (1.0 - smoothing) * static_cast<double>(toF32(xr[target])) -
               smoothing * all / static_cast<double>(cols);
      }
      losses[r] = loss;
    }
  }
}

template <typename T, int N>
__global__ void crossEntropyGradExKernel(
    const float *__restrict__ dloss, const double *__restrict__ count,
    const float *__restrict__ given, const T *logits, const void *__restrict__ targets, bool targetsI64,
    bool hasIgnore, int64_t ignoreIndex, double smoothing, T *dlogits,
    int64_t rows, int64_t cols, DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  double divisor = given ? static_cast<double>(*given) : *count;
  double coef =
      *count == 0 ? 0.0 : static_cast<double>(*dloss) / divisor;
  float coefF = static_cast<float>(coef);
  float uniform = static_cast<float>(smoothing / static_cast<double>(cols));
  float hit = static_cast<float>(1.0 - smoothing);
  for (int64_t r = firstRow(); r < rows; r += rowStride()) {
    const T *xr = logits + r * cols;
    T *out = dlogits + r * cols;
    int64_t target = loadId(targets, targetsI64, r);
    if (hasIgnore && target == ignoreIndex) {
#pragma unroll 4
      for (int64_t c = lane * N; c < cols; c += kWarp * N) {
        float v[N];
#pragma unroll
        for (int i = 0; i < N; ++i)
          v[i] = 0.0f;
        storeChunk<N>(out + c, v);
      }
      continue;
    }
    MaxSum ms = rowMaxSum<T, N>(xr, cols, lane);
    if (target < 0 || target >= cols) {
      if (lane == 0)
        recordIdError(errors, kIdCrossEntropyGrad, target, r, cols);
      target = -1; // no onehot term
    }
    float inv = static_cast<float>(1.0 / static_cast<double>(ms.s));
#pragma unroll 4
    for (int64_t c = lane * N; c < cols; c += kWarp * N) {
      float v[N];
      loadChunk<N>(xr + c, v);
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float p = expf(v[i] - ms.m) * inv - uniform;
        v[i] = (c + i == target ? p - hit : p) * coefF;
      }
      storeChunk<N>(out + c, v);
    }
  }
}

void checkLossArgs(const char *kernel, const void *targets,
                   zrt_dtype targetDtype, int64_t rows, int64_t cols) {
  checkNonNegative(kernel, "rows", rows);
  checkNonNegative(kernel, "cols", cols);
  checkIdDtype(kernel, "target", targets, targetDtype, rows);
}

} // namespace

extern "C" void zrt_cross_entropy(zrt_dtype dtype, const void *logits,
                                  const void *targets, zrt_dtype target_dtype,
                                  int64_t rows, int64_t cols, float *loss) {
  const char *kernel = "zrt_cross_entropy";
  checkLossArgs(kernel, targets, target_dtype, rows, cols);
  if (!loss)
    zrt_fail("%s: NULL loss pointer", kernel);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0) { // the mean of nothing
      fillScalar(loss, __builtin_nanf(""));
      return;
    }
    cudaStream_t stream = computeStream();
    Scratch losses(static_cast<size_t>(rows) * sizeof(double));
    withChunk<T>(rowsVectorizable<T>(cols, {logits}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      crossEntropyRowsKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                     stream>>>(
          static_cast<const T *>(logits), targets, target_dtype == ZRT_I64,
          losses.as<double>(), rows, cols, deviceErrors());
      checkLaunch("crossEntropyRowsKernel");
    });
    meanKernel<<<1, 1024, 0, stream>>>(losses.as<double>(), rows, loss);
    checkLaunch("meanKernel");
  });
}

extern "C" void zrt_cross_entropy_grad(zrt_dtype dtype, const float *dloss,
                                       const void *logits, const void *targets,
                                       zrt_dtype target_dtype, void *dlogits,
                                       int64_t rows, int64_t cols) {
  const char *kernel = "zrt_cross_entropy_grad";
  checkLossArgs(kernel, targets, target_dtype, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0)
      return;
    if (!dloss)
      zrt_fail("%s: NULL dloss pointer", kernel);
    withChunk<T>(rowsVectorizable<T>(cols, {logits, dlogits}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      crossEntropyGradKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                     computeStream()>>>(
          dloss, static_cast<const T *>(logits), targets,
          target_dtype == ZRT_I64, static_cast<T *>(dlogits), rows, cols,
          deviceErrors());
      checkLaunch("crossEntropyGradKernel");
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
  checkLossArgs(kernel, targets, target_dtype, rows, cols);
  if (!loss)
    zrt_fail("%s: NULL loss pointer", kernel);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    // With no rows the count is 0 and sumOverKernel gives what the CPU
    // runtime gives: NaN (the mean of nothing), or with a given count 0
    // (NaN when that count is 0 too).
    cudaStream_t stream = computeStream();
    bool i64 = target_dtype == ZRT_I64;
    Scratch losses(static_cast<size_t>(rows + 1) * sizeof(double));
    double *counted = losses.as<double>() + rows;
    countKernel<<<1, 1024, 0, stream>>>(targets, i64, rows,
                                        has_ignore_index != 0, ignore_index,
                                        counted);
    checkLaunch("countKernel");
    if (rows > 0) // no rows: no blocks to launch
      withChunk<T>(rowsVectorizable<T>(cols, {logits}), [&](auto chunk) {
        constexpr int N = decltype(chunk)::value;
        crossEntropyRowsExKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                         stream>>>(
            static_cast<const T *>(logits), targets, i64,
            has_ignore_index != 0, ignore_index, label_smoothing,
            losses.as<double>(), rows, cols, deviceErrors());
        checkLaunch("crossEntropyRowsExKernel");
      });
    sumOverKernel<<<1, 1024, 0, stream>>>(losses.as<double>(), rows, counted,
                                          count, loss);
    checkLaunch("sumOverKernel");
  });
}

extern "C" void zrt_cross_entropy_grad_ex(
    zrt_dtype dtype, const float *dloss, const void *logits,
    const void *targets, zrt_dtype target_dtype, void *dlogits, int64_t rows,
    int64_t cols, int has_ignore_index, int64_t ignore_index,
    double label_smoothing, const float *count) {
  const char *kernel = "zrt_cross_entropy_grad_ex";
  checkLossArgs(kernel, targets, target_dtype, rows, cols);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0)
      return;
    if (!dloss)
      zrt_fail("%s: NULL dloss pointer", kernel);
    cudaStream_t stream = computeStream();
    bool i64 = target_dtype == ZRT_I64;
    Scratch counted(sizeof(double));
    countKernel<<<1, 1024, 0, stream>>>(targets, i64, rows,
                                        has_ignore_index != 0, ignore_index,
                                        counted.as<double>());
    checkLaunch("countKernel");
    withChunk<T>(rowsVectorizable<T>(cols, {logits, dlogits}), [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      crossEntropyGradExKernel<T, N><<<rowBlocks(rows), kRowThreads, 0,
                                       stream>>>(
          dloss, counted.as<double>(), count, static_cast<const T *>(logits),
          targets,
          i64, has_ignore_index != 0, ignore_index, label_smoothing,
          static_cast<T *>(dlogits), rows, cols, deviceErrors());
      checkLaunch("crossEntropyGradExKernel");
    });
  });
}

extern "C" void zrt_count_targets(const void *targets, zrt_dtype target_dtype,
                                  int64_t n, int64_t ignore_index,
                                  float *count) {
  const char *kernel = "zrt_count_targets";
  checkLossArgs(kernel, targets, target_dtype, n, 0);
  if (!count)
    zrt_fail("%s: NULL count pointer", kernel);
  countF32Kernel<<<1, 1024, 0, computeStream()>>>(
      targets, target_dtype == ZRT_I64, n, ignore_index, count);
  checkLaunch("countF32Kernel");
}
