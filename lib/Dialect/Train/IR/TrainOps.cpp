//===- TrainOps.cpp - verifiers of the train dialect ----------------------===//
//
// Every verifier names the operand at fault and the mismatch, so that a
// hand-written model points its author at the line to fix.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainLlamaShapes.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"
#include "TypeRules.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::train::rules;

#include "zeroc/Dialect/Train/IR/TrainEnums.cpp.inc"
#include "zeroc/Dialect/Train/IR/TrainInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "zeroc/Dialect/Train/IR/TrainOps.cpp.inc"

namespace {

/// Checks that `result` has the shape and element type the op's rule gives.
LogicalResult verifyResultType(Operation *op, Value result,
                               ArrayRef<int64_t> shape, Type elementType) {
  auto expected = RankedTensorType::get(shape, elementType);
  if (result.getType() != expected)
    return op->emitOpError("result type ")
           << result.getType() << " does not match the expected " << expected;
  return success();
}

/// Checks that the float attribute `name` is finite (not NaN or infinite);
/// the range checks that follow it would let a NaN through.
LogicalResult verifyFinite(Operation *op, StringRef name, double value) {
  if (!std::isfinite(value))
    return op->emitOpError()
           << name << " must be finite, got "
           << (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
  return success();
}

LogicalResult sameElementType(const RuleErrors &errors, StringRef lhsName,
                              Value lhs, StringRef rhsName, Value rhs) {
  Type l = tensorType(lhs).getElementType(), r = tensorType(rhs).getElementType();
  if (l != r)
    return report(errors, lhsName, " element type ", l, " differs from ",
                  rhsName, " element type ", r);
  return success();
}

LogicalResult verifyDimInRange(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError("dimension ")
           << dim << " is out of range for rank " << rank;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

/// The value of an optional float attribute, if present.
static std::optional<double> valueOf(FloatAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getValueAsDouble();
}

LogicalResult ParamOp::verify() {
  if (failed(verifyTensorShape(getType(), ("type of @" + getSymName()).str(),
                               [&] { return emitOpError(); })))
    return failure();
  std::optional<double> std = valueOf(getStdAttr());
  if (std && failed(verifyFinite(*this, "std", *std)))
    return failure();
  if (getInit() == InitKind::normal) {
    if (!std)
      return emitOpError("normal initializer of @")
             << getSymName() << " needs a standard deviation (std = ...)";
    if (*std <= 0.0)
      return emitOpError("std of @") << getSymName() << " must be positive, got "
                                     << *std;
  } else if (std) {
    return emitOpError("std is only meaningful with init = normal, but @")
           << getSymName() << " has init = " << stringifyInitKind(getInit());
  }
  return success();
}

/// The learning-rate schedule's settings, shared by train.optimizer and
/// train.lr_schedule. warmup, min_lr and max_steps only mean something for
/// the cosine schedule, so a constant schedule must not carry them.
static LogicalResult verifySchedule(Operation *op, double lr,
                                    LRSchedule schedule, IntegerAttr warmupAttr,
                                    FloatAttr minLrAttr,
                                    IntegerAttr maxStepsAttr) {
  int64_t warmup = warmupAttr ? warmupAttr.getInt() : 0;
  double minLr = minLrAttr ? minLrAttr.getValueAsDouble() : 0.0;
  int64_t maxSteps = maxStepsAttr ? maxStepsAttr.getInt() : 0;
  if (schedule == LRSchedule::constant) {
    if (warmup != 0 || minLr != 0.0 || maxSteps != 0)
      return op->emitOpError("warmup, min_lr and max_steps belong to the "
                             "cosine schedule; the constant schedule takes "
                             "none of them");
    return success();
  }
  if (warmup < 0)
    return op->emitOpError("warmup must be non-negative, got ") << warmup;
  if (failed(verifyFinite(op, "min_lr", minLr)))
    return failure();
  if (minLr < 0.0 || minLr > lr)
    return op->emitOpError("min_lr must be in [0, lr], got ") << minLr;
  if (!maxStepsAttr)
    return op->emitOpError("the cosine schedule needs max_steps");
  if (maxSteps <= warmup)
    return op->emitOpError("max_steps (")
           << maxSteps << ") must exceed warmup (" << warmup << ")";
  return success();
}

SmallVector<StateKind> OptimizerOp::getMomentKinds() {
  if (getKind() == OptimizerKind::adamw)
    return {StateKind::exp_avg, StateKind::exp_avg_sq};
  return {StateKind::momentum_buffer};
}

LogicalResult OptimizerOp::verify() {
  auto module = (*this)->getParentOfType<ModuleOp>();
  auto optimizers = module.getOps<OptimizerOp>();
  auto count = std::distance(optimizers.begin(), optimizers.end());
  if (count > 1)
    return emitOpError("a model has one optimizer, but this module declares ")
           << count;
  // Every float hyper-parameter that is present must be finite.
  for (auto [name, attr] :
       {std::pair<StringRef, FloatAttr>{"lr", getLrAttr()},
        {"beta1", getBeta1Attr()},
        {"beta2", getBeta2Attr()},
        {"eps", getEpsAttr()},
        {"momentum", getMomentumAttr()},
        {"weight_decay", getWeightDecayAttr()},
        {"grad_clip", getGradClipAttr()},
        {"min_lr", getMinLrAttr()}})
    if (attr && failed(verifyFinite(*this, name, attr.getValueAsDouble())))
      return failure();
  double lr = getLrAttr().getValueAsDouble();
  if (lr <= 0.0)
    return emitOpError("lr must be positive, got ") << lr;

  bool adamw = getKind() == OptimizerKind::adamw;
  struct Hyper {
    StringRef name;
    std::optional<double> value;
    bool forAdamW;
  };
  Hyper hypers[] = {{"beta1", valueOf(getBeta1Attr()), true},
                    {"beta2", valueOf(getBeta2Attr()), true},
                    {"eps", valueOf(getEpsAttr()), true},
                    {"momentum", valueOf(getMomentumAttr()), false}};
  for (const Hyper &hyper : hypers) {
    if (hyper.forAdamW && !adamw && hyper.value)
      return emitOpError(hyper.name)
             << " is an AdamW hyper-parameter; sgd takes lr, momentum and "
                "weight_decay";
    if (!hyper.forAdamW && adamw && hyper.value)
      return emitOpError(hyper.name)
             << " is an SGD hyper-parameter; adamw takes beta1, beta2 and eps";
    if (hyper.forAdamW && adamw && !hyper.value)
      return emitOpError("adamw needs ") << hyper.name;
    if (!hyper.value)
      continue;
    if (hyper.name == "eps" ? *hyper.value <= 0.0
                            : (*hyper.value < 0.0 || *hyper.value >= 1.0))
      return emitOpError(hyper.name)
             << (hyper.name == "eps" ? " must be positive" : " must be in [0, 1)")
             << ", got " << *hyper.value;
  }
  double weightDecay = getWeightDecayAttr().getValueAsDouble();
  if (weightDecay < 0.0)
    return emitOpError("weight_decay must be non-negative, got ") << weightDecay;
  double gradClip = getGradClipAttr().getValueAsDouble();
  if (gradClip < 0.0)
    return emitOpError("grad_clip must be non-negative (0 disables clipping), "
                       "got ")
           << gradClip;
  return verifySchedule(*this, lr, getSchedule(), getWarmupAttr(),
                        getMinLrAttr(), getMaxStepsAttr());
}

/// The storage type of the train.param or train.state named `name`, or null
/// after reporting why there is none.
static Type lookupStateType(Operation *user, FlatSymbolRefAttr name,
                            SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(user, name);
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    return param.getStorageType();
  if (auto state = dyn_cast_or_null<StateOp>(symbol))
    return state.getStorageType();
  if (auto buffer = dyn_cast_or_null<BufferOp>(symbol))
    return buffer.getStorageType();
  user->emitOpError("no train.param, train.state or train.buffer named ")
      << name;
  return nullptr;
}

LogicalResult ReadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type declared = lookupStateType(*this, getNameAttr(), symbolTable);
  if (!declared)
    return failure();
  if (declared != getType())
    return emitOpError("result type ")
           << getType() << " differs from the type " << declared
           << " declared by " << getNameAttr();
  return success();
}

LogicalResult WriteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type declared = lookupStateType(*this, getNameAttr(), symbolTable);
  if (!declared)
    return failure();
  if (declared != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the type " << declared
           << " declared by " << getNameAttr();
  return success();
}

LogicalResult StateOp::verify() {
  RankedTensorType type = getTensorType();
  if (!type.hasStaticShape())
    return emitOpError("type of @")
           << getSymName() << " must have a static shape, got " << type;
  if (getKind() != StateKind::grad && !type.getElementType().isF32())
    return emitOpError("optimizer state is kept in f32, but @")
           << getSymName() << " has type " << type;
  return success();
}

// What depends on the parameter, through the module's cached symbol table
// (a lookup per state would scan the module: quadratic for Llama-3-70B).
LogicalResult
StateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getOfAttr());
  if (!param)
    return emitOpError("state @")
           << getSymName() << " belongs to " << getOfAttr()
           << ", which is not a train.param";
  RankedTensorType type = getTensorType();
  if (failed(verifyTensorShape(type, ("type of @" + getSymName()).str(),
                               [&] { return emitOpError(); })))
    return failure();
  if (getKind() == StateKind::grad) {
    Type expected = param.getTensorType().getElementType();
    if (type.getElementType() != expected)
      return emitOpError("the gradient buffer @")
             << getSymName() << " has its parameter's element type "
             << expected << ", got " << type;
  }
  // A dynamic parameter type is reported by the parameter's own verifier.
  if (type.hasStaticShape() && param.getTensorType().hasStaticShape() &&
      type.getNumElements() != param.getTensorType().getNumElements())
    return emitOpError("state @")
           << getSymName() << " has " << type.getNumElements()
           << " elements but its parameter " << getOfAttr() << " has "
           << param.getTensorType().getNumElements();
  return success();
}

