//===- StepGuard.cpp - skipping a step's update on a non-finite norm ------===//

#include "StepGuard.h"

#include <cmath>

#ifndef ZEROC_STEP_GUARD_SKIP
#define ZEROC_STEP_GUARD_SKIP 1
#endif

namespace zeroc::rt::guard {

namespace {

// The runtime calls these from one thread (the step's), between kernels.
bool armed = false;
bool decided = false;
bool allow = true;
bool sawNorm = false;
float sum = 0.0f;
float (*combiner)(float) = nullptr;

} // namespace

bool skipSupported() { return ZEROC_STEP_GUARD_SKIP != 0; }

void beginStep(bool arm) {
  armed = arm && skipSupported();
  decided = false;
  allow = true;
  sawNorm = false;
  sum = 0.0f;
}

void noteSquaredNorm(float value) {
  if (!armed || decided)
    return;
  // In call order and in f32, as the generated step adds its partial norms.
  sum = sawNorm ? sum + value : value;
  sawNorm = true;
}

bool allowUpdate() {
  if (!armed)
    return true;
  if (!decided) {
    decided = true;
    float global = combiner ? combiner(sum) : sum;
    allow = std::isfinite(global);
  }
  return allow;
}

bool skippedThisStep() { return armed && decided && !allow; }

void setCombiner(float (*combine)(float)) { combiner = combine; }

} // namespace zeroc::rt::guard
