//===- TrainDialect.h - the train dialect -----------------------*- C++ -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.h.inc"

namespace zeroc::train {

// Discardable attributes that are not among the ODS ones, so that adding
// them left the dialect's generated declarations unchanged; the dialect
// verifies them all the same (TrainDialect::verifyOperationAttribute).

/// module: train-assign-buckets' decision, [[@p3, @p2], [@p1]]: the
/// parameters of each gradient bucket, end to end in that order (the
/// buckets in backward order, one element type each); read and removed by
/// train-shard-states, which declares the buckets' train.buffers from it.
inline constexpr llvm::StringLiteral kBucketsAttrName = "train.buckets";
/// train-emplace: the operands computed in place (array<i64: ...>). On a
/// train.pack, the inputs computed into their slots; on a train.write, the
/// value already in the storage (the write disappears); on an all-gather,
/// the send computed into the rank's slot of its train.into buffer; on an
/// optimizer update, the states updated in place.
inline constexpr llvm::StringLiteral kEmplaceAttrName = "train.emplace";
/// train-emplace: a train.pack that is the storage of a gradient bucket's
/// train.buffer, or an all-gather that receives into its buffer (@name).
inline constexpr llvm::StringLiteral kIntoAttrName = "train.into";
/// train-elide-copies: a train.read that copies its state (written while
/// the read is live); any other read is the state's storage.
inline constexpr llvm::StringLiteral kCopyAttrName = "train.copy";

/// The train dialect of `op`'s context, for its discardable attributes:
/// `trainDialect(func).getForwardAttrHelper().isAttrPresent(func)`.
inline TrainDialect &trainDialect(mlir::Operation *op) {
  return TrainDialect::get(op->getContext());
}

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