//===----------------------------------------------------------------------===//
// Forward computation
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType table = tensorType(adaptor.getTable());
  if (table.getRank() != 2)
    return report(errors, "table must have rank 2 [vocab, dim], got ", table);
  Shape shape(tensorType(adaptor.getIds()).getShape());
  shape.push_back(table.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

/// train.embedding's and train.embedding_grad's padding_idx names a row of
/// the table.
static LogicalResult verifyPaddingIdx(Operation *op,
                                      std::optional<int64_t> paddingIdx,
                                      int64_t vocab) {
  if (paddingIdx && (*paddingIdx < 0 || *paddingIdx >= vocab))
    return op->emitOpError("padding_idx ")
           << *paddingIdx << " is not a row of the table: it must be in [0, "
           << vocab << ")";
  return success();
}

LogicalResult EmbeddingOp::verify() {
  if (failed(verifyStaticShapes(*this)) || failed(verifyInferredTypes(*this)))
    return failure();
  return verifyPaddingIdx(*this, getPaddingIdx(),
                          tensorType(getTable()).getDimSize(0));
}

/// The type rule train.matmul and train.matmul_bias share: lhs and rhs of
/// one element type, (optionally transposed) matrix shapes that chain.
template <typename Adaptor>
static LogicalResult inferMatmul(RuleErrors &errors, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  if (failed(sameElementType(errors, "lhs", adaptor.getLhs(), "rhs",
                             adaptor.getRhs())))
    return failure();
  FailureOr<Shape> shape = matmulShape(
      tensorType(adaptor.getLhs()).getShape(),
      tensorType(adaptor.getRhs()).getShape(), adaptor.getTransposeLhs(),
      adaptor.getTransposeRhs(), errors.emitter());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(
      *shape, tensorType(adaptor.getLhs()).getElementType()));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  return inferMatmul(errors, adaptor, types);
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

LogicalResult MatmulBiasOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  if (failed(inferMatmul(errors, adaptor, types)) ||
      failed(sameElementType(errors, "lhs", adaptor.getLhs(), "bias",
                             adaptor.getBias())))
    return failure();
  int64_t columns = cast<RankedTensorType>(types.back()).getShape().back();
  ArrayRef<int64_t> bias = tensorType(adaptor.getBias()).getShape();
  if (bias.size() != 1 || bias[0] != columns)
    return report(errors, "bias must be a vector of the result's last "
                          "dimension (",
                  columns, "), got ", formatShape(bias));
  return success();
}

