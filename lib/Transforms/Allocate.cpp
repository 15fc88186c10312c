//===- Allocate.cpp - each allocation's memory category -------------------===//
//
// train-allocate (Passes.td, docs/backend.md): each memref.alloc without a
// train.category gets the one the memory report counts it in.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINALLOCATE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// What a collective's buffers are counted in: gathered parameters for an
/// all-gather, gradient buckets for the reductions.
MemoryCategory categoryOf(CollectiveStartOp start) {
  return start.getKind() == CollectiveKind::all_gather
             ? MemoryCategory::gathered_parameters
             : MemoryCategory::gradient_buckets;
}

/// The category of an allocation: that of the collective it is the
/// receive buffer of, or the send buffer of when nothing but a train.pack
/// or writes through views write it (a bucket packed for the collective, a
/// segment its gradients are computed into); activations otherwise.
MemoryCategory categoryOf(memref::AllocOp alloc) {
  CollectiveStartOp sent;
  bool packed = true;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (auto start = dyn_cast<CollectiveStartOp>(user)) {
      if (use.get() == start.getRecv())
        return categoryOf(start);
      sent = start;
    } else if (auto kernel = dyn_cast<KernelOp>(user)) {
      bool writes = llvm::is_contained(kernel.getOuts(), alloc.getResult());
      packed &= !writes || isa_and_nonnull<PackOp>(kernel.getSingleOp());
    } else if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      packed &= copy.getTarget() != alloc.getResult();
    }
  }
  return sent && packed ? categoryOf(sent) : MemoryCategory::activations;
}

struct TrainAllocatePass : zeroc::impl::TrainAllocateBase<TrainAllocatePass> {
  void runOnOperation() override {
    getOperation().walk([](memref::AllocOp alloc) {
      auto category = trainDialect(alloc).getCategoryAttrHelper();
      if (!category.isAttrPresent(alloc))
        category.setAttr(alloc, MemoryCategoryAttr::get(
                                    alloc.getContext(), categoryOf(alloc)));
    });
  }
};

} // namespace
