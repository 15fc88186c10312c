//===- ForwardRewrite.cpp - retyping the forward function -----------------===//

#include "ForwardRewrite.h"

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"
#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

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

LogicalResult globalizeTargetCounts(
    func::FuncOp func, int64_t ranks,
    llvm::function_ref<Value(OpBuilder &, Location, Value)> sumOverRanks) {
  // The step of train-accumulate's micro-batches has one loss per
  // micro-batch; any other function (the forward) one.
  int64_t microBatches = 1;
  if (trainDialect(func).getStepAttrHelper().isAttrPresent(func))
    if (auto module = func->getParentOfType<ModuleOp>())
      if (auto accum =
              trainDialect(module).getGradAccumAttrHelper().getAttr(module))
        microBatches = accum.getInt();
  SmallVector<CrossEntropyOp> losses;
  SmallVector<Operation *> users; // every op whose count is set below
  // The divisors of the masked means written out (sum / sum), by their
  // number (train.batch_count, set by BatchDims::checkBatchSums): every
  // copy (one per micro-batch, and train-remat's clones).
  auto marks = trainDialect(func).getBatchCountAttrHelper();
  std::map<int64_t, SmallVector<SumOp>> divisors;
  func.walk([&](Operation *op) {
    if (auto loss = dyn_cast<CrossEntropyOp>(op);
        loss && loss.getIgnoreIndexAttr() && !loss.getCount()) {
      losses.push_back(loss);
      users.push_back(op);
    }
    if (auto grad = dyn_cast<CrossEntropyGradOp>(op);
        grad && grad.getIgnoreIndexAttr() && !grad.getCount())
      users.push_back(op);
    if (auto sum = dyn_cast<SumOp>(op))
      if (IntegerAttr mark = marks.getAttr(sum))
        divisors[mark.getInt()].push_back(sum);
  });
  // One part, or nothing ignored: each part's mean is the global one.
  if ((users.empty() && divisors.empty()) || ranks * microBatches == 1)
    return success();
  if (!users.empty() && static_cast<int64_t>(losses.size()) != microBatches)
    return (losses.empty() ? users.front() : losses.front().getOperation())
               ->emitOpError("with ignore_index divides by the number of "
                             "positions that are not ignored in the global "
                             "batch, which needs one train.cross_entropy "
                             "per micro-batch (")
           << microBatches << "), but @" << func.getSymName() << " has "
           << losses.size();
  Block &body = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location loc = func.getLoc();
  TrainBuilder tb(b, loc);
  double parts = static_cast<double>(ranks * microBatches);
  // A value of the batch (a loss's targets, a divisor's mask), recomputed
  // at the top of the function from the batch (a micro-batch's slice,
  // reshapes), so that it is known before the first micro-batch reads it.
  IRMapping mapping;
  auto recompute = [&](Value value, Operation *user, StringRef what,
                       StringRef needs) -> FailureOr<Value> {
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.inclusive = true;
    options.filter = [&](Operation *op) { return op->getBlock() == &body; };
    if (Operation *def = value.getDefiningOp())
      if (failed(getBackwardSlice(def, &slice, options)))
        return user->emitOpError("its ") << what << "' computation cannot "
                                         << "be followed";
    for (Operation *op : slice) {
      if (op->getNumRegions() != 0 || !isPure(op) ||
          llvm::any_of(op->getOperands(), [&](Value operand) {
            return !isa<BlockArgument>(operand) && !slice.contains(
                                                       operand.getDefiningOp());
          }))
        return user->emitOpError(needs) << op->getName() << " is not";
      if (mapping.contains(op))
        continue;
      // Before every micro-batch: not one of them (train.micro_batch
      // starts a micro-batch's forward pass, TrainStepPhases.cpp).
      b.clone(*op, mapping)->removeAttr("train.micro_batch");
    }
    return mapping.lookupOrDefault(value);
  };

  if (!users.empty()) {
    tb.setLoc(losses.front().getLoc());
    Value total;
    for (CrossEntropyOp loss : losses) {
      FailureOr<Value> targets = recompute(
          loss.getTargets(), loss, "targets",
          "with ignore_index needs targets computed from the batch alone, "
          "to count them before the loss; ");
      if (failed(targets))
        return failure();
      Value count = CountTargetsOp::create(
          b, loss.getLoc(), RankedTensorType::get({}, b.getF32Type()),
          *targets, loss.getIgnoreIndexAttr());
      total = total ? tb.add(total, count) : count;
    }
    Value global = sumOverRanks(b, tb.getLoc(), total);
    Value share = tb.scale(global, 1.0 / parts);
    for (Operation *op : users) {
      if (auto loss = dyn_cast<CrossEntropyOp>(op))
        loss.getCountMutable().assign(share);
      else
        cast<CrossEntropyGradOp>(op).getCountMutable().assign(share);
    }
  }

  // Each divisor: its value in each micro-batch (the first copy of it
  // there), summed over the micro-batches and the ranks, over the number
  // of parts, replaces every copy, in the forward pass and in backward
  // (the dividend's gradient divides by it too).
  for (auto &[number, sums] : divisors) {
    llvm::MapVector<int64_t, SumOp> perMicroBatch;
    for (SumOp sum : sums) {
      auto m = sum->getAttrOfType<IntegerAttr>("train.micro_batch");
      perMicroBatch.insert({m ? m.getInt() : 0, sum});
    }
    SumOp first = sums.front();
    if (static_cast<int64_t>(perMicroBatch.size()) != microBatches)
      return first.emitOpError("divides a mean over the batch (divisor ")
             << number << ", train.batch_count), which needs it in each of "
             << microBatches << " micro-batches, but @" << func.getSymName()
             << " has it in " << perMicroBatch.size();
    tb.setLoc(first.getLoc());
    Type element = first.getResult().getType().getElementType();
    Value total;
    for (auto &[m, sum] : perMicroBatch) {
      FailureOr<Value> input = recompute(
          sum.getInput(), sum, "inputs",
          "divides a mean over the batch and needs its input computed "
          "from the batch alone, to sum it before the first micro-batch; ");
      if (failed(input))
        return failure();
      Value count = tb.sum(*input, sum.getDims());
      if (element != b.getF32Type())
        count = tb.cast(count, b.getF32Type());
      total = total ? tb.add(total, count) : count;
    }
    Value global = sumOverRanks(b, tb.getLoc(), total);
    Value share = tb.scale(global, 1.0 / parts);
    if (element != b.getF32Type())
      share = tb.cast(share, element);
    for (SumOp sum : sums) {
      sum.getResult().replaceAllUsesWith(share);
      sum.erase();
    }
  }
  return success();
}

