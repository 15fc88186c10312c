//===- TrainLlamaAdjoints.cpp - derivatives of the Llama ops ---------------===//
//
// AdjointOpInterface (TrainInterfaces.td) for the ops of TrainLlamaOps.td,
// one function per op, as TrainAdjoints.cpp does for the others.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;

namespace zeroc::train {

/// d rmsnorm: train.rmsnorm_grad gives dx and dweight.
LogicalResult RmsNormOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  auto grad = RmsNormGradOp::create(tb.builder(), tb.getLoc(),
                                    adjoint.cotangent(0), getInput(),
                                    getWeight(), getEpsAttr());
  adjoint.accumulate(getInput(), grad.getInputGrad());
  adjoint.accumulate(getWeight(), grad.getWeightGrad());
  return success();
}

/// d silu: train.silu_grad.
LogicalResult SiluOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(), SiluGradOp::create(tb.builder(), tb.getLoc(),
                                                    getType(),
                                                    adjoint.cotangent(0),
                                                    getInput()));
  return success();
}

/// d rope: the inverse rotation of the cotangent (a rotation's transpose).
LogicalResult RopeOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(
      getInput(),
      RopeOp::create(tb.builder(), tb.getLoc(), getType(), adjoint.cotangent(0),
                     getThetaAttr(), getSeqDimAttr(), getStyleAttr(),
                     getInverse() ? UnitAttr() : tb.builder().getUnitAttr(),
                     getScalingAttr()));
  return success();
}

/// d slice: the cotangent scattered into zeros of the input's shape.
LogicalResult SliceOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     SliceGradOp::create(tb.builder(), tb.getLoc(),
                                         getInput().getType(),
                                         adjoint.cotangent(0), getOffsetsAttr(),
                                         getStridesAttr()));
  return success();
}

/// d dropout: the same dropout of the cotangent (same seed, step and
/// positions, hence the same mask, recomputed).
LogicalResult DropoutOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     DropoutOp::create(tb.builder(), tb.getLoc(), getType(),
                                       adjoint.cotangent(0), getStep(),
                                       getPAttr(), getSeedAttr(),
                                       getBatchDimAttr(), getRanksAttr(),
                                       getMicroBatchAttr(),
                                       getMicroBatchesAttr()));
  return success();
}

} // namespace zeroc::train
