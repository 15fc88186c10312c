//===- ShardStates.cpp - each bucket's buffers, sharded per ZeRO stage ----===//

#include "OptimizerEmitter.h"
#include "Zero.h"

#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINSHARDSTATES
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

struct TrainShardStatesPass
    : zeroc::impl::TrainShardStatesBase<TrainShardStatesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(validate(module)))
      return signalPassFailure();
    // One symbol table for every look-up and new state below
    // (module.lookupSymbol is linear in the module, so per parameter it is
    // quadratic: a third of a 175B model's partition).
    SymbolTable symbols(module);
    FailureOr<TrainStep> step = findTrainStep(module, symbols);
    if (failed(step))
      return signalPassFailure();
    FailureOr<SmallVector<FlatBucket>> buckets = readBuckets(module, *step);
    if (failed(buckets))
      return signalPassFailure();
    declareBuffers(module, step->func, *buckets, step->optimizer, symbols);
    auto builder = OpBuilder::atBlockBegin(module.getBody());
    shard::GridOp::create(builder, module.getLoc(), kGrid, {worldSize});
    trainDialect(module).getWorldSizeAttrHelper().setAttr(
        module, builder.getI64IntegerAttr(worldSize));
    trainDialect(module).getZeroStageAttrHelper().setAttr(
        module, builder.getI64IntegerAttr(stage));
  }

  LogicalResult validate(ModuleOp module) {
    if (stage < 0 || stage > 3)
      return module.emitError("stage must be 0, 1, 2 or 3, got ")
             << static_cast<int64_t>(stage);
    if (worldSize < 1)
      return module.emitError("world-size must be at least 1, got ")
             << static_cast<int64_t>(worldSize);
    if (trainDialect(module).getZeroStageAttrHelper().isAttrPresent(module))
      return module.emitError("the module is already partitioned "
                              "(train.zero_stage is set)");
    auto split = trainDialect(module).getBatchSplitAttrHelper().getAttr(module);
    int64_t splitRanks = split ? split.getInt() : 1;
    if (splitRanks != worldSize)
      return module.emitError("the batch is split for ")
             << splitRanks << " rank(s) but world-size is "
             << static_cast<int64_t>(worldSize)
             << "; run train-data-parallel with world-size="
             << static_cast<int64_t>(worldSize) << " first";
    if (module.lookupSymbol(kGrid))
      return module.emitError("the symbol @")
             << kGrid << " is taken; train-zero declares its grid under it";
    return success();
  }

  /// The buckets train-assign-buckets wrote (`train.buckets`, removed
  /// here: from now on the buffers' members say it), laid out and padded.
  FailureOr<SmallVector<FlatBucket>> readBuckets(ModuleOp module,
                                                 const TrainStep &step) {
    auto attr = module->getAttrOfType<ArrayAttr>(kBucketsAttrName);
    if (!attr)
      return module.emitError("the module has no ")
             << kBucketsAttrName << ": run train-assign-buckets first";
    // The dialect verifies that each parameter is named once.
    llvm::StringMap<ParamOp> unplaced;
    for (ParamOp param : step.params)
      unplaced[param.getSymName()] = param;
    SmallVector<FlatBucket> buckets;
    for (Attribute bucket : attr) {
      FlatBucket &b = buckets.emplace_back();
      b.name = ("zero.flat" + Twine(buckets.size() - 1)).str();
      int64_t numel = 0;
      for (Attribute member : cast<ArrayAttr>(bucket)) {
        StringRef name = cast<FlatSymbolRefAttr>(member).getValue();
        ParamOp param = unplaced.lookup(name);
        if (!param)
          return module.emitError() << kBucketsAttrName << " names @" << name
                                    << ", which is not in train.gradients";
        unplaced.erase(name);
        b.element = param.getTensorType().getElementType();
        b.members.push_back(param);
        b.offsets.push_back(numel);
        b.numels.push_back(param.getTensorType().getNumElements());
        numel += b.numels.back();
      }
      // Stage 0 keeps whole buffers (no padding); stages 1-3 pad to N shards.
      b.shard = stage == 0 ? numel : (numel + worldSize - 1) / worldSize;
      b.size = stage == 0 ? numel : worldSize * b.shard;
    }
    for (ParamOp param : step.params)
      if (unplaced.contains(param.getSymName()))
        return module.emitError() << kBucketsAttrName << " has no bucket for @"
                                  << param.getSymName() << " (train.gradients)";
    module->removeAttr(kBucketsAttrName);
    return buckets;
  }

  /// The buckets' train.buffer declarations, before `before`.
  void declareBuffers(ModuleOp module, Operation *before,
                      ArrayRef<FlatBucket> buckets, OptimizerOp optimizer,
                      SymbolTable &symbols) {
    // Sharded or not per stage as Passes.td lists; members keep their names
    // and shapes.
    OpBuilder builder(before);
    auto declare = [&](const FlatBucket &b, StringRef what, Type element,
                       MemoryCategory category, bool sharded,
                       std::optional<StateKind> kind) {
      SmallVector<Attribute> members;
      for (ParamOp param : b.members)
        members.push_back(FlatSymbolRefAttr::get(
            kind ? getOrDeclareState(builder, symbols, param, *kind)
                 : param.getOperation()));
      auto buffer = BufferOp::create(
          builder, module.getLoc(), b.buffer(what),
          RankedTensorType::get({b.size}, element), category,
          builder.getArrayAttr(members), b.offsets,
          sharded ? builder.getI64IntegerAttr(worldSize) : IntegerAttr());
      symbols.insert(buffer);
    };
    Type f32 = builder.getF32Type();
    for (const FlatBucket &b : buckets) {
      declare(b, "params", b.element, MemoryCategory::parameters, stage == 3,
              std::nullopt);
      declare(b, "grads", b.element, MemoryCategory::gradients, stage >= 2,
              StateKind::grad);
      if (!b.element.isF32())
        declare(b, "master", f32, MemoryCategory::optimizer_states, stage > 0,
                StateKind::master);
      for (StateKind kind : optimizer.getMomentKinds())
        declare(b, stringifyStateKind(kind), f32,
                MemoryCategory::optimizer_states, stage > 0, kind);
    }
  }
};

} // namespace
