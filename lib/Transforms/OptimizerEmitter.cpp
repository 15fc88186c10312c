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
                               param.getSymName(), /*shards=*/IntegerAttr());
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

Value emitOptimizerStep(OpBuilder &builder, SymbolTable &symbols,
                        OptimizerOp optimizer, Value step,
                        ArrayRef<ParamGradient> grads, UpdateLayout &layout) {
  Location loc = optimizer.getLoc();
  TrainBuilder tb(builder, loc);
  Value lr = LRScheduleOp::create(
      builder, loc, step, optimizer.getLrAttr(), optimizer.getScheduleAttr(),
      optimizer.getWarmupAttr(), optimizer.getMinLrAttr(),
      optimizer.getMaxStepsAttr() ? optimizer.getMaxStepsAttr()
                                  : builder.getI64IntegerAttr(0));

  // Global norm over every gradient, accumulated in f32.
  Value squaredNorm;
  for (const ParamGradient &pg : grads) {
    Value partial = SquaredNormOp::create(builder, loc, pg.grad);
    squaredNorm = squaredNorm ? tb.add(squaredNorm, partial) : partial;
  }
  squaredNorm = layout.combineSquaredNorm(tb, squaredNorm);
  Value gradNorm = tb.sqrt(squaredNorm);
  double maxNorm = optimizer.getGradClipAttr().getValueAsDouble();
  Value clip = maxNorm > 0.0
                   ? ClipCoefOp::create(builder, loc, squaredNorm,
                                        builder.getF64FloatAttr(maxNorm))
                         .getResult()
                   : Value();

  double weightDecay = optimizer.getWeightDecayAttr().getValueAsDouble();
  bool adamw = optimizer.getKind() == OptimizerKind::adamw;
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
    auto readState = [&](StateKind kind) {
      StateOp state = getOrDeclareState(builder, symbols, param, kind);
      return std::make_pair(tb.read(state.getStorageType(), state.getSymName()),
                            state.getSymName());
    };
    Value updated;
    if (adamw) {
      auto [expAvg, m] = readState(StateKind::exp_avg);
      auto [expAvgSq, v] = readState(StateKind::exp_avg_sq);
      auto update = AdamWUpdateOp::create(
          builder, param.getLoc(), p, g, expAvg, expAvgSq, lr, step,
          optimizer.getBeta1Attr(), optimizer.getBeta2Attr(),
          optimizer.getEpsAttr(), decay, /*decay_ranges=*/nullptr);
      tb.write(update.getNewExpAvg(), m);
      tb.write(update.getNewExpAvgSq(), v);
      updated = update.getNewParam();
    } else {
      auto [buffer, buf] = readState(StateKind::momentum_buffer);
      FloatAttr momentum = optimizer.getMomentumAttr()
                               ? optimizer.getMomentumAttr()
                               : builder.getF64FloatAttr(0.0);
      auto update = SGDUpdateOp::create(builder, param.getLoc(), p, g, buffer,
                                        lr, momentum, decay,
                                        /*decay_ranges=*/nullptr);
      tb.write(update.getNewMomentumBuffer(), buf);
      updated = update.getNewParam();
    }
    layout.storeUpdated(tb, param, master, updated);
  }
  layout.finish(tb);
  return gradNorm;
}

} // namespace zeroc
