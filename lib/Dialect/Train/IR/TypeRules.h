//===- TypeRules.h - the plumbing of the train ops' type rules -*- C++ -*-===//
//
// Shared by TrainOps.cpp, TrainMathOps.cpp and TrainGenericOps.cpp (private
// to the dialect library): where a type rule (an op's inferReturnTypes)
// reports, and the verifier half that checks an op's result types against
// the rule.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_DIALECT_TRAIN_IR_TYPERULES_H
#define ZEROC_LIB_DIALECT_TRAIN_IR_TYPERULES_H

#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace zeroc::train::rules {

inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

/// Where an op's type rule (its inferReturnTypes) reports: through the op's
/// location, worded as Operation::emitOpError words it, or nowhere when the
/// rule runs without a location (a silent query).
struct RuleErrors {
  std::optional<mlir::Location> location;
  llvm::StringRef opName;

  explicit operator bool() const { return location.has_value(); }
  mlir::InFlightDiagnostic operator()() const {
    return mlir::emitError(*location) << "'" << opName << "' op ";
  }
  /// For the shape rules of TrainShapes.h.
  ErrorEmitter emitter() const {
    if (!location)
      return nullptr;
    return ErrorEmitter(*this);
  }
};

/// Fails, reporting `parts` when the rule has somewhere to report.
template <typename... Parts>
mlir::LogicalResult report(const RuleErrors &errors, Parts &&...parts) {
  if (errors) {
    mlir::InFlightDiagnostic diagnostic = errors();
    (diagnostic << ... << std::forward<Parts>(parts));
  }
  return mlir::failure();
}

/// The verifier half of an op's type rule: the result types the op's
/// inferReturnTypes gives (reporting why there are none) must be the op's.
template <typename OpT>
mlir::LogicalResult verifyInferredTypes(OpT op) {
  llvm::SmallVector<mlir::Type> expected;
  if (mlir::failed(OpT::inferReturnTypes(op.getContext(), op.getLoc(),
                                         typename OpT::Adaptor(op), expected)))
    return mlir::failure();
  for (auto [index, result, type] :
       llvm::enumerate(op->getResults(), expected)) {
    if (result.getType() == type)
      continue;
    mlir::InFlightDiagnostic diagnostic = op.emitOpError("result ");
    if (op->getNumResults() > 1)
      diagnostic << "#" << index << " ";
    return diagnostic << "type " << result.getType()
                      << " does not match the expected " << type;
  }
  return mlir::success();
}

/// The type rule of the reductions (train.sum, mean, amax, var): `input`
/// with the listed `dims` removed.
template <typename ReductionOp>
mlir::LogicalResult inferReduction(std::optional<mlir::Location> location,
                                   typename ReductionOp::Adaptor adaptor,
                                   llvm::SmallVectorImpl<mlir::Type> &types) {
  RuleErrors errors{location, ReductionOp::getOperationName()};
  mlir::RankedTensorType input = tensorType(adaptor.getInput());
  mlir::FailureOr<Shape> shape =
      reduceShape(input.getShape(), adaptor.getDims(), errors.emitter());
  if (mlir::failed(shape))
    return mlir::failure();
  types.push_back(
      mlir::RankedTensorType::get(*shape, input.getElementType()));
  return mlir::success();
}

} // namespace zeroc::train::rules

#endif // ZEROC_LIB_DIALECT_TRAIN_IR_TYPERULES_H
