//===- Schedule.cpp - asynchronous collectives, placed for overlap --------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINSCHEDULE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// A started collective and the wait for it.
struct Collective {
  Operation *start;
  WaitOp wait;
};

/// Replaces an upstream shard collective by a start/wait pair at its place.
Collective makeAsync(Operation *op) {
  OpBuilder b(op);
  Value input = op->getOperand(0);
  auto type = FutureType::get(cast<RankedTensorType>(op->getResult(0).getType()));
  auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  Operation *start;
  if (isa<shard::AllReduceOp>(op))
    start = AllReduceStartOp::create(b, op->getLoc(), type, input, grid);
  else if (isa<shard::ReduceScatterOp>(op))
    start = ReduceScatterStartOp::create(b, op->getLoc(), type, input, grid);
  else
    start = AllGatherStartOp::create(b, op->getLoc(), type, input, grid);
  auto wait = WaitOp::create(b, op->getLoc(), start->getResult(0));
  op->getResult(0).replaceAllUsesWith(wait.getResult());
  op->erase();
  return {start, wait};
}

/// The wait and the ops that only pass its result on (averaging, unpacking,
/// storing into a gradient buffer), in program order: they move as one.
SmallVector<Operation *> waitChain(WaitOp wait) {
  SmallVector<Operation *> chain{wait};
  llvm::SmallPtrSet<Operation *, 8> inChain{wait};
  for (size_t i = 0; i < chain.size(); ++i)
    for (Operation *user : chain[i]->getUsers()) {
      // A micro-batch's reduced shards are added into the gradient buffer
      // (train-accumulate's `train.accumulate` adds, in train-zero).
      bool accumulates = isa<AddOp>(user) && user->hasAttr("train.accumulate");
      if (inChain.contains(user) ||
          (!accumulates &&
           !isa<ScaleOp, ReshapeOp, UnpackOp, CastOp, WriteOp>(user)))
        continue;
      bool fed = llvm::all_of(user->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || inChain.contains(def) || def->isBeforeInBlock(wait);
      });
      if (fed) {
        chain.push_back(user);
        inChain.insert(user);
      }
    }
  llvm::sort(chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return chain;
}

/// The earliest op after `chain` that needs something the chain produces:
/// a user of its values, or a read or write of a symbol it writes.
Operation *firstNeed(ArrayRef<Operation *> chain) {
  llvm::SmallPtrSet<Operation *, 8> inChain(chain.begin(), chain.end());
  Operation *limit = chain.front()->getBlock()->getTerminator();
  auto consider = [&](Operation *op) {
    if (!inChain.contains(op) && op->isBeforeInBlock(limit))
      limit = op;
  };
  for (Operation *op : chain) {
    for (Operation *user : op->getUsers())
      consider(op->getBlock()->findAncestorOpInBlock(*user));
    auto write = dyn_cast<WriteOp>(op);
    if (!write)
      continue;
    for (Operation *next = write->getNextNode(); next; next = next->getNextNode()) {
      auto read = dyn_cast<ReadOp>(next);
      auto other = dyn_cast<WriteOp>(next);
      if ((read && read.getName() == write.getName()) ||
          (other && other.getName() == write.getName())) {
        consider(next);
        break;
      }
    }
  }
  return limit;
}

/// Moves `op` to just before `limit` in the same block. Operation::moveBefore
/// splices, which invalidates the order of the whole block, so that the next
/// isBeforeInBlock renumbers every op (quadratic over a Llama-3-70B step);
/// a remove and an insert only leave `op` to be numbered between its
/// neighbours.
void moveOpBefore(Operation *op, Operation *limit) {
  op->remove();
  limit->getBlock()->getOperations().insert(Block::iterator(limit), op);
}

/// Moves `chain` (in order) to just before `limit`.
void moveBefore(ArrayRef<Operation *> chain, Operation *limit) {
  for (Operation *op : chain)
    moveOpBefore(op, limit);
}

