//===- Zero.cpp - ZeRO stages 0-3: the per-rank training step -------------===//
//
// Rewrites @train_step into one rank's program: gradient buckets reduced with
// collectives as soon as backward has produced them, the optimizer step
// rebuilt over the rank's shards (stages 1-3), and in stage 3 parameters
// gathered around their uses in forward and again in backward.
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "OptimizerEmitter.h"
#include "Zero.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINPARTITION
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kGrid = "dp";

/// Upstream shard collectives on the 1-D grid @dp, over dimension 0.
class Collectives {
public:
  Collectives(OpBuilder &builder, int64_t ranks) : b(builder), ranks(ranks) {}

  Value allReduce(Location loc, Value flat) {
    return shard::AllReduceOp::create(b, loc, flat, kGrid, {0},
                                      shard::ReductionKind::Sum);
  }
  Value reduceScatter(Location loc, Value flat) {
    return shard::ReduceScatterOp::create(
        b, loc, resized(flat, 1, ranks), grid(), axes(), flat,
        shard::ReductionKindAttr::get(b.getContext(), shard::ReductionKind::Sum),
        b.getIndexAttr(0));
  }
  Value allGather(Location loc, Value flat) {
    return shard::AllGatherOp::create(b, loc, resized(flat, ranks, 1), grid(),
                                      axes(), flat, b.getIndexAttr(0));
  }
  Value allSlice(Location loc, Value flat) {
    return shard::AllSliceOp::create(b, loc, resized(flat, 1, ranks), flat,
                                     kGrid, {0}, 0);
  }
  /// zeroc's side-effecting gather, which CSE cannot merge with another.
  Value gatherStart(Location loc, Value flat) {
    return AllGatherStartOp::create(
        b, loc, FutureType::get(resized(flat, ranks, 1)), flat, grid());
  }

  /// Averages a scalar over ranks (the loss, through a 1-element buffer).
  Value averageScalar(TrainBuilder &tb, Value scalar) {
    Value sum = allReduce(tb.getLoc(), tb.reshape(scalar, {1}));
    return tb.reshape(tb.scale(sum, 1.0 / static_cast<double>(ranks)), {});
  }
  Value sumScalar(TrainBuilder &tb, Value scalar) {
    return tb.reshape(allReduce(tb.getLoc(), tb.reshape(scalar, {1})), {});
  }

private:
  FlatSymbolRefAttr grid() { return FlatSymbolRefAttr::get(b.getContext(), kGrid); }
  DenseI16ArrayAttr axes() { return b.getDenseI16ArrayAttr({0}); }
  RankedTensorType resized(Value flat, int64_t mul, int64_t div) {
    auto type = cast<RankedTensorType>(flat.getType());
    return RankedTensorType::get({type.getNumElements() * mul / div},
                                 type.getElementType());
  }

  OpBuilder &b;
  int64_t ranks;
};

