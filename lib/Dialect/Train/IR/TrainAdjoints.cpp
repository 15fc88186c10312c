//===- TrainAdjoints.cpp - each op's derivative (AdjointOpInterface) ------===//
//
// One buildAdjoint per differentiable op: from the cotangents of its results
// (AdjointBuilder::cotangent) it builds those of its operands and hands them
// to AdjointBuilder::accumulate, which ignores operands that do not depend
// on a parameter and sums the contributions of every use. train-autodiff
// calls these in reverse program order.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;

namespace {

ArrayRef<int64_t> shapeOf(Value value) { return typeOf(value).getShape(); }

/// Shape of `shape` with the reduced `dims` kept as size 1.
SmallVector<int64_t> keepDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept(shape);
  for (int64_t dim : dims)
    kept[dim] = 1;
  return kept;
}

/// The adjoint of a reduction that scales what it sums by `factor`:
/// broadcast the cotangent back over the reduced dimensions.
void reductionAdjoint(AdjointBuilder &adjoint, Value input,
                      ArrayRef<int64_t> dims, std::optional<double> factor) {
  TrainBuilder &tb = adjoint.builder();
  ArrayRef<int64_t> shape = shapeOf(input);
  Value dy = adjoint.cotangent(0);
  if (factor)
    dy = tb.scale(dy, *factor);
  Value kept = tb.reshape(dy, keepDims(shape, dims));
  adjoint.accumulate(input, tb.broadcast(kept, shape));
}

} // namespace

//===----------------------------------------------------------------------===//
// State, elementwise arithmetic
//===----------------------------------------------------------------------===//

LogicalResult ReadOp::buildAdjoint(AdjointBuilder &adjoint) {
  // Only reads of parameters are active: their cotangent is the gradient.
  adjoint.accumulateParameter(getName(), adjoint.cotangent(0));
  return success();
}

LogicalResult AddOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  adjoint.accumulate(getLhs(), tb.sumToShape(dy, shapeOf(getLhs())));
  adjoint.accumulate(getRhs(), tb.sumToShape(dy, shapeOf(getRhs())));
  return success();
}

LogicalResult SubOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  adjoint.accumulate(getLhs(), tb.sumToShape(dy, shapeOf(getLhs())));
  if (adjoint.isActive(getRhs()))
    adjoint.accumulate(getRhs(),
                       tb.sumToShape(tb.scale(dy, -1.0), shapeOf(getRhs())));
  return success();
}

LogicalResult MulOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  if (adjoint.isActive(getLhs()))
    adjoint.accumulate(getLhs(),
                       tb.sumToShape(tb.mul(dy, getRhs()), shapeOf(getLhs())));
  if (adjoint.isActive(getRhs()))
    adjoint.accumulate(getRhs(),
                       tb.sumToShape(tb.mul(dy, getLhs()), shapeOf(getRhs())));
  return success();
}

LogicalResult DivOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  if (adjoint.isActive(getLhs()))
    adjoint.accumulate(getLhs(),
                       tb.sumToShape(tb.div(dy, getRhs()), shapeOf(getLhs())));
  if (adjoint.isActive(getRhs())) {
    // d(l/r)/dr = -(l/r)/r = -y/r.
    Value t = tb.div(tb.mul(dy, getResult()), getRhs());
    adjoint.accumulate(getRhs(),
                       tb.sumToShape(tb.scale(t, -1.0), shapeOf(getRhs())));
  }
  return success();
}

LogicalResult ScaleOp::buildAdjoint(AdjointBuilder &adjoint) {
  adjoint.accumulate(getInput(),
                     adjoint.builder().scale(
                         adjoint.cotangent(0),
                         getFactorAttr().getValueAsDouble()));
  return success();
}

LogicalResult SqrtOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     tb.div(tb.scale(adjoint.cotangent(0), 0.5), getResult()));
  return success();
}

LogicalResult CastOp::buildAdjoint(AdjointBuilder &adjoint) {
  adjoint.accumulate(
      getInput(), adjoint.builder().cast(adjoint.cotangent(0),
                                         typeOf(getInput()).getElementType()));
  return success();
}

LogicalResult BroadcastOp::buildAdjoint(AdjointBuilder &adjoint) {
  adjoint.accumulate(getInput(), adjoint.builder().sumToShape(
                                     adjoint.cotangent(0), shapeOf(getInput())));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations and normalization: their *_grad ops
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     GeluGradOp::create(tb.builder(), tb.getLoc(),
                                        adjoint.cotangent(0), getInput(),
                                        getApproximationAttr()));
  return success();
}

LogicalResult ReluOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     ReluGradOp::create(tb.builder(), tb.getLoc(),
                                        adjoint.cotangent(0), getInput()));
  return success();
}

LogicalResult SoftmaxOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     SoftmaxGradOp::create(tb.builder(), tb.getLoc(),
                                           adjoint.cotangent(0), getResult()));
  return success();
}

LogicalResult CausalMaskOp::buildAdjoint(AdjointBuilder &adjoint) {
  // Masked entries are constants: their cotangent is dropped.
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     CausalMaskOp::create(tb.builder(), tb.getLoc(),
                                          adjoint.cotangent(0),
                                          /*zero=*/true));
  return success();
}

