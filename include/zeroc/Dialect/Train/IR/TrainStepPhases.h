//===- TrainStepPhases.h - forward, backward, optimizer ---------*- C++ -*-===//
//
// Where each op of a training step runs: the forward pass (up to the loss),
// the backward pass (from the first derivative op) or the optimizer (from
// the first op of the update: the learning rate, the gradient norm, an
// update). The trace hook of the C++/CUDA emitter and the performance model
// label ops and exposed communication with these.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINSTEPPHASES_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINSTEPPHASES_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace zeroc::train {

enum class StepPhase { Forward = 0, Backward = 1, Optimizer = 2 };

/// "forward", "backward" or "optimizer".
llvm::StringRef stepPhaseName(StepPhase phase);

/// The phase of every op of `block` (a function body, in program order).
/// Phases only move forward: an op before the first derivative op is in the
/// forward pass, one before the first update op in the backward pass. With
/// micro-batches (`train.micro_batch`), the first op of each micro-batch
/// after the first starts its forward pass again.
llvm::DenseMap<mlir::Operation *, StepPhase> stepPhases(mlir::Block &block);

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINSTEPPHASES_H
