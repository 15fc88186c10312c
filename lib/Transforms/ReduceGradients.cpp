//===- ReduceGradients.cpp - where gradients and the loss are reduced -----===//

#include "ForwardRewrite.h"
#include "Zero.h"

#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINREDUCEGRADIENTS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

struct TrainReduceGradientsPass
    : zeroc::impl::TrainReduceGradientsBase<TrainReduceGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    FailureOr<Partition> partition =
        readPartition(module, symbols, "train-reduce-gradients");
    if (failed(partition))
      return signalPassFailure();
    S = partition->stage;
    N = partition->worldSize;
    const TrainStep &step = partition->step;
    func::FuncOp func = step.func;
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    Value loss = ret->getOperand(0);
    Operation *lossOp = loss.getDefiningOp();
    if (!lossOp) {
      func.emitError("the loss must be computed in @") << func.getSymName();
      return signalPassFailure();
    }
    OpBuilder builder(module.getContext());
    // The loss of @forward (kept for evaluation), then of the step, is the
    // mean over every rank.
    if (func::FuncOp forward = step.forward) {
      Operation *forwardRet = forward.getBody().front().getTerminator();
      Value forwardLoss = forwardRet->getOperand(0);
      if (Operation *def = forwardLoss.getDefiningOp()) {
        builder.setInsertionPoint(forwardRet);
        TrainBuilder tb(builder, def->getLoc());
        forwardRet->setOperand(0, averageScalar(tb, forwardLoss, N));
      }
    }
    builder.setInsertionPointAfter(lossOp);
    TrainBuilder tb(builder, lossOp->getLoc());
    ret->setOperand(0, averageScalar(tb, loss, N));
    // Cross-entropy with ignore_index divides by the global batch's count
    // (ForwardRewrite.h).
    for (func::FuncOp counted : {func, step.forward})
      if (counted && failed(globalizeTargetCounts(counted, N, sumScalar)))
        return signalPassFailure();
    llvm::DenseMap<Operation *, Value> gradOf;
    for (auto [param, grad] : llvm::zip(step.params, step.grads))
      gradOf[param] = grad;
    for (const FlatBucket &b : partition->buckets) {
      auto grads = llvm::map_to_vector(
          b.members, [&](ParamOp param) { return gradOf.lookup(param); });
      reduceBucket(b, grads, body, module.getLoc(), builder);
    }
  }

  void reduceBucket(const FlatBucket &b, ArrayRef<Value> memberGrads,
                    Block &body, Location loc, OpBuilder &builder) {
    // Packed end to end (the padding a zero tail) and averaged over ranks as
    // Passes.td lists per stage; from stage 2 once per micro-batch.
    auto parts = llvm::map_to_vector(memberGrads, [&](Value grad) {
      return S >= 2 ? microBatchParts(grad) : SmallVector<Value>{grad};
    });
    // Members summed over different numbers of micro-batches (none that
    // train-accumulate writes) are reduced once, as their sums.
    if (!llvm::all_equal(
            llvm::map_range(parts, [](auto &p) { return p.size(); })))
      parts = llvm::map_to_vector(
          memberGrads, [](Value grad) { return SmallVector<Value>{grad}; });
    size_t count = parts.empty() ? 0 : parts.front().size();
    std::string grads = b.buffer("grads");
    for (size_t m = 0; m < count; ++m) {
      // Micro-batch m's gradients, packed right after the last of them is
      // computed (at the start of the body when none is).
      auto values = llvm::map_to_vector(parts, [&](auto &p) { return p[m]; });
      Operation *last = nullptr;
      for (Value value : values)
        if (Operation *def = value.getDefiningOp();
            def && (!last || last->isBeforeInBlock(def)))
          last = def;
      builder.setInsertionPoint(&body, last ? std::next(last->getIterator())
                                            : body.begin());
      TrainBuilder tb(builder, last ? last->getLoc() : loc);
      Value accumulated =
          m > 0 ? tb.read(RankedTensorType::get({b.shard}, b.element), grads)
                : Value();
      if (b.padding() > 0)
        values.push_back(
            tb.fill(RankedTensorType::get({b.padding()}, b.element), 0.0));
      Value buffer = PackOp::create(builder, tb.getLoc(), values);
      if (S == 1)
        tb.write(buffer, grads); // the full local gradients
      Value reduced =
          S == 0 ? allReduce(tb, buffer) : reduceScatter(tb, buffer, N);
      Value averaged = tb.scale(reduced, 1.0 / static_cast<double>(N));
      if (accumulated) {
        averaged = tb.add(accumulated, averaged);
        averaged.getDefiningOp()->setAttr("train.accumulate",
                                          builder.getUnitAttr());
        averaged.getDefiningOp()->setAttr("train.micro_batch",
                                          builder.getI64IntegerAttr(m));
      }
      if (S != 1)
        tb.write(averaged, grads);
    }
  }

  int64_t S = 0, N = 1;
};

} // namespace