LogicalResult MatmulBiasOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

/// The type rule of the broadcasting binary ops.
template <typename BinaryOp>
static LogicalResult
inferBroadcastBinary(std::optional<Location> location,
                     typename BinaryOp::Adaptor adaptor,
                     SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, BinaryOp::getOperationName()};
  if (failed(sameElementType(errors, "lhs", adaptor.getLhs(), "rhs",
                             adaptor.getRhs())))
    return failure();
  FailureOr<Shape> shape =
      broadcastShapes(tensorType(adaptor.getLhs()).getShape(),
                      tensorType(adaptor.getRhs()).getShape(),
                      errors.emitter());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(
      *shape, tensorType(adaptor.getLhs()).getElementType()));
  return success();
}

template <typename BinaryOp>
static LogicalResult verifyBroadcastBinary(BinaryOp op) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  return verifyInferredTypes(op);
}

#define ZEROC_BROADCAST_BINARY(Op)                                             \
  LogicalResult Op::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> location,         \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferBroadcastBinary<Op>(location, adaptor, types);                 \
  }                                                                            \
  LogicalResult Op::verify() { return verifyBroadcastBinary(*this); }
ZEROC_BROADCAST_BINARY(AddOp)
ZEROC_BROADCAST_BINARY(SubOp)
ZEROC_BROADCAST_BINARY(MulOp)
ZEROC_BROADCAST_BINARY(DivOp)
#undef ZEROC_BROADCAST_BINARY

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType input = tensorType(adaptor.getInput());
  if (input.getRank() < 1)
    return report(errors, "input must have rank >= 1");
  int64_t features = input.getShape().back();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"weight", adaptor.getWeight()},
        {"bias", adaptor.getBias()}}) {
    RankedTensorType type = tensorType(value);
    if (type.getShape() != ArrayRef<int64_t>{features})
      return report(errors, name, " must have shape ", features,
                    " (the last dimension of the input), got ",
                    formatShape(type.getShape()));
    if (failed(sameElementType(errors, "input", adaptor.getInput(), name,
                               value)))
      return failure();
  }
  types.push_back(input);
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyStaticShapes(*this)) || failed(verifyInferredTypes(*this)))
    return failure();
  if (failed(verifyFinite(*this, "eps", getEpsAttr().getValueAsDouble())))
    return failure();
  if (getEpsAttr().getValueAsDouble() <= 0.0)
    return emitOpError("eps must be positive, got ")
           << getEpsAttr().getValueAsDouble();
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (tensorType(getInput()).getRank() < 1)
    return emitOpError("input must have rank >= 1");
  return success();
}

