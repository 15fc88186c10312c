//===- TrainGenericOps.cpp - the reductions and gathers of ATen -----------===//
//
// Type rules, verifiers and derivatives of the ops of TrainGenericOps.td
// (train.amax, train.var, train.log_softmax, train.gather and their
// derivative helpers). Every diagnostic names the operand at fault.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"
#include "TypeRules.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::train::rules;

namespace {

/// The shape rule of torch.gather shared by train.gather and
/// train.gather_grad: `index` has the rank of `data` (the gathered tensor)
/// and, along every dimension but `dim`, at most its size.
LogicalResult checkGatherShapes(const RuleErrors &errors, StringRef dataName,
                                ArrayRef<int64_t> data,
                                ArrayRef<int64_t> index, int64_t dim) {
  int64_t rank = static_cast<int64_t>(data.size());
  if (rank < 1)
    return report(errors, dataName, " must have rank >= 1");
  if (dim < 0 || dim >= rank)
    return report(errors, "dimension ", dim, " is out of range for the ",
                       dataName, "'s rank ", rank);
  if (static_cast<int64_t>(index.size()) != rank)
    return report(errors, "index has rank ", index.size(), " but the ", dataName,
                       " has rank ", rank, " (torch.gather's rule: equal "
                       "ranks)");
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim && index[d] > data[d])
      return report(errors, "index dimension ", d, " of size ", index[d],
                         " exceeds the ", dataName, "'s size ", data[d],
                         " (only dimension ", dim, " may be larger)");
  return success();
}

/// The number of elements a reduction over `dims` combines.
int64_t reducedCount(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= shape[dim];
  return count;
}

} // namespace

//===----------------------------------------------------------------------===//
// train.amax
//===----------------------------------------------------------------------===//

LogicalResult AmaxOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferReduction<AmaxOp>(location, adaptor, types);
}

LogicalResult AmaxOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

//===----------------------------------------------------------------------===//
// train.var
//===----------------------------------------------------------------------===//

LogicalResult VarOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferReduction<VarOp>(location, adaptor, types);
}

LogicalResult VarOp::verify() {
  if (failed(verifyStaticShapes(*this)) || failed(verifyInferredTypes(*this)))
    return failure();
  int64_t correction = getCorrection();
  if (correction < 0)
    return emitOpError("correction must be non-negative, got ") << correction;
  int64_t count = reducedCount(tensorType(getInput()).getShape(), getDims());
  if (count <= correction)
    return emitOpError("correction ")
           << correction << " leaves no degree of freedom: the input's "
           << "reduced dimensions hold " << count
           << " element(s), which must exceed it";
  return success();
}

//===----------------------------------------------------------------------===//
// train.log_softmax
//===----------------------------------------------------------------------===//

LogicalResult LogSoftmaxOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (tensorType(getInput()).getRank() < 1)
    return emitOpError("input must have rank >= 1 (the last dimension is "
                       "normalized)");
  return success();
}

//===----------------------------------------------------------------------===//
// train.gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RuleErrors errors{location, getOperationName()};
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType index = tensorType(adaptor.getIndex());
  if (failed(checkGatherShapes(errors, "input", input.getShape(),
                               index.getShape(), adaptor.getDim())))
    return failure();
  types.push_back(
      RankedTensorType::get(index.getShape(), input.getElementType()));
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

//===----------------------------------------------------------------------===//
// train.amax_grad
//===----------------------------------------------------------------------===//

LogicalResult AmaxGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput());
  FailureOr<Shape> reduced = reduceShape(input.getShape(), getDims(),
                                         [&] { return emitOpError(); });
  if (failed(reduced))
    return failure();
  auto expected = RankedTensorType::get(*reduced, input.getElementType());
  for (auto [name, value] : {std::pair<StringRef, Value>{"grad", getGrad()},
                             {"output", getOutput()}})
    if (value.getType() != expected)
      return emitOpError()
             << name << " type " << value.getType()
             << " must be the input reduced over dims (" << expected << ")";
  if (getResult().getType() != input)
    return emitOpError("result type ")
           << getResult().getType() << " must be the input's type " << input;
  return success();
}

//===----------------------------------------------------------------------===//
// train.gather_grad
//===----------------------------------------------------------------------===//

LogicalResult GatherGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType grad = tensorType(getGrad()),
                   index = tensorType(getIndex()),
                   result = tensorType(getResult());
  RuleErrors errors{getLoc(), getOperationName()};
  if (failed(checkGatherShapes(errors, "result", result.getShape(),
                               index.getShape(), getDim())))
    return failure();
  if (grad.getShape() != index.getShape())
    return emitOpError("grad shape ")
           << formatShape(grad.getShape()) << " must equal the index shape "
           << formatShape(index.getShape());
  if (grad.getElementType() != result.getElementType())
    return emitOpError("grad element type ")
           << grad.getElementType() << " differs from the result's "
           << result.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

namespace {

/// `shape` with the reduced `dims` kept as size 1.
SmallVector<int64_t> keepDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept(shape);
  for (int64_t dim : dims)
    kept[dim] = 1;
  return kept;
}

} // namespace

LogicalResult AmaxOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     AmaxGradOp::create(tb.builder(), tb.getLoc(),
                                        getInput().getType(),
                                        adjoint.cotangent(0), getInput(),
                                        getResult(), getDimsAttr()));
  return success();
}

LogicalResult VarOp::buildAdjoint(AdjointBuilder &adjoint) {
  // d var / dx = 2 (x - mean) / (n - correction), times the cotangent
  // broadcast back over the reduced dimensions.
  TrainBuilder &tb = adjoint.builder();
  Value x = getInput();
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  SmallVector<int64_t> kept = keepDims(shape, getDims());
  int64_t count = reducedCount(shape, getDims());
  Value mean = tb.reshape(
      MeanOp::create(tb.builder(), tb.getLoc(), x, getDimsAttr()), kept);
  Value centered = tb.sub(x, mean);
  Value dy = tb.scale(adjoint.cotangent(0),
                      2.0 / static_cast<double>(count - getCorrection()));
  adjoint.accumulate(x, tb.mul(centered, tb.reshape(dy, kept)));
  return success();
}

LogicalResult LogSoftmaxOp::buildAdjoint(AdjointBuilder &adjoint) {
  // dx = g - softmax(x) * sum(g, last dimension).
  TrainBuilder &tb = adjoint.builder();
  Value g = adjoint.cotangent(0);
  ArrayRef<int64_t> shape = tensorType(g).getShape();
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  SmallVector<int64_t> kept = keepDims(shape, {last});
  Value total = tb.reshape(tb.sum(g, {last}), kept);
  Value softmax = SoftmaxOp::create(tb.builder(), tb.getLoc(), getInput());
  adjoint.accumulate(getInput(), tb.sub(g, tb.mul(softmax, total)));
  return success();
}

LogicalResult GatherOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     GatherGradOp::create(tb.builder(), tb.getLoc(),
                                          getInput().getType(),
                                          adjoint.cotangent(0), getIndex(),
                                          getDimAttr()));
  return success();
}
