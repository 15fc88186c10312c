//===- TrainShapes.cpp - shape rules of the train dialect -----------------===//

#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace zeroc::train {

LogicalResult verifyStaticShapes(Operation *op) {
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    if (auto type = dyn_cast<RankedTensorType>(operand.getType());
        type && !type.hasStaticShape())
      return op->emitOpError("operand #")
             << index << " must have a static shape, got " << type;
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (auto type = dyn_cast<RankedTensorType>(result.getType());
        type && !type.hasStaticShape())
      return op->emitOpError("result #")
             << index << " must have a static shape, got " << type;
  return success();
}

std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

std::optional<int64_t> checkedElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 1 || dim > kMaxElements)
      return std::nullopt;
    // count <= kMaxElements / dim keeps count * dim <= kMaxElements, with
    // no overflow on the way.
    if (count > kMaxElements / dim)
      return std::nullopt;
    count *= dim;
  }
  return count;
}

LogicalResult verifyTensorShape(Type type, StringRef what,
                                ErrorEmitter emitError) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  if (!tensor.hasStaticShape())
    return emitError() << what << " must have a static shape, got " << type;
  if (llvm::is_contained(tensor.getShape(), 0))
    return emitError() << what << " has a zero-sized dimension, got " << type
                       << "; train ops need every dimension to be at least 1";
  if (!checkedElementCount(tensor.getShape()))
    return emitError() << what << " has more than 2^48 elements, got " << type
                       << "; zeroc's tensors are limited to 2^48 elements";
  return success();
}

LogicalResult verifyOperandAndResultShapes(Operation *op) {
  auto emit = [&] { return op->emitOpError(); };
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    if (failed(verifyTensorShape(operand.getType(),
                                 "operand #" + std::to_string(index), emit)))
      return failure();
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (failed(verifyTensorShape(result.getType(),
                                 "result #" + std::to_string(index), emit)))
      return failure();
  return success();
}

FailureOr<Shape> broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                 ErrorEmitter emitError) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Align at the last dimension; a missing leading dimension counts as 1.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1) {
      if (emitError)
        emitError() << "operands do not broadcast: lhs " << formatShape(lhs)
                    << " and rhs " << formatShape(rhs) << " differ at dimension "
                    << (rank - 1 - i) << " of the result (" << l << " vs " << r
                    << ")";
      return failure();
    }
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

FailureOr<Shape> matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                             bool transposeLhs, bool transposeRhs,
                             ErrorEmitter emitError) {
  if (lhs.size() < 2 || rhs.size() < 2) {
    if (emitError)
      emitError() << "lhs and rhs must have rank >= 2, got lhs "
                  << formatShape(lhs) << " and rhs " << formatShape(rhs);
    return failure();
  }
  ArrayRef<int64_t> lhsBatch = lhs.drop_back(2), rhsBatch = rhs.drop_back(2);
  if (!rhsBatch.empty() && rhsBatch != lhsBatch) {
    if (emitError)
      emitError() << "rhs batch dimensions " << formatShape(rhsBatch)
                  << " must equal lhs batch dimensions "
                  << (lhsBatch.empty() ? std::string("(none: lhs has rank 2)")
                                       : formatShape(lhsBatch))
                  << " or be absent";
    return failure();
  }
  int64_t m = lhs[lhs.size() - (transposeLhs ? 1 : 2)];
  int64_t kl = lhs[lhs.size() - (transposeLhs ? 2 : 1)];
  int64_t kr = rhs[rhs.size() - (transposeRhs ? 1 : 2)];
  int64_t n = rhs[rhs.size() - (transposeRhs ? 2 : 1)];
  if (kl != kr) {
    if (emitError)
      emitError() << "contraction dimensions differ: lhs has " << kl
                  << " and rhs has " << kr;
    return failure();
  }
  Shape result(lhsBatch.begin(), lhsBatch.end());
  result.push_back(m);
  result.push_back(n);
  return result;
}

FailureOr<Shape> reduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> dims,
                             ErrorEmitter emitError) {
  llvm::SmallBitVector reduced(input.size());
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= static_cast<int64_t>(input.size())) {
      if (emitError)
        emitError() << "dimension " << dim << " is out of range for rank "
                    << input.size();
      return failure();
    }
    if (reduced.test(dim)) {
      if (emitError)
        emitError() << "dimension " << dim << " is listed twice";
      return failure();
    }
    reduced.set(dim);
  }
  Shape result;
  for (auto [i, size] : llvm::enumerate(input))
    if (!reduced.test(i))
      result.push_back(size);
  return result;
}

FailureOr<Shape> transposeShape(ArrayRef<int64_t> input,
                                ArrayRef<int64_t> permutation,
                                ErrorEmitter emitError) {
  if (permutation.size() != input.size()) {
    if (emitError)
      emitError() << "permutation has " << permutation.size()
                  << " entries but the input has rank " << input.size();
    return failure();
  }
  llvm::SmallBitVector seen(input.size());
  Shape result;
  for (int64_t dim : permutation) {
    if (dim < 0 || dim >= static_cast<int64_t>(input.size()) ||
        seen.test(dim)) {
      if (emitError) {
        InFlightDiagnostic diag = emitError();
        diag << "permutation [";
        llvm::interleaveComma(permutation, diag);
        diag << "] is not a permutation of 0.." << input.size() - 1;
      }
      return failure();
    }
    seen.set(dim);
    result.push_back(input[dim]);
  }
  return result;
}

} // namespace zeroc::train