void updateFunctionType(func::FuncOp func) {
  Block &body = func.getBody().front();
  func.setFunctionType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
}

namespace {

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
    // A reshape of the batch has its result shape from
    // BatchDims::propagate already (which refuses what it cannot place);
    // one whose input did not change keeps its own.
    if (input.getNumElements() !=
        typeOf(reshape.getResult()).getNumElements()) {
      reshape.emitOpError("cannot follow its input's new shape ")
          << formatShape(input.getShape());
      return failure();
    }
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

/// Where the batch is in a value computed from it: a factor of one
/// dimension, as factor-based sharding propagation (Shardy) tracks a sharded
/// axis through reshapes. The dimension `dim` has the global size
/// `major` x `size` x minor: `size` examples of the batch (the global batch,
/// or its leading part once a reshape cut it), with the `major` factor
/// before them (a [T, B] merged into [T*B], as nn.MultiheadAttention's
/// output projection does) and the minor factor after them (a [B, H] merged
/// into [B*H]). A rank (or a new batch) holds `size` x numerator /
/// denominator examples at the same place of every major block, so every
/// op that keeps the dimension's elements apart computes its part exactly.
struct BatchAxis {
  int64_t dim = 0;
  int64_t major = 1;
  int64_t size = 1;

  BatchAxis at(int64_t newDim) const { return {newDim, major, size}; }
  bool operator==(const BatchAxis &other) const {
    return dim == other.dim && major == other.major && size == other.size;
  }
  bool operator!=(const BatchAxis &other) const { return !(*this == other); }
};

/// Where each value's batch is, for values computed from the batch.
/// The batch changes by the ratio `numerator` / `denominator`: a split
/// among ranks (1 / ranks, which also marks dropouts and rejects sums over
/// the batch) or a resize to another global batch (new / old).
class BatchDims {
public:
  BatchDims(int64_t numerator, int64_t denominator, bool split)
      : numerator(numerator), denominator(denominator), split(split) {}