LogicalResult CausalMaskOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (tensorType(getInput()).getRank() < 2)
    return emitOpError("input must have rank >= 2 (the last two dimensions "
                       "are queries and keys)");
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType q = tensorType(adaptor.getQuery()),
                   k = tensorType(adaptor.getKey()),
                   v = tensorType(adaptor.getValue());
  // Grouped-query attention: key and value may have fewer heads
  // (TrainLlamaShapes.h's rule).
  FailureOr<Shape> shape =
      attentionShape(q.getShape(), k.getShape(), v.getShape(),
                     adaptor.getCausal(), errors.emitter());
  if (failed(shape))
    return failure();
  if (failed(sameElementType(errors, "query", adaptor.getQuery(), "key",
                             adaptor.getKey())) ||
      failed(sameElementType(errors, "query", adaptor.getQuery(), "value",
                             adaptor.getValue())))
    return failure();
  types.push_back(RankedTensorType::get(*shape, q.getElementType()));
  return success();
}

/// The optional dropout of train.attention and train.attention_grad: the
/// attributes of a train.dropout of the [B, H, T, S] probabilities.
template <typename OpT>
static LogicalResult verifyAttentionDropout(OpT op) {
  bool dropout = op.getDropoutAttr() != nullptr;
  if (dropout != (op.getSeedAttr() != nullptr))
    return op.emitOpError("dropout and seed go together (the probability "
                          "and stream of the probabilities' dropout)");
  if (!dropout) {
    if (op.getStep() || op.getBatchDimAttr() || op.getRanksAttr() ||
        op.getMicroBatchAttr() || op.getMicroBatchesAttr())
      return op.emitOpError("step, batch_dim, ranks, micro_batch and "
                            "micro_batches describe a dropout, and there is "
                            "none (no dropout attribute)");
    return success();
  }
  ArrayRef<int64_t> q = tensorType(op.getQuery()).getShape();
  ArrayRef<int64_t> k = tensorType(op.getKey()).getShape();
  SmallVector<int64_t> probs{q[0], q[1], q[2], k[2]};
  std::optional<int64_t> batchDim, ranks;
  if (op.getBatchDimAttr())
    batchDim = op.getBatchDimAttr().getInt();
  if (op.getRanksAttr())
    ranks = op.getRanksAttr().getInt();
  if (failed(verifyDropoutAttributes(
          probs, op.getDropoutAttr().getValueAsDouble(), batchDim, ranks,
          [&] { return op.emitOpError() << "dropout: "; })))
    return failure();
  if (batchDim && *batchDim > 1)
    return op.emitOpError("batch_dim ")
           << *batchDim << " of the probabilities is a query or key axis, "
           << "not the batch (0 or 1)";
  if (op.getMicroBatchAttr().operator bool() !=
      op.getMicroBatchesAttr().operator bool())
    return op.emitOpError("micro_batch and micro_batches go together (the "
                          "micro-batch train-accumulate records)");
  if (!op.getMicroBatchAttr())
    return success();
  if (!batchDim)
    return op.emitOpError("micro_batch needs batch_dim and ranks (the batch "
                          "split it is a micro-batch of)");
  int64_t count = op.getMicroBatchesAttr().getInt();
  int64_t index = op.getMicroBatchAttr().getInt();
  if (count < 1)
    return op.emitOpError("micro_batches must be positive, got ") << count;
  if (index < 0 || index >= count)
    return op.emitOpError("micro_batch ")
           << index << " is out of range for micro_batches = " << count;
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyStaticShapes(*this)) || failed(verifyInferredTypes(*this)))
    return failure();
  if (failed(verifyFinite(*this, "scale", getScaleAttr().getValueAsDouble())))
    return failure();
  if (getScaleAttr().getValueAsDouble() <= 0.0)
    return emitOpError("scale must be positive, got ")
           << getScaleAttr().getValueAsDouble();
  return verifyAttentionDropout(*this);
}

