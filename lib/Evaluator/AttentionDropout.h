//===- AttentionDropout.h - train.attention's dropout mask ------*- C++ -*-===//
//
// The dropout of train.attention and train.attention_grad: the factor
// (0, or 1 / (1 - p)) that train.dropout, with the same attributes and
// step, gives each element of the [B, H, T, S] probabilities tensor.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_EVALUATOR_ATTENTIONDROPOUT_H
#define ZEROC_LIB_EVALUATOR_ATTENTIONDROPOUT_H

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Support/Random.h"

#include <cmath>

namespace zeroc::eval {

struct AttentionDropout {
  bool active = false;
  uint64_t seed = 0, step = 0;
  uint32_t threshold = 0;
  double scale = 1.0;
  // Where this rank's elements sit in the global batch (train.dropout's).
  int64_t inner = 1, rows = 1, offset = 0, globalRows = 1;

  /// The factor of element `i` (row-major) of the probabilities tensor.
  double factor(int64_t i) const {
    if (!active)
      return 1.0;
    uint64_t position = random::dropoutPosition(
        static_cast<uint64_t>(i), static_cast<uint64_t>(inner),
        static_cast<uint64_t>(rows), static_cast<uint64_t>(offset),
        static_cast<uint64_t>(globalRows));
    return random::dropoutKeeps(seed, step, position, threshold) ? scale : 0.0;
  }
};

/// Where this rank's elements of a dropout's input of `shape` sit in the
/// global batch (the batch split `op` records, train.dropout's and the
/// attention ops' alike): `inner` elements per row, `rows` rows here, from
/// row `offset` of `globalRows`. Without a split the whole tensor is one row.
template <typename OpT>
mlir::LogicalResult dropoutSplit(OpT op, llvm::ArrayRef<int64_t> shape,
                                 RankContext &ctx, int64_t &inner,
                                 int64_t &rows, int64_t &offset,
                                 int64_t &globalRows) {
  rows = 1, offset = 0, globalRows = 1, inner = 1;
  for (int64_t size : shape)
    inner *= size;
  auto batchDim = op.getBatchDim();
  if (!batchDim)
    return mlir::success();
  int64_t ranks = *op.getRanks();
  if (ranks != ctx.interpreter.options().ranks)
    return op.emitOpError("records a batch split over ")
           << ranks << " ranks, but the evaluator runs "
           << ctx.interpreter.options().ranks << " (--ranks)";
  rows = shape[*batchDim];
  inner = 1;
  for (size_t k = *batchDim + 1; k < shape.size(); ++k)
    inner *= shape[k];
  offset = ctx.rank * rows;
  globalRows = rows * ranks;
  // Micro-batch m of K of the rank's batch (train-accumulate).
  if (auto micro = op.getMicroBatch()) {
    int64_t count = *op.getMicroBatches();
    offset = (ctx.rank * count + *micro) * rows;
    globalRows = rows * ranks * count;
  }
  return mlir::success();
}

/// The dropout of `op` (a train.attention or train.attention_grad) whose
/// step, when it has one, is `stepTensor`.
template <typename OpT>
mlir::FailureOr<AttentionDropout>
attentionDropout(OpT op, const Tensor *stepTensor, const Tensor &q,
                 const Tensor &k, RankContext &ctx) {
  AttentionDropout d;
  if (!op.getDropoutAttr() || !op.getStep())
    return d; // none, or evaluation's (the identity)
  double stepValue = stepTensor->data[0];
  if (!(stepValue >= 0) || stepValue != std::floor(stepValue))
    return op.emitOpError("step ")
           << formatValue(stepValue) << " is not a non-negative integer";
  double p = op.getDropoutAttr().getValueAsDouble();
  d.active = true;
  d.step = static_cast<uint64_t>(stepValue);
  d.seed = static_cast<uint64_t>(*op.getSeed());
  d.threshold = random::dropoutThreshold(p);
  d.scale = 1.0 / (1.0 - p);
  int64_t shape[4] = {q.shape[0], q.shape[1], q.shape[2], k.shape[2]};
  if (mlir::failed(dropoutSplit(op, shape, ctx, d.inner, d.rows, d.offset,
                                d.globalRows)))
    return mlir::failure();
  return d;
}

} // namespace zeroc::eval

#endif // ZEROC_LIB_EVALUATOR_ATTENTIONDROPOUT_H
