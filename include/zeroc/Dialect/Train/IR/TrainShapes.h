//===- TrainShapes.h - shape rules shared by verifiers and builders -*- C++ -*-===//
//
// Each rule computes the result shape of an op from its operand shapes. The
// op verifiers use them to report a mismatch, and passes that create ops
// (autodiff, partitioning) use them to get result types right by
// construction. When `emitError` is null the rules fail silently.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINSHAPES_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINSHAPES_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace zeroc::train {

using ErrorEmitter = llvm::function_ref<mlir::InFlightDiagnostic()>;
using Shape = llvm::SmallVector<int64_t, 4>;

/// NumPy broadcasting of two shapes.
mlir::FailureOr<Shape> broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                       llvm::ArrayRef<int64_t> rhs,
                                       ErrorEmitter emitError = nullptr);

/// Result shape of train.matmul.
mlir::FailureOr<Shape> matmulShape(llvm::ArrayRef<int64_t> lhs,
                                   llvm::ArrayRef<int64_t> rhs,
                                   bool transposeLhs, bool transposeRhs,
                                   ErrorEmitter emitError = nullptr);

/// Result shape of a reduction over `dims` (which are removed).
mlir::FailureOr<Shape> reduceShape(llvm::ArrayRef<int64_t> input,
                                   llvm::ArrayRef<int64_t> dims,
                                   ErrorEmitter emitError = nullptr);

/// Result shape of train.transpose.
mlir::FailureOr<Shape> transposeShape(llvm::ArrayRef<int64_t> input,
                                      llvm::ArrayRef<int64_t> permutation,
                                      ErrorEmitter emitError = nullptr);

/// Elements of one rank's shard of a flattened tensor of `numel` elements
/// padded to a multiple of `shards`: ceil(numel / shards).
inline int64_t shardElements(int64_t numel, int64_t shards) {
  return (numel + shards - 1) / shards;
}

/// Formats a shape as `AxBxC` (`scalar` for rank 0) for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINSHAPES_H
