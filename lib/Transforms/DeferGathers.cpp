//===- DeferGathers.cpp - stage 1-2 parameter gathers in the next forward -===//
//
// Megatron's --overlap-param-gather for ZeRO stages 1-2: the all-gather of
// each bucket's updated parameters leaves the end of @train_step and starts
// at the top of the next step instead, waited right before the bucket's
// first use in forward. A deferred bucket's updated shard is kept where it
// persists anyway: the bucket's f32 master shard (mixed precision), which
// the next step casts and gathers. @gather_params does the same gathers at
// once, for whatever reads the parameters between steps (checkpoints,
// evaluation, sampling).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINDEFERGATHERS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kGatherFunction = "gather_params";

/// One bucket whose end-of-step gather is deferred.
struct Deferred {
  BufferOp params; // the replicated parameter buffer the gather rebuilds
  BufferOp master; // the sharded f32 buffer that keeps the updated shard
  Operation *firstUse = nullptr; // the first op of the step that needs it
};

Operation *onlyUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

struct TrainDeferGathersPass
    : zeroc::impl::TrainDeferGathersBase<TrainDeferGathersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t limit = maxInFlight;
    if (limit < 1) {
      module.emitError("max-in-flight must be at least 1, got ") << limit;
      return signalPassFailure();
    }
    auto stage = module->getAttrOfType<IntegerAttr>("train.zero_stage");
    if (!stage || (stage.getInt() != 1 && stage.getInt() != 2))
      return; // stage 0 has no gather, stage 3 gathers before each use
    func::FuncOp step;
    for (auto func : module.getOps<func::FuncOp>())
      if (trainDialect(func).getStepAttrHelper().isAttrPresent(func))
        step = func;
    if (!step || step.isExternal())
      return;
    if (module.lookupSymbol(kGatherFunction)) {
      module.emitError("train-defer-gathers declares @")
          << kGatherFunction << ", but the module has a symbol of that name";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<Deferred> deferred;
    removeEndOfStepGathers(step, symbols, deferred);
    if (deferred.empty())
      return;
    if (failed(gatherBeforeFirstUse(step, deferred)))
      return signalPassFailure();
    declareGatherFunction(module, step, deferred);
  }

  /// Finds each `all_gather_start(cast(U)) -> wait -> write @P` whose U is
  /// also written to a sharded f32 buffer @M, and erases the gather: @M
  /// keeps the bucket's updated shard until the next step gathers it.
  void removeEndOfStepGathers(func::FuncOp step, SymbolTable &symbols,
                              SmallVectorImpl<Deferred> &deferred) {
    SmallVector<AllGatherStartOp> starts(
        step.getBody().front().getOps<AllGatherStartOp>());
    for (AllGatherStartOp start : starts) {
      auto wait = dyn_cast_or_null<WaitOp>(onlyUser(start.getResult()));
      auto write = wait ? dyn_cast_or_null<WriteOp>(onlyUser(wait.getResult()))
                        : WriteOp();
      auto params = write ? symbols.lookup<BufferOp>(write.getName()) : BufferOp();
      if (!params || params.getCategory() != MemoryCategory::parameters ||
          params.getShards().value_or(1) > 1)
        continue; // stage 3's gathers, or not a bucket's parameters
      auto cast = start.getOperand().getDefiningOp<CastOp>();
      BufferOp master;
      if (cast)
        for (Operation *user : cast.getOperand().getUsers())
          if (auto store = dyn_cast<WriteOp>(user))
            if (auto buffer = symbols.lookup<BufferOp>(store.getName());
                buffer && buffer.getShards().value_or(1) > 1 &&
                buffer.getStorageType() == cast.getOperand().getType())
              master = buffer;
      // An f32 bucket's updated shard lives nowhere but in this gather: it
      // stays at the end of the step.
      if (!master)
        continue;
      write.erase();
      wait.erase();
      start.erase();
      if (cast.use_empty())
        cast.erase();
      deferred.push_back({params, master});
    }
  }

  /// The bucket's gather: the master shard, cast to the parameters' type,
  /// gathered into the parameter buffer.
  static std::pair<AllGatherStartOp, WaitOp>
  startGather(OpBuilder &b, Location loc, Deferred d) {
    RankedTensorType full = d.params.getTensorType();
    RankedTensorType shard = d.master.getStorageType();
    Value value = ReadOp::create(b, loc, shard, d.master.getSymName());
    auto piece = RankedTensorType::get(shard.getShape(), full.getElementType());
    value = CastOp::create(b, loc, piece, value);
    auto start = AllGatherStartOp::create(
        b, loc, FutureType::get(full), value,
        FlatSymbolRefAttr::get(b.getContext(), "dp"));
    auto wait = WaitOp::create(b, loc, start.getResult());
    return {start, wait};
  }

  /// Gathers at the top of the step, each waited (and written) right
  /// before the first op that reads the bucket; gather i + max-in-flight
  /// starts once gather i has arrived, as stage 3 prefetches.
  LogicalResult gatherBeforeFirstUse(func::FuncOp step,
                                     MutableArrayRef<Deferred> deferred) {
    Block &body = step.getBody().front();
    llvm::StringMap<unsigned> bucketOf;
    for (auto [i, d] : llvm::enumerate(deferred)) {
      bucketOf[d.params.getSymName()] = i;
      for (Attribute member : d.params.getMembers())
        bucketOf[cast<FlatSymbolRefAttr>(member).getValue()] = i;
    }
    for (Operation &op : body) {
      op.walk([&](Operation *nested) {
        StringRef name;
        if (auto read = dyn_cast<ReadOp>(nested))
          name = read.getName();
        else if (auto write = dyn_cast<WriteOp>(nested))
          name = write.getName();
        else
          return;
        auto it = bucketOf.find(name);
        if (it != bucketOf.end() && !deferred[it->second].firstUse)
          deferred[it->second].firstUse = &op;
      });
    }
    for (Deferred d : deferred)
      if (!d.firstUse)
        return step.emitOpError("train-defer-gathers: no op of the step "
                                "reads the parameters of @")
               << d.params.getSymName();
    SmallVector<Deferred *> order;
    for (Deferred &d : deferred)
      order.push_back(&d);
    llvm::stable_sort(order, [](const Deferred *a, const Deferred *b) {
      return a->firstUse->isBeforeInBlock(b->firstUse);
    });

    OpBuilder b(step.getContext());
    Location loc = step.getLoc();
    SmallVector<WaitOp> waits;
    SmallVector<AllGatherStartOp> starts;
    for (auto [i, d] : llvm::enumerate(order)) {
      // The first max-in-flight gathers start at the top of the step; gather
      // i starts right after the write of gather i - max-in-flight.
      if (static_cast<int64_t>(i) < maxInFlight)
        b.setInsertionPoint(&body, body.begin());
      else
        b.setInsertionPointAfter(
            *waits[i - maxInFlight]->getUsers().begin());
      auto [start, wait] = startGather(b, loc, *d);
      starts.push_back(start);
      // Starts at the top keep the bucket order.
      if (static_cast<int64_t>(i) < maxInFlight && i > 0) {
        Operation *prev = starts[i - 1].getOperation();
        for (Operation *op : {start.getOperand().getDefiningOp()->getOperand(0)
                                  .getDefiningOp(),
                              start.getOperand().getDefiningOp(),
                              start.getOperation()}) {
          op->moveAfter(prev);
          prev = op;
        }
      }
      wait->moveBefore(d->firstUse);
      b.setInsertionPointAfter(wait);
      WriteOp::create(b, loc, wait.getResult(), d->params.getSymName());
      waits.push_back(wait);
    }
    return success();
  }

  /// @gather_params(): every deferred gather, started at once and waited.
  void declareGatherFunction(ModuleOp module, func::FuncOp step,
                             ArrayRef<Deferred> deferred) {
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(step);
    auto func = func::FuncOp::create(b, step.getLoc(), kGatherFunction,
                                     b.getFunctionType({}, {}));
    b.setInsertionPointToStart(func.addEntryBlock());
    SmallVector<std::pair<AllGatherStartOp, WaitOp>> gathers;
    for (Deferred d : deferred)
      gathers.push_back(startGather(b, step.getLoc(), d));
    for (auto [i, gather] : llvm::enumerate(gathers)) {
      Deferred d = deferred[i];
      gather.second->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      WriteOp::create(b, step.getLoc(), gather.second.getResult(),
                      d.params.getSymName());
    }
    func::ReturnOp::create(b, step.getLoc());
  }
};

} // namespace
