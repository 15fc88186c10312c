//===- GatherParams.cpp - stage 3's parameter gathers around their uses ---===//

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

/// The owner of `uses` first (`last`: last) in block order.
Operation *edge(ArrayRef<OpOperand *> uses, bool last) {
  auto before = [](OpOperand *a, OpOperand *b) {
    return a->getOwner()->isBeforeInBlock(b->getOwner());
  };
  return (last ? *llvm::max_element(uses, before)
               : *llvm::min_element(uses, before))
      ->getOwner();
}

/// Uses of bucket `bucket`'s parameters in one phase, served by one gather
/// of its whole buffer: from before `begin` to after `end`.
struct GatherGroup {
  SmallVector<OpOperand *> uses;
  unsigned bucket = 0, phase = 0;
  Operation *begin = nullptr, *end = nullptr;
};

/// Where the gathers of one function go: its reads of parameters before
/// `sectionStart` (train-optimizer's section, or null), split into phases
/// at `lossOp` (or at each of `microLosses`, the per-micro-batch losses).
struct Phases {
  Operation *lossOp = nullptr, *sectionStart = nullptr;
  SmallVector<Operation *> microLosses;
};

struct TrainGatherParamsPass
    : zeroc::impl::TrainGatherParamsBase<TrainGatherParamsPass> {
  using Base::Base;

  void runOnOperation() override {
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
    func::FuncOp func = partition.step.func;
    Value loss = func.getBody().front().getTerminator()->getOperand(0);
    Phases phases{loss.getDefiningOp(), partition.step.optimizerStart, {}};
    if (!phases.lossOp) {
      func.emitError("the loss must be computed in @") << func.getSymName();
      return signalPassFailure();
    }
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

  void gatherParameters(func::FuncOp func, const Phases &phases) {
    OpBuilder b(func.getContext());
    for (GatherGroup &group : gatherGroups(func, phases)) {
      b.setInsertionPoint(group.begin);
      TrainBuilder tb(b, group.begin->getLoc());
      // The rank's shard of the bucket's parameter buffer, gathered whole;
      // its members (and the padding) are views of the result.
      const FlatBucket &fb = partition.buckets[group.bucket];
      Value shard = tb.read(RankedTensorType::get({fb.shard}, fb.element),
                            fb.buffer("params"));
      Value future = gatherStart(tb, shard, partition.worldSize);
      Value gathered = WaitOp::create(b, tb.getLoc(), future);
      auto memberTypes = llvm::map_to_vector(
          fb.members, [](ParamOp p) -> Type { return p.getTensorType(); });
      if (fb.padding() > 0)
        memberTypes.push_back(
            RankedTensorType::get({fb.padding()}, fb.element));
      auto unpack = UnpackOp::create(b, tb.getLoc(), memberTypes, gathered);
      llvm::StringMap<Value> viewOf;
      for (auto [param, view] : llvm::zip(fb.members, unpack.getResults()))
        viewOf[ParamOp(param).getSymName()] = view;
      for (OpOperand *use : group.uses)
        use->set(viewOf.lookup(use->get().getDefiningOp<ReadOp>().getName()));
      b.setInsertionPointAfter(group.end);
      ReleaseOp::create(b, group.end->getLoc(), gathered);
    }
    for (auto read : llvm::make_early_inc_range(func.getOps<ReadOp>()))
      if (read.use_empty() && partition.bucketOf.contains(read.getName()))
        read.erase();
  }

  /// The parameters gathered together, phase by phase.
  SmallVector<GatherGroup> gatherGroups(func::FuncOp func,
                                        const Phases &phases) {
    // Uses of each parameter's reads, split into forward (up to the loss) and
    // backward (after it); train-optimizer's section reads are its own.
    ArrayRef<Operation *> microLosses = phases.microLosses;
    // Two phases (forward, backward), or two per micro-batch.
    SmallVector<llvm::MapVector<StringRef, SmallVector<OpOperand *>>> phase(
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
      if (!partition.bucketOf.contains(read.getName()))
        continue;
      for (OpOperand &use : read.getResult().getUses()) {
        Operation *user = use.getOwner();
        if (!phases.sectionStart || user->isBeforeInBlock(phases.sectionStart))
          phase[phaseOf(user)][read.getName()].push_back(&use);
      }
    }
    // Each bucket's buffer is gathered whole, the buckets of a phase in the
    // order of their parameters' first uses.
    SmallVector<GatherGroup> groups;
    for (auto [p, uses] : llvm::enumerate(phase)) {
      auto ordered = uses.takeVector();
      llvm::stable_sort(ordered, [](auto &a, auto &b) {
        return edge(a.second, false)->isBeforeInBlock(edge(b.second, false));
      });
      llvm::DenseMap<unsigned, unsigned> groupOf;
      for (auto &[name, operands] : ordered) {
        unsigned k = partition.bucketOf.lookup(name);
        auto [it, inserted] = groupOf.try_emplace(k, groups.size());
        if (inserted)
          groups.push_back({{}, k, static_cast<unsigned>(p)});
        llvm::append_range(groups[it->second].uses, operands);
      }
    }
    for (GatherGroup &g : groups) {
      g.begin = edge(g.uses, false);
      g.end = edge(g.uses, true);
    }
    keepAcrossLoss(groups);
    return groups;
  }

  void keepAcrossLoss(SmallVectorImpl<GatherGroup> &groups) {
    // A bucket whose last use in forward is the last of every bucket's there
    // and whose first use in backward is the first there (the output
    // projection, tied to the embedding in GPT-2) would be gathered again
    // while its forward gather is still live (train-schedule prefetches the
    // backward gather): it stays gathered instead, one gather serving both
    // phases, as FSDP keeps its root unsharded.
    for (GatherGroup &fwd : groups) {
      auto bwd = llvm::find_if(groups, [&](const GatherGroup &g) {
        return g.phase == fwd.phase + 1 && g.bucket == fwd.bucket;
      });
      // A model of one bucket (one group per phase) keeps ZeRO's two
      // gathers per step.
      auto inPhase = [&](const GatherGroup &g) { return g.phase == fwd.phase; };
      if (fwd.phase % 2 != 0 || bwd == groups.end() ||
          llvm::count_if(groups, inPhase) == 1)
        continue;
      bool between = llvm::any_of(groups, [&](const GatherGroup &g) {
        if (&g == &fwd || &g == &*bwd || g.uses.empty() ||
            (g.phase != fwd.phase && g.phase != bwd->phase))
          return false;
        return (fwd.end->isBeforeInBlock(g.begin) &&
                g.begin->isBeforeInBlock(bwd->begin)) ||
               (g.phase == fwd.phase && fwd.end->isBeforeInBlock(g.end));
      });
      if (between)
        continue;
      llvm::append_range(fwd.uses, bwd->uses);
      fwd.end = bwd->end;
      bwd->uses.clear();
    }
    llvm::erase_if(groups, [](const GatherGroup &g) { return g.uses.empty(); });
  }

  Partition partition;
};

} // namespace
