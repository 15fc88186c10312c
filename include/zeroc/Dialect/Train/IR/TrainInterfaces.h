//===- TrainInterfaces.h - op interfaces and traits of train ----*- C++ -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_H
#define ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_H

#include "mlir/IR/OpDefinition.h"

#include <string>

namespace zeroc::train {

class TrainBuilder;

/// What an op's AdjointOpInterface::buildAdjoint sees of the adjoint being
/// built: the cotangents of its results, which of its operands are active
/// (depend on a parameter), and where to add the cotangents it computes.
/// train-autodiff implements it.
class AdjointBuilder {
public:
  virtual ~AdjointBuilder() = default;
  /// A builder positioned in the adjoint, with the op's location.
  virtual TrainBuilder &builder() = 0;
  /// The cotangent of result `index`: zeros of its type when only other
  /// results of the op have one.
  virtual mlir::Value cotangent(unsigned index) = 0;
  /// Whether `value` depends on a parameter (only those get cotangents).
  virtual bool isActive(mlir::Value value) const = 0;
  /// Adds `cotangent` to the cotangent of `operand` (nothing when `operand`
  /// is not active).
  virtual void accumulate(mlir::Value operand, mlir::Value cotangent) = 0;
  /// Adds `cotangent` to the gradient of the train.param `name`.
  virtual void accumulateParameter(llvm::StringRef name,
                                   mlir::Value cotangent) = 0;
};

/// One element of an elementwise op as a C expression
/// (ScalarFormulaOpInterface): `$i` is operand i's element, `#i` is
/// `constants[i]` as an f32 literal.
struct ScalarFormula {
  std::string pattern;
  llvm::SmallVector<double, 1> constants;

  /// The pattern with `$i` replaced by operand(i) and `#i` by
  /// constant(constants[i]).
  std::string
  expand(llvm::function_ref<std::string(unsigned)> operand,
         llvm::function_ref<std::string(double)> constant) const;
  /// Whether every `$i` names one of `operands` operands and every `#i`
  /// one of the constants.
  bool fits(unsigned operands) const;
};

/// Fails, naming the op, unless `op` implements ScalarFormulaOpInterface.
llvm::LogicalResult verifyElementwiseTrait(mlir::Operation *op);

namespace OpTrait {
/// See Train_Elementwise in TrainInterfaces.td.
template <typename ConcreteType>
class Elementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyElementwiseTrait(op);
  }
};
} // namespace OpTrait

/// Whether `op` carries the Elementwise trait.
inline bool isElementwise(mlir::Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>();
}

} // namespace zeroc::train

#include "zeroc/Dialect/Train/IR/TrainInterfaces.h.inc"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_H