/// The micro-batch contributions of a value that train-accumulate summed
/// (a chain of `train.add` marked `train.accumulate`, the running total on
/// the left), in micro-batch order; just `value` without accumulation.
SmallVector<Value> microBatchParts(Value value) {
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

/// Micro-batch m's gradients of a bucket (`parts[i][m]`, appended to
/// `values`), with the builder placed right after the last of them is
/// computed (at the start of `body` when none is); returns the location of
/// the ops to build there.
Location afterMicroBatch(OpBuilder &b, Block &body,
                         ArrayRef<SmallVector<Value>> parts, size_t m,
                         SmallVector<Value> &values, Location fallback) {
  Operation *last = nullptr;
  for (auto &p : parts) {
    values.push_back(p[m]);
    Operation *def = p[m].getDefiningOp();
    if (def && (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(&body);
  return last ? last->getLoc() : fallback;
}

/// Erases the accumulation adds of `value` that nothing reads any more.
void eraseDeadAccumulation(Value value) {
  while (auto add = value.getDefiningOp<AddOp>()) {
    if (!add->hasAttr("train.accumulate") || !add->use_empty())
      return;
    value = add.getLhs();
    add->erase();
  }
}

/// One bucket of the flat layout: parameters of one element type laid end
/// to end (member i at element offsets[i]), padded to N equal shards of
/// `shard` elements.
struct FlatBucket {
  SmallVector<unsigned> members;
  SmallVector<int64_t> offsets;
  SmallVector<int64_t> numels; // of each member
  int64_t shard = 0;
  int64_t size = 0; // of the buffer: N shards, or (stage 0) the members
  Type element;
  std::string name;          // zero.flat<k>
  Value reduced;             // stage 1: this rank's averaged gradient shard
};

/// The global squared gradient norm of the bucket updates: at stages 1-3
/// the sum of every rank's partial one; at stage 0, where every rank holds
/// the whole averaged gradients, the rank's own (the per-bucket updates
/// read their shards themselves).
class BucketNorm : public UpdateLayout {
public:
  BucketNorm(Collectives &collectives, bool sharded)
      : collectives(collectives), sharded(sharded) {}

  Value combineSquaredNorm(TrainBuilder &tb, Value partial) override {
    return sharded ? collectives.sumScalar(tb, partial) : partial;
  }
  Value loadMaster(TrainBuilder &, ParamOp, Operation *) override {
    llvm_unreachable("the flat layout updates whole bucket shards");
  }
  void storeUpdated(TrainBuilder &, ParamOp, Operation *, Value) override {
    llvm_unreachable("the flat layout updates whole bucket shards");
  }

private:
  Collectives &collectives;
  bool sharded;
};

/// The uses of one parameter's reads in one phase.
struct ParamUses {
  ParamOp param;
  SmallVector<OpOperand *> operands;

  Operation *first() const {
    Operation *op = operands.front()->getOwner();
    for (OpOperand *use : operands)
      if (use->getOwner()->isBeforeInBlock(op))
        op = use->getOwner();
    return op;
  }
  Operation *last() const {
    Operation *op = operands.front()->getOwner();
    for (OpOperand *use : operands)
      if (op->isBeforeInBlock(use->getOwner()))
        op = use->getOwner();
    return op;
  }
};

/// Parameters gathered together: from before `begin` to after `end`; in
/// the flat layout, bucket `bucket`'s whole buffer.
struct GatherGroup {
  SmallVector<ParamUses> uses;
  Operation *begin = nullptr, *end = nullptr;
  unsigned bucket = 0;
  unsigned phase = 0;
};

struct TrainPartitionPass
    : zeroc::impl::TrainPartitionBase<TrainPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(partition(getOperation())))
      signalPassFailure();
  }

  LogicalResult partition(ModuleOp module);
  LogicalResult validate(ModuleOp module);
  void gatherParameters(func::FuncOp func, Operation *lossOp,
                        ArrayRef<ParamOp> params, OpBuilder &b,
                        Collectives &collectives);
  /// Stage 3: the parameters gathered together, phase by phase.
  SmallVector<GatherGroup> gatherGroups(func::FuncOp func,
                                               Operation *lossOp,
                                               ArrayRef<ParamOp> params,
                                               SmallVectorImpl<ReadOp> &reads);
  void keepAcrossLoss(SmallVectorImpl<GatherGroup> &groups);

  /// The forward function (kept for evaluation) becomes the per-rank
  /// program too: its loss is averaged over ranks and, in stage 3, it
  /// gathers the parameters it reads.
  void partitionForward(func::FuncOp forward, ArrayRef<ParamOp> params,
                        OpBuilder &b, Collectives &collectives) {
    auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    Value loss = ret.getOperand(0);
    Operation *lossOp = loss.getDefiningOp();
    if (!lossOp)
      return;
    if (S == 3)
      gatherParameters(forward, lossOp, params, b, collectives);
    b.setInsertionPoint(ret);
    TrainBuilder tb(b, lossOp->getLoc());
    ret->setOperand(0, collectives.averageScalar(tb, loss));
  }

  static func::FuncOp findForward(ModuleOp module) {
    for (auto func : module.getOps<func::FuncOp>())
      if (trainDialect(func).getForwardAttrHelper().isAttrPresent(func))
        return func;
    return {};
  }

  /// The buckets train-assign-buckets wrote (`train.buckets`, removed
  /// here: from now on the buffers' members say it), as `flat`.
  LogicalResult readBuckets(ModuleOp module, ArrayRef<ParamOp> params);
  /// The buckets' train.buffer declarations, before `before`: at stage 0
  /// their gradients; from stage 1 their parameters, gradients, fp32
  /// masters and moments.
  void declareBuffers(ModuleOp module, Operation *before,
                      ArrayRef<ParamOp> params, OptimizerOp optimizer,
                      SymbolTable &symbols);
  void reduceFlat(Block &body, ArrayRef<Value> grads, Location loc,
                  OpBuilder &builder, Collectives &collectives);
  Value updateFlat(Block &body, ArrayRef<ParamOp> params,
                   OptimizerOp optimizer, Value step, SymbolTable &symbols,
                   OpBuilder &builder, Collectives &collectives);

  int64_t S = 0, N = 1;
  /// The flat layout's buckets, and each parameter's (by name).
  SmallVector<FlatBucket> flat;
  llvm::StringMap<unsigned> bucketOf;
  /// With micro-batches (train-accumulate), the op computing each
  /// micro-batch's loss: stage 3 gathers around each micro-batch's forward
  /// and backward.
  SmallVector<Operation *> microLosses;
};

LogicalResult TrainPartitionPass::validate(ModuleOp module) {
  S = stage;
  N = worldSize;
  if (S < 0 || S > 3)
    return module.emitError("stage must be 0, 1, 2 or 3, got ") << S;
  if (N < 1)
    return module.emitError("world-size must be at least 1, got ") << N;
  if (trainDialect(module).getZeroStageAttrHelper().isAttrPresent(module))
    return module.emitError("the module is already partitioned "
                            "(train.zero_stage is set)");
  auto split = trainDialect(module).getBatchSplitAttrHelper().getAttr(module);
  int64_t splitRanks = split ? split.getInt() : 1;
  if (splitRanks != N)
    return module.emitError("the batch is split for ")
           << splitRanks << " rank(s) but world-size is " << N
           << "; run train-data-parallel with world-size=" << N << " first";
  if (module.lookupSymbol(kGrid))
    return module.emitError("the symbol @")
           << kGrid << " is taken; train-zero declares its grid under it";
  return success();
}

LogicalResult TrainPartitionPass::partition(ModuleOp module) {
  if (failed(validate(module)))
    return failure();
  // One symbol table for every look-up and new state below
  // (module.lookupSymbol is linear in the module, so per parameter it is
  // quadratic: a third of a 175B model's partition).
  SymbolTable symbols(module);
  FailureOr<TrainStep> found = findTrainStep(module, symbols);
  if (failed(found))
    return failure();
  func::FuncOp func = found->func;
  OptimizerOp optimizer = found->optimizer;
  ArrayRef<ParamOp> params = found->params;
  ArrayRef<Value> grads = found->grads;
  Operation *optimizerStart = found->optimizerStart;
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  Value step = body.getArguments().back();
  Operation *lossOp = loss.getDefiningOp();
  if (!lossOp)
    return func.emitError("the loss must be computed in @")
           << func.getSymName();
  // The buckets train-assign-buckets decided, and their buffers, come
  // first, so that stage 3 gathers whole bucket buffers.
  if (failed(readBuckets(module, params)))
    return failure();
  declareBuffers(module, func, params, optimizer, symbols);

  // Drop the single-rank optimizer section; it is rebuilt below.
  ret.erase();
  SmallVector<Operation *> section;
  for (Operation *op = optimizerStart; op; op = op->getNextNode())
    section.push_back(op);
  for (Operation *op : llvm::reverse(section))
    op->erase();

  OpBuilder builder(module.getContext());
  builder.setInsertionPointToStart(module.getBody());
  shard::GridOp::create(builder, module.getLoc(),
                        builder.getStringAttr(kGrid),
                        builder.getDenseI64ArrayAttr({N}));
  Collectives collectives(builder, N);
  if (S == 3) {
    for (Value part : microBatchParts(loss))
      microLosses.push_back(part.getDefiningOp());
    if (microLosses.size() < 2 || llvm::is_contained(microLosses, nullptr))
      microLosses.clear();
    gatherParameters(func, lossOp, params, builder, collectives);
    microLosses.clear();
  }
  if (func::FuncOp forward = findForward(module))
    partitionForward(forward, params, builder, collectives);
  // The sampler's @logits runs on every rank alike; in stage 3 it gathers
  // the parameters it reads, as forward does.
  for (auto logits : module.getOps<func::FuncOp>())
    if (trainDialect(logits).getLogitsAttrHelper().isAttrPresent(logits) && S == 3)
      gatherParameters(logits, logits.getBody().front().getTerminator(),
                       params, builder, collectives);

  // The mean loss over every rank.
  builder.setInsertionPointAfter(lossOp);
  TrainBuilder tb(builder, lossOp->getLoc());
  Value globalLoss = collectives.averageScalar(tb, loss);
  // Cross-entropy with ignore_index divides by the global batch's count
  // (ForwardRewrite.h).
  auto sumOverRanks = [&](OpBuilder &at, Location loc, Value value) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(at.getInsertionBlock(), at.getInsertionPoint());
    TrainBuilder countBuilder(builder, loc);
    return collectives.sumScalar(countBuilder, value);
  };
  for (func::FuncOp counted : {func, findForward(module)})
    if (counted &&
        failed(zeroc::globalizeTargetCounts(counted, N, sumOverRanks)))
      return failure();

  reduceFlat(body, grads, module.getLoc(), builder, collectives);
  Value gradNorm = updateFlat(body, params, optimizer, step, symbols,
                              builder, collectives);
  builder.setInsertionPointToEnd(&body);
  func::ReturnOp::create(builder, func.getLoc(), ValueRange{globalLoss, gradNorm});
  auto i64 = IntegerType::get(module.getContext(), 64);
  trainDialect(module).getWorldSizeAttrHelper().setAttr(module, IntegerAttr::get(i64, N));
  trainDialect(module).getZeroStageAttrHelper().setAttr(module, IntegerAttr::get(i64, S));
  return success();
}