/// The ops that compute `value` from state reads alone (the
/// shard reads and the pack of a stage-3 gather), in order.
SmallVector<Operation *> localProducers(Value value) {
  SmallVector<Operation *> ops;
  Operation *def = value.getDefiningOp();
  if (!def)
    return ops;
  for (Value operand : def->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (!producer || !isa<ReadOp>(producer) || !producer->hasOneUse())
      return {};
    ops.push_back(producer);
  }
  ops.push_back(def);
  return ops;
}

bool isGradientBucket(Operation *start) {
  return isa<AllReduceStartOp, ReduceScatterStartOp>(start) &&
         isa_and_nonnull<PackOp>(start->getOperand(0).getDefiningOp());
}

/// A stage-3 parameter gather: its gathered buffer is released.
bool isParameterGather(const Collective &c) {
  return isa<AllGatherStartOp>(c.start) &&
         llvm::any_of(c.wait->getUsers(),
                      [](Operation *user) { return isa<ReleaseOp>(user); });
}

struct TrainSchedulePass
    : zeroc::impl::TrainScheduleBase<TrainSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t limit = maxInFlight;
    if (limit < 1) {
      getOperation().emitError("max-in-flight must be at least 1, got ")
          << limit;
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        schedule(func.getBody().front(), limit);
  }

  void schedule(Block &block, int64_t limit) {
    SmallVector<Operation *> upstream;
    for (Operation &op : block)
      if (isa<shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp>(op))
        upstream.push_back(&op);
    for (Operation *op : upstream)
      makeAsync(op);

    SmallVector<Collective> collectives;
    for (Operation &op : block)
      if (auto wait = dyn_cast<WaitOp>(op))
        collectives.push_back({wait.getFuture().getDefiningOp(), wait});

    // Starts stay where their input is ready (right after it); each wait,
    // with the ops that only pass its result on, goes down to where the
    // result is first needed, and no later than the start of the bucket
    // `limit` places behind it.
    // Stage 1-2's gathers of the updated parameters are bounded the same
    // way: the gathered bucket i is unpacked into the parameters no later
    // than the start of gather i + `limit`, so at most `limit` gathered
    // buckets are live instead of every one until the step ends.
    SmallVector<Operation *> bucketStarts, gatherStarts;
    for (const Collective &c : collectives) {
      if (isGradientBucket(c.start))
        bucketStarts.push_back(c.start);
      else if (isa<AllGatherStartOp>(c.start) && !isParameterGather(c))
        gatherStarts.push_back(c.start);
    }
    auto bound = [&](ArrayRef<Operation *> starts, Operation *start,
                     Operation *target) {
      const auto *it = llvm::find(starts, start);
      if (it != starts.end() && std::distance(it, starts.end()) > limit) {
        Operation *later = *(it + limit);
        if (later->isBeforeInBlock(target))
          return later;
      }
      return target;
    };
    for (const Collective &c : collectives) {
      SmallVector<Operation *> chain = waitChain(c.wait);
      Operation *target = firstNeed(chain);
      target = bound(bucketStarts, c.start, target);
      target = bound(gatherStarts, c.start, target);
      moveBefore(chain, target);
    }

    prefetchGathers(collectives);
  }

  /// Stage 3: start gathering group i + 1 as soon as group i has arrived.
  void prefetchGathers(ArrayRef<Collective> collectives) {
    SmallVector<Collective> gathers;
    for (const Collective &c : collectives)
      if (isParameterGather(c))
        gathers.push_back(c);
    llvm::stable_sort(gathers, [](const Collective &a, const Collective &b) {
      return a.start->isBeforeInBlock(b.start);
    });
    for (size_t i = 1; i < gathers.size(); ++i) {
      Operation *anchor = gathers[i - 1].wait;
      if (!anchor->isBeforeInBlock(gathers[i].start))
        continue;
      SmallVector<Operation *> chain = localProducers(gathers[i].start->getOperand(0));
      if (chain.empty())
        continue;
      chain.push_back(gathers[i].start);
      Operation *after = anchor;
      for (Operation *op : chain) {
        moveOpBefore(op, after->getNextNode());
        after = op;
      }
    }
  }

};

} // namespace
