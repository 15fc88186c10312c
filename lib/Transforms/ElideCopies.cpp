//===- ElideCopies.cpp - which reads alias their state's storage ---------===//
//
// train-elide-copies (Passes.td, docs/backend.md): each train.read is its
// state's storage unless the state is written while the read is live; then
// it is marked train.copy, and train-bufferize-ops copies it.
//
//===----------------------------------------------------------------------===//

#include "BufferizeFacts.h"

#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINELIDECOPIES
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::bufferize;

namespace {

/// Whether `next`, an access of `read`'s memory, writes it: a train.write
/// that remains, or an update in place through another read of it.
bool writes(const BlockFacts &facts, ReadOp read, Operation *next) {
  if (isa<WriteOp>(next))
    return !isEmplaced(next, 0);
  auto update = dyn_cast<StateUpdateOpInterface>(next);
  return update && llvm::any_of(update.getUpdatedOperands(), [&](unsigned i) {
           auto other = next->getOperand(i).getDefiningOp<ReadOp>();
           return other && isEmplaced(next, i) && other != read &&
                  facts.rootOf(other.getName()) == facts.rootOf(read.getName());
         });
}

/// Marks the reads of `block` whose memory is written while they are live
/// (through the memory's accesses only: a scan of the block from each read
/// to its last use was quadratic in a large model's parameters).
void markCopyingReads(Block &block) {
  BlockFacts facts(block);
  facts.computeLiveness(block);
  for (auto read : block.getOps<ReadOp>()) {
    unsigned at = facts.position.lookup(read);
    unsigned last = facts.end.lookup(read.getResult());
    for (Operation *next : facts.accesses[facts.rootOf(read.getName())]) {
      unsigned p = facts.position.lookup(next);
      if (p >= last)
        break;
      if (p > at && writes(facts, read, next)) {
        read->setAttr(kCopyAttrName, UnitAttr::get(read.getContext()));
        break;
      }
    }
  }
}

struct TrainElideCopiesPass
    : zeroc::impl::TrainElideCopiesBase<TrainElideCopiesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          !trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
        markCopyingReads(func.getBody().front());
  }
};

} // namespace
