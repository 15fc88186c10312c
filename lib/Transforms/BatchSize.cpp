//===- BatchSize.cpp - set the forward function's global batch ------------===//
//
// zeroc's --micro-batch-size and --global-batch-size: the model file's
// batch size is a default, and this pass (the pipeline's first) retypes the
// forward function for the global batch the flags give (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINBATCHSIZE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

struct TrainBatchSizePass
    : zeroc::impl::TrainBatchSizeBase<TrainBatchSizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (globalBatch < 0) {
      module.emitError("global-batch must be at least 1 (0 keeps the "
                       "model's), got ")
          << static_cast<int64_t>(globalBatch);
      return signalPassFailure();
    }
    if (globalBatch == 0)
      return;
    if (failed(zeroc::refuseLaterStages(
            module, getArgument(),
            zeroc::kBatchSplit | zeroc::kDifferentiated | zeroc::kStepped |
                zeroc::kOptimizerState | zeroc::kPartitioned)))
      return signalPassFailure();
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward) || failed(zeroc::resizeBatch(*forward, globalBatch)))
      return signalPassFailure();
  }
};

} // namespace