Value ReshapeOp::getViewSource() { return getInput(); }

LogicalResult ReshapeOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (input.getElementType() != result.getElementType())
    return emitOpError("element type changes from ")
           << input.getElementType() << " to " << result.getElementType()
           << "; use train.cast";
  if (input.getNumElements() != result.getNumElements())
    return emitOpError("input ")
           << formatShape(input.getShape()) << " has " << input.getNumElements()
           << " elements but the result " << formatShape(result.getShape())
           << " has " << result.getNumElements();
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType input = tensorType(adaptor.getInput());
  FailureOr<Shape> shape = transposeShape(
      input.getShape(), adaptor.getPermutation(), errors.emitter());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

LogicalResult SplitOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput());
  int64_t dim = getDim();
  if (failed(verifyDimInRange(*this, dim, input.getRank())))
    return failure();
  int64_t parts = getNumResults();
  if (parts == 0)
    return emitOpError("needs at least one result");
  if (input.getDimSize(dim) % parts != 0)
    return emitOpError("dimension ")
           << dim << " of size " << input.getDimSize(dim)
           << " does not split into " << parts << " equal parts";
  Shape shape(input.getShape());
  shape[dim] /= parts;
  for (Value result : getResults())
    if (failed(verifyResultType(*this, result, shape, input.getElementType())))
      return failure();
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return report(errors, "needs at least one input");
  RankedTensorType first = tensorType(inputs.front());
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= first.getRank())
    return report(errors, "dimension ", dim, " is out of range for rank ",
                  first.getRank());
  Shape shape(first.getShape());
  shape[dim] = 0;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    RankedTensorType type = tensorType(input);
    Shape others(type.getShape());
    if (type.getRank() == first.getRank())
      others[dim] = 0;
    if (type.getElementType() != first.getElementType() ||
        others != ArrayRef<int64_t>(shape))
      return report(errors, "input #", index, " of type ", type,
                    " does not match input #0 of type ", first,
                    " outside dimension ", dim);
  }
  int64_t total = 0;
  for (Value input : inputs)
    total += tensorType(input).getDimSize(dim);
  shape[dim] = total;
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult ConcatOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

/// label_smoothing of a cross-entropy (or its gradient) must be in [0, 1).
static LogicalResult verifyLabelSmoothing(Operation *op, FloatAttr smoothing) {
  if (!smoothing)
    return success();
  double e = smoothing.getValueAsDouble();
  if (!(e >= 0.0 && e < 1.0))
    return op->emitOpError("label_smoothing must be in [0, 1), got ") << e;
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyStaticShapes(*this)) ||
      failed(verifyLabelSmoothing(*this, getLabelSmoothingAttr())))
    return failure();
  if (getCount() && !getIgnoreIndexAttr())
    return emitOpError("count divides the sum over the positions that are "
                       "not ignored, so it needs ignore_index");
  RankedTensorType logits = tensorType(getLogits());
  if (logits.getRank() < 1)
    return emitOpError("logits must have rank >= 1 (the last dimension is "
                       "the vocabulary)");
  ArrayRef<int64_t> positions = logits.getShape().drop_back();
  if (tensorType(getTargets()).getShape() != positions)
    return emitOpError("targets shape ")
           << formatShape(tensorType(getTargets()).getShape())
           << " must equal the logits shape without its last dimension ("
           << formatShape(positions) << ")";
  return success();
}

#define ZEROC_REDUCTION(Op)                                                    \
  LogicalResult Op::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> location,         \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferReduction<Op>(location, adaptor, types);                       \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    if (failed(verifyStaticShapes(*this)))                                     \
      return failure();                                                        \
    return verifyInferredTypes(*this);                                         \
  }
ZEROC_REDUCTION(SumOp)
ZEROC_REDUCTION(MeanOp)
#undef ZEROC_REDUCTION

LogicalResult CastOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (input.getShape() != result.getShape())
    return emitOpError("shape changes from ")
           << formatShape(input.getShape()) << " to "
           << formatShape(result.getShape()) << "; a cast keeps the shape";
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput()), result = tensorType(getResult());
  if (input.getElementType() != result.getElementType())
    return emitOpError("element type changes from ")
           << input.getElementType() << " to " << result.getElementType();
  FailureOr<Shape> shape = broadcastShapes(input.getShape(), result.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != result.getShape())
    return emitOpError("input ")
           << formatShape(input.getShape()) << " does not broadcast to "
           << formatShape(result.getShape());
  return success();
}

