//===- TrainDialect.cpp - the train dialect -------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace zeroc::train;

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zeroc/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}

Operation *TrainDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  auto splat = dyn_cast<SplatElementsAttr>(value);
  if (!splat || !isa<RankedTensorType>(type) ||
      !isa<FloatType>(splat.getElementType()))
    return nullptr;
  double fill = splat.getSplatValue<APFloat>().convertToDouble();
  return FillOp::create(builder, loc, type, builder.getF64FloatAttr(fill));
}