LogicalResult TrainPartitionPass::readBuckets(ModuleOp module,
                                              ArrayRef<ParamOp> params) {
  auto buckets = module->getAttrOfType<ArrayAttr>(kBucketsAttr);
  if (!buckets)
    return module.emitError("the module has no ")
           << kBucketsAttr << ": run train-assign-buckets first";
  llvm::StringMap<unsigned> indexOf;
  for (auto [i, param] : llvm::enumerate(params))
    indexOf[ParamOp(param).getSymName()] = i;
  flat.clear();
  bucketOf.clear();
  for (Attribute bucket : buckets) {
    FlatBucket &b = flat.emplace_back();
    for (Attribute member : cast<ArrayAttr>(bucket)) {
      StringRef name = cast<FlatSymbolRefAttr>(member).getValue();
      auto it = indexOf.find(name);
      if (it == indexOf.end())
        return module.emitError()
               << kBucketsAttr << " names @" << name
               << ", which is not in train.gradients";
      unsigned i = it->second;
      RankedTensorType type = ParamOp(params[i]).getTensorType();
      b.element = type.getElementType();
      b.offsets.push_back(b.members.empty() ? 0
                                            : b.offsets.back() + b.numels.back());
      b.members.push_back(i);
      b.numels.push_back(type.getNumElements());
      bucketOf[name] = flat.size() - 1;
    }
  }
  for (ParamOp param : params)
    if (!bucketOf.contains(param.getSymName()))
      return module.emitError()
             << kBucketsAttr << " has no bucket for @" << param.getSymName()
             << " (train.gradients)";
  module->removeAttr(kBucketsAttr);
  return success();
}

