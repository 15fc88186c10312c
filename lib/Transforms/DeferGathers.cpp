//===- DeferGathers.cpp - stage 1-2 parameter gathers in the next forward -===//
//
// Megatron's --overlap-param-gather for ZeRO stages 1-2: the all-gather of
// each bucket's updated parameters leaves the end of @train_step and starts
// at the top of the next step instead, waited right before the bucket's
// first use in forward. A deferred bucket's updated shard is kept where it
// persists anyway: the bucket's f32 master shard (mixed precision), which
// the next step casts and gathers, or (fp32) the rank's own slot of the
// replicated parameter buffer, which the update wrote in place and the
// next step gathers in place. @gather_params does the same gathers at
// once, for whatever reads the parameters between steps (checkpoints,
// evaluation, sampling).
//
// The tensor form has no op for "this rank's slot of a replicated buffer",
// so the fp32 buckets are deferred on the planned form (the pass runs again
// in the planning pipeline, after train-bufferize): there the end-of-step
// all-gather is a train.collective_start from the rank's slot of the
// buffer's train.storage into that storage, which moves as it is.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

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
    if (trainDialect(step).getPlannedAttrHelper().isAttrPresent(step))
      return deferInPlaceGathers(module, step);
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
      // An f32 bucket's updated shard lives only in the rank's slot of the
      // parameter buffer, which no tensor op writes alone: its gather is
      // deferred on the planned form (deferInPlaceGathers).
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

  //===--------------------------------------------------------------------===//
  // The planned form: fp32 buckets, gathered in place
  //===--------------------------------------------------------------------===//

  /// One end-of-step all-gather of a replicated parameter buffer from the
  /// rank's slot of its storage into that storage.
  struct InPlace {
    CollectiveStartOp start;
    CollectiveWaitOp wait;
    StringRef buffer;
    Operation *firstUse = nullptr; // the first op that touches the bucket
  };

  /// Whether `value` is computed by side-effect-free ops the pass can clone
  /// anywhere in the block: the rank, constants, index arithmetic, storage
  /// and views of it.
  static bool clonable(Value value) {
    Operation *op = value.getDefiningOp();
    if (!op || !isa<StorageOp, RankOp, arith::ConstantOp, arith::MulIOp,
                    memref::ReinterpretCastOp>(op))
      return false;
    return llvm::all_of(op->getOperands(),
                        [](Value operand) { return clonable(operand); });
  }

  /// Clones what computes `value` (clonable) at `b`'s insertion point.
  static Value cloneChain(OpBuilder &b, Value value, IRMapping &map) {
    if (Value known = map.lookupOrNull(value))
      return known;
    Operation *op = value.getDefiningOp();
    for (Value operand : op->getOperands())
      cloneChain(b, operand, map);
    b.clone(*op, map);
    return map.lookup(value);
  }

  /// Finds each all-gather that ends the step and rebuilds a replicated
  /// parameter buffer in place (`collective_start all_gather (rank's slot of
  /// storage @P), storage @P`, waited after the last access to @P), and
  /// moves it to the top of the step, waited before the first op that
  /// touches @P or a member of it. The rank's slot keeps the updated shard
  /// until then; the other slots are a step old.
  void deferInPlaceGathers(ModuleOp module, func::FuncOp step) {
    Block &body = step.getBody().front();
    llvm::StringMap<StringRef> bufferOf;
    for (auto buffer : module.getOps<BufferOp>()) {
      if (buffer.getCategory() != MemoryCategory::parameters ||
          buffer.getShards().value_or(1) > 1)
        continue;
      bufferOf[buffer.getSymName()] = buffer.getSymName();
      for (Attribute member : buffer.getMembers())
        bufferOf[cast<FlatSymbolRefAttr>(member).getValue()] =
            buffer.getSymName();
    }
    if (bufferOf.empty())
      return;
    // The top-level ops that read or write each bucket's memory, in block
    // order: the users of its storage (or of a member's), through views.
    llvm::DenseMap<Operation *, unsigned> position;
    llvm::DenseMap<Value, StringRef> memoryOf;
    llvm::StringMap<SmallVector<Operation *>> touches;
    for (auto [index, op] : llvm::enumerate(body)) {
      position[&op] = index;
      if (auto storage = dyn_cast<StorageOp>(op)) {
        if (auto it = bufferOf.find(storage.getName()); it != bufferOf.end())
          memoryOf[storage.getBuffer()] = it->second;
        continue;
      }
      llvm::SmallSetVector<StringRef, 2> names;
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (auto it = memoryOf.find(operand); it != memoryOf.end())
            names.insert(it->second);
      });
      if (names.empty())
        continue;
      if (isa<memref::ReinterpretCastOp, memref::SubViewOp,
              memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
              op)) {
        for (Value result : op.getResults())
          memoryOf[result] = names.front();
        continue;
      }
      for (StringRef name : names)
        touches[name].push_back(&op);
    }

    SmallVector<InPlace> deferred;
    for (auto start : body.getOps<CollectiveStartOp>()) {
      if (start.getKind() != CollectiveKind::all_gather)
        continue;
      auto recv = start.getRecv().getDefiningOp<StorageOp>();
      auto slot = start.getSend().getDefiningOp<memref::ReinterpretCastOp>();
      auto from = slot ? slot.getSource().getDefiningOp<StorageOp>()
                       : StorageOp();
      if (!recv || !from || from.getName() != recv.getName())
        continue;
      auto it = bufferOf.find(recv.getName());
      if (it == bufferOf.end() || it->second != recv.getName())
        continue; // not a replicated parameter buffer
      if (!start.getRequest().hasOneUse())
        continue;
      auto wait =
          dyn_cast<CollectiveWaitOp>(*start.getRequest().getUsers().begin());
      if (!wait || wait->getBlock() != &body ||
          !clonable(start.getSend()) || !clonable(start.getRecv()))
        continue;
      // It ends the step: nothing touches the bucket after it is waited
      // (stage 1-2 bf16 gathers, already deferred, are followed by the
      // forward reads).
      auto &list = touches[recv.getName()];
      unsigned at = position.lookup(wait);
      if (llvm::any_of(list, [&](Operation *op) {
            return position.lookup(op) > at;
          }))
        continue;
      if (list.empty() || list.front() == start.getOperation())
        continue; // nothing reads the bucket before: nowhere to wait
      deferred.push_back({start, wait, recv.getName(), list.front()});
    }
    if (deferred.empty())
      return;
    llvm::stable_sort(deferred, [&](const InPlace &a, const InPlace &b) {
      return position.lookup(a.firstUse) < position.lookup(b.firstUse);
    });

    // @gather_params: the bf16 buckets' (train-defer-gathers on the tensor
    // form, planned since), or a new one.
    func::FuncOp gather;
    if (Operation *symbol = module.lookupSymbol(kGatherFunction)) {
      gather = dyn_cast<func::FuncOp>(symbol);
      if (!gather || gather.isExternal() ||
          !trainDialect(gather).getPlannedAttrHelper().isAttrPresent(gather) ||
          !isa<func::ReturnOp>(gather.getBody().front().getTerminator())) {
        symbol->emitError("train-defer-gathers: @")
            << kGatherFunction << " must be a planned function of no result";
        return signalPassFailure();
      }
    } else {
      OpBuilder b(module.getContext());
      b.setInsertionPointAfter(step);
      gather = func::FuncOp::create(b, step.getLoc(), kGatherFunction,
                                    b.getFunctionType({}, {}));
      trainDialect(gather).getPlannedAttrHelper().setAttr(gather,
                                                          b.getUnitAttr());
      b.setInsertionPointToStart(gather.addEntryBlock());
      func::ReturnOp::create(b, step.getLoc());
    }
    {
      OpBuilder b(gather.getBody().front().getTerminator());
      SmallVector<Operation *> starts;
      IRMapping map;
      for (InPlace d : deferred) {
        cloneChain(b, d.start.getSend(), map);
        cloneChain(b, d.start.getRecv(), map);
        Operation *start = b.clone(*d.start, map);
        if (trainDialect(start).getTraceAttrHelper().isAttrPresent(start))
          trainDialect(start).getTraceAttrHelper().removeAttr(start);
        starts.push_back(start);
      }
      for (Operation *start : starts)
        CollectiveWaitOp::create(b, start->getLoc(), start->getResult(0));
    }

    // The first max-in-flight gathers start at the top of the step; gather
    // i starts right after the wait of gather i - max-in-flight.
    OpBuilder b(step.getContext());
    // The step's train.rank (one after cse) moves to the top, where the
    // views of the ranks' slots use it.
    IRMapping shared;
    Operation *top = &body.front();
    if (auto ranks = body.getOps<RankOp>(); !ranks.empty()) {
      RankOp rank = *ranks.begin();
      rank->moveBefore(top);
      shared.map(rank.getResult(), rank.getResult());
      top = rank->getNextNode();
    }
    for (auto [i, d] : llvm::enumerate(deferred)) {
      if (static_cast<int64_t>(i) < maxInFlight)
        b.setInsertionPoint(top);
      else
        b.setInsertionPointAfter(deferred[i - maxInFlight].wait);
      IRMapping map = shared;
      Value send = cloneChain(b, d.start.getSend(), map);
      Value recv = cloneChain(b, d.start.getRecv(), map);
      d.start->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      d.start.getSendMutable().assign(send);
      d.start.getRecvMutable().assign(recv);
      d.wait->moveBefore(d.firstUse);
      // Its trace sites (train-trace-sites) now run in the phase of its
      // first use (the site of the kernel, or of the op it runs).
      auto traced = trainDialect(d.start).getTraceAttrHelper();
      Attribute phase;
      d.firstUse->walk([&](Operation *op) {
        if (DictionaryAttr use = traced.getAttr(op))
          if ((phase = use.get("phase")))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      for (Operation *op : {d.start.getOperation(), d.wait.getOperation()})
        if (DictionaryAttr site = traced.getAttr(op); site && phase) {
          NamedAttrList fields(site);
          fields.set("phase", phase);
          traced.setAttr(op, fields.getDictionary(b.getContext()));
        }
    }
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
