//===- ForwardRewrite.h - helpers for passes that retype the forward -*- C++ -*-===//

#ifndef ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H
#define ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

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
/// split (a sum over the batch, a reshape that moves it).
mlir::LogicalResult splitBatch(mlir::func::FuncOp func, int64_t ranks);

/// Sets the leading (batch) dimension of every argument of `func` to
/// `batch` (the arguments must agree on it) and retypes everything computed
/// from it; rejects a reshape that moves the batch and a slice of part of
/// it.
mlir::LogicalResult resizeBatch(mlir::func::FuncOp func, int64_t batch);

/// Makes the function type match the block arguments and returned values.
void updateFunctionType(mlir::func::FuncOp func);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_FORWARDREWRITE_H
