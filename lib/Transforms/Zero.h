//===- Zero.h - what the passes of train-zero share -------------*- C++ -*-===//
//
// train-zero is a pipeline whose passes write their decisions into the IR
// for the next: train-assign-buckets (the module attribute `train.buckets`)
// and train-partition (buffers, collectives, per-bucket optimizer).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_ZERO_H
#define ZEROC_LIB_TRANSFORMS_ZERO_H

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace zeroc {

/// train-assign-buckets' decision: [[@p3, @p2], [@p1]], each bucket's
/// parameters end to end in backward order (the dialect verifies it).
constexpr llvm::StringLiteral kBucketsAttr = "train.buckets";

/// @train_step as train-optimizer writes it: the parameters of
/// train.gradients, the gradient each one's squared norm reads, and the
/// optimizer section's first op (its train.lr_schedule).
struct TrainStep {
  mlir::func::FuncOp func;
  train::OptimizerOp optimizer;
  llvm::SmallVector<train::ParamOp> params;
  llvm::SmallVector<mlir::Value> grads;
  mlir::Operation *optimizerStart = nullptr;
};

/// Finds and checks @train_step, reporting what is missing.
mlir::FailureOr<TrainStep> findTrainStep(mlir::ModuleOp module,
                                         mlir::SymbolTable &symbols);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_ZERO_H
