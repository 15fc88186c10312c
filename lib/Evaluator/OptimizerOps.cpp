//===- OptimizerOps.cpp - the train dialect's optimizer math --------------===//
//
// lr_schedule, squared_norm, clip_coef, adamw_update and sgd_update exactly
// as TrainOptimizerOps.td describes them (which follows PyTorch and
// nanoGPT). Each formula is evaluated in double and its results rounded
// once by the interpreter.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

constexpr double kPi = 3.14159265358979323846;

LogicalResult evalLRSchedule(LRScheduleOp op, Operands in, Results &out,
                             RankContext &) {
  double step = in[0]->data[0];
  double lr = op.getLr().convertToDouble();
  if (op.getSchedule() == LRSchedule::constant) {
    out[0].data[0] = lr;
    return success();
  }
  double warmup = static_cast<double>(op.getWarmup());
  double maxSteps = static_cast<double>(op.getMaxSteps());
  double minLr = op.getMinLr().convertToDouble();
  double value;
  if (step < warmup) {
    value = lr * (step + 1) / (warmup + 1);
  } else if (step > maxSteps) {
    value = minLr;
  } else {
    if (maxSteps <= warmup)
      return op.emitOpError("the cosine schedule needs max_steps (")
             << op.getMaxSteps() << ") > warmup (" << op.getWarmup() << ")";
    double progress = (step - warmup) / (maxSteps - warmup);
    value = minLr + 0.5 * (1.0 + std::cos(kPi * progress)) * (lr - minLr);
  }
  out[0].data[0] = value;
  return success();
}

LogicalResult evalSquaredNorm(SquaredNormOp, Operands in, Results &out,
                              RankContext &) {
  double sum = 0;
  for (double value : in[0]->data)
    sum += value * value;
  out[0].data[0] = sum;
  return success();
}

LogicalResult evalClipCoef(ClipCoefOp op, Operands in, Results &out,
                           RankContext &) {
  double maxNorm = op.getMaxNorm().convertToDouble();
  double norm = std::sqrt(in[0]->data[0]);
  out[0].data[0] = std::min(1.0, maxNorm / (norm + 1e-6));
  return success();
}

/// Whether element i of an update's n elements takes weight decay: all do,
/// unless `decay_ranges` names the logical indices (rank * n + i, or i with
/// `replicated`) that do.
class DecayMask {
public:
  DecayMask(std::optional<ArrayRef<int64_t>> ranges, int64_t rank, int64_t n)
      : ranges(ranges), first(rank * n) {}
  bool operator()(int64_t i) const {
    if (!ranges)
      return true;
    int64_t index = first + i;
    for (size_t k = 0; k + 1 < ranges->size(); k += 2)
      if ((*ranges)[k] <= index && index < (*ranges)[k + 1])
        return true;
    return false;
  }

private:
  std::optional<ArrayRef<int64_t>> ranges;
  int64_t first;
};

LogicalResult evalAdamWUpdate(AdamWUpdateOp op, Operands in, Results &out,
                              RankContext &context) {
  const Tensor &param = *in[0], &grad = *in[1], &expAvg = *in[2],
               &expAvgSq = *in[3];
  double lr = in[4]->data[0];
  double t = in[5]->data[0] + 1; // the step counts from 0
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double weightDecay = op.getWeightDecay().convertToDouble();
  double correction1 = 1.0 - std::pow(beta1, t);
  double correction2 = 1.0 - std::pow(beta2, t);
  DecayMask decays(op.getDecayRanges(), op.getReplicated() ? 0 : context.rank,
                   param.numElements());
  // grad_scale (operand 6): the f32 product train.mul would have rounded.
  const Tensor *scale = in.size() > 6 ? in[6] : nullptr;
  for (int64_t i = 0; i < param.numElements(); ++i) {
    double p = param.data[i], g = grad.data[i];
    if (scale)
      g = static_cast<double>(static_cast<float>(g * scale->data[0]));
    if (decays(i))
      p = p - lr * weightDecay * p;
    double m = beta1 * expAvg.data[i] + (1.0 - beta1) * g;
    double v = beta2 * expAvgSq.data[i] + (1.0 - beta2) * g * g;
    p = p - lr * (m / correction1) / (std::sqrt(v / correction2) + eps);
    out[0].data[i] = p;
    out[1].data[i] = m;
    out[2].data[i] = v;
  }
  return success();
}

LogicalResult evalSGDUpdate(SGDUpdateOp op, Operands in, Results &out,
                            RankContext &context) {
  const Tensor &param = *in[0], &grad = *in[1], &buffer = *in[2];
  double lr = in[3]->data[0];
  double momentum = op.getMomentum().convertToDouble();
  double weightDecay = op.getWeightDecay().convertToDouble();
  DecayMask decays(op.getDecayRanges(), op.getReplicated() ? 0 : context.rank,
                   param.numElements());
  for (int64_t i = 0; i < param.numElements(); ++i) {
    double d = grad.data[i] + (decays(i) ? weightDecay * param.data[i] : 0.0);
    double b = momentum * buffer.data[i] + d;
    out[0].data[i] = param.data[i] - lr * b;
    out[1].data[i] = b;
  }
  return success();
}

} // namespace

void registerOptimizerOps(OpRegistry &registry) {
  registry.add<LRScheduleOp>(evalLRSchedule);
  registry.add<SquaredNormOp>(evalSquaredNorm);
  registry.add<ClipCoefOp>(evalClipCoef);
  registry.add<AdamWUpdateOp>(evalAdamWUpdate);
  registry.add<SGDUpdateOp>(evalSGDUpdate);
}

} // namespace zeroc::eval
