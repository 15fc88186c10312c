//===- OptimizerEmitter.cpp - the optimizer step, full or sharded ---------===//

#include "OptimizerEmitter.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc {

std::string stateName(ParamOp param, StateKind kind) {
  return (param.getSymName() + "." + stringifyStateKind(kind)).str();
}

StateOp getOrDeclareState(OpBuilder &builder, SymbolTable &symbols,
                          ParamOp param, StateKind kind) {
  std::string name = stateName(param, kind);
  if (auto existing = symbols.lookup<StateOp>(name))
    return existing;
  // Keep a parameter's state together, after it and its earlier state.
  Operation *after = param;
  for (Operation *next = param->getNextNode(); next; next = next->getNextNode()) {
    auto state = dyn_cast<StateOp>(next);
    if (!state || state.getOf() != param.getSymName())
      break;
    after = next;
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(after);
  Type element = kind == StateKind::grad
                     ? param.getTensorType().getElementType()
                     : builder.getF32Type();
  auto type = RankedTensorType::get(param.getTensorType().getShape(), element);
  auto state = StateOp::create(builder, param.getLoc(), name, type, kind,
                               param.getSymName());
  symbols.insert(state);
  return state;
}

Operation *getOrDeclareMaster(OpBuilder &builder, SymbolTable &symbols,
                              ParamOp param) {
  if (param.getTensorType().getElementType().isF32())
    return param;
  return getOrDeclareState(builder, symbols, param, StateKind::master);
}

/// The storage type and symbol of a param or state op.
static std::pair<RankedTensorType, StringRef> storageOf(Operation *op) {
  if (auto param = dyn_cast<ParamOp>(op))
    return {param.getStorageType(), param.getSymName()};
  auto state = cast<StateOp>(op);
  return {state.getStorageType(), state.getSymName()};
}

Value FullLayout::loadMaster(TrainBuilder &tb, ParamOp param,
                             Operation *master) {
  auto [type, name] = storageOf(master);
  return tb.read(type, name);
}

void FullLayout::storeUpdated(TrainBuilder &tb, ParamOp param,
                              Operation *master, Value updated) {
  tb.write(updated, storageOf(master).second);
  if (master != param.getOperation())
    tb.write(tb.cast(updated, param.getTensorType().getElementType()),
             param.getSymName());
}

Value emitUpdate(TrainBuilder &tb, OptimizerOp optimizer, Value p, Value g,
                 Value lr, Value step, FloatAttr decay,
                 DenseI64ArrayAttr decayRanges, bool replicated,
                 llvm::function_ref<StringRef(StateKind)> stateOf) {
  OpBuilder &builder = tb.builder();
  UnitAttr whole = replicated ? builder.getUnitAttr() : UnitAttr();
  auto readState = [&](StateKind kind) {
    StringRef name = stateOf(kind);
    return std::make_pair(tb.read(typeOf(p), name), name);
  };
  if (optimizer.getKind() == OptimizerKind::adamw) {
    auto [expAvg, m] = readState(StateKind::exp_avg);
    auto [expAvgSq, v] = readState(StateKind::exp_avg_sq);
    auto update = AdamWUpdateOp::create(
        builder, tb.getLoc(), p, g, expAvg, expAvgSq, lr, step,
        optimizer.getBeta1Attr(), optimizer.getBeta2Attr(),
        optimizer.getEpsAttr(), decay, decayRanges, whole);
    tb.write(update.getNewExpAvg(), m);
    tb.write(update.getNewExpAvgSq(), v);
    return update.getNewParam();
  }
  auto [buffer, buf] = readState(StateKind::momentum_buffer);
  FloatAttr momentum = optimizer.getMomentumAttr()
                           ? optimizer.getMomentumAttr()
                           : builder.getF64FloatAttr(0.0);
  auto update = SGDUpdateOp::create(builder, tb.getLoc(), p, g, buffer, lr,
                                    momentum, decay, decayRanges, whole);
  tb.write(update.getNewMomentumBuffer(), buf);
  return update.getNewParam();
}

StepScalars emitStepScalars(OpBuilder &builder, OptimizerOp optimizer,
                            Value step, ArrayRef<Value> grads,
                            UpdateLayout &layout) {
  Location loc = optimizer.getLoc();
  TrainBuilder tb(builder, loc);
  StepScalars scalars;
  scalars.lr = LRScheduleOp::create(
      builder, loc, step, optimizer.getLrAttr(), optimizer.getScheduleAttr(),
      optimizer.getWarmupAttr(), optimizer.getMinLrAttr(),
      optimizer.getMaxStepsAttr() ? optimizer.getMaxStepsAttr()
                                  : builder.getI64IntegerAttr(0));

  // Global norm over every gradient, accumulated in f32.
  Value squaredNorm;
  for (Value grad : grads) {
    Value partial = SquaredNormOp::create(builder, loc, grad);
    squaredNorm = squaredNorm ? tb.add(squaredNorm, partial) : partial;
  }
  squaredNorm = layout.combineSquaredNorm(tb, squaredNorm);
  scalars.gradNorm = tb.sqrt(squaredNorm);
  double maxNorm = optimizer.getGradClipAttr().getValueAsDouble();
  if (maxNorm > 0.0)
    scalars.clip = ClipCoefOp::create(builder, loc, squaredNorm,
                                      builder.getF64FloatAttr(maxNorm));
  return scalars;
}

Value emitOptimizerStep(OpBuilder &builder, SymbolTable &symbols,
                        OptimizerOp optimizer, Value step,
                        ArrayRef<ParamGradient> grads, UpdateLayout &layout) {
  TrainBuilder tb(builder, optimizer.getLoc());
  SmallVector<Value> gradValues;
  for (const ParamGradient &pg : grads)
    gradValues.push_back(pg.grad);
  auto [lr, gradNorm, clip] =
      emitStepScalars(builder, optimizer, step, gradValues, layout);

  double weightDecay = optimizer.getWeightDecayAttr().getValueAsDouble();
  for (const ParamGradient &pg : grads) {
    ParamOp param = pg.param;
    tb.setLoc(param.getLoc());
    Operation *master = getOrDeclareMaster(builder, symbols, param);
    Value g = tb.cast(pg.grad, builder.getF32Type());
    if (clip)
      g = tb.mul(g, clip);
    Value p = layout.loadMaster(tb, param, master);
    FloatAttr decay =
        builder.getF64FloatAttr(param.getWeightDecay() ? weightDecay : 0.0);
    Value updated = emitUpdate(
        tb, optimizer, p, g, lr, step, decay, /*decayRanges=*/nullptr,
        /*replicated=*/false,
        [&](StateKind kind) {
          return getOrDeclareState(builder, symbols, param, kind)
              .getSymName();
        });
    layout.storeUpdated(tb, param, master, updated);
  }
  layout.finish(tb);
  return gradNorm;
}

} // namespace zeroc
