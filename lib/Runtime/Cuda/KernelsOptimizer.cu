//===- KernelsOptimizer.cu - norms, clipping, AdamW, SGD ------------------===//
//
// As the CPU runtime (KernelsOptimizer.cpp): torch.optim.AdamW and
// torch.optim.SGD elementwise in f32 with the step's constants computed on
// the host in double; clip_grad_norm_'s coefficient in double, read from and
// written to device memory by a one-thread kernel (no host
// synchronisation). The squared norm accumulates f32 squares in double: per
// thread over a grid-stride loop, per block, then the blocks' sums added in
// a fixed order by one block (deterministic). zrt_lr_schedule is host code
// shared with the CPU runtime (lib/Runtime/Common/LRSchedule.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"
#include "../Common/AdamStep.h"
#include "../Common/BufferSegments.h"

#include <cmath>

using namespace zeroc::rt::cuda;
using zeroc::rt::AdamStep;
using zeroc::rt::adamStep;
using zeroc::rt::DecayRun;
using zeroc::rt::decayRuns;

namespace {

constexpr int kThreads = 256;

/// partial[block] = sum of x^2 over the block's share, in double; N-element
/// chunks (16-byte loads when N > 1), the last n % N elements by block 0.
template <typename T, int N>
__global__ void sumSquaresKernel(const T *__restrict__ x, int64_t n,
                                 double *__restrict__ partial) {
  __shared__ double shared[kWarp];
  double sum = 0;
  int64_t chunks = n / N;
  for (int64_t i = firstIndex(); i < chunks; i += indexStride()) {
    float v[N];
    loadChunk<N>(x + i * N, v);
#pragma unroll
    for (int j = 0; j < N; ++j)
      sum += static_cast<double>(v[j] * v[j]);
  }
  if (blockIdx.x == 0 && threadIdx.x < n - chunks * N) {
    float v = toF32(x[chunks * N + threadIdx.x]);
    sum += static_cast<double>(v * v);
  }
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = sum;
}

__global__ void sumPartialsKernel(const double *__restrict__ partial,
                                  int64_t count, float *__restrict__ out) {
  __shared__ double shared[kWarp];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    sum += partial[i];
  sum = blockSum(sum, shared);
  if (threadIdx.x == 0)
    *out = static_cast<float>(sum);
}

__global__ void clipCoefKernel(const float *squaredNorm,
                               double maxNorm, float *out) {
  double norm = sqrt(static_cast<double>(*squaredNorm));
  double q = maxNorm / (norm + 1e-6);
  *out = static_cast<float>(q < 1.0 ? q : 1.0); // std::min(1.0, q)
}

__device__ __forceinline__ void adamwElement(float &param, float g, float &m,
                                             float &v, const AdamStep &s) {
  float p = param * s.decay;
  float mi = s.beta1 * m + s.oneMinusBeta1 * g;
  float vi = s.beta2 * v + s.oneMinusBeta2 * g * g;
  m = mi;
  v = vi;
  param = p - s.stepSize * (mi / (sqrtf(vi) / s.bc2Sqrt + s.eps));
}

/// N = 4: float4 accesses (every pointer 16-byte aligned), the last n % 4
/// elements by block 0.
/// gradScale: NULL or one f32 each gradient is multiplied by first (x * 1
/// is x, so the unscaled update is unchanged).
template <int N>
__global__ void adamwKernel(float *__restrict__ param,
                            const float *__restrict__ grad,
                            const float *__restrict__ gradScale,
                            float *__restrict__ expAvg,
                            float *__restrict__ expAvgSq, int64_t n,
                            AdamStep s) {
  float gs = gradScale ? *gradScale : 1.0f;
  int64_t chunks = n / N;
  for (int64_t i = firstIndex(); i < chunks; i += indexStride()) {
    float p[N], g[N], m[N], v[N];
    loadChunk<N>(param + i * N, p);
    loadChunk<N>(grad + i * N, g);
    loadChunk<N>(expAvg + i * N, m);
    loadChunk<N>(expAvgSq + i * N, v);
#pragma unroll
    for (int j = 0; j < N; ++j)
      adamwElement(p[j], g[j] * gs, m[j], v[j], s);
    storeChunk<N>(param + i * N, p);
    storeChunk<N>(expAvg + i * N, m);
    storeChunk<N>(expAvgSq + i * N, v);
  }
  if (blockIdx.x == 0 && threadIdx.x < n - chunks * N) {
    int64_t i = chunks * N + threadIdx.x;
    adamwElement(param[i], grad[i] * gs, expAvg[i], expAvgSq[i], s);
  }
}

__device__ __forceinline__ void sgdElement(float &param, float g,
                                           float *buffer, float lr,
                                           float momentum, float weightDecay) {
  float d = g + weightDecay * param;
  float b = d;
  if (buffer) {
    b = momentum * *buffer + d;
    *buffer = b;
  }
  param = param - lr * b;
}

__global__ void sgdKernel(float *__restrict__ param,
                          const float *__restrict__ grad,
                          float *__restrict__ buffer, int64_t n, float lr,
                          float momentum, float weightDecay) {
  for (int64_t i = firstIndex(); i < n; i += indexStride())
    sgdElement(param[i], grad[i], buffer ? buffer + i : nullptr, lr, momentum,
               weightDecay);
}

/// Up to kMaxRuns runs of a flat buffer's shard, passed by value: run r
/// is elements [begin[r], end[r]) with or without weight decay.
constexpr int kMaxRuns = 128;
struct Runs {
  int64_t begin[kMaxRuns];
  int64_t end[kMaxRuns];
  uint8_t decay[kMaxRuns];
};

/// One block row per run (blockIdx.y), grid-stride over its elements.
__global__ void adamwBufferKernel(float *__restrict__ param,
                                  const float *__restrict__ grad,
                                  const float *__restrict__ gradScale,
                                  float *__restrict__ expAvg,
                                  float *__restrict__ expAvgSq, Runs runs,
                                  AdamStep with, AdamStep without) {
  int r = blockIdx.y;
  const AdamStep &s = runs.decay[r] ? with : without;
  float gs = gradScale ? *gradScale : 1.0f;
  for (int64_t i = runs.begin[r] + firstIndex(); i < runs.end[r];
       i += indexStride())
    adamwElement(param[i], grad[i] * gs, expAvg[i], expAvgSq[i], s);
}

__global__ void sgdBufferKernel(float *__restrict__ param,
                                const float *__restrict__ grad,
                                float *__restrict__ buffer, Runs runs,
                                float lr, float momentum, float weightDecay) {
  int r = blockIdx.y;
  float wd = runs.decay[r] ? weightDecay : 0.0f;
  for (int64_t i = runs.begin[r] + firstIndex(); i < runs.end[r];
       i += indexStride())
    sgdElement(param[i], grad[i], buffer ? buffer + i : nullptr, lr, momentum,
               wd);
}

/// Launches `launch(grid, runs)` over the runs: one launch for up to
/// kMaxRuns of them (a bucket's members), more only beyond.
template <typename Launch>
void forRuns(const std::vector<DecayRun> &all, Launch &&launch) {
  for (size_t at = 0; at < all.size(); at += kMaxRuns) {
    size_t count = std::min(all.size() - at, static_cast<size_t>(kMaxRuns));
    Runs runs{};
    int64_t longest = 0;
    for (size_t r = 0; r < count; ++r) {
      runs.begin[r] = all[at + r].begin;
      runs.end[r] = all[at + r].end;
      runs.decay[r] = all[at + r].decay ? 1 : 0;
      longest = std::max(longest, all[at + r].end - all[at + r].begin);
    }
    // The blocks of each run: enough for the longest, within the usual cap
    // for the grid as a whole.
    unsigned perRun = blocksFor(longest, kThreads);
    unsigned cap = std::max(
        1u, blocksFor(int64_t{1} << 40, kThreads) / static_cast<unsigned>(count));
    dim3 grid(std::min(perRun, cap), static_cast<unsigned>(count));
    launch(grid, runs);
  }
}

} // namespace

