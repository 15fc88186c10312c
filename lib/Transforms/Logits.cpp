//===- Logits.cpp - the next-token logits of a model, for sampling --------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINLOGITS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kLogitsFunc = "logits";

struct TrainLogitsPass : zeroc::impl::TrainLogitsBase<TrainLogitsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(zeroc::refuseLaterStages(
            module, getArgument(), zeroc::kBatchSplit | zeroc::kPartitioned)))
      return signalPassFailure();
    if (module.lookupSymbol(kLogitsFunc)) {
      if (required) {
        module.emitError("the module already has a symbol @") << kLogitsFunc;
        signalPassFailure();
      }
      return;
    }
    if (!required && llvm::none_of(module.getOps<func::FuncOp>(),
                                   [](func::FuncOp f) {
                                     return trainDialect(f).getForwardAttrHelper().isAttrPresent(f);
                                   }))
      return; // the passes that need a forward function report its absence
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward))
      return signalPassFailure();
    if (failed(derive(module, *forward)))
      return signalPassFailure();
  }

  /// Reports why no @logits can be derived when it is required; otherwise
  /// the model just has none.
  LogicalResult decline(Operation *op, const Twine &why) {
    if (!required)
      return success();
    return op->emitError(why);
  }

  LogicalResult derive(ModuleOp module, func::FuncOp forward) {
    auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    auto loss = ret.getOperand(0).getDefiningOp<CrossEntropyOp>();
    if (!loss)
      return decline(forward, "@logits needs a forward function that returns "
                              "a train.cross_entropy of logits and targets");
    Block &body = forward.getBody().front();
    if (body.getNumArguments() != 2 || loss.getTargets() != body.getArgument(1))
      return decline(forward, "@logits needs a forward function of (tokens, "
                              "targets) whose targets feed only the loss");
    if (!body.getArgument(1).hasOneUse())
      return decline(forward, "the targets are used beyond the loss, so "
                              "@logits cannot drop them");

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(forward);
    auto logits = cast<func::FuncOp>(builder.clone(*forward));
    logits.setSymName(kLogitsFunc);
    trainDialect(logits).getForwardAttrHelper().removeAttr(logits);
    trainDialect(logits).getLogitsAttrHelper().setAttr(logits, builder.getUnitAttr());
    Block &copy = logits.getBody().front();
    auto copyRet = cast<func::ReturnOp>(copy.getTerminator());
    auto copyLoss = copyRet.getOperand(0).getDefiningOp<CrossEntropyOp>();
    copyRet->setOperand(0, copyLoss.getLogits());
    copyLoss.erase();
    copy.eraseArgument(1);
    // Sampling runs without dropout (a step-less train.dropout is the
    // identity already; this makes it plain).
    for (auto dropout : llvm::make_early_inc_range(copy.getOps<DropoutOp>())) {
      dropout.getResult().replaceAllUsesWith(dropout.getInput());
      dropout.erase();
    }
    for (auto attention : copy.getOps<AttentionOp>()) {
      attention.removeDropoutAttr();
      attention.removeSeedAttr();
    }
    // One sequence: the batch of the forward function divided by itself.
    auto tokens = cast<RankedTensorType>(copy.getArgument(0).getType());
    // When @logits is optional, why the copy does not split is not reported
    // here: train-data-parallel reports it on the forward function, once.
    std::optional<ScopedDiagnosticHandler> quiet;
    if (!required)
      quiet.emplace(module.getContext(),
                    [](Diagnostic &) { return success(); });
    if (failed(zeroc::splitBatch(logits, tokens.getDimSize(0)))) {
      logits.erase();
      return decline(forward, "the forward function does not split into one "
                              "sequence for @logits");
    }
    return success();
  }
};

} // namespace
