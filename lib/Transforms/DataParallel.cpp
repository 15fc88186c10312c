//===- DataParallel.cpp - split the global batch across ranks -------------===//

#include "ForwardRewrite.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINDATAPARALLEL
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// Where each value's batch dimension is, for values computed from the batch.
class BatchDims {
public:
  void set(Value value, int64_t dim) { dims[value] = dim; }
  std::optional<int64_t> of(Value value) const {
    auto it = dims.find(value);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }

  /// Propagates through `op` and rejects what does not split: a sum over
  /// the batch, a reshape that moves it away from the leading dimension.
  LogicalResult propagate(Operation *op) {
    std::optional<int64_t> in;
    for (Value operand : op->getOperands())
      if (auto dim = of(operand); dim && !in)
        in = dim;
    if (!in)
      return success();
    if (auto sum = dyn_cast<SumOp>(op); sum && llvm::is_contained(sum.getDims(), *in))
      return sum.emitOpError("sums over the batch dimension ")
             << *in << ", which does not split across ranks: the loss must be "
             << "a mean over the batch (train.mean, train.cross_entropy)";
    if (isa<MeanOp, CrossEntropyOp>(op))
      return success(); // A mean over the batch yields a local mean.
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (*in != 0)
        return reshape.emitOpError("reshapes a value whose batch dimension is ")
               << *in << "; data parallelism needs it leading";
      set(reshape.getResult(), 0);
      return success();
    }
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      auto perm = transpose.getPermutation();
      set(transpose.getResult(),
          std::distance(perm.begin(), llvm::find(perm, *in)));
      return success();
    }
    if (auto sum = dyn_cast<SumOp>(op)) {
      int64_t removed = llvm::count_if(sum.getDims(),
                                       [&](int64_t d) { return d < *in; });
      set(sum.getResult(), *in - removed);
      return success();
    }
    for (Value result : op->getResults())
      set(result, *in);
    return success();
  }

private:
  llvm::DenseMap<Value, int64_t> dims;
};

struct TrainDataParallelPass
    : zeroc::impl::TrainDataParallelBase<TrainDataParallelPass> {
  using Base::Base;

  int64_t ranks = 1;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ranks = worldSize;
    if (ranks < 1) {
      module.emitError("world-size must be at least 1, got ") << ranks;
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward) || failed(split(module, *forward)))
      return signalPassFailure();
  }

  LogicalResult split(ModuleOp module, func::FuncOp forward) {
    if (module->hasAttr("train.batch_split"))
      return module.emitError("the batch is already split (train.batch_split "
                              "is set); run train-data-parallel once");
    Block &body = forward.getBody().front();
    BatchDims batch;
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0)
        continue;
      int64_t global = type.getDimSize(0);
      if (global % ranks != 0)
        return forward.emitError("the global batch of ")
               << global << " (argument #" << arg.getArgNumber()
               << ") does not divide among " << ranks << " ranks";
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = global / ranks;
      arg.setType(RankedTensorType::get(shape, type.getElementType()));
      batch.set(arg, 0);
    }
    for (Operation &op : body.without_terminator())
      if (failed(batch.propagate(&op)) ||
          failed(zeroc::reinferResultTypes(&op)))
        return failure();
    zeroc::updateFunctionType(forward);
    module->setAttr("train.batch_split",
                    IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                     ranks));
    return success();
  }
};

} // namespace
