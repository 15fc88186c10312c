//===- Deallocate.cpp - each buffer freed after its last use --------------===//
//
// In a function in buffer form (train-bufferize), every memref.alloc gets
// one memref.dealloc right after the last op that touches it: directly or
// through a view (memref.reinterpret_cast), and for the buffers of a
// collective, at its train.collective_wait (neither may be reused while
// the collective runs). Liveness is exact in straight-line code; the memory
// report sums these allocations and deallocations.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINDEALLOCATE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

struct TrainDeallocatePass
    : zeroc::impl::TrainDeallocateBase<TrainDeallocatePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
        continue;
      if (failed(deallocate(func)))
        return signalPassFailure();
    }
  }

  LogicalResult deallocate(func::FuncOp func) {
    Block &block = func.getBody().front();
    for (auto dealloc : block.getOps<memref::DeallocOp>())
      return dealloc.emitOpError(
          "is already placed; train-deallocate places every deallocation "
          "itself");

    // The allocation each buffer belongs to.
    llvm::DenseMap<Value, memref::AllocOp> owner;
    llvm::DenseMap<Operation *, unsigned> position;
    llvm::DenseMap<memref::AllocOp, Operation *> last;
    SmallVector<memref::AllocOp> allocs;
    unsigned index = 0;
    for (Operation &op : block) {
      position[&op] = index++;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        owner[alloc.getResult()] = alloc;
        last[alloc] = alloc;
        allocs.push_back(alloc);
      } else if (auto view = dyn_cast<memref::ReinterpretCastOp>(op)) {
        if (memref::AllocOp base = owner.lookup(view.getSource()))
          owner[view.getResult()] = base;
      }
    }
    auto touch = [&](Value value, Operation *at) {
      memref::AllocOp alloc = owner.lookup(value);
      if (!alloc)
        return;
      Operation *&end = last[alloc];
      if (position.lookup(end) < position.lookup(at))
        end = at;
    };
    for (Operation &op : block) {
      if (isa<memref::ReinterpretCastOp>(op))
        continue;
      for (Value operand : op.getOperands())
        touch(operand, &op);
      if (auto wait = dyn_cast<CollectiveWaitOp>(op)) {
        auto start = wait.getRequest().getDefiningOp<CollectiveStartOp>();
        touch(start.getSend(), &op);
        touch(start.getRecv(), &op);
      }
    }
    for (memref::AllocOp alloc : allocs) {
      Operation *end = last.lookup(alloc);
      if (isa<func::ReturnOp>(end))
        return alloc.emitOpError("is returned; a planned function hands its "
                                 "results back through host out-parameters");
      OpBuilder b(end->getContext());
      b.setInsertionPointAfter(end);
      // After the deallocations already placed behind the same op, so
      // buffers go back in the order they were allocated.
      while (auto next = dyn_cast_or_null<memref::DeallocOp>(
                 b.getInsertionPoint() == b.getInsertionBlock()->end()
                     ? nullptr
                     : &*b.getInsertionPoint()))
        b.setInsertionPointAfter(next);
      memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
    }
    return success();
  }
};

} // namespace
