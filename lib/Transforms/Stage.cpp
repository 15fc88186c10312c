//===- Stage.cpp - which stage of the pipeline a module is at -------------===//

#include "Stage.h"

#include "ForwardRewrite.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace zeroc {

LogicalResult refuseLaterStages(ModuleOp module, StringRef pass,
                                unsigned refused) {
  auto refuse = [&](Operation *at, const Twine &what, StringRef runsBefore) {
    return at->emitError() << pass << " cannot run on this module: " << what
                           << "; " << pass << " runs before " << runsBefore;
  };
  if (refused & kPartitioned)
    if (Attribute stage = module->getAttr("train.zero_stage"))
      return refuse(module,
                    "it is already partitioned (it has the attribute "
                    "'train.zero_stage' = " +
                        llvm::Twine(isa<IntegerAttr>(stage)
                                        ? std::to_string(
                                              cast<IntegerAttr>(stage).getInt())
                                        : std::string("?")) +
                        ")",
                    "train-zero");
  if (refused & kStepped)
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("train.step"))
        return refuse(func,
                      "it already has a training step (@" + func.getSymName() +
                          ", marked 'train.step')",
                      "train-optimizer");
  if (refused & kOptimizerState)
    for (auto state : module.getOps<train::StateOp>())
      return refuse(state,
                    "it already declares optimizer state (train.state @" +
                        state.getSymName() + ")",
                    "train-optimizer");
  if (refused & kDifferentiated)
    if (Operation *grads = module.lookupSymbol(kLossAndGradsFunction))
      return refuse(grads,
                    "it is already differentiated (it has @" +
                        kLossAndGradsFunction + ")",
                    "train-autodiff");
  if (refused & kBatchSplit)
    if (module->hasAttr("train.batch_split"))
      return refuse(module,
                    "its batch is already split (it has the attribute "
                    "'train.batch_split')",
                    "train-data-parallel");
  return success();
}

} // namespace zeroc