void TrainPartitionPass::declareBuffers(ModuleOp module, Operation *before,
                                        ArrayRef<ParamOp> params,
                                        OptimizerOp optimizer,
                                        SymbolTable &symbols) {
  MLIRContext *ctx = module.getContext();
  OpBuilder builder(ctx);
  // The buffers: parameters (replicated at stages 0-2, sharded at stage
  // 3), gradients (whole at stages 0-1, sharded from stage 2), masters and
  // moments (whole at stage 0, sharded from stage 1); members keep their
  // names and shapes.
  builder.setInsertionPoint(before);
  auto declare = [&](FlatBucket &b, StringRef what, Type element,
                     MemoryCategory category, bool sharded,
                     llvm::function_ref<StringRef(ParamOp)> memberOf) {
    SmallVector<Attribute> members;
    for (unsigned i : b.members)
      members.push_back(FlatSymbolRefAttr::get(ctx, memberOf(params[i])));
    auto buffer = BufferOp::create(
        builder, module.getLoc(), (b.name + "." + what).str(),
        RankedTensorType::get({b.size}, element), category,
        builder.getArrayAttr(members), b.offsets,
        sharded ? builder.getI64IntegerAttr(N) : IntegerAttr());
    symbols.insert(buffer);
  };
  bool adamw = optimizer.getKind() == OptimizerKind::adamw;
  auto stateKinds = adamw ? SmallVector<StateKind>{StateKind::exp_avg,
                                                   StateKind::exp_avg_sq}
                          : SmallVector<StateKind>{StateKind::momentum_buffer};
  Type f32 = builder.getF32Type();
  for (auto [k, b] : llvm::enumerate(flat)) {
    b.name = ("zero.flat" + Twine(k)).str();
    int64_t numel = b.offsets.back() + b.numels.back();
    // Stage 0 keeps whole buffers (no padding); stages 1-3 pad to N shards.
    b.shard = S == 0 ? numel : (numel + N - 1) / N;
    b.size = S == 0 ? numel : N * b.shard;
    auto grads = [&](ParamOp p) {
      return getOrDeclareState(builder, symbols, p, StateKind::grad)
          .getSymName();
    };
    declare(b, "params", b.element, MemoryCategory::parameters, S == 3,
            [](ParamOp p) { return p.getSymName(); });
    declare(b, "grads", b.element, MemoryCategory::gradients, S >= 2, grads);
    if (!b.element.isF32())
      declare(b, "master", f32, MemoryCategory::optimizer_states, S > 0,
              [&](ParamOp p) {
                return getOrDeclareState(builder, symbols, p, StateKind::master)
                    .getSymName();
              });
    for (StateKind kind : stateKinds)
      declare(b, stringifyStateKind(kind), f32,
              MemoryCategory::optimizer_states, S > 0, [&](ParamOp p) {
                return getOrDeclareState(builder, symbols, p, kind).getSymName();
              });
  }
}

