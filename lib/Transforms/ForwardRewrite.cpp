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
    // A reshape whose batch dimension BatchDims::propagate has already
    // placed (or whose input did not change) keeps its result shape.
    if (input.getNumElements() ==
        typeOf(reshape.getResult()).getNumElements())
      return SmallVector<Type>{withShape(shape, input.getElementType())};
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
  // A broadcast's result shape is its own (BatchDims::propagate resizes
  // the batch dimension it carries).
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

  /// Propagates through `op` and rejects what does not follow, as sharding
  /// propagation (GSPMD, Shardy) follows a sharded dimension: the batch
  /// dimension is tracked through transposes, reshapes that keep it whole,
  /// broadcasts, reductions over other dimensions and the ops whose
  /// results line up with their operands. What mixes the examples of the
  /// batch is refused, naming the op: a sum over the batch (when
  /// splitting), a contraction, softmax, normalization or mask along it, a
  /// reshape that merges it with the dimensions before it or cuts it, a
  /// split or concatenation along it, operands whose batch dimensions do
  /// not line up.
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
    if (isa<CrossEntropyOp>(op))
      return success(); // A mean over the batch yields a local mean.
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return propagateReshape(reshape, *in);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      auto perm = transpose.getPermutation();
      set(transpose.getResult(),
          std::distance(perm.begin(), llvm::find(perm, *in)));
      return success();
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      // Broadcasting prepends dimensions: the batch moves right by as many,
      // and keeps its (new) size.
      RankedTensorType input = typeOf(broadcast.getInput());
      RankedTensorType result = typeOf(broadcast.getResult());
      int64_t dim = *in + result.getRank() - input.getRank();
      Shape shape(result.getShape());
      shape[dim] = input.getDimSize(*in);
      broadcast.getResult().setType(withShape(shape, result.getElementType()));
      set(broadcast.getResult(), dim);
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
    if (isa<SumOp, MeanOp>(op)) {
      ArrayRef<int64_t> dims = isa<SumOp>(op) ? cast<SumOp>(op).getDims()
                                              : cast<MeanOp>(op).getDims();
      // Summed away (only when resizing) or averaged away (a local mean).
      if (llvm::is_contained(dims, *in))
        return success();
      int64_t removed =
          llvm::count_if(dims, [&](int64_t d) { return d < *in; });
      set(op->getResult(0), *in - removed);
      return success();
    }
    if (isa<AmaxOp, VarOp>(op)) {
      // A maximum or variance over the batch is not one of local ones.
      ArrayRef<int64_t> dims = isa<AmaxOp>(op) ? cast<AmaxOp>(op).getDims()
                                               : cast<VarOp>(op).getDims();
      if (llvm::is_contained(dims, *in))
        return mixes(op, *in, "reduces over it");
      int64_t removed =
          llvm::count_if(dims, [&](int64_t d) { return d < *in; });
      set(op->getResult(0), *in - removed);
      return success();
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      // The index replaces one coordinate; the others line up.
      std::optional<int64_t> input = of(gather.getInput()),
                             index = of(gather.getIndex());
      int64_t dim = static_cast<int64_t>(gather.getDim());
      if ((input && *input == dim) || (index && *index == dim))
        return mixes(op, dim, "gathers along it");
      if (input && index && *input != *index)
        return mixes(op, *in, "lines it up with dimension " +
                                  std::to_string(*index) + " of its index");
      set(gather.getResult(), index ? *index : *input);
      return success();
    }
    if (auto matmul = dyn_cast<MatmulOp>(op))
      return propagateMatmul(matmul);
    // Ops that work along their last dimension (or two) must not have the
    // batch there.
    auto lastDims = [&](Value value) {
      return typeOf(value).getRank() - *in;
    };
    if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(op) &&
        lastDims(op->getOperand(0)) <= 1)
      return mixes(op, *in, "normalizes along it");
    if (isa<CausalMaskOp>(op) && lastDims(op->getOperand(0)) <= 2)
      return mixes(op, *in, "masks by position along it");
    if (auto rope = dyn_cast<RopeOp>(op);
        rope && (static_cast<int64_t>(rope.getSeqDim()) == *in || lastDims(rope.getInput()) <= 1))
      return mixes(op, *in, "rotates by position along it");
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      for (Value operand : op->getOperands()) {
        std::optional<int64_t> dim = of(operand);
        if (dim && (*dim != *in || typeOf(operand).getRank() - *dim <= 2))
          return mixes(op, *dim, "attends across it");
      }
      set(attention.getResult(), *in);
      return success();
    }
    if (auto splitOp = dyn_cast<SplitOp>(op); splitOp &&
        static_cast<int64_t>(splitOp.getDim()) == *in)
      return mixes(op, *in, "splits it into parts");
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      for (Value operand : op->getOperands())
        if (of(operand) != in)
          return mixes(op, *in, "joins it with values whose batch "
                                "dimension differs");
      if (static_cast<int64_t>(concat.getDim()) == *in)
        return mixes(op, *in, "concatenates along it");
    }
    if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
      // NumPy broadcasting aligns the operands at their last dimension.
      int64_t rank = typeOf(op->getResult(0)).getRank();
      std::optional<int64_t> dim;
      for (Value operand : op->getOperands()) {
        std::optional<int64_t> d = of(operand);
        if (!d)
          continue;
        int64_t aligned = *d + rank - typeOf(operand).getRank();
        if (dim && *dim != aligned)
          return mixes(op, *in, "lines it up with dimension " +
                                    std::to_string(aligned) +
                                    " of another operand's batch");
        dim = aligned;
      }
      set(op->getResult(0), *dim);
      return success();
    }
    for (Value result : op->getResults())
      set(result, *in);
    return success();
  }

