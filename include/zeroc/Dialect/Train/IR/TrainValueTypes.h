//===- TrainValueTypes.h - the type of a value -------------*- C++ -*-===//
//
// The one home of `typeOf`: the passes, the cost models and the emitters all
// ask for the tensor type of a train op's operand or result.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINVALUETYPES_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINVALUETYPES_H

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace zeroc::train {

/// The ranked tensor type of `value` (every train op's operands and results
/// have one; the ShapeChecked trait makes it static).
inline mlir::RankedTensorType typeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

/// The shape and element type of a tensor, a memref, or the tensor a
/// !train.future holds: the emitters meet all three (memrefs after
/// bufferization, futures of collectives in flight).
inline mlir::ShapedType shapedTypeOf(mlir::Value value) {
  if (auto future = llvm::dyn_cast<FutureType>(value.getType()))
    return future.getValueType();
  return llvm::cast<mlir::ShapedType>(value.getType());
}

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINVALUETYPES_H
