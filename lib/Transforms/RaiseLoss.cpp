//===- RaiseLoss.cpp - log_softmax + gather (nll) to train.cross_entropy --===//
//
// -mean(gather(log_softmax(logits), -1, targets[..., None])) over every
// position, an f32 scalar, is train.cross_entropy(logits, targets). The
// negation is train.neg (matched by name), train.scale by -1 or 0 - y,
// before or after the mean; the gathered [d..., 1] values may be reshaped
// to [d...] first. ignore_index (a masked mean) and label_smoothing (a
// second term that reads the log-probabilities again) are not this
// computation: train.cross_entropy has neither, and they stay generic.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::singleUse;
using zeroc::raise::typeOf;

namespace {

/// If `value` is -y (train.neg, train.scale by -1, 0 - y), returns y.
Value negated(Value value) {
  if (Value x = zeroc::raise::negationOf(value))
    return x;
  if (auto sub = value.getDefiningOp<SubOp>();
      sub && zeroc::raise::splatValue(sub.getLhs()) == 0.0 &&
      sub.getRhs().getType() == sub.getType())
    return sub.getRhs();
  return {};
}

/// If `value` is the mean of every element of some tensor, returns it.
Value meanOfAll(Value value) {
  auto mean = value.getDefiningOp<MeanOp>();
  if (!mean)
    return {};
  int64_t rank = typeOf(mean.getInput()).getRank();
  ArrayRef<int64_t> dims = mean.getDims();
  if (static_cast<int64_t>(dims.size()) != rank)
    return {};
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      return {};
  return mean.getInput();
}

struct RaiseCrossEntropy : RewritePattern {
  RaiseCrossEntropy(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResultTypes()[0]))
      return failure();
    Value loss = op->getResult(0);
    if (loss.getType() != RankedTensorType::get({}, Float32Type::get(getContext())))
      return failure();
    // -mean(g) or mean(-g).
    Value gathered;
    if (Value inner = negated(loss); inner && singleUse(inner)) {
      gathered = meanOfAll(inner);
    } else if (Value all = meanOfAll(loss); all && singleUse(all)) {
      gathered = negated(all);
    }
    if (!gathered || !singleUse(gathered))
      return failure();
    // [d..., 1] -> [d...]
    if (auto squeeze = gathered.getDefiningOp<ReshapeOp>()) {
      gathered = squeeze.getInput();
      if (!singleUse(gathered))
        return failure();
    }
    auto gather = gathered.getDefiningOp<GatherOp>();
    if (!gather)
      return failure();
    RankedTensorType logp = typeOf(gather.getInput());
    int64_t rank = logp.getRank();
    if (rank < 1 || static_cast<int64_t>(gather.getDim()) != rank - 1 ||
        typeOf(gathered).getShape().back() != 1)
      return failure();
    auto logSoftmax = gather.getInput().getDefiningOp<LogSoftmaxOp>();
    if (!logSoftmax || !singleUse(gather.getInput()))
      return failure();
    Value logits = logSoftmax.getInput();
    if (typeOf(logits).getElementType() != Float32Type::get(getContext()))
      return failure();
    // The index: the targets [d...] unsqueezed to [d..., 1].
    auto unsqueeze = gather.getIndex().getDefiningOp<ReshapeOp>();
    if (!unsqueeze)
      return failure();
    Value targets = unsqueeze.getInput();
    SmallVector<int64_t> expected(logp.getShape().drop_back());
    if (typeOf(targets).getShape() != ArrayRef<int64_t>(expected) ||
        typeOf(gathered).getShape().drop_back() != ArrayRef<int64_t>(expected))
      return failure();
    rewriter.replaceOpWithNewOp<CrossEntropyOp>(op, loss.getType(), logits,
                                                targets);
    return success();
  }
};

} // namespace

void zeroc::raise::populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseCrossEntropy>(patterns.getContext());
}