private:
  /// Refuses `op`, whose operand carries the batch in `dim`: it computes
  /// across the examples of the batch, which data parallelism (or a new
  /// batch size) would change.
  LogicalResult mixes(Operation *op, int64_t dim, const Twine &why) {
    return op->emitOpError("mixes the examples of the batch: its batch "
                           "dimension is ")
           << dim << " and the op " << why << ", so it "
           << (split ? "does not split across ranks"
                     : "cannot follow a new batch size");
  }

  /// A matmul keeps the batch in a leading (batch) dimension or a row
  /// (column) of its left (right) operand; a contraction over it mixes the
  /// examples.
  LogicalResult propagateMatmul(MatmulOp matmul) {
    int64_t rank = typeOf(matmul.getResult()).getRank();
    std::optional<int64_t> result;
    Value operands[] = {matmul.getLhs(), matmul.getRhs()};
    for (auto [index, operand] : llvm::enumerate(operands)) {
      std::optional<int64_t> dim = of(operand);
      if (!dim)
        continue;
      int64_t operandRank = typeOf(operand).getRank();
      bool transposed =
          index == 0 ? matmul.getTransposeLhs() : matmul.getTransposeRhs();
      int64_t row = operandRank - (transposed ? 1 : 2);
      int64_t col = operandRank - (transposed ? 2 : 1);
      int64_t kept;
      if (*dim < operandRank - 2)
        kept = *dim + rank - operandRank;
      else if ((index == 0 && *dim == row) || (index == 1 && *dim == col))
        kept = index == 0 ? rank - 2 : rank - 1;
      else
        return mixes(matmul, *dim, "contracts over it");
      if (result && *result != kept)
        return mixes(matmul, *dim, "multiplies examples of the batch by "
                                   "other examples");
      result = kept;
    }
    set(matmul.getResult(), *result);
    return success();
  }

  /// A reshape keeps the batch when the dimensions before it stay as they
  /// are: the batch dimension is then whole in the result, or merged with
  /// dimensions after it, or cut into a leading part and dimensions after
  /// it, and each rank's part is still a contiguous block of every
  /// dimension before. The leading batch resizes by the ratio of element
  /// counts (reinferResultTypes).
  LogicalResult propagateReshape(ReshapeOp reshape, int64_t dim) {
    RankedTensorType input = typeOf(reshape.getInput());
    RankedTensorType result = typeOf(reshape.getResult());
    if (dim == 0) {
      set(reshape.getResult(), 0);
      return success();
    }
    ArrayRef<int64_t> in = input.getShape();
    ArrayRef<int64_t> out = result.getShape();
    int64_t now = in[dim];
    int64_t before = now * denominator / numerator; // the size it had
    int64_t prefix = 1;
    for (int64_t size : in.take_front(dim))
      prefix *= size;
    int64_t outPrefix = 1;
    for (int64_t e = 0; e < static_cast<int64_t>(out.size()); ++e) {
      if (outPrefix > prefix)
        break;
      if (outPrefix == prefix && out[e] != 1) {
        // Merged with the dimensions after it: out[e] = before * in[dim+1..j].
        bool keeps = false;
        int64_t merged = before;
        for (int64_t j = dim + 1; j <= static_cast<int64_t>(in.size()) &&
                                  merged <= out[e];
             ++j) {
          if (merged == out[e]) {
            keeps = true;
            break;
          }
          if (j < static_cast<int64_t>(in.size()))
            merged *= in[j];
        }
        // Cut into a leading part and the dimensions after it.
        int64_t cut = out[e];
        for (int64_t k = e + 1; !keeps && cut <= before &&
                                k <= static_cast<int64_t>(out.size());
             ++k) {
          if (cut == before)
            keeps = (out[e] * numerator) % denominator == 0;
          else if (k < static_cast<int64_t>(out.size()))
            cut *= out[k];
        }
        if (!keeps)
          break;
        Shape shape(out);
        shape[e] = out[e] * numerator / denominator;
        reshape.getResult().setType(withShape(shape, result.getElementType()));
        set(reshape.getResult(), e);
        return success();
      }
      outPrefix *= out[e];
    }
    Shape global(in);
    global[dim] = before;
    return reshape.emitOpError("mixes the examples of the batch: it reshapes "
                               "a value whose batch dimension is ")
           << dim << " (" << formatShape(global) << ") to "
           << formatShape(out) << ", which does not keep the dimensions "
           << "before the batch and the batch whole, so it "
           << (split ? "does not split across ranks"
                     : "cannot follow a new batch size");
  }

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