  void set(Value value, BatchAxis axis) { axes[value] = axis; }
  std::optional<BatchAxis> axisOf(Value value) const {
    auto it = axes.find(value);
    if (it == axes.end())
      return std::nullopt;
    return it->second;
  }
  std::optional<int64_t> of(Value value) const {
    if (std::optional<BatchAxis> axis = axisOf(value))
      return axis->dim;
    return std::nullopt;
  }

  /// Propagates through `op` and rejects what does not follow, as sharding
  /// propagation (GSPMD, Shardy) follows a sharded dimension: the batch
  /// is tracked through transposes, reshapes that merge it with other
  /// dimensions or split such a merged dimension again, broadcasts,
  /// reductions over other dimensions and the ops whose results line up
  /// with their operands. What mixes the examples of the batch is refused,
  /// naming the op: a sum over the batch (when splitting), a contraction,
  /// softmax, normalization or mask along it, a reshape that cuts through
  /// it, a split or concatenation along it, operands whose batches do not
  /// line up.
  LogicalResult propagate(Operation *op) {
    std::optional<BatchAxis> found;
    for (Value operand : op->getOperands())
      if (auto axis = axisOf(operand); axis && !found)
        found = axis;
    if (!found)
      return success();
    BatchAxis in = *found;
    // A sum over the batch splits only as one of the two sums of a mean
    // written out, sum / sum (checkBatchSums, once every op is followed).
    // (Into one part, a sum stays whole.)
    if (auto sum = dyn_cast<SumOp>(op);
        split && denominator > 1 && sum &&
        llvm::is_contained(sum.getDims(), in.dim)) {
      batchSums.push_back({sum, in.dim});
      return success();
    }
    if (isa<CrossEntropyOp>(op))
      return success(); // A mean over the batch yields a local mean.
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return propagateReshape(reshape, in);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      auto perm = transpose.getPermutation();
      set(transpose.getResult(),
          in.at(std::distance(perm.begin(), llvm::find(perm, in.dim))));
      return success();
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      // Broadcasting prepends dimensions: the batch moves right by as many,
      // and keeps its (new) size.
      RankedTensorType input = typeOf(broadcast.getInput());
      RankedTensorType result = typeOf(broadcast.getResult());
      int64_t dim = in.dim + result.getRank() - input.getRank();
      Shape shape(result.getShape());
      shape[dim] = input.getDimSize(in.dim);
      broadcast.getResult().setType(withShape(shape, result.getElementType()));
      set(broadcast.getResult(), in.at(dim));
      return success();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return propagateSlice(slice, in);
    if (auto dropout = dyn_cast<DropoutOp>(op); split && dropout) {
      // The mask of a local element is that of its place in the global
      // batch (see train.dropout), which is an offset along the batch
      // dimension only when a rank's part is one block of it.
      if (dropout.getBatchDimAttr())
        return dropout.emitOpError("already records a batch split");
      if (in.major != 1)
        return dropout.emitOpError("draws its mask by the global position "
                                   "of each element, but its batch "
                                   "dimension ")
               << in.dim << " holds the batch after a major factor of "
               << in.major << ", so a rank's part is not one block of it";
      Builder b(op->getContext());
      dropout.setBatchDimAttr(b.getI64IntegerAttr(in.dim));
      dropout.setRanksAttr(b.getI64IntegerAttr(denominator));
      set(dropout.getResult(), in);
      return success();
    }
    if (isa<SumOp, MeanOp>(op)) {
      ArrayRef<int64_t> dims = isa<SumOp>(op) ? cast<SumOp>(op).getDims()
                                              : cast<MeanOp>(op).getDims();
      // Summed away (only when resizing) or averaged away (a local mean).
      if (llvm::is_contained(dims, in.dim))
        return success();
      int64_t removed =
          llvm::count_if(dims, [&](int64_t d) { return d < in.dim; });
      set(op->getResult(0), in.at(in.dim - removed));
      return success();
    }
    if (isa<AmaxOp, VarOp>(op)) {
      // A maximum or variance over the batch is not one of local ones.
      ArrayRef<int64_t> dims = isa<AmaxOp>(op) ? cast<AmaxOp>(op).getDims()
                                               : cast<VarOp>(op).getDims();
      if (llvm::is_contained(dims, in.dim))
        return mixes(op, in.dim, "reduces over it");
      int64_t removed =
          llvm::count_if(dims, [&](int64_t d) { return d < in.dim; });
      set(op->getResult(0), in.at(in.dim - removed));
      return success();
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      // The index replaces one coordinate; the others line up.
      std::optional<BatchAxis> input = axisOf(gather.getInput()),
                               index = axisOf(gather.getIndex());
      int64_t dim = static_cast<int64_t>(gather.getDim());
      // A look-up of batched indices in a table without a batch (the
      // importer's mask of an ignore_index) keeps each example's results
      // apart: result[i] reads index[i] only, and the result follows the
      // index.
      if (!input && index && index->dim == dim) {
        set(gather.getResult(), *index);
        return success();
      }
      if ((input && input->dim == dim) || (index && index->dim == dim))
        return mixes(op, dim, "gathers along it");
      if (input && index && *input != *index)
        return mixes(op, in.dim, "lines it up with dimension " +
                                     std::to_string(index->dim) +
                                     " of its index");
      set(gather.getResult(), index ? *index : *input);
      return success();
    }
    if (auto matmul = dyn_cast<MatmulOp>(op))
      return propagateMatmul(matmul);
    // Ops that work along their last dimension (or two) must not have the
    // batch there.
    auto lastDims = [&](Value value) {
      return typeOf(value).getRank() - in.dim;
    };
    if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(op) &&
        lastDims(op->getOperand(0)) <= 1)
      return mixes(op, in.dim, "normalizes along it");
    if (isa<CausalMaskOp>(op) && lastDims(op->getOperand(0)) <= 2)
      return mixes(op, in.dim, "masks by position along it");
    if (auto rope = dyn_cast<RopeOp>(op);
        rope && (static_cast<int64_t>(rope.getSeqDim()) == in.dim ||
                 lastDims(rope.getInput()) <= 1))
      return mixes(op, in.dim, "rotates by position along it");
    // The dropout of attention's probabilities (train.attention and its
    // gradient with `dropout`) draws its mask as train.dropout does.
    if (split && isa<AttentionOp, AttentionGradOp>(op) &&
        op->getInherentAttr("dropout").value_or(Attribute())) {
      if (op->getInherentAttr("batch_dim").value_or(Attribute()))
        return op->emitOpError("already records a batch split");
      if (in.major != 1 || in.dim > 1)
        return op->emitOpError("draws its dropout mask by the global "
                               "position of each probability, but its batch "
                               "dimension ")
               << in.dim << " holds the batch after a major factor of "
               << in.major << ", so a rank's part is not one block of it";
      Builder b(op->getContext());
      op->setInherentAttr(b.getStringAttr("batch_dim"),
                          b.getI64IntegerAttr(in.dim));
      op->setInherentAttr(b.getStringAttr("ranks"),
                          b.getI64IntegerAttr(denominator));
    }
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      for (Value operand : op->getOperands()) {
        std::optional<BatchAxis> axis = axisOf(operand);
        if (axis && (*axis != in ||
                     typeOf(operand).getRank() - axis->dim <= 2))
          return mixes(op, axis->dim, "attends across it");
      }
      set(attention.getResult(), in);
      return success();
    }
    if (auto splitOp = dyn_cast<SplitOp>(op);
        splitOp && static_cast<int64_t>(splitOp.getDim()) == in.dim)
      return mixes(op, in.dim, "splits it into parts");
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      for (Value operand : op->getOperands())
        if (axisOf(operand) != in)
          return mixes(op, in.dim, "joins it with values whose batch "
                                   "dimension differs");
      if (static_cast<int64_t>(concat.getDim()) == in.dim)
        return mixes(op, in.dim, "concatenates along it");
    }
    if (isa<CompareOp, SelectOp>(op))
      followBatch(op, in.dim, in);
    if (isa<TrilOp, TriuOp>(op) && lastDims(op->getOperand(0)) <= 2)
      return mixes(op, in.dim, "masks by position along it");
    if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
      // NumPy broadcasting aligns the operands at their last dimension.
      int64_t rank = typeOf(op->getResult(0)).getRank();
      for (Value operand : op->getOperands())
        if (std::optional<BatchAxis> a = axisOf(operand))
          followBatch(op, a->dim + rank - typeOf(operand).getRank(), *a);
      std::optional<BatchAxis> axis;
      for (Value operand : op->getOperands()) {
        std::optional<BatchAxis> a = axisOf(operand);
        if (!a)
          continue;
        BatchAxis aligned = a->at(a->dim + rank - typeOf(operand).getRank());
        if (axis && axis->dim != aligned.dim)
          return mixes(op, in.dim, "lines it up with dimension " +
                                       std::to_string(aligned.dim) +
                                       " of another operand's batch");
        if (axis && *axis != aligned)
          return mixes(op, in.dim, "lines its examples up with other "
                                   "examples of another operand (the "
                                   "batch is a different factor of the "
                                   "dimension there)");
        axis = aligned;
      }
      set(op->getResult(0), *axis);
      return success();
    }
    for (Value result : op->getResults())
      set(result, in);
    return success();
  }

  /// Accepts the sums over the batch that propagate set aside, once every
  /// op of the function is followed, or refuses the first that is not one
  /// of a masked mean's: a sum over the batch (the dividend, any shape)
  /// read only as the left operand of train.div whose right operand is
  /// the divisor, a 0-d sum over the batch of a value computed from the
  /// batch arguments alone by pure ops (a mask of the targets; no
  /// parameter), read only as such a right operand. Each part of the
  /// batch then divides its own dividend by the global divisor over the
  /// number of parts (globalizeTargetCounts, which finds each divisor by
  /// its train.batch_count, the divisor's number), so that the average of
  /// the parts' means is the mean over the global batch.
  LogicalResult checkBatchSums() {
    llvm::SmallPtrSet<Operation *, 8> pending;
    for (auto [sum, dim] : batchSums)
      pending.insert(sum);
    auto pendingSum = [&](Value value) {
      auto sum = value.getDefiningOp<SumOp>();
      return sum && pending.contains(sum) ? sum : SumOp();
    };
    auto isDivisor = [&](SumOp sum) {
      return typeOf(sum.getResult()).getRank() == 0 &&
             fromBatchAlone(sum.getInput()) && !sum->use_empty() &&
             llvm::all_of(sum->getUses(), [&](OpOperand &use) {
               auto div = dyn_cast<DivOp>(use.getOwner());
               return div && use.getOperandNumber() == 1 &&
                      div.getLhs() != sum.getResult() &&
                      pendingSum(div.getLhs());
             });
    };
    auto isDividend = [&](SumOp sum) {
      return !sum->use_empty() &&
             llvm::all_of(sum->getUses(), [&](OpOperand &use) {
               auto div = dyn_cast<DivOp>(use.getOwner());
               SumOp divisor = div ? pendingSum(div.getRhs()) : SumOp();
               return div && use.getOperandNumber() == 0 && divisor &&
                      divisor != sum && isDivisor(divisor);
             });
    };
    // The divisors' numbers: those of an earlier split (train-accumulate
    // splits train-data-parallel's forward again), then new ones.
    if (batchSums.empty())
      return success();
    auto marks = trainDialect(batchSums.front().first).getBatchCountAttrHelper();
    int64_t next = 0;
    for (auto [sum, dim] : batchSums)
      if (IntegerAttr mark = marks.getAttr(sum))
        next = std::max(next, mark.getInt() + 1);
    for (auto [sum, dim] : batchSums) {
      if (isDivisor(sum)) {
        if (!marks.isAttrPresent(sum))
          marks.setAttr(sum, Builder(sum->getContext()).getI64IntegerAttr(next++));
        continue;
      }
      if (isDividend(sum))
        continue;
      return sum.emitOpError("sums over the batch dimension ")
             << dim << ", which does not split across ranks: the loss "
             << "must be a mean over the batch (train.mean, "
             << "train.cross_entropy, or a sum over the batch divided by "
             << "the 0-d sum over the batch of a value of the batch "
             << "arguments alone, such as a mask of the targets)";
    }
    return success();
  }

