//===- TrainStepPhases.cpp - forward, backward, optimizer -----------------===//

#include "zeroc/Dialect/Train/IR/TrainStepPhases.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <algorithm>

using namespace mlir;

namespace zeroc::train {

StringRef stepPhaseName(StepPhase phase) {
  switch (phase) {
  case StepPhase::Forward:
    return "forward";
  case StepPhase::Backward:
    return "backward";
  case StepPhase::Optimizer:
    return "optimizer";
  }
  return "forward";
}

llvm::DenseMap<Operation *, StepPhase> stepPhases(Block &block) {
  llvm::DenseMap<Operation *, StepPhase> phases;
  StepPhase phase = StepPhase::Forward;
  // With gradient accumulation (train-accumulate), each micro-batch's ops
  // carry `train.micro_batch`: a new micro-batch starts a forward pass.
  int64_t microBatch = 0;
  for (Operation &op : block) {
    if (auto micro = op.getAttrOfType<IntegerAttr>("train.micro_batch")) {
      if (micro.getInt() > microBatch && phase == StepPhase::Backward)
        phase = StepPhase::Forward;
      microBatch = std::max(microBatch, micro.getInt());
    }
    if (phase == StepPhase::Forward &&
        isa<CrossEntropyGradOp, EmbeddingGradOp, GeluGradOp, ReluGradOp,
            SoftmaxGradOp, LayerNormGradOp, AttentionGradOp, AmaxGradOp,
            GatherGradOp>(op))
      phase = StepPhase::Backward;
    if (phase != StepPhase::Optimizer &&
        isa<LRScheduleOp, SquaredNormOp, ClipCoefOp, AdamWUpdateOp,
            SGDUpdateOp>(op))
      phase = StepPhase::Optimizer;
    phases[&op] = phase;
  }
  return phases;
}

} // namespace zeroc::train
