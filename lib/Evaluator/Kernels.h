//===- Kernels.h - index arithmetic shared by the op handlers ---*- C++ -*-===//
//
// Small, obviously correct helpers: multi-index <-> linear index, NumPy
// broadcasting maps, and "rows" (the last dimension) of a tensor.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_EVALUATOR_KERNELS_H
#define ZEROC_LIB_EVALUATOR_KERNELS_H

#include "zeroc/Evaluator/Tensor.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace zeroc::eval {

/// The multi-index of linear index `linear` in `shape` (row-major).
inline std::vector<int64_t> unravel(int64_t linear,
                                    const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

/// The linear index of `index` in `shape` (row-major).
inline int64_t ravel(const std::vector<int64_t> &index,
                     const std::vector<int64_t> &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

/// For every element of `outShape`, the linear index of the element of an
/// input of `inShape` that NumPy broadcasting reads: shapes align at the
/// last dimension, and a size-1 (or missing) input dimension repeats.
inline std::vector<int64_t>
broadcastIndexMap(const std::vector<int64_t> &outShape,
                  const std::vector<int64_t> &inShape) {
  int64_t outRank = static_cast<int64_t>(outShape.size());
  int64_t inRank = static_cast<int64_t>(inShape.size());
  std::vector<int64_t> inStrides = stridesOf(inShape);
  int64_t count = numElements(outShape);
  std::vector<int64_t> map(count);
  for (int64_t linear = 0; linear < count; ++linear) {
    std::vector<int64_t> out = unravel(linear, outShape);
    int64_t in = 0;
    for (int64_t d = 0; d < inRank; ++d) {
      int64_t outDim = d + (outRank - inRank);
      if (inShape[d] != 1)
        in += out[outDim] * inStrides[d];
    }
    map[linear] = in;
  }
  return map;
}

/// `value` for a message: integers without an exponent.
inline std::string formatValue(double value) {
  if (value == static_cast<double>(static_cast<int64_t>(value)) &&
      value > -1e15 && value < 1e15)
    return std::to_string(static_cast<int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

/// The size of the last dimension (1 for a scalar).
inline int64_t lastDim(const Tensor &tensor) {
  return tensor.shape.empty() ? 1 : tensor.shape.back();
}

/// The number of rows: elements divided by the last dimension.
inline int64_t numRows(const Tensor &tensor) {
  int64_t last = lastDim(tensor);
  return last == 0 ? 0 : tensor.numElements() / last;
}

//===----------------------------------------------------------------------===//
// Math shared by forward and derivative ops (defined in ForwardOps.cpp)
//===----------------------------------------------------------------------===//

/// GELU: GPT-2's tanh approximation or the exact erf form.
double gelu(double x, bool tanhApproximation);

/// Softmax of `width` values at `in` into `out` (max-subtracted).
void softmaxRow(const double *in, double *out, int64_t width);

/// Batched matrix product: the last two dimensions of `lhs` [.., M, K] (or
/// [.., K, M] transposed) times those of `rhs` [.., K, N] (or [.., N, K]);
/// a rank-2 rhs is shared by every batch. Writes `result` [.., M, N].
void matmul(const Tensor &lhs, const Tensor &rhs, bool transposeLhs,
            bool transposeRhs, Tensor &result);

/// The attention probabilities softmax(mask(scale * q k^T)) of the
/// flattened batch-head `bh` of q [B, H, T, D] and k [B, Hkv, S, D] (query
/// head h reads key head h / (H / Hkv)): `probs` becomes [T, S].
void attentionProbs(const Tensor &q, const Tensor &k, int64_t bh, bool causal,
                    double scale, std::vector<double> &probs);

/// Sums `x` over `dims` into `result`, whose shape is x's without them.
void reduceSum(const Tensor &x, const std::vector<int64_t> &dims,
               Tensor &result);

/// The products of the dimensions of `shape` before and after `dim`.
void splitAround(const std::vector<int64_t> &shape, int64_t dim, int64_t &outer,
                 int64_t &inner);

} // namespace zeroc::eval

#endif // ZEROC_LIB_EVALUATOR_KERNELS_H