void TrainPartitionPass::reduceFlat(Block &body, ArrayRef<Value> grads,
                               Location loc, OpBuilder &builder,
                               Collectives &collectives) {
  // Each bucket's gradients packed end to end (no chunking, the padding a
  // zero tail) and averaged: at stage 0 all-reduced whole into the bucket's
  // gradient buffer; from stage 1 reduce-scattered so that each rank
  // receives its contiguous shard, from stage 2 with micro-batches once per
  // micro-batch, summed into the sharded buffer.
  for (FlatBucket &b : flat) {
    SmallVector<SmallVector<Value>> parts;
    for (unsigned i : b.members)
      parts.push_back(S >= 2 ? microBatchParts(grads[i])
                             : SmallVector<Value>{grads[i]});
    // Members summed over different numbers of micro-batches (none that
    // train-accumulate writes) are reduced once, as their sums.
    size_t count = parts.front().size();
    if (llvm::any_of(parts, [&](auto &p) { return p.size() != count; })) {
      count = 1;
      parts.clear();
      for (unsigned i : b.members)
        parts.push_back({grads[i]});
    }
    int64_t padding = b.size - (b.offsets.back() + b.numels.back());
    auto packType = RankedTensorType::get({b.size}, b.element);
    auto shardType = RankedTensorType::get({b.shard}, b.element);
    for (size_t m = 0; m < count; ++m) {
      SmallVector<Value> values;
      TrainBuilder tb(builder,
                      afterMicroBatch(builder, body, parts, m, values, loc));
      Value accumulated =
          m > 0 ? tb.read(shardType, b.name + ".grads") : Value();
      if (padding > 0)
        values.push_back(
            tb.fill(RankedTensorType::get({padding}, b.element), 0.0));
      Value buffer = PackOp::create(builder, tb.getLoc(), packType, values, 1);
      if (S == 0) {
        Value reduced = collectives.allReduce(tb.getLoc(), buffer);
        tb.write(tb.scale(reduced, 1.0 / static_cast<double>(N)),
                 b.name + ".grads");
        continue;
      }
      if (S == 1)
        tb.write(buffer, b.name + ".grads"); // the full local gradients
      Value reduced = collectives.reduceScatter(tb.getLoc(), buffer);
      Value averaged = tb.scale(reduced, 1.0 / static_cast<double>(N));
      if (accumulated) {
        averaged = tb.add(accumulated, averaged);
        averaged.getDefiningOp()->setAttr("train.accumulate",
                                          builder.getUnitAttr());
        averaged.getDefiningOp()->setAttr(
            "train.micro_batch", builder.getI64IntegerAttr(static_cast<int64_t>(m)));
      }
      if (S == 1)
        b.reduced = averaged;
      else
        tb.write(averaged, b.name + ".grads");
    }
    if (count > 1)
      for (unsigned i : b.members)
        eraseDeadAccumulation(grads[i]);
  }
}

