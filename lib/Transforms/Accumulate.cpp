//===- Accumulate.cpp - gradient accumulation over K micro-batches --------===//
//
// Rewrites @loss_and_grads into K micro-batches of the rank's batch, each
// the differentiated micro-batch program fed a slice of the batch, with
// their gradients and losses added up: the optimizer that train-optimizer
// appends then runs once per step. See the pass's description in Passes.td
// and docs/passes.md ("train-accumulate").
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINACCUMULATE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// Calls `fn` with `op` typed, when `op` draws a dropout mask by where its
/// elements sit in the global batch: a train.dropout, or a train.attention
/// or train.attention_grad with `dropout` (their fields are the same).
template <typename Fn>
void withDropout(Operation *op, Fn &&fn) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    fn(dropout);
  else if (auto a = dyn_cast<AttentionOp>(op); a && a.getDropoutAttr())
    fn(a);
  else if (auto g = dyn_cast<AttentionGradOp>(op); g && g.getDropoutAttr())
    fn(g);
}

constexpr StringLiteral kMicroBatchAttr = "train.micro_batch";
constexpr StringLiteral kAccumulateAttr = "train.accumulate";

struct TrainAccumulatePass
    : zeroc::impl::TrainAccumulateBase<TrainAccumulatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t count = microBatches;
    if (count < 0) {
      module.emitError("train-accumulate: micro-batches must be at least 1 "
                       "(0 takes the module's train.micro_batches), got ")
          << count;
      return signalPassFailure();
    }
    if (count == 0) {
      auto requested =
          trainDialect(module).getMicroBatchesAttrHelper().getAttr(module);
      count = requested ? requested.getInt() : 1;
    }
    if (count == 1)
      return;
    if (failed(zeroc::refuseLaterStages(module, getArgument(),
                                        zeroc::kStepped |
                                            zeroc::kOptimizerState |
                                            zeroc::kPartitioned)) ||
        failed(accumulate(module, count)))
      signalPassFailure();
  }

  LogicalResult accumulate(ModuleOp module, int64_t count);
  FailureOr<func::FuncOp> differentiateMicroBatch(ModuleOp module,
                                                  func::FuncOp forward,
                                                  int64_t count,
                                                  ModuleOp &scratch);
};

/// The micro-batch program: the forward function with its batch divided by
/// `count` and its loss scaled by 1/count, differentiated (and
/// rematerialized) in a scratch module nested in `module`, which the
/// caller erases.
FailureOr<func::FuncOp> TrainAccumulatePass::differentiateMicroBatch(
    ModuleOp module, func::FuncOp forward, int64_t count, ModuleOp &scratch) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  scratch = ModuleOp::create(builder, module.getLoc());
  builder.setInsertionPointToStart(scratch.getBody());
  // The declarations the micro-batch program reads (parameters, the
  // optimizer), then the program.
  for (Operation &op : *module.getBody())
    if (!isa<func::FuncOp>(op) && &op != scratch.getOperation())
      builder.clone(op);
  auto micro = cast<func::FuncOp>(builder.clone(*forward));

  // Dropout records where its input sits in the global batch: the rank's
  // split (train-data-parallel's, or none) and now the micro-batch.
  // (So does the dropout of train.attention and train.attention_grad.)
  llvm::DenseMap<Operation *, int64_t> ranksOf;
  auto forget = [&](auto dropout) {
    ranksOf[dropout] = dropout.getRanks() ? *dropout.getRanks() : 1;
    if (dropout.getMicroBatchAttr())
      ranksOf[dropout] = -1;
    dropout.removeBatchDimAttr();
    dropout.removeRanksAttr();
  };
  micro.walk([&](Operation *op) { withDropout(op, forget); });
  for (auto [op, ranks] : ranksOf)
    if (ranks < 0)
      return op->emitOpError("already records a micro-batch");
  if (failed(zeroc::splitBatch(micro, count)))
    return failure();
  Builder b(module.getContext());
  auto mark = [&](auto dropout) {
    if (!dropout.getBatchDimAttr())
      return; // not computed from the batch: the same mask in every one
    dropout.setRanksAttr(b.getI64IntegerAttr(ranksOf.lookup(dropout)));
    dropout.setMicroBatchAttr(b.getI64IntegerAttr(0));
    dropout.setMicroBatchesAttr(b.getI64IntegerAttr(count));
  };
  micro.walk([&](Operation *op) { withDropout(op, mark); });

  // Each micro-batch contributes 1/count of the loss (the mean over the
  // rank's batch), and so of every gradient.
  auto ret = cast<func::ReturnOp>(micro.getBody().front().getTerminator());
  builder.setInsertionPoint(ret);
  TrainBuilder tb(builder, ret.getLoc());
  ret->setOperand(0, tb.scale(ret.getOperand(0),
                              1.0 / static_cast<double>(count)));

  OpPassManager pm(ModuleOp::getOperationName());
  pm.addPass(zeroc::createTrainAutodiff());
  if (auto policy = module->getAttrOfType<StringAttr>("train.remat"))
    pm.addPass(zeroc::createTrainRemat({policy.getValue().str()}));
  if (failed(runPipeline(pm, scratch)))
    return failure();
  auto grads =
      scratch.lookupSymbol<func::FuncOp>(zeroc::kLossAndGradsFunction);
  if (!grads)
    return module.emitError("train-accumulate: differentiating the "
                            "micro-batch program gave no @")
           << zeroc::kLossAndGradsFunction;
  return grads;
}

