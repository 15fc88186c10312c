//===- TrainLlamaShapes.cpp - shape rules of the Llama ops ----------------===//

#include "zeroc/Dialect/Train/IR/TrainLlamaShapes.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;

namespace zeroc::train {

FailureOr<Shape> rmsnormShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                              ErrorEmitter emitError) {
  if (input.empty()) {
    if (emitError)
      emitError() << "input must have rank >= 1 (the last dimension is "
                     "normalized)";
    return failure();
  }
  if (weight != ArrayRef<int64_t>{input.back()}) {
    if (emitError)
      emitError() << "weight must have shape " << input.back()
                  << " (the last dimension of the input), got "
                  << formatShape(weight);
    return failure();
  }
  return Shape(input);
}

FailureOr<Shape> ropeShape(ArrayRef<int64_t> input, int64_t seqDim,
                           double theta, ErrorEmitter emitError) {
  int64_t rank = static_cast<int64_t>(input.size());
  if (rank < 2) {
    if (emitError)
      emitError() << "input must have rank >= 2 (positions and the head "
                     "dimension), got "
                  << formatShape(input);
    return failure();
  }
  if (seqDim < 0 || seqDim >= rank - 1) {
    if (emitError)
      emitError() << "seq_dim " << seqDim
                  << " must be a dimension of the input other than the last "
                     "(0 to "
                  << rank - 2 << ")";
    return failure();
  }
  if (input.back() % 2 != 0) {
    if (emitError)
      emitError() << "the head dimension (the input's last, " << input.back()
                  << ") must be even: rotary embeddings rotate pairs of "
                     "features";
    return failure();
  }
  if (!std::isfinite(theta) || theta <= 0.0) {
    if (emitError)
      emitError() << "theta must be finite and positive, got " << theta;
    return failure();
  }
  return Shape(input);
}

FailureOr<Shape> sliceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                            ErrorEmitter emitError) {
  size_t rank = input.size();
  if (offsets.size() != rank || strides.size() != rank ||
      sizes.size() != rank) {
    if (emitError)
      emitError() << "offsets (" << offsets.size() << "), strides ("
                  << strides.size() << ") and the result's shape ("
                  << sizes.size() << ") must each have one entry per "
                  << "dimension of the input (rank " << rank << ")";
    return failure();
  }
  for (size_t d = 0; d < rank; ++d) {
    if (offsets[d] < 0 || strides[d] < 1 || sizes[d] < 0) {
      if (emitError)
        emitError() << "dimension " << d << ": offset " << offsets[d]
                    << " must be non-negative, stride " << strides[d]
                    << " positive and size " << sizes[d] << " non-negative";
      return failure();
    }
    if (sizes[d] == 0)
      continue;
    // The last element read, computed without overflow: offsets and
    // strides are at most the input size, which is far below 2^62.
    if (offsets[d] >= input[d] || strides[d] > input[d] ||
        sizes[d] - 1 > (input[d] - 1 - offsets[d]) / strides[d]) {
      if (emitError)
        emitError() << "slice out of bounds in dimension " << d << ": "
                    << sizes[d] << " elements from offset " << offsets[d]
                    << " with stride " << strides[d]
                    << " do not fit in the input's " << input[d];
      return failure();
    }
  }
  return Shape(sizes);
}

FailureOr<Shape> attentionShape(ArrayRef<int64_t> query, ArrayRef<int64_t> key,
                                ArrayRef<int64_t> value, bool causal,
                                ErrorEmitter emitError) {
  for (auto [name, shape] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"query", query},
        {"key", key},
        {"value", value}})
    if (shape.size() != 4) {
      if (emitError)
        emitError() << name
                    << " must have rank 4 [batch, heads, sequence, "
                       "head_dim], got "
                    << formatShape(shape);
      return failure();
    }
  if (key != value) {
    if (emitError)
      emitError() << "key shape " << formatShape(key)
                  << " differs from value shape " << formatShape(value);
    return failure();
  }
  if (query[0] != key[0] || query[3] != key[3]) {
    if (emitError)
      emitError() << "query " << formatShape(query) << " and key "
                  << formatShape(key) << " must agree in batch and head_dim";
    return failure();
  }
  if (key[1] <= 0 || query[1] % key[1] != 0) {
    if (emitError)
      emitError() << "query heads (" << query[1]
                  << ") must be a multiple of key/value heads (" << key[1]
                  << ") for grouped-query attention";
    return failure();
  }
  if (causal && query[2] != key[2]) {
    if (emitError)
      emitError() << "causal attention needs as many queries as keys, got "
                  << query[2] << " and " << key[2];
    return failure();
  }
  return Shape(query);
}

LogicalResult verifyDropoutAttributes(ArrayRef<int64_t> input, double p,
                                      std::optional<int64_t> batchDim,
                                      std::optional<int64_t> ranks,
                                      ErrorEmitter emitError) {
  if (!std::isfinite(p) || p < 0.0 || p >= 1.0) {
    if (emitError)
      emitError() << "p must be in [0, 1), got " << p;
    return failure();
  }
  if (batchDim.has_value() != ranks.has_value()) {
    if (emitError)
      emitError() << "batch_dim and ranks go together (the batch split "
                     "train-data-parallel records)";
    return failure();
  }
  if (batchDim &&
      (*batchDim < 0 || *batchDim >= static_cast<int64_t>(input.size()))) {
    if (emitError)
      emitError() << "batch_dim " << *batchDim << " is out of range for rank "
                  << input.size();
    return failure();
  }
  if (ranks && *ranks < 1) {
    if (emitError)
      emitError() << "ranks must be positive, got " << *ranks;
    return failure();
  }
  return success();
}

} // namespace zeroc::train
