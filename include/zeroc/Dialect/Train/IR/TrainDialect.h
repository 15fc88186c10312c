//===- TrainDialect.h - the train dialect -----------------------*- C++ -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.h.inc"

namespace zeroc::train {

/// The train dialect of `op`'s context, for its discardable attributes:
/// `trainDialect(func).getForwardAttrHelper().isAttrPresent(func)`.
inline TrainDialect &trainDialect(mlir::Operation *op) {
  return TrainDialect::get(op->getContext());
}

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
