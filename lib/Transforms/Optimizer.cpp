//===- Optimizer.cpp - expand train.optimizer into a complete step --------===//
//
// Rewrites @loss_and_grads into @train_step: after the backward computation
// come the learning rate, the global gradient norm, optional clipping and one
// elementwise update per parameter, written back to module-level state.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINOPTIMIZER
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kGradientsFunc = "loss_and_grads";
constexpr StringLiteral kStepFunc = "train_step";

/// Declares `train.state @<param>.<kind>` after `after` (the parameter or its
/// previous state), which then moves to the new declaration.
std::string declareState(OpBuilder &builder, ParamOp param, StateKind kind,
                         Operation *&after) {
  std::string name = (param.getSymName() + "." + stringifyStateKind(kind)).str();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(after);
  auto type = RankedTensorType::get(param.getTensorType().getShape(),
                                    builder.getF32Type());
  after = StateOp::create(builder, param.getLoc(), name, type, kind,
                          param.getSymName(), /*shards=*/IntegerAttr());
  return name;
}

struct TrainOptimizerPass
    : zeroc::impl::TrainOptimizerBase<TrainOptimizerPass> {
  void runOnOperation() override {
    if (failed(expand(getOperation())))
      signalPassFailure();
  }

  LogicalResult expand(ModuleOp module) {
    auto optimizers = module.getOps<OptimizerOp>();
    if (optimizers.empty())
      return module.emitError("the model declares no train.optimizer");
    OptimizerOp optimizer = *optimizers.begin();
    auto func = module.lookupSymbol<func::FuncOp>(kGradientsFunc);
    if (!func)
      return module.emitError("no @")
             << kGradientsFunc << " function: run --train-autodiff first";
    if (module.lookupSymbol(kStepFunc))
      return module.emitError("the module already has a symbol @")
             << kStepFunc << "; was train-optimizer run twice?";
    auto names = func->getAttrOfType<ArrayAttr>("train.gradients");
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (!names || names.size() + 1 != ret.getNumOperands())
      return func.emitError("train.gradients must name the parameter of each "
                            "result after the loss");

    SmallVector<ParamOp> params;
    for (Attribute name : names) {
      auto ref = dyn_cast<FlatSymbolRefAttr>(name);
      auto param = ref ? module.lookupSymbol<ParamOp>(ref) : ParamOp();
      if (!param)
        return func.emitError("train.gradients entry ")
               << name << " is not a train.param";
      params.push_back(param);
    }

    OpBuilder builder(module.getContext());
    MLIRContext *ctx = module.getContext();
    Block &body = func.getBody().front();
    auto stepType = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    Value step = body.addArgument(stepType, func.getLoc());
    builder.setInsertionPoint(ret);
    TrainBuilder tb(builder, optimizer.getLoc());

    Value lr = LRScheduleOp::create(
        builder, optimizer.getLoc(), step, optimizer.getLrAttr(),
        optimizer.getScheduleAttr(), optimizer.getWarmupAttr(),
        optimizer.getMinLrAttr(),
        optimizer.getMaxStepsAttr() ? optimizer.getMaxStepsAttr()
                                    : builder.getI64IntegerAttr(0));

    // Global norm over every gradient, accumulated in f32.
    SmallVector<Value> grads(ret.getOperands().drop_front());
    Value squaredNorm;
    for (Value grad : grads) {
      Value partial = SquaredNormOp::create(builder, optimizer.getLoc(), grad);
      squaredNorm = squaredNorm ? tb.add(squaredNorm, partial) : partial;
    }
    Value gradNorm = tb.sqrt(squaredNorm);
    double maxNorm = optimizer.getGradClipAttr().getValueAsDouble();
    Value clip = maxNorm > 0.0
                     ? ClipCoefOp::create(builder, optimizer.getLoc(),
                                          squaredNorm,
                                          builder.getF64FloatAttr(maxNorm))
                           .getResult()
                     : Value();

    double weightDecay = optimizer.getWeightDecayAttr().getValueAsDouble();
    bool adamw = optimizer.getKind() == OptimizerKind::adamw;
    for (auto [param, grad] : llvm::zip(params, grads)) {
      tb.setLoc(param.getLoc());
      RankedTensorType type = param.getTensorType();
      bool hasMaster = !type.getElementType().isF32();
      auto f32Type = RankedTensorType::get(type.getShape(), builder.getF32Type());
      StringRef paramName = param.getSymName();
      Operation *lastDecl = param;
      std::string masterName =
          hasMaster ? declareState(builder, param, StateKind::master, lastDecl)
                    : paramName.str();
      Value g = tb.cast(grad, builder.getF32Type());
      if (clip)
        g = tb.mul(g, clip);
      Value p = tb.read(f32Type, masterName);
      FloatAttr decay =
          builder.getF64FloatAttr(param.getWeightDecay() ? weightDecay : 0.0);
      Value updated;
      if (adamw) {
        std::string m =
            declareState(builder, param, StateKind::exp_avg, lastDecl);
        std::string v =
            declareState(builder, param, StateKind::exp_avg_sq, lastDecl);
        Value expAvg = tb.read(f32Type, m);
        Value expAvgSq = tb.read(f32Type, v);
        auto update = AdamWUpdateOp::create(
            builder, param.getLoc(), p, g, expAvg, expAvgSq, lr, step,
            optimizer.getBeta1Attr(),
            optimizer.getBeta2Attr(), optimizer.getEpsAttr(), decay);
        tb.write(update.getNewExpAvg(), m);
        tb.write(update.getNewExpAvgSq(), v);
        updated = update.getNewParam();
      } else {
        std::string buf = declareState(builder, param,
                                       StateKind::momentum_buffer, lastDecl);
        FloatAttr momentum = optimizer.getMomentumAttr()
                                 ? optimizer.getMomentumAttr()
                                 : builder.getF64FloatAttr(0.0);
        Value buffer = tb.read(f32Type, buf);
        auto update = SGDUpdateOp::create(builder, param.getLoc(), p, g, buffer,
                                          lr, momentum, decay);
        tb.write(update.getNewMomentumBuffer(), buf);
        updated = update.getNewParam();
      }
      tb.write(updated, masterName);
      if (hasMaster)
        tb.write(tb.cast(updated, type.getElementType()), paramName);
    }

    Value loss = ret.getOperand(0);
    func::ReturnOp::create(builder, ret.getLoc(), ValueRange{loss, gradNorm});
    ret.erase();
    func.setFunctionType(builder.getFunctionType(
        body.getArgumentTypes(), {loss.getType(), gradNorm.getType()}));
    func.setSymName(kStepFunc);
    func->removeAttr("train.gradients");
    func->setAttr("train.step", builder.getUnitAttr());
    return success();
  }
};

} // namespace
