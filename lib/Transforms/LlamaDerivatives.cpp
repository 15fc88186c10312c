//===- LlamaDerivatives.cpp - derivative rules of the Llama ops -----------===//

#include "LlamaDerivatives.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::autodiff {

LogicalResult rmsnormDerivative(TrainBuilder &tb, RmsNormOp op, Value dy,
                                const Cotangents &out) {
  auto grad =
      RmsNormGradOp::create(tb.builder(), tb.getLoc(), dy, op.getInput(),
                            op.getWeight(), op.getEpsAttr());
  out.accumulate(op.getInput(), grad.getInputGrad());
  out.accumulate(op.getWeight(), grad.getWeightGrad());
  return success();
}

LogicalResult siluDerivative(TrainBuilder &tb, SiluOp op, Value dy,
                             const Cotangents &out) {
  out.accumulate(op.getInput(),
                 SiluGradOp::create(tb.builder(), tb.getLoc(), op.getType(), dy,
                                    op.getInput()));
  return success();
}

LogicalResult ropeDerivative(TrainBuilder &tb, RopeOp op, Value dy,
                             const Cotangents &out) {
  out.accumulate(op.getInput(),
                 RopeOp::create(tb.builder(), tb.getLoc(), op.getType(), dy,
                                op.getThetaAttr(), op.getSeqDimAttr(),
                                op.getStyleAttr(),
                                op.getInverse() ? UnitAttr()
                                                : tb.builder().getUnitAttr()));
  return success();
}

LogicalResult sliceDerivative(TrainBuilder &tb, SliceOp op, Value dy,
                              const Cotangents &out) {
  out.accumulate(op.getInput(),
                 SliceGradOp::create(tb.builder(), tb.getLoc(),
                                     op.getInput().getType(), dy,
                                     op.getOffsetsAttr(), op.getStridesAttr()));
  return success();
}

LogicalResult dropoutDerivative(TrainBuilder &tb, DropoutOp op, Value dy,
                                const Cotangents &out) {
  out.accumulate(op.getInput(),
                 DropoutOp::create(tb.builder(), tb.getLoc(), op.getType(), dy,
                                   op.getStep(), op.getPAttr(),
                                   op.getSeedAttr(), op.getBatchDimAttr(),
                                   op.getRanksAttr()));
  return success();
}

} // namespace zeroc::autodiff
