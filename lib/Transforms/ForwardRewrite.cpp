//===- ForwardRewrite.cpp - retyping the forward function -----------------===//

#include "ForwardRewrite.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc {

FailureOr<func::FuncOp> findForwardFunction(ModuleOp module) {
  func::FuncOp forward;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!trainDialect(func).getForwardAttrHelper().isAttrPresent(func))
      continue;
    if (forward) {
      func.emitError("more than one function is marked train.forward (also @")
          << forward.getSymName() << ")";
      return failure();
    }
    forward = func;
  }
  if (!forward) {
    module.emitError("no func.func is marked train.forward (the model's "
                     "forward function, from batch to loss)");
    return failure();
  }
  // The passes rewrite its one block and retype its arguments.
  if (forward.isExternal() || !llvm::hasSingleElement(forward.getBody())) {
    forward.emitError("the forward function @")
        << forward.getSymName() << " must have a body of one block";
    return failure();
  }
  auto emit = [&] { return forward.emitError(); };
  for (auto [index, type] : llvm::enumerate(forward.getArgumentTypes()))
    if (!isa<RankedTensorType>(type) ||
        failed(train::verifyTensorShape(
            type,
            "argument #" + std::to_string(index) + " of the forward function",
            emit))) {
      if (!isa<RankedTensorType>(type))
        forward.emitError("argument #")
            << index << " of the forward function must be a ranked tensor, "
            << "got " << type;
      return failure();
    }
  return forward;
}

void updateFunctionType(func::FuncOp func) {
  Block &body = func.getBody().front();
  func.setFunctionType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
}

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

RankedTensorType withShape(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

/// The new result types of `op`, or failure. Ops with a type rule
/// (InferTypeOpInterface) follow it; the ops whose result type is part of
/// the op itself (a reshape's or a broadcast's target, a cast's element
/// type, a split's number of parts) follow the rules below.
FailureOr<SmallVector<Type>> inferTypes(Operation *op) {
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    RankedTensorType input = typeOf(reshape.getInput());
    Shape shape(typeOf(reshape.getResult()).getShape());
    // A 0-d result has no leading dimension to resize: it follows an input
    // of one element (tensor<1xf32> -> tensor<f32>) unchanged.
    if (shape.empty()) {
      if (input.getNumElements() == 1)
        return SmallVector<Type>{withShape(shape, input.getElementType())};
      reshape.emitOpError("cannot follow its input's new shape ")
          << formatShape(input.getShape()) << " with a 0-d result";
      return failure();
    }
    int64_t rest = 1;
    for (int64_t size : ArrayRef<int64_t>(shape).drop_front())
      rest *= size;
    if (rest <= 0 || input.getNumElements() % rest != 0 ||
        input.getNumElements() / rest < 1) {
      reshape.emitOpError("cannot follow its input's new shape ")
          << formatShape(input.getShape()) << " by resizing its leading "
          << "dimension";
      return failure();
    }
    shape[0] = input.getNumElements() / rest;
    return SmallVector<Type>{withShape(shape, input.getElementType())};
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    RankedTensorType input = typeOf(split.getInput());
    Shape shape(input.getShape());
    shape[split.getDim()] /= split.getNumResults();
    return SmallVector<Type>(split.getNumResults(),
                             withShape(shape, input.getElementType()));
  }
  if (auto cast = dyn_cast<CastOp>(op))
    return SmallVector<Type>{withShape(typeOf(cast.getInput()).getShape(),
                                       typeOf(cast.getResult()).getElementType())};
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return SmallVector<Type>{
        withShape(typeOf(broadcast.getResult()).getShape(),
                  typeOf(broadcast.getInput()).getElementType())};
  // A slice's sizes are its own (the batch dimension, which a slice must
  // take whole, is resized by BatchDims::propagate); the Llama ops'
  // results have their input's type.
  if (isa<RmsNormOp, SiluOp, RopeOp, DropoutOp>(op))
    return SmallVector<Type>{op->getOperand(0).getType()};
  if (auto slice = dyn_cast<SliceOp>(op))
    return SmallVector<Type>{withShape(typeOf(slice.getResult()).getShape(),
                                       typeOf(slice.getInput()).getElementType())};
  if (auto rule = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(rule.inferReturnTypes(op->getContext(), op->getLoc(),
                                     op->getOperands(),
                                     op->getRawDictionaryAttrs(),
                                     op->getPropertiesStorage(),
                                     op->getRegions(), types)))
      return failure();
    return types;
  }
  // Ops whose result types do not depend on their operands' (reads, fills,
  // terminators).
  return SmallVector<Type>(op->getResultTypes());
}

/// Where each value's batch dimension is, for values computed from the batch.
/// The batch changes by the ratio `numerator` / `denominator`: a split
/// among ranks (1 / ranks, which also marks dropouts and rejects sums over
/// the batch) or a resize to another global batch (new / old).
class BatchDims {
public:
  BatchDims(int64_t numerator, int64_t denominator, bool split)
      : numerator(numerator), denominator(denominator), split(split) {}