extern "C" void zrt_squared_norm(zrt_dtype dtype, const void *x, int64_t n,
                                 float *out) {
  const char *kernel = "zrt_squared_norm";
  checkNonNegative(kernel, "n", n);
  if (!out)
    zrt_fail("%s: NULL output pointer", kernel);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n == 0) {
      fillScalar(out, 0.0f);
      return;
    }
    cudaStream_t stream = computeStream();
    bool vec = aligned16(x);
    int64_t width = vec ? VecWidth<T>::value : 1;
    unsigned blocks = blocksFor(n / width > 0 ? n / width : 1, kThreads);
    Scratch partial(blocks * sizeof(double));
    withChunk<T>(vec, [&](auto chunk) {
      constexpr int N = decltype(chunk)::value;
      sumSquaresKernel<T, N><<<blocks, kThreads, 0, stream>>>(
          static_cast<const T *>(x), n, partial.as<double>());
      checkLaunch("sumSquaresKernel");
    });
    sumPartialsKernel<<<1, 1024, 0, stream>>>(partial.as<double>(), blocks,
                                              out);
    checkLaunch("sumPartialsKernel");
  });
}

extern "C" void zrt_clip_coef(const float *squared_norm, double max_norm,
                              float *out) {
  if (!squared_norm || !out)
    zrt_fail("zrt_clip_coef: NULL pointer");
  clipCoefKernel<<<1, 1, 0, computeStream()>>>(squared_norm, max_norm, out);
  checkLaunch("clipCoefKernel");
}