OpFoldResult FillOp::fold(FoldAdaptor) {
  // Folding to a splat lets the canonicalizer and CSE treat fills as the
  // constants they are; TrainDialect::materializeConstant turns the splat
  // back into a train.fill.
  auto type = cast<RankedTensorType>(getType());
  double value = getValueAttr().getValueAsDouble();
  return DenseElementsAttr::get(
      type, FloatAttr::get(type.getElementType(), value).getValue());
}

//===----------------------------------------------------------------------===//
// Derivative helpers
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType grad = tensorType(getGrad()), result = tensorType(getResult());
  if (result.getRank() != 2)
    return emitOpError("result must have the table's rank 2 [vocab, dim], got ")
           << result;
  Shape expected(tensorType(getIds()).getShape());
  expected.push_back(result.getDimSize(1));
  if (grad.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("grad shape ")
           << formatShape(grad.getShape()) << " must be the ids shape plus the "
           << "table's row size (" << formatShape(expected) << ")";
  if (grad.getElementType() != result.getElementType())
    return emitOpError("grad element type ")
           << grad.getElementType() << " differs from the result's "
           << result.getElementType();
  return verifyPaddingIdx(*this, getPaddingIdx(), result.getDimSize(0));
}

LogicalResult SoftmaxGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (tensorType(getGrad()).getRank() < 1)
    return emitOpError("grad must have rank >= 1");
  return success();
}

LogicalResult LayerNormGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType input = tensorType(adaptor.getInput());
  if (input.getRank() < 1)
    return report(errors, "input must have rank >= 1");
  if (tensorType(adaptor.getGrad()) != input)
    return report(errors, "grad type ", adaptor.getGrad().getType(),
                  " differs from input type ", input);
  auto features = RankedTensorType::get({input.getShape().back()},
                                        input.getElementType());
  if (adaptor.getWeight().getType() != features)
    return report(errors, "weight must have type ", features, ", got ",
                  adaptor.getWeight().getType());
  types.append({input, features, features});
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType q = tensorType(adaptor.getQuery()),
                   k = tensorType(adaptor.getKey());
  if (failed(attentionShape(q.getShape(), k.getShape(),
                            tensorType(adaptor.getValue()).getShape(),
                            adaptor.getCausal(), errors.emitter())))
    return failure();
  if (adaptor.getGrad().getType() != q)
    return report(errors, "grad type ", adaptor.getGrad().getType(),
                  " differs from query type ", q);
  if (adaptor.getKey().getType() != adaptor.getValue().getType() ||
      k.getElementType() != q.getElementType())
    return report(errors,
                  "key and value must have one type with the query's "
                  "element type, got ",
                  adaptor.getKey().getType(), " and ",
                  adaptor.getValue().getType());
  // dq as the query, dk and dv as the key and value (fewer heads under
  // grouped-query attention).
  types.append({q, k, k});
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyStaticShapes(*this)) || failed(verifyInferredTypes(*this)))
    return failure();
  if (failed(verifyFinite(*this, "scale", getScaleAttr().getValueAsDouble())))
    return failure();
  if (getScaleAttr().getValueAsDouble() <= 0.0)
    return emitOpError("scale must be positive, got ")
           << getScaleAttr().getValueAsDouble();
  return verifyAttentionDropout(*this);
}

LogicalResult CrossEntropyGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType logits = tensorType(adaptor.getLogits());
  if (logits.getRank() < 1)
    return report(errors, "logits must have rank >= 1");
  if (tensorType(adaptor.getTargets()).getShape() !=
      logits.getShape().drop_back())
    return report(errors, "targets shape ",
                  formatShape(tensorType(adaptor.getTargets()).getShape()),
                  " must equal the logits shape without its last dimension (",
                  formatShape(logits.getShape().drop_back()), ")");
  types.push_back(logits);
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifyStaticShapes(*this)) ||
      failed(verifyLabelSmoothing(*this, getLabelSmoothingAttr())))
    return failure();
  if (getCount() && !getIgnoreIndexAttr())
    return emitOpError("count divides the sum over the positions that are "
                       "not ignored, so it needs ignore_index");
  return verifyInferredTypes(*this);
}

//===----------------------------------------------------------------------===//
// Optimizer math
//===----------------------------------------------------------------------===//

