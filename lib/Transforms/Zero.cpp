//===- Zero.cpp - what the passes of train-zero share ---------------------===//

#include "Zero.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

/// `flat`'s type with its numel times `mul` over `div`.
static RankedTensorType resized(Value flat, int64_t mul, int64_t div) {
  auto type = cast<RankedTensorType>(flat.getType());
  return RankedTensorType::get({type.getNumElements() * mul / div},
                               type.getElementType());
}

Value zeroc::allReduce(TrainBuilder &tb, Value flat) {
  return shard::AllReduceOp::create(tb.builder(), tb.getLoc(), flat, kGrid, {0},
                                    shard::ReductionKind::Sum);
}

Value zeroc::reduceScatter(TrainBuilder &tb, Value flat, int64_t ranks) {
  return shard::ReduceScatterOp::create(
      tb.builder(), tb.getLoc(), resized(flat, 1, ranks), kGrid, {0}, flat,
      shard::ReductionKind::Sum, APInt(64, 0));
}

Value zeroc::allGather(TrainBuilder &tb, Value flat, int64_t ranks) {
  return shard::AllGatherOp::create(tb.builder(), tb.getLoc(),
                                    resized(flat, ranks, 1), kGrid, {0}, flat,
                                    APInt(64, 0));
}

Value zeroc::allSlice(TrainBuilder &tb, Value flat, int64_t ranks) {
  return shard::AllSliceOp::create(
      tb.builder(), tb.getLoc(), resized(flat, 1, ranks), flat, kGrid, {0}, 0);
}

Value zeroc::gatherStart(TrainBuilder &tb, Value flat, int64_t ranks) {
  return AllGatherStartOp::create(tb.builder(), tb.getLoc(),
                                  FutureType::get(resized(flat, ranks, 1)),
                                  flat, kGrid);
}

Value zeroc::sumScalar(OpBuilder &builder, Location loc, Value scalar) {
  TrainBuilder tb(builder, loc);
  return tb.reshape(allReduce(tb, tb.reshape(scalar, {1})), {});
}

Value zeroc::averageScalar(TrainBuilder &tb, Value scalar, int64_t ranks) {
  Value sum = allReduce(tb, tb.reshape(scalar, {1}));
  return tb.reshape(tb.scale(sum, 1.0 / static_cast<double>(ranks)), {});
}

SmallVector<Value> zeroc::microBatchParts(Value value) {
  SmallVector<Value> parts;
  while (auto add = value.getDefiningOp<AddOp>()) {
    if (!add->hasAttr("train.accumulate"))
      break;
    parts.push_back(add.getRhs());
    value = add.getLhs();
  }
  parts.push_back(value);
  std::reverse(parts.begin(), parts.end());
  return parts;
}

void zeroc::eraseDeadAccumulation(Value value) {
  while (auto add = value.getDefiningOp<AddOp>()) {
    if (!add->hasAttr("train.accumulate") || !add->use_empty())
      return;
    value = add.getLhs();
    add->erase();
  }
}

FailureOr<Partition> zeroc::readPartition(ModuleOp module, SymbolTable &symbols,
                                          StringRef pass) {
  auto stage = trainDialect(module).getZeroStageAttrHelper().getAttr(module);
  auto world = trainDialect(module).getWorldSizeAttrHelper().getAttr(module);
  if (!stage || !world)
    return module.emitError(pass)
           << " needs the stage and buffers train-shard-states decides "
              "(train.zero_stage, train.world_size): run train-shard-states "
              "first";
  Partition partition{stage.getInt(), world.getInt()};
  for (auto buffer : module.getOps<BufferOp>()) {
    StringRef name = buffer.getSymName();
    if (!name.starts_with("zero.flat") || !name.consume_back(".params"))
      continue;
    FlatBucket &b = partition.buckets.emplace_back();
    b.name = name.str();
    b.offsets = llvm::to_vector(buffer.getOffsets());
    b.element = buffer.getTensorType().getElementType();
    b.size = buffer.getTensorType().getNumElements();
    b.shard = partition.stage == 0 ? b.size : b.size / partition.worldSize;
    for (auto member : buffer.getMembers().getAsRange<FlatSymbolRefAttr>()) {
      auto param = symbols.lookup<ParamOp>(member.getAttr());
      if (!param)
        return buffer.emitError("member ")
               << member << " of a parameter buffer is not a train.param";
      b.members.push_back(param);
      b.numels.push_back(param.getTensorType().getNumElements());
      partition.bucketOf[param.getSymName()] = partition.buckets.size() - 1;
    }
  }
  if (partition.buckets.empty())
    return module.emitError(pass)
           << " finds no parameter buffer @zero.flat<k>.params: run "
              "train-shard-states first";
  FailureOr<TrainStep> step = findTrainStep(module, symbols);
  if (failed(step))
    return failure();
  partition.step = std::move(*step);
  return partition;
}

FailureOr<TrainStep> zeroc::findTrainStep(ModuleOp module,
                                          SymbolTable &symbols) {
  TrainStep step;
  for (auto candidate : module.getOps<func::FuncOp>()) {
    TrainDialect &dialect = trainDialect(candidate);
    if (dialect.getStepAttrHelper().isAttrPresent(candidate))
      step.func = candidate;
    if (!step.forward &&
        dialect.getForwardAttrHelper().isAttrPresent(candidate))
      step.forward = candidate;
  }
  if (!step.func)
    return module.emitError("no function is marked train.step: run "
                            "train-autodiff and train-optimizer first");
  auto optimizers = module.getOps<OptimizerOp>();
  if (optimizers.empty())
    return module.emitError("the model declares no train.optimizer");
  step.optimizer = *optimizers.begin();
  func::FuncOp func = step.func;
  auto names = trainDialect(func).getGradientsAttrHelper().getAttr(func);
  for (Attribute name : names ? names.getValue() : ArrayRef<Attribute>()) {
    auto param =
        symbols.lookup<ParamOp>(cast<FlatSymbolRefAttr>(name).getAttr());
    if (!param)
      return func.emitError("train.gradients entry ")
             << name << " is not a train.param";
    step.params.push_back(param);
  }
  // The optimizer section starts at the learning rate; the gradients are
  // what its squared norms read, in train.gradients order.
  for (Operation &op : func.getBody().front()) {
    if (isa<LRScheduleOp>(op) && !step.optimizerStart)
      step.optimizerStart = &op;
    if (auto norm = dyn_cast<SquaredNormOp>(op))
      step.grads.push_back(norm.getInput());
  }
  if (!step.optimizerStart || step.grads.size() != step.params.size() ||
      step.params.empty())
    return func.emitError("@")
           << func.getSymName()
           << " is not the step train-optimizer writes: it needs a "
              "train.lr_schedule and one train.squared_norm per entry of "
              "train.gradients";
  return step;
}
