//===- StepGuard.h - skipping a step's update on a non-finite norm -*- C++ -*-===//
//
// What `--skip-nonfinite K` needs from the kernels. A generated training
// step computes the global gradient norm (train.squared_norm of every
// gradient, summed, all-reduced at ZeRO stages 1-3) before any optimizer
// update runs. With the guard armed for a step, zrt_squared_norm reports
// each squared norm it computes here, and the first zrt_adamw or zrt_sgd of
// the step decides: it sums the reports in f32 as the generated code does,
// combines them over ranks the way the step does (the runtime installs the
// combiner: an all-reduce at stages 1-3), and if the result is not finite,
// every update of the step is skipped on every rank: parameters, master
// copies and moments keep their values, as torch.cuda.amp.GradScaler skips
// optimizer.step(). The step counter still advances.
//
// Disarmed (the default, and always outside a training step) the kernels
// update as usual. Plain C++17; the CPU kernels use it; the CUDA runtime
// compiles it with skipping unsupported (skipSupported() is false).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RUNTIME_COMMON_STEPGUARD_H
#define ZEROC_RUNTIME_COMMON_STEPGUARD_H

namespace zeroc::rt::guard {

/// Whether this runtime's kernels honour the guard.
bool skipSupported();

/// Before a training step: arms (or disarms) the guard and forgets the
/// previous step's reports and decision.
void beginStep(bool armed);

/// zrt_squared_norm: one squared norm it computed (as the f32 it returns).
void noteSquaredNorm(float value);

/// zrt_adamw, zrt_sgd: false when the step's updates are to be skipped.
/// The first call of an armed step decides, for the whole step.
bool allowUpdate();

/// After the step: true when its updates were skipped.
bool skippedThisStep();

/// How ranks combine their summed squared norms (nullptr: they are
/// already global, ZeRO stage 0). Called by allowUpdate on every rank at
/// the same point of the step.
void setCombiner(float (*combine)(float));

} // namespace zeroc::rt::guard

#endif // ZEROC_RUNTIME_COMMON_STEPGUARD_H
