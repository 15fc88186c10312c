//===- Autodiff.cpp - reverse-mode differentiation of the forward function ===//
//
// Clones the forward function into @loss_and_grads and appends its adjoint:
// ops are visited in reverse, each turning the cotangents of its results into
// cotangents of its operands. Only "active" values (those that depend on a
// parameter) carry cotangents.
//
//===----------------------------------------------------------------------===//

#include "ForwardRewrite.h"
#include "LlamaDerivatives.h"
#include "Stage.h"

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINAUTODIFF
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {


/// The adjoint of one function: accumulated cotangents and the per-op rules
/// that propagate them.
class Adjoint {
public:
  Adjoint(OpBuilder &builder, Location loc) : tb(builder, loc) {}

  /// Marks the parameter reads and everything computed from them as active.
  void markActive(Block &body) {
    for (Operation &op : body) {
      bool isActive = false;
      if (auto read = dyn_cast<ReadOp>(op))
        isActive = isParameter(read);
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
      cotangents[loss] = constant(TrainBuilder::typeOf(loss), 1.0);
  }

  /// Propagates the cotangents of `op`'s results to its operands.
  LogicalResult backprop(Operation *op);

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

  /// A fill at the top of the function, where the canonicalizer would hoist
  /// it anyway.
  Value constant(RankedTensorType type, double value) {
    OpBuilder::InsertionGuard guard(tb.builder());
    tb.builder().setInsertionPointToStart(tb.builder().getInsertionBlock());
    return tb.fill(type, value);
  }

private:
  bool isParameter(ReadOp read) const {
    return parameters.contains(read.getName());
  }
  bool isActive(Value value) const { return active.contains(value); }

  void accumulate(Value value, Value cotangent) {
    if (!isActive(value))
      return;
    Value &slot = cotangents[value];
    slot = slot ? tb.add(slot, cotangent) : cotangent;
  }

  /// Where the rules of LlamaDerivatives.h send their cotangents.
  zeroc::autodiff::Cotangents sink() {
    return {[this](Value v) { return isActive(v); },
            [this](Value v, Value dv) { accumulate(v, dv); }};
  }

  LogicalResult matmulRule(MatmulOp op, Value dy);
  LogicalResult concatRule(ConcatOp op, Value dy);
  LogicalResult sumRule(SumOp op, Value dy);
  LogicalResult meanRule(MeanOp op, Value dy);

  TrainBuilder tb;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> cotangents;
  llvm::StringMap<Value> parameterGrads;
  llvm::StringSet<> parameters;
  llvm::DenseMap<Type, Value> zeroFills;
};

/// Cotangent of the single result, or its zero when only other paths reach
/// the op (never happens for single-result ops, which are skipped then).
#define DY (dys[0])

LogicalResult Adjoint::backprop(Operation *op) {
  SmallVector<Value> dys;
  bool any = false;
  for (Value result : op->getResults()) {
    Value dy = cotangents.lookup(result);
    any |= static_cast<bool>(dy);
    dys.push_back(dy);
  }
  if (!any)
    return success();
  tb.setLoc(op->getLoc());

  // Multi-result ops see zeros for results nothing used.
  for (auto [dy, result] : llvm::zip(dys, op->getResults()))
    if (!dy)
      dy = zeros(TrainBuilder::typeOf(result));

  auto shapeOf = [](Value v) { return TrainBuilder::typeOf(v).getShape(); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ReadOp read) {
        Value &slot = parameterGrads[read.getName()];
        slot = slot ? tb.add(slot, DY) : DY;
        return success();
      })
      .Case([&](AddOp add) {
        accumulate(add.getLhs(), tb.sumToShape(DY, shapeOf(add.getLhs())));
        accumulate(add.getRhs(), tb.sumToShape(DY, shapeOf(add.getRhs())));
        return success();
      })
      .Case([&](SubOp sub) {
        accumulate(sub.getLhs(), tb.sumToShape(DY, shapeOf(sub.getLhs())));
        if (isActive(sub.getRhs()))
          accumulate(sub.getRhs(),
                     tb.sumToShape(tb.scale(DY, -1.0), shapeOf(sub.getRhs())));
        return success();
      })
      .Case([&](MulOp mul) {
        if (isActive(mul.getLhs()))
          accumulate(mul.getLhs(), tb.sumToShape(tb.mul(DY, mul.getRhs()),
                                                 shapeOf(mul.getLhs())));
        if (isActive(mul.getRhs()))
          accumulate(mul.getRhs(), tb.sumToShape(tb.mul(DY, mul.getLhs()),
                                                 shapeOf(mul.getRhs())));
        return success();
      })
      .Case([&](DivOp div) {
        if (isActive(div.getLhs()))
          accumulate(div.getLhs(), tb.sumToShape(tb.div(DY, div.getRhs()),
                                                 shapeOf(div.getLhs())));
        if (isActive(div.getRhs())) {
          // d(l/r)/dr = -(l/r)/r = -y/r.
          Value t = tb.div(tb.mul(DY, div.getResult()), div.getRhs());
          accumulate(div.getRhs(),
                     tb.sumToShape(tb.scale(t, -1.0), shapeOf(div.getRhs())));
        }
        return success();
      })
      .Case([&](ScaleOp scale) {
        accumulate(scale.getInput(),
                   tb.scale(DY, scale.getFactorAttr().getValueAsDouble()));
        return success();
      })
      .Case([&](SqrtOp sqrt) {
        accumulate(sqrt.getInput(), tb.div(tb.scale(DY, 0.5), sqrt.getResult()));
        return success();
      })
      .Case([&](GeluOp gelu) {
        accumulate(gelu.getInput(),
                   GeluGradOp::create(tb.builder(), tb.getLoc(), gelu.getType(),
                                      DY, gelu.getInput(),
                                      gelu.getApproximationAttr()));
        return success();
      })
      .Case([&](ReluOp relu) {
        accumulate(relu.getInput(),
                   ReluGradOp::create(tb.builder(), tb.getLoc(), relu.getType(),
                                      DY, relu.getInput()));
        return success();
      })
      .Case([&](SoftmaxOp softmax) {
        accumulate(softmax.getInput(),
                   SoftmaxGradOp::create(tb.builder(), tb.getLoc(),
                                         softmax.getType(), DY,
                                         softmax.getResult()));
        return success();
      })
      .Case([&](CausalMaskOp mask) {
        // Masked entries are constants: their cotangent is dropped.
        accumulate(mask.getInput(),
                   CausalMaskOp::create(tb.builder(), tb.getLoc(),
                                        mask.getType(), DY, /*zero=*/true));
        return success();
      })
      .Case([&](LayerNormOp ln) {
        Type weightType = ln.getWeight().getType();
        auto grad = LayerNormGradOp::create(
            tb.builder(), tb.getLoc(), ln.getType(), weightType, weightType, DY,
            ln.getInput(), ln.getWeight(), ln.getEpsAttr());
        accumulate(ln.getInput(), grad.getInputGrad());
        accumulate(ln.getWeight(), grad.getWeightGrad());
        accumulate(ln.getBias(), grad.getBiasGrad());
        return success();
      })
      .Case([&](AttentionOp attn) {
        auto grad = AttentionGradOp::create(
            tb.builder(), tb.getLoc(), attn.getQuery().getType(),
            attn.getKey().getType(), attn.getValue().getType(), DY,
            attn.getQuery(),
            attn.getKey(), attn.getValue(), attn.getCausalAttr(),
            attn.getScaleAttr());
        accumulate(attn.getQuery(), grad.getQueryGrad());
        accumulate(attn.getKey(), grad.getKeyGrad());
        accumulate(attn.getValue(), grad.getValueGrad());
        return success();
      })
      .Case([&](MatmulOp mm) { return matmulRule(mm, DY); })
      .Case([&](ReshapeOp reshape) {
        accumulate(reshape.getInput(),
                   tb.reshape(DY, shapeOf(reshape.getInput())));
        return success();
      })
      .Case([&](TransposeOp transpose) {
        ArrayRef<int64_t> perm = transpose.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        accumulate(transpose.getInput(), tb.transpose(DY, inverse));
        return success();
      })
      .Case([&](SplitOp split) {
        accumulate(split.getInput(),
                   ConcatOp::create(tb.builder(), tb.getLoc(),
                                    split.getInput().getType(), dys,
                                    split.getDimAttr()));
        return success();
      })
      .Case([&](ConcatOp concat) { return concatRule(concat, DY); })
      .Case([&](BroadcastOp broadcast) {
        accumulate(broadcast.getInput(),
                   tb.sumToShape(DY, shapeOf(broadcast.getInput())));
        return success();
      })
      .Case([&](SumOp sum) { return sumRule(sum, DY); })
      .Case([&](MeanOp mean) { return meanRule(mean, DY); })
      .Case([&](CastOp cast) {
        accumulate(cast.getInput(),
                   tb.cast(DY, TrainBuilder::typeOf(cast.getInput())
                                   .getElementType()));
        return success();
      })
      .Case([&](EmbeddingOp embedding) {
        accumulate(embedding.getTable(),
                   EmbeddingGradOp::create(tb.builder(), tb.getLoc(),
                                           embedding.getTable().getType(), DY,
                                           embedding.getIds()));
        return success();
      })
      .Case([&](CrossEntropyOp ce) {
        accumulate(ce.getLogits(),
                   CrossEntropyGradOp::create(tb.builder(), tb.getLoc(),
                                              ce.getLogits().getType(), DY,
                                              ce.getLogits(), ce.getTargets()));
        return success();
      })
      .Case([&](RmsNormOp op) {
        return zeroc::autodiff::rmsnormDerivative(tb, op, DY, sink());
      })
      .Case([&](SiluOp op) {
        return zeroc::autodiff::siluDerivative(tb, op, DY, sink());
      })
      .Case([&](RopeOp op) {
        return zeroc::autodiff::ropeDerivative(tb, op, DY, sink());
      })
      .Case([&](SliceOp op) {
        return zeroc::autodiff::sliceDerivative(tb, op, DY, sink());
      })
      .Case([&](DropoutOp op) {
        return zeroc::autodiff::dropoutDerivative(tb, op, DY, sink());
      })
      .Default([&](Operation *other) {
        return other->emitOpError(
            "has no derivative: train-autodiff cannot differentiate through "
            "it, and a parameter's gradient depends on its result");
      });
}

#undef DY

LogicalResult Adjoint::matmulRule(MatmulOp mm, Value dy) {
  Value a = mm.getLhs(), b = mm.getRhs();
  bool ta = mm.getTransposeLhs(), tbFlag = mm.getTransposeRhs();
  if (isActive(a)) {
    // d op(a) = dy @ op(b)^T, then undo a's transpose.
    Value x = tb.matmul(dy, b, /*transposeLhs=*/false, /*transposeRhs=*/!tbFlag);
    accumulate(a, ta ? tb.transposeLastTwo(x) : x);
  }
  if (!isActive(b))
    return success();
  RankedTensorType aType = TrainBuilder::typeOf(a), bType = TrainBuilder::typeOf(b);
  bool shared = bType.getRank() == 2 && aType.getRank() > 2;
  if (!shared) {
    accumulate(b, tbFlag ? tb.matmul(dy, a, true, ta) : tb.matmul(a, dy, !ta, false));
    return success();
  }
  // A rank-2 rhs shared by every batch element: fold the batch into rows.
  Value opA = ta ? tb.transposeLastTwo(a) : a;
  int64_t k = TrainBuilder::typeOf(opA).getShape().back();
  int64_t n = TrainBuilder::typeOf(dy).getShape().back();
  int64_t rows = aType.getNumElements() / k;
  Value a2 = tb.reshape(opA, {rows, k});
  Value d2 = tb.reshape(dy, {rows, n});
  accumulate(b, tbFlag ? tb.matmul(d2, a2, true, false)
                       : tb.matmul(a2, d2, true, false));
  return success();
}

LogicalResult Adjoint::concatRule(ConcatOp concat, Value dy) {
  Type first = concat.getInputs().front().getType();
  if (llvm::any_of(concat.getInputs(),
                   [&](Value v) { return v.getType() != first; })) {
    // Inputs of different sizes: each input's cotangent is its slice of dy.
    ArrayRef<int64_t> shape = TrainBuilder::typeOf(dy).getShape();
    int64_t dim = concat.getDim(), offset = 0;
    for (Value input : concat.getInputs()) {
      SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
      offsets[dim] = offset;
      ArrayRef<int64_t> sizes = TrainBuilder::typeOf(input).getShape();
      offset += sizes[dim];
      if (isActive(input))
        accumulate(input, SliceOp::create(tb.builder(), tb.getLoc(), dy,
                                          offsets, sizes, strides));
    }
    return success();
  }
  SmallVector<Type> types(concat.getInputs().size(), first);
  auto split = SplitOp::create(tb.builder(), tb.getLoc(), types, dy,
                               concat.getDimAttr());
  for (auto [input, grad] : llvm::zip(concat.getInputs(), split.getResults()))
    accumulate(input, grad);
  return success();
}

/// Shape of `shape` with the reduced `dims` kept as size 1.
static SmallVector<int64_t> keepDims(ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept(shape);
  for (int64_t dim : dims)
    kept[dim] = 1;
  return kept;
}

LogicalResult Adjoint::sumRule(SumOp sum, Value dy) {
  ArrayRef<int64_t> shape = TrainBuilder::typeOf(sum.getInput()).getShape();
  Value kept = tb.reshape(dy, keepDims(shape, sum.getDims()));
  accumulate(sum.getInput(), tb.broadcast(kept, shape));
  return success();
}

LogicalResult Adjoint::meanRule(MeanOp mean, Value dy) {
  ArrayRef<int64_t> shape = TrainBuilder::typeOf(mean.getInput()).getShape();
  int64_t count = 1;
  for (int64_t dim : mean.getDims())
    count *= shape[dim];
  Value kept = tb.reshape(tb.scale(dy, 1.0 / static_cast<double>(count)),
                          keepDims(shape, mean.getDims()));
  accumulate(mean.getInput(), tb.broadcast(kept, shape));
  return success();
}



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
    grads->removeAttr("train.forward");
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
    grads->setAttr("train.gradients", builder.getArrayAttr(names));
    return success();
  }
};

} // namespace