Value TrainPartitionPass::updateFlat(Block &body, ArrayRef<ParamOp> params,
                                OptimizerOp optimizer, Value step,
                                SymbolTable &symbols, OpBuilder &builder,
                                Collectives &collectives) {
  // One update per bucket over this rank's shard (at stage 0 the whole
  // bucket, as every rank holds the averaged gradients), weight decay on
  // the members that take it; at stages 1-2 one all-gather of the updated
  // shards into the replicated parameter buffer, at stage 3 the shard is
  // the parameters' storage.
  builder.setInsertionPointToEnd(&body);
  TrainBuilder tb(builder, optimizer.getLoc());
  Type f32 = builder.getF32Type();
  SmallVector<Value> shardGrads;
  for (FlatBucket &b : flat)
    shardGrads.push_back(
        S == 1 ? b.reduced
               : tb.read(RankedTensorType::get({b.shard}, b.element),
                         b.name + ".grads"));
  BucketNorm normLayout(collectives, /*sharded=*/S > 0);
  StepScalars scalars =
      emitStepScalars(builder, optimizer, step, shardGrads, normLayout);
  double weightDecay = optimizer.getWeightDecayAttr().getValueAsDouble();
  for (auto [b, grad] : llvm::zip(flat, shardGrads)) {
    auto shardF32 = RankedTensorType::get({b.shard}, f32);
    Value g = tb.cast(grad, f32);
    if (scalars.clip)
      g = tb.mul(g, scalars.clip);
    // An f32 bucket's master is the parameters' own shard.
    Value master;
    if (!b.element.isF32())
      master = tb.read(shardF32, b.name + ".master");
    else if (S == 0 || S == 3) // the whole buffer, or the rank's shard
      master = tb.read(shardF32, b.name + ".params");
    else
      master = collectives.allSlice(
          tb.getLoc(), tb.read(RankedTensorType::get({N * b.shard}, f32),
                               b.name + ".params"));
    SmallVector<int64_t> ranges;
    for (auto [i, offset, numel] : llvm::zip(b.members, b.offsets, b.numels)) {
      if (!ParamOp(params[i]).getWeightDecay())
        continue;
      if (!ranges.empty() && ranges.back() == offset)
        ranges.back() = offset + numel;
      else
        ranges.append({offset, offset + numel});
    }
    std::string prefix = b.name;
    Value updated = emitUpdate(
        tb, optimizer, master, g, scalars.lr, step,
        builder.getF64FloatAttr(weightDecay),
        builder.getDenseI64ArrayAttr(ranges), /*replicated=*/S == 0,
        [&](StateKind kind) {
          auto name = symbols.lookup<BufferOp>(prefix + "." +
                                               stringifyStateKind(kind).str());
          return name.getSymName();
        });
    Value shard = updated;
    if (!b.element.isF32()) {
      tb.write(updated, b.name + ".master");
      shard = tb.cast(updated, b.element);
    }
    tb.write(S == 0 || S == 3 ? shard
                              : collectives.allGather(tb.getLoc(), shard),
             b.name + ".params");
  }
  return scalars.gradNorm;
}