LogicalResult LayerNormOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  auto grad = LayerNormGradOp::create(tb.builder(), tb.getLoc(),
                                      adjoint.cotangent(0), getInput(),
                                      getWeight(), getEpsAttr());
  adjoint.accumulate(getInput(), grad.getInputGrad());
  adjoint.accumulate(getWeight(), grad.getWeightGrad());
  adjoint.accumulate(getBias(), grad.getBiasGrad());
  return success();
}

LogicalResult AttentionOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  auto grad = AttentionGradOp::create(
      tb.builder(), tb.getLoc(), adjoint.cotangent(0), getQuery(), getKey(),
      getValue(), getStep(), getCausalAttr(), getScaleAttr(), getDropoutAttr(),
      getSeedAttr(), getBatchDimAttr(), getRanksAttr(), getMicroBatchAttr(),
      getMicroBatchesAttr());
  adjoint.accumulate(getQuery(), grad.getQueryGrad());
  adjoint.accumulate(getKey(), grad.getKeyGrad());
  adjoint.accumulate(getValue(), grad.getValueGrad());
  return success();
}

LogicalResult EmbeddingOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getTable(),
                     EmbeddingGradOp::create(tb.builder(), tb.getLoc(),
                                             getTable().getType(),
                                             adjoint.cotangent(0), getIds(),
                                             getPaddingIdxAttr()));
  return success();
}

LogicalResult CrossEntropyOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getLogits(), CrossEntropyGradOp::create(
                                      tb.builder(), tb.getLoc(),
                                      adjoint.cotangent(0), getLogits(),
                                      getTargets(), getCount(),
                                      getIgnoreIndexAttr(),
                                      getLabelSmoothingAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra, shapes, reductions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  Value a = getLhs(), b = getRhs();
  bool ta = getTransposeLhs(), tbFlag = getTransposeRhs();
  if (adjoint.isActive(a)) {
    // d op(a) = dy @ op(b)^T, then undo a's transpose.
    Value x = tb.matmul(dy, b, /*transposeLhs=*/false, /*transposeRhs=*/!tbFlag);
    adjoint.accumulate(a, ta ? tb.transposeLastTwo(x) : x);
  }
  if (!adjoint.isActive(b))
    return success();
  RankedTensorType aType = typeOf(a), bType = typeOf(b);
  bool shared = bType.getRank() == 2 && aType.getRank() > 2;
  if (!shared) {
    adjoint.accumulate(b, tbFlag ? tb.matmul(dy, a, true, ta)
                                 : tb.matmul(a, dy, !ta, false));
    return success();
  }
  // A rank-2 rhs shared by every batch element: fold the batch into rows.
  Value opA = ta ? tb.transposeLastTwo(a) : a;
  int64_t k = typeOf(opA).getShape().back();
  int64_t n = typeOf(dy).getShape().back();
  int64_t rows = aType.getNumElements() / k;
  Value a2 = tb.reshape(opA, {rows, k});
  Value d2 = tb.reshape(dy, {rows, n});
  adjoint.accumulate(b, tbFlag ? tb.matmul(d2, a2, true, false)
                               : tb.matmul(a2, d2, true, false));
  return success();
}

LogicalResult ReshapeOp::buildAdjoint(AdjointBuilder &adjoint) {
  adjoint.accumulate(getInput(), adjoint.builder().reshape(
                                     adjoint.cotangent(0), shapeOf(getInput())));
  return success();
}

LogicalResult TransposeOp::buildAdjoint(AdjointBuilder &adjoint) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  adjoint.accumulate(getInput(),
                     adjoint.builder().transpose(adjoint.cotangent(0), inverse));
  return success();
}

LogicalResult SplitOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  SmallVector<Value> parts;
  for (unsigned i = 0; i < getNumResults(); ++i)
    parts.push_back(adjoint.cotangent(i));
  adjoint.accumulate(getInput(), ConcatOp::create(tb.builder(), tb.getLoc(),
                                                  parts, getDimAttr()));
  return success();
}

LogicalResult ConcatOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  Type first = getInputs().front().getType();
  if (llvm::any_of(getInputs(), [&](Value v) { return v.getType() != first; })) {
    // Inputs of different sizes: each input's cotangent is its slice of dy.
    ArrayRef<int64_t> shape = cast<RankedTensorType>(dy.getType()).getShape();
    int64_t dim = getDim(), offset = 0;
    for (Value input : getInputs()) {
      SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
      offsets[dim] = offset;
      ArrayRef<int64_t> sizes =
          cast<RankedTensorType>(input.getType()).getShape();
      offset += sizes[dim];
      if (adjoint.isActive(input))
        adjoint.accumulate(input, SliceOp::create(tb.builder(), tb.getLoc(), dy,
                                                  offsets, sizes, strides));
    }
    return success();
  }
  SmallVector<Type> types(getInputs().size(), first);
  auto split =
      SplitOp::create(tb.builder(), tb.getLoc(), types, dy, getDimAttr());
  for (auto [input, grad] : llvm::zip(getInputs(), split.getResults()))
    adjoint.accumulate(input, grad);
  return success();
}

LogicalResult SumOp::buildAdjoint(AdjointBuilder &adjoint) {
  reductionAdjoint(adjoint, getInput(), getDims(), std::nullopt);
  return success();
}

LogicalResult MeanOp::buildAdjoint(AdjointBuilder &adjoint) {
  int64_t count = 1;
  for (int64_t dim : getDims())
    count *= shapeOf(getInput())[dim];
  reductionAdjoint(adjoint, getInput(), getDims(),
                   1.0 / static_cast<double>(count));
  return success();
}