/// `decay_ranges` of an optimizer update: [begin, end) pairs of logical
/// buffer indices, sorted, non-empty and not overlapping, on a 1-D shard
/// (or with `replicated` the whole buffer).
static LogicalResult verifyDecayRanges(Operation *op,
                                       std::optional<ArrayRef<int64_t>> ranges,
                                       bool replicated) {
  if (replicated && !ranges)
    return op->emitOpError("replicated says where decay_ranges' indices "
                           "start (at 0 on every rank), so it needs "
                           "decay_ranges");
  if (!ranges)
    return success();
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  if (type.getRank() != 1)
    return op->emitOpError("with decay_ranges updates a shard of a flat "
                           "buffer, so its operands must be 1-D, got ")
           << type;
  if (ranges->size() % 2 != 0)
    return op->emitOpError("decay_ranges must hold [begin, end) pairs, got ")
           << ranges->size() << " value(s)";
  int64_t previousEnd = 0;
  for (size_t k = 0; k < ranges->size(); k += 2) {
    int64_t begin = (*ranges)[k], end = (*ranges)[k + 1];
    if (begin < previousEnd || end <= begin)
      return op->emitOpError("decay range #")
             << k / 2 << " is [" << begin << ", " << end
             << "): the ranges must be non-empty, sorted, non-negative and "
                "not overlap";
    previousEnd = end;
  }
  return success();
}

LogicalResult AdamWUpdateOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  for (auto [name, attr] :
       {std::pair<StringRef, FloatAttr>{"beta1", getBeta1Attr()},
        {"beta2", getBeta2Attr()},
        {"eps", getEpsAttr()},
        {"weight_decay", getWeightDecayAttr()}})
    if (failed(verifyFinite(*this, name, attr.getValueAsDouble())))
      return failure();
  for (auto [name, value] : {std::pair<StringRef, double>{
                                 "beta1", getBeta1Attr().getValueAsDouble()},
                             {"beta2", getBeta2Attr().getValueAsDouble()}})
    if (value < 0.0 || value >= 1.0)
      return emitOpError() << name << " must be in [0, 1), got " << value;
  if (getEpsAttr().getValueAsDouble() <= 0.0)
    return emitOpError("eps must be positive, got ")
           << getEpsAttr().getValueAsDouble();
  if (getWeightDecayAttr().getValueAsDouble() < 0.0)
    return emitOpError("weight_decay must be non-negative, got ")
           << getWeightDecayAttr().getValueAsDouble();
  return verifyDecayRanges(*this, getDecayRanges(), getReplicated());
}

LogicalResult LRScheduleOp::verify() {
  double lr = getLrAttr().getValueAsDouble();
  if (failed(verifyFinite(*this, "lr", lr)))
    return failure();
  if (lr <= 0.0)
    return emitOpError("lr must be positive, got ") << lr;
  return verifySchedule(*this, lr, getSchedule(), getWarmupAttr(),
                        getMinLrAttr(), getMaxStepsAttr());
}

LogicalResult ClipCoefOp::verify() {
  double maxNorm = getMaxNormAttr().getValueAsDouble();
  if (failed(verifyFinite(*this, "max_norm", maxNorm)))
    return failure();
  if (maxNorm <= 0.0)
    return emitOpError("max_norm must be positive, got ") << maxNorm;
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  double momentum = getMomentumAttr().getValueAsDouble();
  if (failed(verifyFinite(*this, "momentum", momentum)))
    return failure();
  if (momentum < 0.0 || momentum >= 1.0)
    return emitOpError("momentum must be in [0, 1), got ") << momentum;
  double weightDecay = getWeightDecayAttr().getValueAsDouble();
  if (failed(verifyFinite(*this, "weight_decay", weightDecay)))
    return failure();
  if (weightDecay < 0.0)
    return emitOpError("weight_decay must be non-negative, got ")
           << weightDecay;
  return verifyDecayRanges(*this, getDecayRanges(), getReplicated());
}

//===----------------------------------------------------------------------===//
// Data-parallel ops
//===----------------------------------------------------------------------===//

/// Elements of a buffer that packs `types` end to end, or std::nullopt when
/// that exceeds kMaxElements.
static std::optional<int64_t> packedElements(TypeRange types) {
  int64_t total = 0;
  for (Type type : types) {
    total += cast<RankedTensorType>(type).getNumElements();
    if (total > kMaxElements)
      return std::nullopt;
  }
  return total;
}

/// Common checks of train.pack and train.unpack: one element type, and a
/// buffer of the packed size.
static LogicalResult verifyPacking(Operation *op, TypeRange tensors,
                                   RankedTensorType buffer) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  if (tensors.empty())
    return op->emitOpError("packs no tensor");
  for (auto [index, type] : llvm::enumerate(tensors))
    if (cast<RankedTensorType>(type).getElementType() !=
        buffer.getElementType())
      return op->emitOpError("tensor #")
             << index << " has type " << type
             << " but the buffer's element type is " << buffer.getElementType();
  std::optional<int64_t> packed = packedElements(tensors);
  if (!packed)
    return op->emitOpError("the packed buffer would have more than 2^48 "
                           "elements");
  if (buffer.getNumElements() != *packed)
    return op->emitOpError("the buffer must have ")
           << *packed << " elements (the tensors end to end), got " << buffer;
  return success();
}

