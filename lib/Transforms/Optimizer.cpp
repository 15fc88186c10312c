//===- Optimizer.cpp - expand train.optimizer into a complete step --------===//
//
// Rewrites @loss_and_grads into @train_step: after the backward computation
// come the learning rate, the global gradient norm, optional clipping and one
// elementwise update per parameter, written back to module-level state.
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "Stage.h"
#include "OptimizerEmitter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINOPTIMIZER
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kStepFunc = "train_step";

struct TrainOptimizerPass
    : zeroc::impl::TrainOptimizerBase<TrainOptimizerPass> {
  void runOnOperation() override {
    if (failed(zeroc::refuseLaterStages(getOperation(), getArgument(),
                                        zeroc::kPartitioned)) ||
        failed(expand(getOperation())))
      signalPassFailure();
  }

  LogicalResult expand(ModuleOp module) {
    auto optimizers = module.getOps<OptimizerOp>();
    if (optimizers.empty())
      return module.emitError("the model declares no train.optimizer");
    OptimizerOp optimizer = *optimizers.begin();
    auto func = module.lookupSymbol<func::FuncOp>(zeroc::kLossAndGradsFunction);
    if (!func)
      return module.emitError("no @")
             << zeroc::kLossAndGradsFunction << " function: run --train-autodiff first";
    if (module.lookupSymbol(kStepFunc))
      return module.emitError("the module already has a symbol @")
             << kStepFunc << "; was train-optimizer run twice?";
    auto names = trainDialect(func).getGradientsAttrHelper().getAttr(func);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (!names || names.size() + 1 != ret.getNumOperands())
      return func.emitError("train.gradients must name the parameter of each "
                            "result after the loss");

    // One symbol table for the look-ups below and the states the update
    // declares (module.lookupSymbol is linear in the module).
    SymbolTable symbols(module);
    SmallVector<ParamOp> params;
    for (Attribute name : names) {
      auto ref = dyn_cast<FlatSymbolRefAttr>(name);
      auto param = ref ? symbols.lookup<ParamOp>(ref.getAttr()) : ParamOp();
      if (!param)
        return func.emitError("train.gradients entry ")
               << name << " is not a train.param";
      params.push_back(param);
    }

    OpBuilder builder(module.getContext());
    Block &body = func.getBody().front();
    auto stepType =
        RankedTensorType::get({}, IntegerType::get(module.getContext(), 64));
    Value step = body.addArgument(stepType, func.getLoc());
    // Dropout drops in the training step only: it takes the step there
    // (its mask depends on it), and stays the identity in @forward.
    for (auto dropout : body.getOps<DropoutOp>())
      if (!dropout.getStep())
        dropout.getStepMutable().assign(step);
    // So does the dropout of attention's probabilities.
    for (auto attention : body.getOps<AttentionOp>())
      if (attention.getDropoutAttr() && !attention.getStep())
        attention.getStepMutable().assign(step);
    for (auto attention : body.getOps<AttentionGradOp>())
      if (attention.getDropoutAttr() && !attention.getStep())
        attention.getStepMutable().assign(step);
    builder.setInsertionPoint(ret);
    SmallVector<zeroc::ParamGradient> grads;
    for (auto [param, grad] :
         llvm::zip(params, ret.getOperands().drop_front()))
      grads.push_back({param, grad});
    zeroc::FullLayout layout;
    Value gradNorm = zeroc::emitOptimizerStep(builder, symbols, optimizer,
                                              step, grads, layout);

    Value loss = ret.getOperand(0);
    func::ReturnOp::create(builder, ret.getLoc(), ValueRange{loss, gradNorm});
    ret.erase();
    func.setFunctionType(builder.getFunctionType(
        body.getArgumentTypes(), {loss.getType(), gradNorm.getType()}));
    func.setSymName(kStepFunc);
    trainDialect(func).getStepAttrHelper().setAttr(func, builder.getUnitAttr());
    return success();
  }
};

} // namespace