SmallVector<GatherGroup>
TrainPartitionPass::gatherGroups(func::FuncOp func, Operation *lossOp,
                            ArrayRef<ParamOp> params,
                            SmallVectorImpl<ReadOp> &reads) {
  // Uses of each parameter's reads, split into forward (up to the loss) and
  // backward (after it).
  llvm::StringMap<ParamOp> byName;
  for (ParamOp param : params)
    byName[param.getSymName()] = param;
  // Two phases (forward, backward), or two per micro-batch.
  SmallVector<llvm::MapVector<Operation *, ParamUses>> phase(
      2 * std::max<size_t>(1, microLosses.size()));
  auto phaseOf = [&](Operation *user) -> unsigned {
    Operation *loss = lossOp;
    unsigned micro = 0;
    if (auto index = user->getAttrOfType<IntegerAttr>("train.micro_batch");
        index && index.getInt() < static_cast<int64_t>(microLosses.size())) {
      micro = static_cast<unsigned>(index.getInt());
      loss = microLosses[micro];
    }
    return 2 * micro + (loss->isBeforeInBlock(user) ? 1 : 0);
  };
  for (auto read : func.getOps<ReadOp>()) {
    ParamOp param = byName.lookup(read.getName());
    if (!param)
      continue;
    reads.push_back(read);
    for (OpOperand &use : read.getResult().getUses()) {
      ParamUses &uses = phase[phaseOf(use.getOwner())][param];
      uses.param = param;
      uses.operands.push_back(&use);
    }
  }

  SmallVector<GatherGroup> result;
  for (auto [p, uses] : llvm::enumerate(phase)) {
    // Groups in order of first use.
    SmallVector<ParamUses> ordered;
    for (auto &entry : uses)
      ordered.push_back(entry.second);
    llvm::stable_sort(ordered, [&](const ParamUses &a, const ParamUses &c) {
      return a.first() != c.first() && a.first()->isBeforeInBlock(c.first());
    });
    // Each bucket buffer is gathered whole (its groups in order of first
    // use).
    SmallVector<SmallVector<ParamUses>> groups;
    SmallVector<unsigned> buckets;
    llvm::DenseMap<unsigned, unsigned> groupOf;
    for (const ParamUses &u : ordered) {
      ParamOp param = u.param;
      unsigned k = bucketOf.lookup(param.getSymName());
      auto [it, inserted] = groupOf.try_emplace(k, groups.size());
      if (inserted) {
        groups.emplace_back();
        buckets.push_back(k);
      }
      groups[it->second].push_back(u);
    }
    for (auto [group, k] : llvm::zip(groups, buckets)) {
      GatherGroup g;
      g.uses = std::move(group);
      g.bucket = k;
      g.phase = static_cast<unsigned>(p);
      g.begin = g.uses.front().first();
      g.end = g.uses.front().last();
      for (const ParamUses &u : g.uses) {
        if (u.first()->isBeforeInBlock(g.begin))
          g.begin = u.first();
        if (g.end->isBeforeInBlock(u.last()))
          g.end = u.last();
      }
      result.push_back(std::move(g));
    }
  }
  keepAcrossLoss(result);
  return result;
}

