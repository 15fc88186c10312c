//===- KernelsOptimizer.cpp - norms, clipping, schedule, AdamW, SGD -------===//
//
// As TrainOptimizerOps.td describes them (PyTorch's torch.optim.AdamW and
// torch.optim.SGD, clip_grad_norm_, nanoGPT's cosine schedule). Scalars are
// computed in double; the elementwise updates run in f32 with the step's
// constants hoisted, in parallel over fixed blocks.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"
#include "../Common/AdamStep.h"
#include "../Common/StepGuard.h"
#include "../Common/BufferSegments.h"

#include <cmath>
#include <vector>

using namespace zeroc::rt;

namespace {

template <typename T>
ZRT_HOT double sumSquares(const T *x, int64_t n, float *scratch) {
  const float *xf = rowF32(x, scratch, n);
  return rowDot(xf, xf, n);
}

// `gs` multiplies each gradient first (1 when there is no grad_scale: x * 1
// is x, so the unscaled update is unchanged).
ZRT_HOT void adamwRange(float *param, const float *grad, float gs, float *m,
                        float *v, int64_t i0, int64_t i1, const AdamStep &s) {
  for (int64_t i = i0; i < i1; ++i) {
    float g = grad[i] * gs;
    float p = param[i] * s.decay;
    float mi = s.beta1 * m[i] + s.oneMinusBeta1 * g;
    float vi = s.beta2 * v[i] + s.oneMinusBeta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] = p - s.stepSize * (mi / (std::sqrt(vi) / s.bc2Sqrt + s.eps));
  }
}

ZRT_HOT void sgdRange(float *param, const float *grad, float *buffer,
                      int64_t i0, int64_t i1, float lr, float momentum,
                      float weightDecay) {
  for (int64_t i = i0; i < i1; ++i) {
    float d = grad[i] + weightDecay * param[i];
    float b = buffer ? momentum * buffer[i] + d : d;
    if (buffer)
      buffer[i] = b;
    param[i] = param[i] - lr * b;
  }
}

constexpr int64_t kBlock = 1 << 14; // elements per task of the updates

} // namespace

extern "C" void zrt_squared_norm(zrt_dtype dtype, const void *x, int64_t n,
                                 float *out) {
  checkNonNegative("zrt_squared_norm", "n", n);
  double total = 0;
  dispatchFloat("zrt_squared_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *xt = static_cast<const T *>(x);
    int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<double> partial(blocks);
    parallelFor(blocks, kBlock, [&](int64_t b0, int64_t b1) {
      std::unique_ptr<float[]> scratch = scratchF32(kBlock);
      for (int64_t b = b0; b < b1; ++b)
        partial[b] = sumSquares(xt + b * kBlock,
                                std::min(kBlock, n - b * kBlock),
                                scratch.get());
    });
    for (double p : partial)
      total += p;
  });
  *out = static_cast<float>(total);
  guard::noteSquaredNorm(*out); // --skip-nonfinite (Common/StepGuard.h)
}

extern "C" void zrt_clip_coef(const float *squared_norm, double max_norm,
                              float *out) {
  double norm = std::sqrt(static_cast<double>(*squared_norm));
  *out = static_cast<float>(std::min(1.0, max_norm / (norm + 1e-6)));
}

extern "C" void zrt_adamw(float *param, const float *grad,
                          const float *grad_scale, float *exp_avg,
                          float *exp_avg_sq, int64_t n, float lr, int64_t step,
                          double beta1, double beta2, double eps,
                          double weight_decay) {
  checkNonNegative("zrt_adamw", "n", n);
  checkNonNegative("zrt_adamw", "step", step);
  if (!guard::allowUpdate()) // a non-finite step under --skip-nonfinite
    return;
  AdamStep s = adamStep(lr, step, beta1, beta2, eps, weight_decay);
  float gs = grad_scale ? *grad_scale : 1.0f;
  parallelFor((n + kBlock - 1) / kBlock, kBlock * 4, [&](int64_t b0,
                                                        int64_t b1) {
    adamwRange(param, grad, gs, exp_avg, exp_avg_sq, b0 * kBlock,
               std::min(n, b1 * kBlock), s);
  });
}

extern "C" void zrt_sgd(float *param, const float *grad,
                        float *momentum_buffer, int64_t n, float lr,
                        double momentum, double weight_decay) {
  checkNonNegative("zrt_sgd", "n", n);
  if (!momentum_buffer && momentum != 0.0)
    zrt_fail("zrt_sgd: momentum %g needs a momentum buffer", momentum);
  if (!guard::allowUpdate()) // a non-finite step under --skip-nonfinite
    return;
  float mom = static_cast<float>(momentum), wd = static_cast<float>(weight_decay);
  parallelFor((n + kBlock - 1) / kBlock, kBlock * 3, [&](int64_t b0,
                                                        int64_t b1) {
    sgdRange(param, grad, momentum_buffer, b0 * kBlock,
             std::min(n, b1 * kBlock), lr, mom, wd);
  });
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
  if (!guard::allowUpdate()) // a non-finite step under --skip-nonfinite
    return;
  AdamStep with = adamStep(lr, step, beta1, beta2, eps, weight_decay);
  AdamStep without = adamStep(lr, step, beta1, beta2, eps, 0.0);
  float gs = grad_scale ? *grad_scale : 1.0f;
  // Blocks of the whole shard in parallel; each block applies the runs it
  // meets (the update of an element does not depend on the blocking).
  parallelFor((n + kBlock - 1) / kBlock, kBlock * 4, [&](int64_t b0,
                                                        int64_t b1) {
    int64_t lo = b0 * kBlock, hi = std::min(n, b1 * kBlock);
    for (const DecayRun &run : runs) {
      int64_t i0 = std::max(lo, run.begin), i1 = std::min(hi, run.end);
      if (i0 < i1)
        adamwRange(param, grad, gs, exp_avg, exp_avg_sq, i0, i1,
                   run.decay ? with : without);
    }
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
  if (!guard::allowUpdate()) // a non-finite step under --skip-nonfinite
    return;
  float mom = static_cast<float>(momentum),
        wd = static_cast<float>(weight_decay);
  parallelFor((n + kBlock - 1) / kBlock, kBlock * 3, [&](int64_t b0,
                                                        int64_t b1) {
    int64_t lo = b0 * kBlock, hi = std::min(n, b1 * kBlock);
    for (const DecayRun &run : runs) {
      int64_t i0 = std::max(lo, run.begin), i1 = std::min(hi, run.end);
      if (i0 < i1)
        sgdRange(param, grad, momentum_buffer, i0, i1, lr, mom,
                 run.decay ? wd : 0.0f);
    }
  });
}
