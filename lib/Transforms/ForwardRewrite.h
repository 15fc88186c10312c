//===- ForwardRewrite.h - helpers for passes that retype the forward -*- C++ -*-===//

#ifndef ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H
#define ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace zeroc {

/// The function train-autodiff adds and train-optimizer turns into the step.
inline constexpr llvm::StringLiteral kLossAndGradsFunction = "loss_and_grads";

/// The one func.func marked `train.forward`, or failure after reporting why
/// there is none (or more than one).
mlir::FailureOr<mlir::func::FuncOp> findForwardFunction(mlir::ModuleOp module);

/// Recomputes the result types of `op` from its operand types with the
/// dialect's shape rules; a train.reshape keeps its result's trailing
/// dimensions and scales the leading one by the change in element count.
/// Fails (after reporting on `op`) when the op's result type does not follow
/// from its operands.
mlir::LogicalResult reinferResultTypes(mlir::Operation *op);

/// Divides the leading (batch) dimension of every argument of `func` by
/// `ranks` and retypes everything computed from it; rejects what does not
/// split (a sum over the batch, a reshape that moves it). The two sums
/// over the batch of a mean written out, sum / sum with a divisor computed
/// from the batch arguments alone (a masked mean), split: the divisor, a
/// 0-d train.sum, is marked train.batch_count for globalizeTargetCounts.
mlir::LogicalResult splitBatch(mlir::func::FuncOp func, int64_t ranks);

/// Sets the leading (batch) dimension of every argument of `func` to
/// `batch` (the arguments must agree on it) and retypes everything computed
/// from it; rejects a reshape that moves the batch and a slice of part of
/// it.
mlir::LogicalResult resizeBatch(mlir::func::FuncOp func, int64_t batch);

/// Makes cross-entropy with ignore_index in `func` exact across a split
/// batch. Each part of the global batch (a rank's micro-batch; there are
/// `ranks` x `microBatches` of them, averaged by the caller) has its own
/// number of ignored positions, so the mean of the parts' means is not the
/// global mean: the positions that count are counted
/// (train.count_targets, from the targets recomputed at the top of the
/// function), summed over the micro-batches, summed over the ranks by
/// `sumOverRanks`, and every train.cross_entropy and its gradient with
/// ignore_index divide by that global count over ranks x microBatches.
/// The micro-batches are the module's train.grad_accum in the step
/// function (train.step), 1 in any other. Needs one such
/// train.cross_entropy per micro-batch. The generic form of such a mean,
/// a sum divided by a 0-d train.sum marked train.batch_count (splitBatch),
/// is made exact the same way: each micro-batch's divisor is recomputed at
/// the top of the function, summed over the micro-batches and the ranks,
/// and every copy of that divisor (forward and backward read it) becomes
/// the total over ranks x microBatches. Does nothing when the batch is not
/// split or there is no such mean.
mlir::LogicalResult globalizeTargetCounts(
    mlir::func::FuncOp func, int64_t ranks,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value)>
        sumOverRanks);

/// Makes the function type match the block arguments and returned values.
void updateFunctionType(mlir::func::FuncOp func);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H
