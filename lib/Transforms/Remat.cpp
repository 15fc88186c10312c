//===- Remat.cpp - activation rematerialization per transformer block -----===//
//
// In @loss_and_grads, the forward ops of a transformer block whose results
// backward reads are cloned just before their first backward use, unless
// the policy keeps them; backward then reads the clones, and the forward
// results die in the forward pass. See the pass's description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINREMAT
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

constexpr StringLiteral kPolicyAttr = "train.remat";
constexpr StringLiteral kRecomputedAttr = "train.recomputed";

enum class Policy { None, Full, Selective };

/// The block a parameter belongs to: its name up to the first numeric part
/// that is not the last ("transformer.h.3.attn.c_attn.weight" ->
/// "transformer.h.3"), or "" when it is in none (embeddings, final norm).
std::string blockOfParameter(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  std::string prefix;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += (i ? "." : "") + parts[i].str();
    unsigned number;
    if (!parts[i].empty() && !parts[i].getAsInteger(10, number))
      return prefix;
  }
  return "";
}

struct TrainRematPass : zeroc::impl::TrainRematBase<TrainRematPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Policy> parsed = llvm::StringSwitch<std::optional<Policy>>(
                                       policy.getValue())
                                       .Case("none", Policy::None)
                                       .Case("full", Policy::Full)
                                       .Case("selective", Policy::Selective)
                                       .Default(std::nullopt);
    if (!parsed) {
      module.emitError("train-remat: policy must be none, full or "
                       "selective, got '")
          << policy << "'";
      return signalPassFailure();
    }
    if (*parsed == Policy::None)
      return;
    if (failed(zeroc::refuseLaterStages(module, getArgument(),
                                        zeroc::kStepped |
                                            zeroc::kOptimizerState |
                                            zeroc::kPartitioned)) ||
        failed(rematerialize(module, *parsed)))
      signalPassFailure();
  }

  LogicalResult rematerialize(ModuleOp module, Policy mode);
};

LogicalResult TrainRematPass::rematerialize(ModuleOp module, Policy mode) {
  if (Attribute done = module->getAttr(kPolicyAttr))
    return module.emitError("train-remat cannot run on this module: it is "
                            "already rematerialized (it has the attribute '")
           << kPolicyAttr << "' = " << done << ")";
  auto func = module.lookupSymbol<func::FuncOp>(zeroc::kLossAndGradsFunction);
  if (!func)
    return module.emitError("train-remat runs after train-autodiff: the "
                            "module has no @")
           << zeroc::kLossAndGradsFunction;
  if (!func.getBody().hasOneBlock())
    return func.emitError("@") << zeroc::kLossAndGradsFunction
                               << " must have a body of one block";
  Block &body = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  Operation *lossOp = ret && ret.getNumOperands()
                          ? ret.getOperand(0).getDefiningOp()
                          : nullptr;
  if (!lossOp || lossOp->getBlock() != &body)
    return func.emitError("the loss (the first result) of @")
           << zeroc::kLossAndGradsFunction << " must be computed in it";

  // The parameters and their blocks.
  llvm::StringMap<std::string> paramBlock;
  for (auto param : module.getOps<ParamOp>())
    paramBlock[param.getSymName()] = blockOfParameter(param.getSymName());
  // The parameter a value is read from, through casts, reshapes and
  // transposes of the read.
  auto parameterOf = [&](Value value) -> std::optional<std::string> {
    for (int depth = 0; depth < 4 && value; ++depth) {
      Operation *def = value.getDefiningOp();
      if (!def)
        return std::nullopt;
      if (auto read = dyn_cast<ReadOp>(def)) {
        auto it = paramBlock.find(read.getName());
        if (it == paramBlock.end())
          return std::nullopt;
        return it->second;
      }
      if (!isa<CastOp, ReshapeOp, TransposeOp>(def))
        return std::nullopt;
      value = def->getOperand(0);
    }
    return std::nullopt;
  };

  // Forward ops (up to the loss) in order, each in a block or in none (-1).
  SmallVector<Operation *> forward;
  llvm::DenseMap<Operation *, int> blockOf;
  llvm::StringMap<int> blockIds;
  int context = -1;
  for (Operation &op : body) {
    forward.push_back(&op);
    if (!isa<ReadOp>(op)) {
      for (Value operand : op.getOperands())
        if (std::optional<std::string> block = parameterOf(operand)) {
          if (block->empty())
            context = -1;
          else
            context =
                blockIds.try_emplace(*block, static_cast<int>(blockIds.size()))
                    .first->second;
          break;
        }
      // The loss is kept: the function returns it.
      blockOf[&op] = &op == lossOp ? -1 : context;
    } else {
      blockOf[&op] = -1;
    }
    if (&op == lossOp)
      break;
  }
  if (blockIds.empty())
    return module.emitError(
        "train-remat recomputes per transformer block, but the model has "
        "none: no parameter read in the forward pass is named "
        "<path>.<N>.<name> (as transformer.h.0.* or model.layers.0.*)");
  llvm::DenseSet<Operation *> isForward(forward.begin(), forward.end());
  llvm::DenseSet<Operation *> backward;
  for (Operation *op = lossOp->getNextNode(); op != ret;
       op = op->getNextNode())
    backward.insert(op);

  // Which forward ops of a block are kept (their results live until
  // backward) and which may be recomputed.
  auto recomputable = [&](Operation *op) {
    int block = blockOf.lookup(op);
    if (block < 0 || op->getNumRegions() || !isMemoryEffectFree(op) ||
        op->getNumResults() == 0)
      return false;
    if (mode == Policy::Selective && isa<MatmulOp, AttentionOp>(op))
      return false;
    // Read by another block's forward (or outside blocks): a block input.
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (isForward.contains(user) && blockOf.lookup(user) != block)
          return false;
    return true;
  };

  // The ops to clone: the recomputable ones whose results backward, or a
  // clone, reads; and, for each, where its clone goes: before the first of
  // those readers (a backward op).
  llvm::DenseMap<Operation *, Operation *> placeOf;
  for (Operation *op : llvm::reverse(forward)) {
    if (!recomputable(op))
      continue;
    Operation *first = nullptr;
    auto consider = [&](Operation *at) {
      if (!first || at->isBeforeInBlock(first))
        first = at;
    };
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        if (backward.contains(user))
          consider(user);
        else if (Operation *place = placeOf.lookup(user))
          consider(place);
      }
    if (first)
      placeOf[op] = first;
  }
  // Clone in forward order, so that each clone's operands come first; then
  // backward reads the clones.
  OpBuilder builder(&getContext());
  IRMapping mapping;
  auto marker = UnitAttr::get(&getContext());
  for (Operation *op : forward) {
    Operation *place = placeOf.lookup(op);
    if (!place)
      continue;
    builder.setInsertionPoint(place);
    Operation *clone = builder.clone(*op, mapping);
    clone->setAttr(kRecomputedAttr, marker);
    for (auto [original, copy] :
         llvm::zip(op->getResults(), clone->getResults()))
      original.replaceUsesWithIf(copy, [&](OpOperand &use) {
        return backward.contains(use.getOwner());
      });
  }
  module->setAttr(kPolicyAttr, StringAttr::get(&getContext(), policy));
  return success();
}

} // namespace
