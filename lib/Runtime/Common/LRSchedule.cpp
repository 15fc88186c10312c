//===- LRSchedule.cpp - zrt_lr_schedule, shared by the CPU and CUDA runtimes ===//
//
// The learning rate depends on the step alone, so both runtimes compute it
// on the host (nanoGPT's linear warmup and cosine decay).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Runtime/zrt.h"

#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" float zrt_lr_schedule(int64_t step, double lr,
                                 zrt_lr_kind schedule, int64_t warmup,
                                 double min_lr, int64_t max_steps) {
  // Read as an int (a C caller may pass any; see KernelArgs.h's enumBits).
  int kind;
  std::memcpy(&kind, &schedule, sizeof kind);
  if (kind == ZRT_LR_CONSTANT)
    return static_cast<float>(lr);
  if (kind != ZRT_LR_COSINE)
    zrt_fail("zrt_lr_schedule: unknown schedule %d (ZRT_LR_CONSTANT (0) or "
             "ZRT_LR_COSINE (1))",
             kind);
  double s = static_cast<double>(step);
  if (step < warmup)
    return static_cast<float>(lr * (s + 1) / static_cast<double>(warmup + 1));
  if (step > max_steps)
    return static_cast<float>(min_lr);
  if (max_steps <= warmup)
    zrt_fail("zrt_lr_schedule: the cosine schedule needs max_steps (%lld) > "
             "warmup (%lld)",
             static_cast<long long>(max_steps), static_cast<long long>(warmup));
  const double pi = 3.14159265358979323846;
  double progress = (s - static_cast<double>(warmup)) /
                    static_cast<double>(max_steps - warmup);
  return static_cast<float>(min_lr +
                            0.5 * (1.0 + std::cos(pi * progress)) * (lr - min_lr));
}