private:
  /// Whether `value` is computed from the batch arguments alone: by pure
  /// ops without regions, from block arguments that carry the batch (no
  /// train.read of a parameter).
  bool fromBatchAlone(Value value) {
    SmallVector<Value> work{value};
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      if (isa<BlockArgument>(v)) {
        if (!of(v))
          return false;
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def->getNumRegions() != 0 || !isPure(def))
        return false;
      llvm::append_range(work, def->getOperands());
    }
    return true;
  }

  /// Operands of an elementwise `op` (aligned at their last dimension, the
  /// batch in result dimension `dim`, placed as `axis`) that do not carry
  /// the batch but have its global size there because they were built for
  /// it: a `train.fill` or a `train.broadcast` of a batch-free value (a
  /// mask expanded to the scores' shape, the zeros a masked mean selects).
  /// They take the new size, as sharding propagation shards a constant
  /// against its user; one read elsewhere too is copied for `op` first
  /// (its other readers keep the global size or resize their own copy).
  void followBatch(Operation *op, int64_t dim, BatchAxis axis) {
    int64_t rank = typeOf(op->getResult(0)).getRank();
    for (OpOperand &use : op->getOpOperands()) {
      Value operand = use.get();
      if (of(operand) ||
          !isa_and_nonnull<FillOp, BroadcastOp>(operand.getDefiningOp()))
        continue;
      RankedTensorType type = typeOf(operand);
      int64_t d = dim - (rank - type.getRank());
      if (d < 0)
        continue;
      if (auto broadcast = operand.getDefiningOp<BroadcastOp>()) {
        // Only a dimension the broadcast creates (absent or 1 before).
        RankedTensorType in = typeOf(broadcast.getInput());
        int64_t inDim = d - (type.getRank() - in.getRank());
        if (inDim >= 0 && in.getDimSize(inDim) != 1)
          continue;
      }
      int64_t size = type.getDimSize(d);
      if ((size * numerator) % denominator != 0 || size == 1)
        continue;
      // The global size: the batch operand's size before the change.
      bool global = false;
      for (Value other : op->getOperands())
        if (std::optional<int64_t> od = of(other)) {
          int64_t at = dim - (rank - typeOf(other).getRank());
          if (at == *od && typeOf(other).getDimSize(at) * denominator ==
                               size * numerator)
            global = true;
        }
      if (!global)
        continue;
      if (!operand.hasOneUse()) {
        OpBuilder b(op);
        operand = b.clone(*operand.getDefiningOp())->getResult(0);
        use.set(operand);
      }
      Shape shape(type.getShape());
      shape[d] = size * numerator / denominator;
      operand.setType(withShape(shape, type.getElementType()));
      set(operand, axis.at(d));
    }
  }

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
    std::optional<BatchAxis> result;
    Value operands[] = {matmul.getLhs(), matmul.getRhs()};
    for (auto [index, operand] : llvm::enumerate(operands)) {
      std::optional<BatchAxis> axis = axisOf(operand);
      if (!axis)
        continue;
      int64_t dim = axis->dim;
      int64_t operandRank = typeOf(operand).getRank();
      bool transposed =
          index == 0 ? matmul.getTransposeLhs() : matmul.getTransposeRhs();
      int64_t row = operandRank - (transposed ? 1 : 2);
      int64_t col = operandRank - (transposed ? 2 : 1);
      BatchAxis kept;
      if (dim < operandRank - 2)
        kept = axis->at(dim + rank - operandRank);
      else if ((index == 0 && dim == row) || (index == 1 && dim == col))
        kept = axis->at(index == 0 ? rank - 2 : rank - 1);
      else
        return mixes(matmul, dim, "contracts over it");
      if (result && *result != kept)
        return mixes(matmul, dim, "multiplies examples of the batch by "
                                  "other examples");
      result = kept;
    }
    set(matmul.getResult(), *result);
    return success();
  }

  /// A reshape keeps the batch when no boundary of its result's dimensions
  /// cuts through the batch's factor in the row-major order of the
  /// elements, or only cuts it into a leading part that still divides:
  /// with P the number of elements before the batch's factor in that
  /// order (the dimensions before it and the major factor), the result
  /// dimension e where the batch starts must begin at a divisor of P and,
  /// in the product up to its end, hold the whole batch after P (the batch
  /// is merged with what follows, major factor P / start) or a leading
  /// part of it (the rest moves to the next dimensions). Each rank's
  /// (or the new batch's) elements then stay at the same places of the
  /// result, whose dimension e takes its new size.
  LogicalResult propagateReshape(ReshapeOp reshape, BatchAxis in) {
    RankedTensorType input = typeOf(reshape.getInput());
    RankedTensorType result = typeOf(reshape.getResult());
    ArrayRef<int64_t> out = result.getShape();
    // A 0-d result: inferTypes follows an input of one element.
    if (out.empty())
      return success();
    int64_t before = 1; // P: the elements before the batch's factor
    for (int64_t size : input.getShape().take_front(in.dim))
      before *= size;
    before *= in.major;
    int64_t through = before * in.size; // ... up to its end
    int64_t start = 1;
    std::optional<int64_t> part; // a leading part that does not divide
    for (int64_t e = 0; e < static_cast<int64_t>(out.size()); ++e) {
      int64_t end = start * out[e];
      if (end <= before) {
        start = end;
        continue;
      }
      // The batch starts in dimension e.
      if (before % start != 0)
        break;
      BatchAxis axis{e, before / start, in.size};
      if (end % through != 0) {
        // Cut into a leading part (of size end / P) and later dimensions.
        if (end % before != 0 || through % end != 0)
          break;
        axis.size = end / before;
      }
      if ((axis.size * numerator) % denominator != 0) {
        part = axis.size;
        break;
      }
      Shape shape(out);
      shape[e] = out[e] * numerator / denominator;
      reshape.getResult().setType(withShape(shape, result.getElementType()));
      set(reshape.getResult(), axis);
      return success();
    }
    Shape global(input.getShape());
    global[in.dim] = global[in.dim] * denominator / numerator;
    InFlightDiagnostic diag =
        reshape.emitOpError("mixes the examples of the batch: it reshapes a "
                            "value whose batch dimension is ")
        << in.dim << " (" << formatShape(global);
    if (in.major != 1)
      diag << ", the batch after a major factor of " << in.major;
    diag << ") to " << formatShape(out);
    if (part)
      diag << ", which keeps a leading part of " << *part << " of the batch "
           << "of " << in.size << " in a dimension, and that part "
           << (split ? "does not divide among " + std::to_string(denominator) +
                           " ranks"
                     : "cannot follow a new batch size");
    else
      diag << ", which cuts through the batch, so it "
           << (split ? "does not split across ranks"
                     : "cannot follow a new batch size");
    return diag;
  }

  /// A slice keeps the batch only when it takes its dimension whole:
  /// offset 0, stride 1 and, before the change, the whole dimension (the
  /// operand has already been resized by numerator / denominator).
  LogicalResult propagateSlice(SliceOp slice, BatchAxis in) {
    int64_t dim = in.dim;
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
    set(slice.getResult(), in);
    return success();
  }

  int64_t numerator, denominator;
  bool split;
  llvm::DenseMap<Value, BatchAxis> axes;
  /// The sums over the batch dimension (given) met when splitting, for
  /// checkBatchSums.
  SmallVector<std::pair<SumOp, int64_t>> batchSums;
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
  if (failed(batch.checkBatchSums()))
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
    batch.set(arg, BatchAxis{0, 1, global});
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
    batch.set(arg, BatchAxis{0, 1, *old});
  }
  return followArguments(func, batch);
}

} // namespace zeroc
