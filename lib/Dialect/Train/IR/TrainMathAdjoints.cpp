//===- TrainMathAdjoints.cpp - derivatives of the ops of TrainMathOps.td --===//
//
// AdjointOpInterface (TrainInterfaces.td), one function per op, as
// TrainAdjoints.cpp does for GPT-2's ops. Every derivative is written with
// existing ops (most with the op's own result), so that it fuses as the
// forward does and needs no kernel of its own.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;

namespace zeroc::train {

/// d exp(x) = exp(x) dx: the cotangent times the result.
LogicalResult ExpOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(), tb.mul(adjoint.cotangent(0), getResult()));
  return success();
}

/// d log(x) = dx / x.
LogicalResult LogOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(), tb.div(adjoint.cotangent(0), getInput()));
  return success();
}

/// d tanh(x) = (1 - y^2) dx = dy - dy y y.
LogicalResult TanhOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0), y = getResult();
  adjoint.accumulate(getInput(), tb.sub(dy, tb.mul(tb.mul(dy, y), y)));
  return success();
}

/// d (-x) = -dx.
LogicalResult NegOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(), NegOp::create(tb.builder(), tb.getLoc(),
                                               adjoint.cotangent(0)));
  return success();
}

/// d x^(-1/2) = -1/2 x^(-3/2) dx = -1/2 y^3 dx.
LogicalResult RsqrtOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value y = getResult();
  Value cube = tb.mul(tb.mul(adjoint.cotangent(0), y), tb.mul(y, y));
  adjoint.accumulate(getInput(), tb.scale(cube, -0.5));
  return success();
}

/// d erf(x) = 2/sqrt(pi) exp(-x^2) dx.
LogicalResult ErfOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value x = getInput();
  Value square = tb.mul(x, x);
  Value gauss = ExpOp::create(tb.builder(), tb.getLoc(),
                              NegOp::create(tb.builder(), tb.getLoc(), square));
  adjoint.accumulate(x, tb.scale(tb.mul(adjoint.cotangent(0), gauss),
                                 1.1283791670955126)); // 2 / sqrt(pi)
  return success();
}

/// d x^p = p x^(p-1) dx. p = 0 is a constant (zero gradient, as PyTorch,
/// even at x = 0, where x^(-1) would be infinite); p = 1 the identity.
LogicalResult PowOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  double p = getExponentAttr().getValueAsDouble();
  Value dy = adjoint.cotangent(0);
  if (p == 0.0) {
    adjoint.accumulate(getInput(), tb.fill(typeOf(dy), 0.0));
    return success();
  }
  if (p == 1.0) {
    adjoint.accumulate(getInput(), dy);
    return success();
  }
  Value power = p == 2.0 ? getInput()
                         : PowOp::create(tb.builder(), tb.getLoc(), getInput(),
                                         tb.builder().getF64FloatAttr(p - 1.0))
                               .getResult();
  adjoint.accumulate(getInput(), tb.scale(tb.mul(dy, power), p));
  return success();
}

/// A comparison is piecewise constant: its operands get no gradient.
LogicalResult CompareOp::buildAdjoint(AdjointBuilder &) { return success(); }

/// d select(m, a, b): the cotangent goes to a where m != 0 and to b
/// elsewhere (zeros in the other's place); the mask gets none.
LogicalResult SelectOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  Value dy = adjoint.cotangent(0);
  bool toTrue = adjoint.isActive(getOnTrue());
  bool toFalse = adjoint.isActive(getOnFalse());
  if (!toTrue && !toFalse)
    return success();
  Value zeros = tb.fill(typeOf(dy), 0.0);
  if (toTrue)
    adjoint.accumulate(getOnTrue(), SelectOp::create(tb.builder(), tb.getLoc(),
                                                     getMask(), dy, zeros));
  if (toFalse)
    adjoint.accumulate(getOnFalse(),
                       SelectOp::create(tb.builder(), tb.getLoc(), getMask(),
                                        zeros, dy));
  return success();
}

/// d tril: the same triangle of the cotangent (the others are constants).
LogicalResult TrilOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     TrilOp::create(tb.builder(), tb.getLoc(),
                                    adjoint.cotangent(0), getDiagonalAttr()));
  return success();
}

/// d triu: the same triangle of the cotangent.
LogicalResult TriuOp::buildAdjoint(AdjointBuilder &adjoint) {
  TrainBuilder &tb = adjoint.builder();
  adjoint.accumulate(getInput(),
                     TriuOp::create(tb.builder(), tb.getLoc(),
                                    adjoint.cotangent(0), getDiagonalAttr()));
  return success();
}

} // namespace zeroc::train
