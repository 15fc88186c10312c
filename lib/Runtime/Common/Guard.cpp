//===- Guard.cpp - the divergence guard: non-finite losses and norms ------===//
//
// After every training step, every rank learns the mean loss and whether
// any rank saw a non-finite loss or gradient norm (one all-reduce of two
// numbers, the same collective that used to average the loss). A
// non-finite step stops the run with an error naming the step, and the
// final --save is skipped, so the last good checkpoint stays.
//
// --skip-nonfinite K: the kernels skip the updates of a step whose global
// gradient norm is not finite (Common/StepGuard.h: the norm is computed
// before the updates inside the step), as AMP's gradient scaler skips
// optimizer.step(); such a step is reported as a warning, and the run
// stops once more than K steps were skipped.
//
// checkpointRefusal() is what the checkpoint code asks before it writes:
// no checkpoint from a diverged run or from non-finite state.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include "StepGuard.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace zeroc::rt {

namespace {

int64_t skipLimit = 0;
int64_t skippedSteps = 0;
bool diverged = false;
std::string divergence; // why the run stopped

/// The step guard's combiner at ZeRO stages 1-3: each rank holds the
/// squared norms of its shards.
float sumSquaredNorms(float local) {
  double value = local;
  sumOverRanks(&value, 1);
  return static_cast<float>(value);
}

std::string describe(const char *what, double value) {
  return std::string(what) + " is " +
         (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
}

/// Whether every element this rank holds of `state` (zrt_state_range: the
/// whole tensor in its own storage, or its share of a flat buffer) is
/// finite; else `index` is the first that is not, counted from state.data.
bool finiteState(const zrt_program &program, const zrt_state &state,
                 int64_t &index) {
  // Gradient buffers are recomputed by every step; what a skipped step
  // left there is no state of the model.
  if (state.kind == ZRT_STATE_GRAD)
    return true;
  int64_t held =
      zrt_state_range(&program, &state, worldRank(), worldSize()).count;
  for (int64_t i = 0; i < held; ++i) {
    float value;
    if (state.dtype == ZRT_BF16)
      value = zrt_bf16_to_f32(static_cast<const uint16_t *>(state.data)[i]);
    else if (state.dtype == ZRT_F32)
      value = static_cast<const float *>(state.data)[i];
    else
      return true;
    if (!std::isfinite(value)) {
      index = i;
      return false;
    }
  }
  return true;
}

} // namespace

std::string configureDivergenceGuard(const zrt_program &program,
                                     int64_t limit) {
  skipLimit = limit;
  if (limit > 0 && !guard::skipSupported())
    return "--skip-nonfinite: this runtime cannot skip a step's update (the "
           "CUDA kernels keep the gradient norm on the device); without the "
           "flag a non-finite step stops the run";
  guard::setCombiner(program.zero_stage >= 1 && worldSize() > 1
                         ? &sumSquaredNorms
                         : nullptr);
  return "";
}

void guardBeginStep(int64_t step) {
  setRunPhase("step", step);
  guard::beginStep(skipLimit > 0);
}

StepCheck checkStep(int64_t step, float loss, float gradNorm) {
  bool finite = std::isfinite(loss) && std::isfinite(gradNorm);
  double values[2] = {static_cast<double>(loss), finite ? 0.0 : 1.0};
  sumOverRanks(values, 2);
  StepCheck check;
  check.meanLoss = values[0] / worldSize();
  check.skipped = guard::skippedThisStep();
  if (values[1] == 0.0)
    return check;
  // Every rank reaches the same decision: the flag is summed over ranks,
  // and the step guard decided from the same global norm everywhere.
  std::string what = !std::isfinite(loss) && !std::isfinite(gradNorm)
                         ? describe("the loss", loss) + " and " +
                               describe("the gradient norm", gradNorm)
                     : !std::isfinite(loss)
                         ? describe("the loss", loss)
                     : !std::isfinite(gradNorm)
                         ? describe("the gradient norm", gradNorm)
                         : "the loss is not finite on another rank";
  if (check.skipped && skippedSteps < skipLimit) {
    ++skippedSteps;
    if (worldRank() == 0) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "zeroc: warning: step %" PRId64
                   ": %s; its update was skipped (%" PRId64 " of "
                   "--skip-nonfinite %" PRId64 ")\n",
                   step, what.c_str(), skippedSteps, skipLimit);
      std::fflush(stderr);
    }
    return check;
  }
  diverged = true;
  check.stop = true;
  divergence = "step " + std::to_string(step) + ": " + what;
  std::string advice;
  if (check.skipped)
    advice = "; more than --skip-nonfinite " + std::to_string(skipLimit) +
             " step(s) were not finite";
  else if (skipLimit > 0)
    advice = "; the update was applied (the gradient norm was finite), so "
             "--skip-nonfinite could not skip it";
  else
    advice = " (lower the learning rate, clip gradients, or let "
             "--skip-nonfinite K skip such steps)";
  if (worldRank() == 0) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "zeroc: error: step %" PRId64
                 ": %s: training diverged%s; stopping without writing a "
                 "checkpoint\n",
                 step, what.c_str(), advice.c_str());
    std::fflush(stderr);
  }
  return check;
}

std::string checkpointRefusal(const zrt_program &program) {
  std::string reason;
  if (diverged)
    reason = "the run diverged at " + divergence;
  // Non-finite state never reaches a checkpoint, whatever the losses said.
  std::string local;
  for (int s = 0; s < program.num_states && local.empty(); ++s) {
    int64_t index = 0;
    if (!finiteState(program, program.states[s], index))
      local = std::string("state '") + program.states[s].name +
              "' holds a non-finite value at element " +
              std::to_string(index) + " of rank " +
              std::to_string(worldRank()) + "'s storage";
  }
  double flags[1] = {local.empty() ? 0.0 : 1.0};
  sumOverRanks(flags, 1);
  if (reason.empty() && flags[0] != 0.0)
    reason = local.empty() ? std::string("a state on another rank holds a "
                                         "non-finite value")
                           : local;
  return reason;
}

} // namespace zeroc::rt
