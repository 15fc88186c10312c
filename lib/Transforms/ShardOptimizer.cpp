//===- ShardOptimizer.cpp - train-optimizer's step over bucket shards -----===//

#include "OptimizerEmitter.h"
#include "Zero.h"

#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINSHARDOPTIMIZER
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

/// train-optimizer's section of @train_step: its step scalars and one
/// update per parameter (in train.gradients order).
struct Section {
  SmallVector<Operation *> ops;
  LRScheduleOp lr;
  Operation *gradNorm = nullptr; // the train.sqrt the step returns
  ClipCoefOp clip;
  llvm::DenseMap<Operation *, StateUpdateOpInterface> updateOf; // by param
};

struct TrainShardOptimizerPass
    : zeroc::impl::TrainShardOptimizerBase<TrainShardOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    FailureOr<Partition> partition =
        readPartition(module, symbols, "train-shard-optimizer");
    if (failed(partition))
      return signalPassFailure();
    S = partition->stage;
    N = partition->worldSize;
    TrainStep &step = partition->step;
    FailureOr<Section> section = readSection(step);
    Block &body = step.func.getBody().front();
    if (failed(section) ||
        failed(checkInputs(body, *partition, step.optimizer, symbols)))
      return signalPassFailure();
    Operation *ret = body.getTerminator();
    OpBuilder builder(ret);
    TrainBuilder tb(builder, step.optimizer.getLoc());
    // Each bucket's averaged gradient shard (at stage 0 the whole bucket).
    SmallVector<Value> shardGrads;
    for (const FlatBucket &b : partition->buckets)
      shardGrads.push_back(
          S == 1 ? reduction(body, b)
                 : tb.read(RankedTensorType::get({b.shard}, b.element),
                           b.buffer("grads")));
    // train-optimizer's scalars, now after the reductions; the norm over
    // the shards, summed over ranks from stage 1.
    section->lr->moveBefore(ret);
    Value squaredNorm;
    for (Value grad : shardGrads) {
      Value partial = SquaredNormOp::create(builder, tb.getLoc(), grad);
      squaredNorm = squaredNorm ? tb.add(squaredNorm, partial) : partial;
    }
    if (S > 0)
      squaredNorm = sumScalar(builder, tb.getLoc(), squaredNorm);
    section->gradNorm->moveBefore(ret);
    section->gradNorm->setOperand(0, squaredNorm);
    if (section->clip) {
      section->clip->moveBefore(ret);
      section->clip.getSquaredNormMutable().assign(squaredNorm);
    }
    for (auto [b, grad] : llvm::zip(partition->buckets, shardGrads))
      updateBucket(tb, b, grad, *section, step.optimizer,
                   body.getArguments().back());
    // The per-parameter section is consumed.
    for (Operation *op : llvm::reverse(section->ops))
      if (op != section->lr && op != section->gradNorm && op != section->clip)
        op->erase();
    for (Value grad : step.grads)
      eraseDeadAccumulation(grad);
  }

  FailureOr<Section> readSection(TrainStep &step) {
    Section section;
    section.lr = cast<LRScheduleOp>(step.optimizerStart);
    Operation *ret = step.func.getBody().front().getTerminator();
    SmallVector<StateUpdateOpInterface> updates;
    for (Operation *op = step.optimizerStart; op != ret;
         op = op->getNextNode()) {
      section.ops.push_back(op);
      if (auto update = dyn_cast<StateUpdateOpInterface>(op))
        updates.push_back(update);
      else if (auto clip = dyn_cast<ClipCoefOp>(op))
        section.clip = clip;
    }
    if (ret->getNumOperands() == 2)
      section.gradNorm = ret->getOperand(1).getDefiningOp<SqrtOp>();
    if (updates.size() != step.params.size() || !section.gradNorm ||
        !llvm::is_contained(section.ops, section.gradNorm))
      return step.func.emitError("train-shard-optimizer needs @")
             << step.func.getSymName()
             << "'s optimizer section as train-optimizer writes it: one "
                "update per entry of train.gradients ("
             << updates.size() << " for " << step.params.size()
             << ") and the train.sqrt of the gradient norm it returns";
    for (auto [param, update] : llvm::zip(step.params, updates))
      section.updateOf[param] = update;
    return section;
  }

  /// Every buffer the updates read and the reduced gradients they start
  /// from are there.
  LogicalResult checkInputs(Block &body, const Partition &partition,
                            OptimizerOp optimizer, SymbolTable &symbols) {
    SmallVector<StringRef> kinds = {"grads"};
    for (StateKind kind : optimizer.getMomentKinds())
      kinds.push_back(stringifyStateKind(kind));
    kinds.push_back("master");
    for (const FlatBucket &b : partition.buckets) {
      for (StringRef kind : kinds)
        if ((kind != "master" || !b.element.isF32()) &&
            !symbols.lookup<BufferOp>(b.buffer(kind)))
          return optimizer.emitError("train-shard-optimizer finds no buffer @")
                 << b.buffer(kind) << ": run train-shard-states first";
      if (!reduction(body, b))
        return body.getParentOp()->emitError("train-shard-optimizer finds no "
                                             "reduction into @")
               << b.buffer("grads") << ": run train-reduce-gradients first";
    }
    return success();
  }

  /// What train-reduce-gradients wrote into the bucket's gradient buffer,
  /// or null; at stage 1 the averaged gradient shard it left as a value
  /// (the reduce-scatter of what it writes to the buffer), null without.
  Value reduction(Block &body, const FlatBucket &b) {
    std::string grads = b.buffer("grads");
    for (auto write : body.getOps<WriteOp>()) {
      if (write.getName() != grads)
        continue;
      if (S != 1)
        return write.getValue();
      for (Operation *user : write.getValue().getUsers())
        if (isa<shard::ReduceScatterOp>(user))
          return *user->getResult(0).getUsers().begin()->getResults().begin();
    }
    return nullptr;
  }

  void updateBucket(TrainBuilder &tb, const FlatBucket &b, Value grad,
                    Section &section, OptimizerOp optimizer, Value step) {
    // At stage 0 every rank updates the whole bucket, as each holds the
    // averaged gradients.
    OpBuilder &builder = tb.builder();
    Type f32 = builder.getF32Type();
    Value g = tb.cast(grad, f32);
    if (section.clip)
      g = tb.mul(g, section.clip);
    // An f32 bucket's master is the parameters' own shard, at stages 1-2
    // sliced from the replicated buffer.
    bool slice = b.element.isF32() && (S == 1 || S == 2);
    Value master =
        tb.read(RankedTensorType::get({slice ? N * b.shard : b.shard}, f32),
                b.buffer(b.element.isF32() ? "params" : "master"));
    if (slice)
      master = allSlice(tb, master, N);
    SmallVector<int64_t> ranges;
    for (auto [param, offset, numel] :
         llvm::zip(b.members, b.offsets, b.numels)) {
      if (section.updateOf.lookup(param).getWeightDecay().isZero())
        continue;
      if (!ranges.empty() && ranges.back() == offset)
        ranges.back() = offset + numel;
      else
        ranges.append({offset, offset + numel});
    }
    Value updated = emitUpdate(
        tb, optimizer, master, g, section.lr, step,
        optimizer.getWeightDecayAttr(), builder.getDenseI64ArrayAttr(ranges),
        /*replicated=*/S == 0, [&](StateKind kind) {
          return builder.getStringAttr(b.buffer(stringifyStateKind(kind)))
              .getValue();
        });
    Value shard = updated;
    if (!b.element.isF32()) {
      tb.write(updated, b.buffer("master"));
      shard = tb.cast(updated, b.element);
    }
    tb.write(S == 0 || S == 3 ? shard : allGather(tb, shard, N),
             b.buffer("params"));
  }

  int64_t S = 0, N = 1;
};

} // namespace