void TrainPartitionPass::keepAcrossLoss(SmallVectorImpl<GatherGroup> &groups) {
  // A bucket whose last use in forward is the last of every bucket's there
  // and whose first use in backward is the first there (the output
  // projection, tied to the embedding in GPT-2) would be gathered again
  // while its forward gather is still live (train-schedule prefetches the
  // backward gather): it stays gathered instead, one gather serving both
  // phases, as FSDP keeps its root unsharded.
  for (GatherGroup &fwd : groups) {
    if (fwd.phase % 2 != 0 || fwd.uses.empty())
      continue;
    GatherGroup *bwd = nullptr;
    for (GatherGroup &g : groups)
      if (g.phase == fwd.phase + 1 && g.bucket == fwd.bucket && !g.uses.empty())
        bwd = &g;
    if (!bwd)
      continue;
    // A model of one bucket (one group per phase) keeps ZeRO's two
    // gathers per step.
    bool alone = llvm::none_of(groups, [&](const GatherGroup &g) {
      return g.phase == fwd.phase && &g != &fwd;
    });
    bool between = alone || llvm::any_of(groups, [&](const GatherGroup &g) {
      if (&g == &fwd || &g == bwd || g.uses.empty() ||
          (g.phase != fwd.phase && g.phase != bwd->phase))
        return false;
      return (fwd.end->isBeforeInBlock(g.begin) &&
              g.begin->isBeforeInBlock(bwd->begin)) ||
             (g.phase == fwd.phase && fwd.end->isBeforeInBlock(g.end));
    });
    if (between)
      continue;
    fwd.uses.append(bwd->uses.begin(), bwd->uses.end());
    fwd.end = bwd->end;
    bwd->uses.clear();
  }
  llvm::erase_if(groups, [](const GatherGroup &g) { return g.uses.empty(); });
}

void TrainPartitionPass::gatherParameters(func::FuncOp func, Operation *lossOp,
                                     ArrayRef<ParamOp> params, OpBuilder &b,
                                     Collectives &collectives) {
  SmallVector<ReadOp> reads;
  for (GatherGroup &group : gatherGroups(func, lossOp, params, reads)) {
    b.setInsertionPoint(group.begin);
    TrainBuilder tb(b, group.begin->getLoc());
    // The rank's shard of the bucket's parameter buffer, gathered whole;
    // its members (and the padding) are views of the result.
    FlatBucket &fb = flat[group.bucket];
    Value shard = tb.read(RankedTensorType::get({fb.shard}, fb.element),
                          fb.name + ".params");
    Value future = collectives.gatherStart(tb.getLoc(), shard);
    Value gathered = WaitOp::create(b, tb.getLoc(), future);
    SmallVector<Type> memberTypes;
    for (unsigned i : fb.members)
      memberTypes.push_back(ParamOp(params[i]).getTensorType());
    int64_t padding = fb.size - (fb.offsets.back() + fb.numels.back());
    if (padding > 0)
      memberTypes.push_back(RankedTensorType::get({padding}, fb.element));
    auto unpack = UnpackOp::create(b, tb.getLoc(), memberTypes, gathered, 1);
    llvm::DenseMap<Operation *, Value> viewOf;
    for (auto [i, view] : llvm::zip(fb.members, unpack.getResults()))
      viewOf[params[i]] = view;
    for (const ParamUses &u : group.uses)
      for (OpOperand *use : u.operands)
        use->set(viewOf.lookup(u.param));
    b.setInsertionPointAfter(group.end);
    ReleaseOp::create(b, group.end->getLoc(), gathered);
  }
  for (ReadOp read : reads)
    if (read.use_empty())
      read.erase();
}

} // namespace

FailureOr<TrainStep> zeroc::findTrainStep(ModuleOp module,
                                          SymbolTable &symbols) {
  TrainStep step;
  for (auto candidate : module.getOps<func::FuncOp>())
    if (trainDialect(candidate).getStepAttrHelper().isAttrPresent(candidate))
      step.func = candidate;
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