  void set(Value value, int64_t dim) { dims[value] = dim; }
  std::optional<int64_t> of(Value value) const {
    auto it = dims.find(value);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }

  /// Propagates through `op` and rejects what does not follow: a sum over
  /// the batch (when splitting), a reshape that moves it away from the
  /// leading dimension.
  LogicalResult propagate(Operation *op) {
    std::optional<int64_t> in;
    for (Value operand : op->getOperands())
      if (auto dim = of(operand); dim && !in)
        in = dim;
    if (!in)
      return success();
    if (auto sum = dyn_cast<SumOp>(op);
        split && sum && llvm::is_contained(sum.getDims(), *in))
      return sum.emitOpError("sums over the batch dimension ")
             << *in << ", which does not split across ranks: the loss must be "
             << "a mean over the batch (train.mean, train.cross_entropy)";
    if (isa<MeanOp, CrossEntropyOp>(op))
      return success(); // A mean over the batch yields a local mean.
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (*in != 0)
        return reshape.emitOpError("reshapes a value whose batch dimension is ")
               << *in << "; "
               << (split ? "data parallelism" : "resizing the batch")
               << " needs it leading";
      set(reshape.getResult(), 0);
      return success();
    }
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      auto perm = transpose.getPermutation();
      set(transpose.getResult(),
          std::distance(perm.begin(), llvm::find(perm, *in)));
      return success();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return propagateSlice(slice, *in);
    if (auto dropout = dyn_cast<DropoutOp>(op); split && dropout) {
      // The mask of a local element is that of its place in the global
      // batch (see train.dropout).
      if (dropout.getBatchDimAttr())
        return dropout.emitOpError("already records a batch split");
      Builder b(op->getContext());
      dropout.setBatchDimAttr(b.getI64IntegerAttr(*in));
      dropout.setRanksAttr(b.getI64IntegerAttr(denominator));
      set(dropout.getResult(), *in);
      return success();
    }
    if (auto sum = dyn_cast<SumOp>(op)) {
      if (llvm::is_contained(sum.getDims(), *in))
        return success(); // The batch is summed away.
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
  /// A slice keeps the batch only when it takes it whole: offset 0, stride
  /// 1 and, before the change, the whole dimension (the operand has
  /// already been resized by numerator / denominator).
  LogicalResult propagateSlice(SliceOp slice, int64_t dim) {
    int64_t now = typeOf(slice.getInput()).getDimSize(dim);
    RankedTensorType result = typeOf(slice.getResult());
    if (slice.getOffsets()[dim] != 0 || slice.getStrides()[dim] != 1 ||
        result.getDimSize(dim) * numerator != now * denominator)
      return slice.emitOpError("slices the batch dimension ")
             << dim << ", which "
             << (split ? "does not split across ranks"
                       : "cannot follow a new batch size");
    Shape shape(result.getShape());
    shape[dim] = now;
    slice.getResult().setType(withShape(shape, result.getElementType()));
    set(slice.getResult(), dim);
    return success();
  }

  int64_t numerator, denominator;
  bool split;
  llvm::DenseMap<Value, int64_t> dims;
};

} // namespace

LogicalResult reinferResultTypes(Operation *op) {
  FailureOr<SmallVector<Type>> types = inferTypes(op);
  if (failed(types))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), *types))
    result.setType(type);
  return success();
}

namespace {
/// Retypes the body of `func` once its arguments are retyped and marked in
/// `batch`.
LogicalResult followArguments(func::FuncOp func, BatchDims &batch) {
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    if (failed(batch.propagate(&op)) || failed(reinferResultTypes(&op)))
      return failure();
  updateFunctionType(func);
  return success();
}
} // namespace

LogicalResult splitBatch(func::FuncOp func, int64_t ranks) {
  Block &body = func.getBody().front();
  BatchDims batch(1, ranks, /*split=*/true);
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    int64_t global = type.getDimSize(0);
    if (global % ranks != 0)
      return func.emitError("the global batch of ")
             << global << " (argument #" << arg.getArgNumber()
             << ") does not divide among " << ranks << " ranks";
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = global / ranks;
    arg.setType(RankedTensorType::get(shape, type.getElementType()));
    batch.set(arg, 0);
  }
  return followArguments(func, batch);
}

LogicalResult resizeBatch(func::FuncOp func, int64_t newBatch) {
  Block &body = func.getBody().front();
  std::optional<int64_t> old;
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (old && *old != type.getDimSize(0))
      return func.emitError("the arguments disagree on the batch size: ")
             << *old << " and " << type.getDimSize(0) << " (argument #"
             << arg.getArgNumber() << ")";
    old = type.getDimSize(0);
  }
  if (!old)
    return func.emitError("no argument of the forward function has a batch "
                          "dimension to resize");
  if (*old == newBatch)
    return success();
  BatchDims batch(newBatch, *old, /*split=*/false);
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = newBatch;
    arg.setType(RankedTensorType::get(shape, type.getElementType()));
    batch.set(arg, 0);
  }
  return followArguments(func, batch);
}

} // namespace zeroc
