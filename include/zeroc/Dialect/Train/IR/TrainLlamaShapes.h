//===- TrainLlamaShapes.h - shape rules of the Llama ops ---------*- C++
//-*-===//
//
// One rule per op of TrainLlamaOps.td (and grouped-query attention), in the
// style of TrainShapes.h: each computes the result shape from the operand
// shapes and attributes, or fails, reporting through `emitError` when it is
// not null. The op verifiers, the ops' builders and the passes that retype
// ops (train-data-parallel, train-mixed-precision) call the same function.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINLLAMASHAPES_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINLLAMASHAPES_H

#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include <optional>

namespace zeroc::train {

/// train.rmsnorm (and train.rmsnorm_grad's input): `weight` must be the
/// last dimension of `input`; the result has the input's shape.
mlir::FailureOr<Shape> rmsnormShape(llvm::ArrayRef<int64_t> input,
                                    llvm::ArrayRef<int64_t> weight,
                                    ErrorEmitter emitError = nullptr);

/// train.rope: rank >= 2, `seqDim` a dimension other than the last, an
/// even last dimension (the head dimension), and a finite positive theta.
mlir::FailureOr<Shape> ropeShape(llvm::ArrayRef<int64_t> input, int64_t seqDim,
                                 double theta,
                                 ErrorEmitter emitError = nullptr);

/// train.slice of `input` with `sizes` (the result's shape): per
/// dimension a non-negative offset, a positive stride and a non-negative
/// size whose last element, offset + (size - 1) * stride, is inside the
/// input. train.slice_grad checks its (result, grad) shapes as (input,
/// sizes). Returns `sizes`.
mlir::FailureOr<Shape> sliceShape(llvm::ArrayRef<int64_t> input,
                                  llvm::ArrayRef<int64_t> offsets,
                                  llvm::ArrayRef<int64_t> sizes,
                                  llvm::ArrayRef<int64_t> strides,
                                  ErrorEmitter emitError = nullptr);

/// train.attention with grouped-query attention: query [B, H, T, D], key
/// and value [B, Hkv, S, D] of one shape, H a multiple of Hkv, T == S when
/// causal. Returns the query's shape.
mlir::FailureOr<Shape> attentionShape(llvm::ArrayRef<int64_t> query,
                                      llvm::ArrayRef<int64_t> key,
                                      llvm::ArrayRef<int64_t> value,
                                      bool causal,
                                      ErrorEmitter emitError = nullptr);

/// train.dropout's attributes: p in [0, 1); `batch_dim` and `ranks` both
/// present or both absent, a dimension of the input and a positive count.
mlir::LogicalResult verifyDropoutAttributes(llvm::ArrayRef<int64_t> input,
                                            double p,
                                            std::optional<int64_t> batchDim,
                                            std::optional<int64_t> ranks,
                                            ErrorEmitter emitError = nullptr);

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINLLAMASHAPES_H
