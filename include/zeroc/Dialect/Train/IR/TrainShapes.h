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
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace zeroc::train {

/// The shape rules work on static shapes only: a dynamic dimension would
/// enter their arithmetic as ShapedType::kDynamic. Every verifier of an op
/// with tensor operands or results calls this first (TrainShapes.cpp).
mlir::LogicalResult verifyStaticShapes(mlir::Operation *op);

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
  return numel / shards + (numel % shards != 0); // no overflow near INT64_MAX
}

/// The most elements one tensor of train IR may have: 2^48 (a petabyte of
/// f32). Element counts and byte sizes of such tensors, and sums of many of
/// them, fit in int64_t everywhere the passes, the memory report, the
/// evaluator and the runtime compute them.
inline constexpr int64_t kMaxElements = int64_t(1) << 48;

/// The element count of a static shape whose dimensions are all at least 1
/// and whose count is at most kMaxElements; std::nullopt otherwise (a
/// dynamic, zero or negative dimension, or too many elements).
std::optional<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> shape);

/// Checks that `type` (when it is a ranked tensor) is a shape train ops can
/// compute on: static, every dimension at least 1 (an empty tensor would
/// divide by zero in means, matmuls and cross-entropies) and at most
/// kMaxElements elements. `what` names it ("operand #1", "type of @w").
mlir::LogicalResult verifyTensorShape(mlir::Type type, llvm::StringRef what,
                                      ErrorEmitter emitError);

/// verifyTensorShape on every operand and result of `op`: the verifier of
/// the ShapeChecked trait that every train op carries.
mlir::LogicalResult verifyOperandAndResultShapes(mlir::Operation *op);

/// Formats a shape as `AxBxC` (`scalar` for rank 0) for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINSHAPES_H