LogicalResult PackOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return report(errors, "packs no tensor");
  Type element = tensorType(inputs.front()).getElementType();
  for (auto [index, input] : llvm::enumerate(inputs))
    if (tensorType(input).getElementType() != element)
      return report(errors, "tensor #", index, " has type ", input.getType(),
                    " but tensor #0's element type is ", element);
  std::optional<int64_t> packed = packedElements(inputs.getTypes());
  if (!packed)
    return report(errors,
                  "the packed buffer would have more than 2^48 elements");
  types.push_back(RankedTensorType::get({*packed}, element));
  return success();
}

LogicalResult PackOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

Value UnpackOp::getViewSource() { return getInput(); }

LogicalResult UnpackOp::verify() {
  return verifyPacking(*this, getResults().getTypes(), getInput().getType());
}

/// The number of ranks of the 1-D shard.grid `grid`, or failure after saying
/// why it is not one.
static FailureOr<int64_t> gridSize(Operation *op, FlatSymbolRefAttr grid,
                                   SymbolTableCollection &symbolTable) {
  auto gridOp =
      symbolTable.lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return op->emitOpError("no shard.grid named ") << grid;
  if (gridOp.getShape().size() != 1 || ShapedType::isDynamic(gridOp.getShape()[0]))
    return op->emitOpError("collectives run on a 1-D grid of static size, but ")
           << grid << " has shape [" << formatShape(gridOp.getShape()) << "]";
  int64_t size = gridOp.getShape()[0];
  if (size < 1 || size > (int64_t(1) << 24))
    return op->emitOpError("the grid ")
           << grid << " must have between 1 and 2^24 ranks, got " << size;
  return size;
}

/// Checks a collective's result size against its input size and the grid.
static LogicalResult verifyCollective(Operation *op, FlatSymbolRefAttr grid,
                                      SymbolTableCollection &symbolTable,
                                      int64_t (*resultSize)(int64_t, int64_t)) {
  FailureOr<int64_t> ranks = gridSize(op, grid, symbolTable);
  if (failed(ranks))
    return failure();
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  RankedTensorType result =
      cast<FutureType>(op->getResult(0).getType()).getValueType();
  int64_t expected = resultSize(input.getNumElements(), *ranks);
  if (expected < 0)
    return op->emitOpError("input of ")
           << input.getNumElements() << " elements does not divide among "
           << *ranks << " ranks";
  if (result.getNumElements() != expected)
    return op->emitOpError("result must have ")
           << expected << " elements on a grid of " << *ranks
           << " ranks, got " << result;
  return success();
}

LogicalResult
AllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyCollective(*this, getGridAttr(), symbolTable,
                          [](int64_t n, int64_t) { return n; });
}

LogicalResult
ReduceScatterStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyCollective(
      *this, getGridAttr(), symbolTable,
      [](int64_t n, int64_t ranks) { return n % ranks ? -1 : n / ranks; });
}

LogicalResult
AllGatherStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // n <= 2^48 and ranks <= 2^24: the product fits; the result's own shape
  // check (ShapeChecked) refuses it when it exceeds 2^48.
  return verifyCollective(*this, getGridAttr(), symbolTable,
                          [](int64_t n, int64_t ranks) { return n * ranks; });
}

/// A started collective's result is only read through train.wait.
static LogicalResult verifyStartUses(Operation *op) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  RankedTensorType result =
      cast<FutureType>(op->getResult(0).getType()).getValueType();
  if (input.getElementType() != result.getElementType())
    return op->emitOpError("element type changes from ")
           << input.getElementType() << " to " << result.getElementType();
  for (Operation *user : op->getResult(0).getUsers())
    if (!isa<WaitOp>(user))
      return op->emitOpError("result may only be used by train.wait, but '")
             << user->getName() << "' uses it";
  return success();
}

LogicalResult AllReduceStartOp::verify() { return verifyStartUses(*this); }
LogicalResult ReduceScatterStartOp::verify() { return verifyStartUses(*this); }
LogicalResult AllGatherStartOp::verify() { return verifyStartUses(*this); }

Value WaitOp::getViewSource() { return getFuture(); }

LogicalResult WaitOp::verify() {
  if (!isa_and_nonnull<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp>(
          getFuture().getDefiningOp()))
    return emitOpError("waits for a value that no train.*_start op produced");
  return success();
}

