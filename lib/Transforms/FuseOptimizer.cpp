//===- FuseOptimizer.cpp - the clipping multiply into the AdamW update ---===//
//
// Gradient clipping multiplies every gradient by one scalar, the clipping
// coefficient, just before its AdamW update reads it: a `train.mul` of the
// gradient and a 0-d tensor whose only use is the update's gradient. The
// update takes that scalar as its `grad_scale` instead and the multiply
// disappears, so the gradient is read once instead of read, written and read
// again. The update multiplies each gradient by the scalar first, in f32, as
// the multiply did: the results are bitwise the same.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "Fusion.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINFUSEOPTIMIZER
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;
using zeroc::writesBetween;

namespace {

bool isScalarF32(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 0 && type.getElementType().isF32();
}

/// The multiply's gradient and scalar operands, when it is `gradient *
/// scalar` (either order) with the gradient of the result's type.
std::optional<std::pair<Value, Value>> scaledGradient(MulOp mul) {
  Value lhs = mul.getLhs(), rhs = mul.getRhs();
  Type result = mul.getResult().getType();
  if (isScalarF32(rhs) && lhs.getType() == result)
    return std::make_pair(lhs, rhs);
  if (isScalarF32(lhs) && rhs.getType() == result)
    return std::make_pair(rhs, lhs);
  return std::nullopt;
}

struct TrainFuseOptimizerPass
    : zeroc::impl::TrainFuseOptimizerBase<TrainFuseOptimizerPass> {
  void runOnOperation() override {
    SmallVector<AdamWUpdateOp> updates;
    getOperation().walk([&](AdamWUpdateOp update) {
      if (!update.getGradScale())
        updates.push_back(update);
    });
    for (AdamWUpdateOp update : updates) {
      auto mul = update.getGrad().getDefiningOp<MulOp>();
      if (!mul || !mul->hasOneUse() || mul->getBlock() != update->getBlock())
        continue;
      std::optional<std::pair<Value, Value>> operands = scaledGradient(mul);
      if (!operands || writesBetween(mul, update))
        continue;
      update.getGradMutable().assign(operands->first);
      update.getGradScaleMutable().assign(operands->second);
      mul->erase();
    }
  }
};

} // namespace
