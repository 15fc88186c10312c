//===- AdamStep.h - one AdamW step's constants, CPU and CUDA ------*- C++ -*-===//
//
// Both runtimes apply torch.optim.AdamW with these f32 constants, computed
// on the host in double once per update (t = step + 1).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_ADAMSTEP_H
#define ZEROC_LIB_RUNTIME_COMMON_ADAMSTEP_H

#include <cmath>
#include <cstdint>

namespace zeroc::rt {

struct AdamStep {
  float decay; // 1 - lr * weight_decay
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2;
  float stepSize; // lr / (1 - beta1^t)
  float bc2Sqrt;  // sqrt(1 - beta2^t)
  float eps;
};

inline AdamStep adamStep(float lr, int64_t step, double beta1, double beta2,
                         double eps, double weight_decay) {
  double t = static_cast<double>(step) + 1.0;
  AdamStep s;
  s.decay = static_cast<float>(1.0 - static_cast<double>(lr) * weight_decay);
  s.beta1 = static_cast<float>(beta1);
  s.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
  s.beta2 = static_cast<float>(beta2);
  s.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
  s.stepSize = static_cast<float>(static_cast<double>(lr) /
                                  (1.0 - std::pow(beta1, t)));
  s.bc2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)));
  s.eps = static_cast<float>(eps);
  return s;
}

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_ADAMSTEP_H
