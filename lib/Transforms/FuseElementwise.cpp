//===- FuseElementwise.cpp - elementwise chains into train.fused ----------===//
//
// Every elementwise op (the Elementwise trait) ends up in exactly one
// train.fused region: a chain whose links each feed only the next one (same
// shape, same block, no memory write between them) becomes one region, with
// the chain's outside operands as the region's inputs. Constants
// (train.fill) used only by elementwise ops are copied into every region that
// uses them. What remains outside the regions is the work of kernels
// (matmuls, norms, attention, collectives).
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINFUSEELEMENTWISE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// The groups of one block: each root with the producers computed in its
/// loop (in program order).
class Groups {
public:
  explicit Groups(Block &block) {
    for (Operation &op : block) {
      if (!isElementwise(&op) || isa<FusedOp>(op.getParentOp()))
        continue;
      if (isa<FillOp>(op)) {
        // A constant used only by elementwise ops is copied into their
        // regions; one with another user stays a region of its own.
        if (!op.use_empty() &&
            llvm::all_of(op.getUsers(),
                         [](Operation *user) { return isElementwise(user); }))
          constants.insert(&op);
        continue;
      }
      if (Operation *user = fusedUser(&op))
        into[&op] = user;
    }
  }

  /// Where the work of `op` happens: its root.
  Operation *rootOf(Operation *op) const {
    while (Operation *next = into.lookup(op))
      op = next;
    return op;
  }

  bool isRoot(Operation *op) const {
    return isElementwise(op) && !into.count(op) && !constants.contains(op);
  }
  bool isCopiedConstant(Operation *op) const { return constants.contains(op); }

private:
  /// The user whose loop computes `op`, or null.
  static Operation *fusedUser(Operation *op) {
    Value result = op->getResult(0);
    if (!result.hasOneUse())
      return nullptr;
    Operation *user = *result.getUsers().begin();
    if (user->getBlock() != op->getBlock() || !isElementwise(user) ||
        typeOf(user->getResult(0)).getShape() != typeOf(result).getShape())
      return nullptr;
    // Gradient accumulation (train-accumulate): a micro-batch's running
    // total is computed in its micro-batch, never in the next one's loop
    // (which would keep every micro-batch's gradient alive until the last).
    if (op->getAttr("train.micro_batch") != user->getAttr("train.micro_batch"))
      return nullptr;
    // Nothing in between may write memory: the producer, computed inside
    // the user's loop, would read its operands later than it did.
    if (zeroc::writesBetween(op, user))
      return nullptr;
    return user;
  }

  llvm::DenseMap<Operation *, Operation *> into;
  llvm::SetVector<Operation *> constants;
};

/// Replaces `root` and the producers computed in its loop by one
/// train.fused at the root's place.
void fuse(Operation *root, const Groups &groups) {
  // The group: producers whose root is `root`, and the constants they (or
  // the root) read, in program order.
  llvm::SetVector<Operation *> members;
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!members.insert(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && (groups.isCopiedConstant(def) ||
                  (!groups.isRoot(def) && isElementwise(def) &&
                   groups.rootOf(def) == root)))
        worklist.push_back(def);
  }
  SmallVector<Operation *> ordered(members.begin(), members.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  // Inputs: operands defined outside the group, in order of first use.
  llvm::SetVector<Value> inputs;
  for (Operation *op : ordered)
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()))
        inputs.insert(operand);

  OpBuilder b(root);
  auto fused = FusedOp::create(b, root->getLoc(), root->getResult(0).getType(),
                               inputs.getArrayRef());
  // The loop is traced as its root (train-trace-sites).
  TrainDialect &dialect = TrainDialect::get(root->getContext());
  if (DictionaryAttr site = dialect.getTraceAttrHelper().getAttr(root))
    dialect.getTraceAttrHelper().setAttr(fused, site);
  Block *body = b.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ordered)
    b.clone(*op, mapping);
  YieldOp::create(b, root->getLoc(), mapping.lookup(root->getResult(0)));

  root->getResult(0).replaceAllUsesWith(fused.getResult());
  for (Operation *op : llvm::reverse(ordered))
    if (op->use_empty())
      op->erase();
}

struct TrainFuseElementwisePass
    : zeroc::impl::TrainFuseElementwiseBase<TrainFuseElementwisePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (Block &block : func.getBody()) {
        Groups groups(block);
        SmallVector<Operation *> roots;
        for (Operation &op : block)
          if (groups.isRoot(&op))
            roots.push_back(&op);
        for (Operation *root : roots)
          fuse(root, groups);
      }
    }
  }
};

} // namespace
