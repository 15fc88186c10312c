//===- Autodiff.cpp - reverse-mode differentiation of the forward function ===//
//
// Clones the forward function into @loss_and_grads and appends its adjoint:
// ops are visited in reverse, each turning the cotangents of its results into
// cotangents of its operands. Only "active" values (those that depend on a
// parameter) carry cotangents.
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINAUTODIFF
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {


/// The adjoint of one function: the cotangent accumulated for each active
/// value and each parameter. Each op's own rule (AdjointOpInterface, in
/// lib/Dialect/Train/IR/TrainAdjoints.cpp) turns the cotangents of its
/// results into those of its operands through this builder.
class Adjoint final : public AdjointBuilder {
public:
  Adjoint(OpBuilder &builder, Location loc) : tb(builder, loc) {}

  /// Marks the parameter reads and everything computed from them as active.
  void markActive(Block &body) {
    for (Operation &op : body) {
      bool isActive = false;
      if (auto read = dyn_cast<ReadOp>(op))
        isActive = parameters.contains(read.getName());
      else
        isActive = llvm::any_of(op.getOperands(),
                                [&](Value v) { return active.contains(v); });
      if (isActive)
        for (Value result : op.getResults())
          active.insert(result);
    }
  }

  void seed(Value loss) {
    if (active.contains(loss))
      cotangents[loss] = constant(typeOf(loss), 1.0);
  }

  /// Propagates the cotangents of `op`'s results to its operands.
  LogicalResult backprop(Operation *op) {
    current = op;
    bool any = llvm::any_of(op->getResults(),
                            [&](Value r) { return cotangents.count(r); });
    if (!any)
      return success();
    tb.setLoc(op->getLoc());
    auto rule = dyn_cast<AdjointOpInterface>(op);
    if (!rule)
      return op->emitOpError(
          "has no derivative: train-autodiff cannot differentiate through "
          "it, and a parameter's gradient depends on its result");
    return rule.buildAdjoint(*this);
  }

  /// Gradient accumulated for parameter `name`, or null.
  Value parameterGradient(StringRef name) const {
    return parameterGrads.lookup(name);
  }

  void setParameters(ModuleOp module) {
    for (auto param : module.getOps<ParamOp>())
      parameters.insert(param.getSymName());
  }

  Value zeros(RankedTensorType type) {
    Value &zero = zeroFills[type];
    if (!zero)
      zero = constant(type, 0.0);
    return zero;
  }

  // AdjointBuilder.
  TrainBuilder &builder() override { return tb; }
  Value cotangent(unsigned index) override {
    Value result = current->getResult(index);
    Value dy = cotangents.lookup(result);
    return dy ? dy : zeros(typeOf(result));
  }
  bool isActive(Value value) const override { return active.contains(value); }
  void accumulate(Value value, Value cotangent) override {
    if (!isActive(value))
      return;
    Value &slot = cotangents[value];
    slot = slot ? tb.add(slot, cotangent) : cotangent;
  }
  void accumulateParameter(StringRef name, Value cotangent) override {
    Value &slot = parameterGrads[name];
    slot = slot ? tb.add(slot, cotangent) : cotangent;
  }

private:
  /// A fill at the top of the function, where the canonicalizer would hoist
  /// it anyway.
  Value constant(RankedTensorType type, double value) {
    OpBuilder::InsertionGuard guard(tb.builder());
    tb.builder().setInsertionPointToStart(tb.builder().getInsertionBlock());
    return tb.fill(type, value);
  }

  TrainBuilder tb;
  Operation *current = nullptr;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> cotangents;
  llvm::StringMap<Value> parameterGrads;
  llvm::StringSet<> parameters;
  llvm::DenseMap<Type, Value> zeroFills;
};

struct TrainAutodiffPass
    : zeroc::impl::TrainAutodiffBase<TrainAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(zeroc::refuseLaterStages(module, getArgument(),
                                        zeroc::kStepped |
                                            zeroc::kOptimizerState |
                                            zeroc::kPartitioned)))
      return signalPassFailure();
    FailureOr<func::FuncOp> forward = zeroc::findForwardFunction(module);
    if (failed(forward))
      return signalPassFailure();
    if (failed(differentiate(module, *forward)))
      return signalPassFailure();
  }

  LogicalResult differentiate(ModuleOp module, func::FuncOp forward) {
    FunctionType type = forward.getFunctionType();
    auto lossType = RankedTensorType::get({}, Float32Type::get(&getContext()));
    if (type.getNumResults() != 1 || type.getResult(0) != lossType)
      return forward.emitError("the forward function must return one scalar "
                               "loss of type tensor<f32>, but returns ")
             << type.getResults();
    if (SymbolTable::lookupSymbolIn(module, zeroc::kLossAndGradsFunction))
      return forward.emitError("the module already has a symbol @")
             << zeroc::kLossAndGradsFunction << "; was train-autodiff run twice?";
    for (auto write : forward.getOps<WriteOp>())
      return write.emitOpError("writes state inside the forward function, "
                               "which train-autodiff cannot differentiate");

    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    if (params.empty())
      return module.emitError("the model declares no train.param to "
                              "differentiate");

    // @loss_and_grads starts as a copy of the forward function.
    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(forward);
    auto grads = cast<func::FuncOp>(builder.clone(*forward));
    grads.setSymName(zeroc::kLossAndGradsFunction);
    trainDialect(grads).getForwardAttrHelper().removeAttr(grads);
    Block &body = grads.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);

    builder.setInsertionPoint(ret);
    Adjoint adjoint(builder, forward.getLoc());
    adjoint.setParameters(module);
    adjoint.markActive(body);
    Value loss = ret.getOperand(0);
    adjoint.seed(loss);
    for (Operation *op : llvm::reverse(forwardOps))
      if (failed(adjoint.backprop(op)))
        return failure();

    SmallVector<Value> results{loss};
    SmallVector<Attribute> names;
    for (ParamOp param : params) {
      Value grad = adjoint.parameterGradient(param.getSymName());
      results.push_back(grad ? grad : adjoint.zeros(param.getTensorType()));
      names.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
    }
    builder.setInsertionPoint(ret);
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    grads.setFunctionType(builder.getFunctionType(
        type.getInputs(), ValueRange(results).getTypes()));
    trainDialect(grads).getGradientsAttrHelper().setAttr(grads, builder.getArrayAttr(names));
    return success();
  }
};

} // namespace
