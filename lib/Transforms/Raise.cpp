//===- Raise.cpp - train-raise: generic train IR to the fast ops ----------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace zeroc {
#define GEN_PASS_DEF_TRAINRAISE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::raise {

std::optional<double> splatValue(Value value) {
  if (auto fill = value.getDefiningOp<FillOp>())
    return fill.getValue().convertToDouble();
  return std::nullopt;
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b));
}

std::optional<WithConstant> withConstant(Operation *op) {
  if (!op || !isa<AddOp, SubOp, MulOp, DivOp>(op))
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type result = op->getResult(0).getType();
  if (std::optional<double> c = splatValue(rhs); c && lhs.getType() == result)
    return WithConstant{lhs, *c, false};
  if (std::optional<double> c = splatValue(lhs); c && rhs.getType() == result)
    return WithConstant{rhs, *c, true};
  return std::nullopt;
}

Value keepdimMeanOfLast(Value value) {
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto mean = reshape.getInput().getDefiningOp<MeanOp>();
  if (!mean || !singleUse(mean.getResult()))
    return {};
  auto input = cast<RankedTensorType>(mean.getInput().getType());
  int64_t rank = input.getRank();
  if (rank == 0 || mean.getDims().size() != 1 || mean.getDims()[0] != rank - 1)
    return {};
  SmallVector<int64_t> keep(input.getShape());
  keep.back() = 1;
  if (cast<RankedTensorType>(reshape.getResult().getType()).getShape() !=
      ArrayRef<int64_t>(keep))
    return {};
  return mean.getInput();
}

bool singleUse(Value value) { return value.hasOneUse(); }

Value negationOf(Value value) {
  Operation *op = value.getDefiningOp();
  if (auto neg = dyn_cast_or_null<train::NegOp>(op))
    return neg.getInput();
  if (auto scale = dyn_cast_or_null<train::ScaleOp>(op);
      scale && scale.getFactor().convertToDouble() == -1.0)
    return scale.getInput();
  return {};
}

} // namespace zeroc::raise

namespace {

struct TrainRaisePass : zeroc::impl::TrainRaiseBase<TrainRaisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext()), views(&getContext()),
        attention(&getContext());
    SmallVector<std::string> chosen(families.begin(), families.end());
    if (chosen.empty())
      chosen = {"attention", "norms", "activations", "loss", "rope", "views"};
    bool withViews = llvm::is_contained(chosen, "views");
    for (const std::string &family : chosen) {
      if (family == "views")
        zeroc::raise::populateViewPatterns(views);
      else if (family == "attention") {
        zeroc::raise::populateAttentionPatterns(patterns);
        if (withViews)
          zeroc::raise::populateAttentionPatterns(attention);
      } else if (family == "norms")
        zeroc::raise::populateNormPatterns(patterns);
      else if (family == "activations")
        zeroc::raise::populateActivationPatterns(patterns);
      else if (family == "loss")
        zeroc::raise::populateLossPatterns(patterns);
      else if (family == "rope")
        zeroc::raise::populateRopePatterns(patterns);
      else {
        getOperation().emitError("train-raise: unknown pattern family '")
            << family
            << "' (families: attention, norms, activations, loss, rope, views)";
        return signalPassFailure();
      }
    }
    // Only the patterns: no folding or constant merging, so that a module
    // without the patterns is left exactly as it was (but for its view
    // chains, made canonical by `views`). The matched ops that are left
    // unused are pure and are erased. The families first match the views
    // as the importer wrote them; then the views are made canonical and
    // attention matched again on what is left (einsum's attention).
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.enableConstantCSE(false);
    for (RewritePatternSet *set : {&patterns, &views, &attention})
      if (!set->getNativePatterns().empty() &&
          failed(applyPatternsGreedily(getOperation(), std::move(*set), config)))
        return signalPassFailure();
  }
};

} // namespace
