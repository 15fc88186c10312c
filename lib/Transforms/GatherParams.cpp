//===- GatherParams.cpp - stage 3's parameter gathers around their uses ---===//
//
// At stage 3 a rank stores only its shard of each parameter buffer: before
// a bucket's first use in a phase (forward, backward; per micro-batch) its
// buffer is gathered whole, its members read as views of the result, and
// the gathered buffer released after the bucket's last use in the phase.
//
//===----------------------------------------------------------------------===//

#include "Zero.h"

#include "zeroc/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINGATHERPARAMS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

/// The first (`last`: the last) in block order of `ops`.
Operation *edge(ArrayRef<Operation *> ops, bool last) {
  Operation *edge = ops.front();
  for (Operation *op : ops)
    if (last ? edge->isBeforeInBlock(op) : op->isBeforeInBlock(edge))
      edge = op;
  return edge;
}

/// The uses of one parameter's reads in one phase.
struct ParamUses {
  ParamOp param;
  SmallVector<OpOperand *> operands;

  Operation *user(bool last) const {
    return edge(llvm::map_to_vector(
                    operands, [](OpOperand *use) { return use->getOwner(); }),
                last);
  }
  Operation *first() const { return user(false); }
  Operation *last() const { return user(true); }
};

/// Parameters gathered together, bucket `bucket`'s whole buffer: from
/// before `begin` to after `end`.
struct GatherGroup {
  SmallVector<ParamUses> uses;
  Operation *begin = nullptr, *end = nullptr;
  unsigned bucket = 0;
  unsigned phase = 0;
};

/// Where the gathers of one function go: its reads of parameters before
/// `sectionStart` (train-optimizer's section, or null), split into phases
/// at `lossOp` (or at each of `microLosses`, the per-micro-batch losses).
struct Phases {
  Operation *lossOp = nullptr;
  Operation *sectionStart = nullptr;
  SmallVector<Operation *> microLosses;
};

struct TrainGatherParamsPass
    : zeroc::impl::TrainGatherParamsBase<TrainGatherParamsPass> {
  using Base::Base;

  void runOnOperation() override;
  void gatherParameters(func::FuncOp func, const Phases &phases);
  /// The parameters gathered together, phase by phase.
  SmallVector<GatherGroup> gatherGroups(func::FuncOp func,
                                        const Phases &phases,
                                        SmallVectorImpl<ReadOp> &reads);
  void keepAcrossLoss(SmallVectorImpl<GatherGroup> &groups);

  Partition partition;
};

void TrainGatherParamsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  FailureOr<Partition> read =
      readPartition(module, symbols, "train-gather-params");
  if (failed(read))
    return signalPassFailure();
  partition = std::move(*read);
  if (partition.stage != 3)
    return;
  // train-reduce-gradients has not averaged the loss yet: @train_step
  // returns the rank's own (per micro-batch, the sum of theirs).
  Phases phases;
  func::FuncOp func = partition.step.func;
  Value loss = func.getBody().front().getTerminator()->getOperand(0);
  phases.lossOp = loss.getDefiningOp();
  if (!phases.lossOp) {
    func.emitError("the loss must be computed in @") << func.getSymName();
    return signalPassFailure();
  }
  phases.sectionStart = partition.step.optimizerStart;
  for (Value part : microBatchParts(loss))
    phases.microLosses.push_back(part.getDefiningOp());
  if (phases.microLosses.size() < 2 ||
      llvm::is_contained(phases.microLosses, nullptr))
    phases.microLosses.clear();
  gatherParameters(func, phases);
  // The forward function (kept for evaluation) and the sampler's @logits
  // gather the parameters they read too.
  for (auto other : module.getOps<func::FuncOp>()) {
    Operation *end = nullptr;
    if (trainDialect(other).getForwardAttrHelper().isAttrPresent(other))
      end = other.getBody().front().getTerminator()->getOperand(0)
                .getDefiningOp();
    else if (trainDialect(other).getLogitsAttrHelper().isAttrPresent(other))
      end = other.getBody().front().getTerminator();
    if (end)
      gatherParameters(other, Phases{end, nullptr, {}});
  }
}

SmallVector<GatherGroup>
TrainGatherParamsPass::gatherGroups(func::FuncOp func, const Phases &phases,
                                    SmallVectorImpl<ReadOp> &reads) {
  // Uses of each parameter's reads, split into forward (up to the loss) and
  // backward (after it); train-optimizer's section reads are its own.
  llvm::StringMap<ParamOp> byName;
  for (const FlatBucket &b : partition.buckets)
    for (ParamOp param : b.members)
      byName[param.getSymName()] = param;
  ArrayRef<Operation *> microLosses = phases.microLosses;
  // Two phases (forward, backward), or two per micro-batch.
  SmallVector<llvm::MapVector<Operation *, ParamUses>> phase(
      2 * std::max<size_t>(1, microLosses.size()));
  auto phaseOf = [&](Operation *user) -> unsigned {
    Operation *loss = phases.lossOp;
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
      Operation *user = use.getOwner();
      if (phases.sectionStart && !user->isBeforeInBlock(phases.sectionStart))
        continue;
      ParamUses &uses = phase[phaseOf(user)][param];
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
    SmallVector<GatherGroup> groups;
    llvm::DenseMap<unsigned, unsigned> groupOf;
    for (const ParamUses &u : ordered) {
      unsigned k = partition.bucketOf.lookup(ParamOp(u.param).getSymName());
      auto [it, inserted] = groupOf.try_emplace(k, groups.size());
      if (inserted) {
        GatherGroup &g = groups.emplace_back();
        g.bucket = k;
        g.phase = static_cast<unsigned>(p);
      }
      groups[it->second].uses.push_back(u);
    }
    for (GatherGroup &g : groups) {
      auto edges = [&](bool last) {
        return edge(llvm::map_to_vector(
                        g.uses, [&](auto &u) { return u.user(last); }),
                    last);
      };
      g.begin = edges(false);
      g.end = edges(true);
      result.push_back(std::move(g));
    }
  }
  keepAcrossLoss(result);
  return result;
}

void TrainGatherParamsPass::keepAcrossLoss(SmallVectorImpl<GatherGroup> &groups) {
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

void TrainGatherParamsPass::gatherParameters(func::FuncOp func,
                                             const Phases &phases) {
  OpBuilder b(func.getContext());
  Collectives collectives(b, partition.worldSize);
  SmallVector<ReadOp> reads;
  for (GatherGroup &group : gatherGroups(func, phases, reads)) {
    b.setInsertionPoint(group.begin);
    TrainBuilder tb(b, group.begin->getLoc());
    // The rank's shard of the bucket's parameter buffer, gathered whole;
    // its members (and the padding) are views of the result.
    const FlatBucket &fb = partition.buckets[group.bucket];
    Value shard = tb.read(RankedTensorType::get({fb.shard}, fb.element),
                          fb.buffer("params"));
    Value future = collectives.gatherStart(tb.getLoc(), shard);
    Value gathered = WaitOp::create(b, tb.getLoc(), future);
    SmallVector<Type> memberTypes;
    for (ParamOp param : fb.members)
      memberTypes.push_back(param.getTensorType());
    if (fb.padding() > 0)
      memberTypes.push_back(RankedTensorType::get({fb.padding()}, fb.element));
    auto unpack = UnpackOp::create(b, tb.getLoc(), memberTypes, gathered);
    llvm::DenseMap<Operation *, Value> viewOf;
    for (auto [param, view] : llvm::zip(fb.members, unpack.getResults()))
      viewOf[param] = view;
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
