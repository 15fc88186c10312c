//===- DataParallel.cpp - split the global batch across ranks -------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"


namespace zeroc {
#define GEN_PASS_DEF_TRAINDATAPARALLEL
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

struct TrainDataParallelPass
    : zeroc::impl::TrainDataParallelBase<TrainDataParallelPass> {
  using Base::Base;

  int64_t ranks = 1;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(zeroc::refuseLaterStages(
            module, getArgument(),
            zeroc::kDifferentiated | zeroc::kStepped |
                zeroc::kOptimizerState | zeroc::kPartitioned)))
      return signalPassFailure();
    ranks = worldSize;
    if (ranks < 1) {
      module.emitError("world-size must be at least 1, got ") << ranks;
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward) || failed(split(module, *forward)))
      return signalPassFailure();
  }

  LogicalResult split(ModuleOp module, func::FuncOp forward) {
    if (trainDialect(module).getBatchSplitAttrHelper().isAttrPresent(module))
      return module.emitError("the batch is already split (train.batch_split "
                              "is set); run train-data-parallel once");
    if (failed(zeroc::splitBatch(forward, ranks)))
      return failure();
    trainDialect(module).getBatchSplitAttrHelper().setAttr(module, IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                     ranks));
    return success();
  }
};

} // namespace
