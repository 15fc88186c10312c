//===- Zero.h - what ZeRO's partition passes share --------------*- C++ -*-===//
//
// train-zero is a pipeline of passes, one decision each, each writing its
// decision into the IR for the next: train-assign-buckets (which parameters
// share a bucket, the module attribute `train.buckets`) and train-partition
// (the buckets' buffers, their collectives and the per-bucket optimizer).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_ZERO_H
#define ZEROC_LIB_TRANSFORMS_ZERO_H

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace zeroc {

/// The module attribute train-assign-buckets writes: an array of buckets,
/// each an array of parameter symbols end to end in backward order (the
/// dialect verifies it).
constexpr llvm::StringLiteral kBucketsAttr = "train.buckets";

/// The step train-optimizer writes, as the partition passes read it.
struct TrainStep {
  mlir::func::FuncOp func;
  train::OptimizerOp optimizer;
  /// train.gradients, in order, and the gradient each one's squared norm
  /// reads.
  llvm::SmallVector<train::ParamOp> params;
  llvm::SmallVector<mlir::Value> grads;
  /// The optimizer section's first op (the train.lr_schedule).
  mlir::Operation *optimizerStart = nullptr;
};

/// Finds and checks @train_step, reporting on the module or the function
/// what is missing.
mlir::FailureOr<TrainStep> findTrainStep(mlir::ModuleOp module,
                                         mlir::SymbolTable &symbols);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_ZERO_H
