//===- Stage.h - which stage of the pipeline a module is at ------*- C++ -*-===//
//
// Each pass of the training pipeline runs on a module at one stage: a model,
// a model whose batch is split, a differentiated model, a training step, a
// partitioned step. Each pass starts by refusing a module that is already
// past its input stage (running the pipeline on its own output, a pass run
// twice), with a message that names the attribute or symbol that says so,
// instead of rewriting IR it does not expect.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_STAGE_H
#define ZEROC_LIB_TRANSFORMS_STAGE_H

#include "mlir/IR/BuiltinOps.h"

namespace zeroc {

/// What a pass can find that says the module is past its input stage.
enum StageMark : unsigned {
  /// The module attribute `train.batch_split` (train-data-parallel ran).
  kBatchSplit = 1u << 0,
  /// A function @loss_and_grads (train-autodiff ran).
  kDifferentiated = 1u << 1,
  /// A function marked `train.step` (train-optimizer ran).
  kStepped = 1u << 2,
  /// A `train.state` declaration (train-optimizer ran).
  kOptimizerState = 1u << 3,
  /// The module attribute `train.zero_stage` (train-zero ran).
  kPartitioned = 1u << 4,
};

/// Fails, reporting on the offending op, when `module` carries any of the
/// marks in `refused`; `pass` is the pass's argument
/// ("train-mixed-precision"). The message names the mark and the pass that
/// put it there.
mlir::LogicalResult refuseLaterStages(mlir::ModuleOp module,
                                      llvm::StringRef pass, unsigned refused);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_STAGE_H
