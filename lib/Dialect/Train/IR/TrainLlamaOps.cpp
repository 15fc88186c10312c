//===- TrainLlamaOps.cpp - verifiers and builders of the Llama ops --------===//
//
// The ops of TrainLlamaOps.td. Shapes come from the rules of
// TrainLlamaShapes.h, which the builders use too, so that what a pass
// builds verifies by construction.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainLlamaShapes.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}


LogicalResult expectType(Operation *op, StringRef what, Value value,
                         RankedTensorType expected) {
  if (value.getType() != expected)
    return op->emitOpError() << what << " type " << value.getType()
                             << " does not match the expected " << expected;
  return success();
}

/// A shape rule's result where a pass builds the op: failing is a bug in
/// the pass, not bad input.
Shape expectShape(FailureOr<Shape> shape, const char *what) {
  if (failed(shape))
    llvm::report_fatal_error(llvm::Twine("building train.") + what +
                             ": operands that do not verify");
  return *shape;
}

LogicalResult verifyEps(Operation *op, double eps) {
  if (!std::isfinite(eps) || eps <= 0.0)
    return op->emitOpError("eps must be finite and positive, got ") << eps;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// train.rmsnorm
//===----------------------------------------------------------------------===//

void RmsNormOp::build(OpBuilder &builder, OperationState &state, Value input,
                      Value weight, double eps) {
  RankedTensorType type = tensorType(input);
  Shape shape =
      expectShape(rmsnormShape(type.getShape(), tensorType(weight).getShape()),
                  "rmsnorm");
  build(builder, state, RankedTensorType::get(shape, type.getElementType()),
        input, weight, builder.getF64FloatAttr(eps));
}

LogicalResult RmsNormOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput());
  FailureOr<Shape> shape =
      rmsnormShape(input.getShape(), tensorType(getWeight()).getShape(),
                   [&] { return emitOpError(); });
  if (failed(shape) ||
      failed(verifyEps(*this, getEpsAttr().getValueAsDouble())))
    return failure();
  if (tensorType(getWeight()).getElementType() != input.getElementType())
    return emitOpError("weight element type ")
           << tensorType(getWeight()).getElementType()
           << " differs from input element type " << input.getElementType();
  return expectType(*this, "result", getResult(),
                    RankedTensorType::get(*shape, input.getElementType()));
}

void RmsNormGradOp::build(OpBuilder &builder, OperationState &state, Value grad,
                          Value input, Value weight, FloatAttr eps) {
  build(builder, state, input.getType(), weight.getType(), grad, input, weight,
        eps);
}

LogicalResult RmsNormGradOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  RankedTensorType input = tensorType(getInput());
  if (failed(rmsnormShape(input.getShape(), tensorType(getWeight()).getShape(),
                          [&] { return emitOpError(); })) ||
      failed(verifyEps(*this, getEpsAttr().getValueAsDouble())) ||
      failed(expectType(*this, "grad", getGrad(), input)) ||
      failed(expectType(*this, "input_grad", getInputGrad(), input)) ||
      failed(expectType(*this, "weight_grad", getWeightGrad(),
                        tensorType(getWeight()))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// train.rope
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (failed(ropeShape(tensorType(getInput()).getShape(), getSeqDim(),
                       getThetaAttr().getValueAsDouble(),
                       [&] { return emitOpError(); })))
    return failure();
  std::optional<ArrayRef<double>> scaling = getScaling();
  if (!scaling)
    return success();
  if (scaling->size() != 1 && scaling->size() != 4)
    return emitOpError("scaling must be [factor] (linear) or [factor, "
                       "low_freq_factor, high_freq_factor, "
                       "original_max_position_embeddings] (llama3), got ")
           << scaling->size() << " values";
  static const char *const names[] = {"factor", "low_freq_factor",
                                      "high_freq_factor",
                                      "original_max_position_embeddings"};
  for (size_t k = 0; k < scaling->size(); ++k)
    if (!((*scaling)[k] > 0.0) || !std::isfinite((*scaling)[k]))
      return emitOpError("scaling ")
             << names[k] << " must be finite and positive, got "
             << (*scaling)[k];
  if (scaling->size() == 4 && !((*scaling)[1] < (*scaling)[2]))
    return emitOpError("scaling low_freq_factor ")
           << (*scaling)[1] << " must be smaller than high_freq_factor "
           << (*scaling)[2];
  return success();
}

//===----------------------------------------------------------------------===//
// train.slice, train.slice_grad
//===----------------------------------------------------------------------===//

void SliceOp::build(OpBuilder &builder, OperationState &state, Value input,
                    ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                    ArrayRef<int64_t> strides) {
  RankedTensorType in = tensorType(input);
  Shape shape =
      expectShape(sliceShape(in.getShape(), offsets, sizes, strides), "slice");
  build(builder, state, RankedTensorType::get(shape, in.getElementType()),
        input, builder.getDenseI64ArrayAttr(offsets),
        builder.getDenseI64ArrayAttr(strides));
}

/// Checks that `small` (a slice's result, a slice_grad's cotangent) is a
/// slice of `large` and that the element types agree.
static LogicalResult verifySliceOf(Operation *op, RankedTensorType large,
                                   RankedTensorType small,
                                   ArrayRef<int64_t> offsets,
                                   ArrayRef<int64_t> strides) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  if (failed(sliceShape(large.getShape(), offsets, small.getShape(), strides,
                        [&] { return op->emitOpError(); })))
    return failure();
  if (large.getElementType() != small.getElementType())
    return op->emitOpError("element type changes from ")
           << large.getElementType() << " to " << small.getElementType();
  return success();
}

LogicalResult SliceOp::verify() {
  return verifySliceOf(*this, tensorType(getInput()), tensorType(getResult()),
                       getOffsets(), getStrides());
}

LogicalResult SliceGradOp::verify() {
  return verifySliceOf(*this, tensorType(getResult()), tensorType(getGrad()),
                       getOffsets(), getStrides());
}

//===----------------------------------------------------------------------===//
// train.dropout
//===----------------------------------------------------------------------===//

/// Evaluation's dropout (no step) is the identity.
Value DropoutOp::getViewSource() { return getStep() ? Value() : getInput(); }

LogicalResult DropoutOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  std::optional<int64_t> batchDim, ranks;
  if (getBatchDimAttr())
    batchDim = getBatchDimAttr().getInt();
  if (getRanksAttr())
    ranks = getRanksAttr().getInt();
  if (failed(verifyDropoutAttributes(tensorType(getInput()).getShape(),
                                     getPAttr().getValueAsDouble(), batchDim,
                                     ranks, [&] { return emitOpError(); })))
    return failure();
  // A micro-batch of the rank's batch (train-accumulate).
  if (getMicroBatchAttr().operator bool() !=
      getMicroBatchesAttr().operator bool())
    return emitOpError("micro_batch and micro_batches go together (the "
                       "micro-batch train-accumulate records)");
  if (!getMicroBatchAttr())
    return success();
  if (!batchDim)
    return emitOpError("micro_batch needs batch_dim and ranks (the batch "
                       "split it is a micro-batch of)");
  int64_t count = getMicroBatchesAttr().getInt();
  int64_t index = getMicroBatchAttr().getInt();
  if (count < 1)
    return emitOpError("micro_batches must be positive, got ") << count;
  if (index < 0 || index >= count)
    return emitOpError("micro_batch ")
           << index << " is out of range for micro_batches = " << count;
  return success();
}