extern "C" void zrt_adamw(float *param, const float *grad,
                          const float *grad_scale, float *exp_avg,
                          float *exp_avg_sq, int64_t n, float lr, int64_t step,
                          double beta1, double beta2, double eps,
                          double weight_decay) {
  checkNonNegative("zrt_adamw", "n", n);
  checkNonNegative("zrt_adamw", "step", step);
  if (n == 0)
    return;
  AdamStep s = adamStep(lr, step, beta1, beta2, eps, weight_decay);
  bool vec = aligned16(param) && aligned16(grad) && aligned16(exp_avg) &&
             aligned16(exp_avg_sq);
  cudaStream_t stream = computeStream();
  if (vec) {
    adamwKernel<4><<<blocksFor(n / 4 > 0 ? n / 4 : 1), kThreads, 0, stream>>>(
        param, grad, grad_scale, exp_avg, exp_avg_sq, n, s);
  } else {
    adamwKernel<1><<<blocksFor(n), kThreads, 0, stream>>>(
        param, grad, grad_scale, exp_avg, exp_avg_sq, n, s);
  }
  checkLaunch("adamwKernel");
}

extern "C" void zrt_sgd(float *param, const float *grad,
                        float *momentum_buffer, int64_t n, float lr,
                        double momentum, double weight_decay) {
  checkNonNegative("zrt_sgd", "n", n);
  if (!momentum_buffer && momentum != 0.0)
    zrt_fail("zrt_sgd: momentum %g needs a momentum buffer", momentum);
  if (n == 0)
    return;
  sgdKernel<<<blocksFor(n), kThreads, 0, computeStream()>>>(
      param, grad, momentum_buffer, n, lr, static_cast<float>(momentum),
      static_cast<float>(weight_decay));
  checkLaunch("sgdKernel");
}

extern "C" void zrt_adamw_buffer(float *param, const float *grad,
                                 const float *grad_scale, float *exp_avg, float *exp_avg_sq, int64_t n,
                                 int64_t first, int segments,
                                 const int64_t *segment_begin,
                                 const int64_t *segment_end,
                                 const uint8_t *decay, float lr, int64_t step,
                                 double beta1, double beta2, double eps,
                                 double weight_decay) {
  const char *kernel = "zrt_adamw_buffer";
  checkNonNegative(kernel, "step", step);
  std::vector<DecayRun> runs = decayRuns(kernel, n, first, segments,
                                         segment_begin, segment_end, decay);
  if (n == 0)
    return;
  AdamStep with = adamStep(lr, step, beta1, beta2, eps, weight_decay);
  AdamStep without = adamStep(lr, step, beta1, beta2, eps, 0.0);
  forRuns(runs, [&](dim3 grid, const Runs &r) {
    adamwBufferKernel<<<grid, kThreads, 0, computeStream()>>>(
        param, grad, grad_scale, exp_avg, exp_avg_sq, r, with, without);
    checkLaunch("adamwBufferKernel");
  });
}

extern "C" void zrt_sgd_buffer(float *param, const float *grad,
                               float *momentum_buffer, int64_t n,
                               int64_t first, int segments,
                               const int64_t *segment_begin,
                               const int64_t *segment_end,
                               const uint8_t *decay, float lr,
                               double momentum, double weight_decay) {
  const char *kernel = "zrt_sgd_buffer";
  if (!momentum_buffer && momentum != 0.0)
    zrt_fail("%s: momentum %g needs a momentum buffer", kernel, momentum);
  std::vector<DecayRun> runs = decayRuns(kernel, n, first, segments,
                                         segment_begin, segment_end, decay);
  if (n == 0)
    return;
  forRuns(runs, [&](dim3 grid, const Runs &r) {
    sgdBufferKernel<<<grid, kThreads, 0, computeStream()>>>(
        param, grad, momentum_buffer, r, lr, static_cast<float>(momentum),
        static_cast<float>(weight_decay));
    checkLaunch("sgdBufferKernel");
  });
}
