//===- MixedPrecision.cpp - bf16 parameters and activations ---------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINMIXEDPRECISION
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// `type` with f32 elements replaced by bf16.
Type toBF16(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF32())
    return type;
  return RankedTensorType::get(tensor.getShape(),
                               BFloat16Type::get(type.getContext()));
}

/// An f32 tensor constant (arith.constant or train.constant) becomes the
/// same values rounded to bf16.
template <typename ConstantOpT>
void convertConstant(ConstantOpT constant) {
  DenseFPElementsAttr dense =
      dyn_cast<DenseFPElementsAttr>(Attribute(constant.getValue()));
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!dense || !type || !type.getElementType().isF32())
    return;
  auto bf16 = cast<RankedTensorType>(toBF16(type));
  SmallVector<APFloat> values;
  for (APFloat value : dense.getValues<APFloat>()) {
    bool lost = false;
    value.convert(APFloat::BFloat(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(value);
  }
  constant.setValueAttr(DenseElementsAttr::get(bf16, values));
  constant.getResult().setType(bf16);
}

struct TrainMixedPrecisionPass
    : zeroc::impl::TrainMixedPrecisionBase<TrainMixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(zeroc::refuseLaterStages(
            module, getArgument(),
            zeroc::kDifferentiated | zeroc::kStepped |
                zeroc::kOptimizerState | zeroc::kPartitioned)))
      return signalPassFailure();
    if (precision != "bf16" && precision != "fp32") {
      module.emitError("precision must be bf16 or fp32, got '")
          << precision << "'";
      return signalPassFailure();
    }
    if (precision == "fp32") {
      for (auto param : module.getOps<ParamOp>())
        if (!param.getTensorType().getElementType().isF32()) {
          param.emitError("the model is not fp32 (@")
              << param.getSymName() << " is " << param.getType()
              << "); zeroc does not widen a model to fp32";
          return signalPassFailure();
        }
      return;
    }
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward))
      return signalPassFailure();
    for (auto param : module.getOps<ParamOp>())
      param.setType(cast<RankedTensorType>(toBF16(param.getType())));
    Block &body = forward->getBody().front();
    for (BlockArgument arg : body.getArguments())
      arg.setType(toBF16(arg.getType()));
    for (Operation &op : body.without_terminator()) {
      // Sources take bf16 directly; everything else follows its operands,
      // so the f32 loss of train.cross_entropy and its users stay f32.
      if (isa<ReadOp, FillOp>(op)) {
        op.getResult(0).setType(toBF16(op.getResult(0).getType()));
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        convertConstant(constant);
        continue;
      }
      if (auto constant = dyn_cast<zeroc::train::ConstantOp>(op)) {
        convertConstant(constant);
        continue;
      }
      if (failed(zeroc::reinferResultTypes(&op)))
        return signalPassFailure();
    }
    zeroc::updateFunctionType(*forward);
  }
};

} // namespace