LogicalResult TrainAccumulatePass::accumulate(ModuleOp module, int64_t count) {
  if (auto done = trainDialect(module).getGradAccumAttrHelper().getAttr(module))
    return module.emitError("train-accumulate cannot run on this module: it "
                            "already accumulates micro-batches (it has the "
                            "attribute 'train.grad_accum' = ")
           << done.getInt() << ")";
  auto grads =
      module.lookupSymbol<func::FuncOp>(zeroc::kLossAndGradsFunction);
  if (!grads)
    return module.emitError("train-accumulate runs after train-autodiff: "
                            "the module has no @")
           << zeroc::kLossAndGradsFunction;
  FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
  if (failed(forward))
    return failure();
  if (grads.getArgumentTypes() != forward->getArgumentTypes() ||
      !grads.getBody().hasOneBlock())
    return grads.emitError("the arguments of @")
           << zeroc::kLossAndGradsFunction << " must be those of @"
           << forward->getSymName() << " (the rank's batch), got "
           << grads.getArgumentTypes();
  SmallVector<int64_t> batchArgs;
  for (auto [index, type] : llvm::enumerate(forward->getArgumentTypes())) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getRank() == 0)
      continue;
    int64_t rows = tensor.getDimSize(0);
    if (rows % count != 0)
      return forward->emitError("micro-batches=")
             << count << " (zeroc's --grad-accum) does not divide the rank's "
             << "batch of " << rows
             << " (argument #" << index << " of @" << forward->getSymName()
             << ")";
    batchArgs.push_back(static_cast<int64_t>(index));
  }
  if (batchArgs.empty())
    return forward->emitError("micro-batches=")
           << count << " needs a batch to divide, but no argument of @"
           << forward->getSymName() << " has a batch dimension";

  ModuleOp scratch;
  FailureOr<func::FuncOp> micro =
      differentiateMicroBatch(module, *forward, count, scratch);
  llvm::scope_exit cleanup([&] {
    if (scratch)
      scratch.erase();
  });
  if (failed(micro))
    return failure();

  // The new body: K copies of the micro-batch program.
  Block &body = grads.getBody().front();
  Block &microBody = micro->getBody().front();
  auto microRet = cast<func::ReturnOp>(microBody.getTerminator());
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    op.erase();
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  TrainBuilder tb(builder, grads.getLoc());
  SmallVector<Value> totals;
  for (int64_t m = 0; m < count; ++m) {
    auto index = builder.getI64IntegerAttr(m);
    IRMapping mapping;
    for (BlockArgument arg : body.getArguments()) {
      BlockArgument microArg = microBody.getArgument(arg.getArgNumber());
      if (!llvm::is_contained(batchArgs, arg.getArgNumber())) {
        mapping.map(microArg, arg);
        continue;
      }
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t rows = type.getDimSize(0) / count;
      SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
          strides(type.getRank(), 1);
      offsets[0] = m * rows;
      sizes[0] = rows;
      auto slice = SliceOp::create(builder, arg.getLoc(), arg, offsets, sizes,
                                   strides);
      slice->setAttr(kMicroBatchAttr, index);
      mapping.map(microArg, slice.getResult());
    }
    for (Operation &op : microBody.without_terminator()) {
      Operation *copy = builder.clone(op, mapping);
      copy->setAttr(kMicroBatchAttr, index);
      withDropout(copy, [&](auto dropout) {
        if (dropout.getMicroBatchAttr())
          dropout.setMicroBatchAttr(index);
      });
    }
    // Each gradient (and the loss) is added to the running total right
    // after the micro-batch produces it, so the micro-batch's own dies.
    for (auto [i, result] : llvm::enumerate(microRet.getOperands())) {
      Value value = mapping.lookup(result);
      if (m == 0) {
        totals.push_back(value);
        continue;
      }
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfterValue(value);
      tb.setLoc(value.getLoc());
      Value sum = tb.add(totals[i], value);
      sum.getDefiningOp()->setAttr(kMicroBatchAttr, index);
      sum.getDefiningOp()->setAttr(kAccumulateAttr, builder.getUnitAttr());
      totals[i] = sum;
    }
  }
  func::ReturnOp::create(builder, grads.getLoc(), totals);
  zeroc::updateFunctionType(grads);
  trainDialect(module).getGradAccumAttrHelper().setAttr(
      module, builder.getI64IntegerAttr(count));
  return success();
}

} // namespace
