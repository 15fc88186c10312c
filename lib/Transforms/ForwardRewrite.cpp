//===- ForwardRewrite.cpp - retyping the forward function -----------------===//

#include "ForwardRewrite.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc {

FailureOr<func::FuncOp> findForwardFunction(ModuleOp module) {
  func::FuncOp forward;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr("train.forward"))
      continue;
    if (forward) {
      func.emitError("more than one function is marked train.forward (also @")
          << forward.getSymName() << ")";
      return failure();
    }
    forward = func;
  }
  if (!forward) {
    module.emitError("no func.func is marked train.forward (the model's "
                     "forward function, from batch to loss)");
    return failure();
  }
  return forward;
}

void updateFunctionType(func::FuncOp func) {
  Block &body = func.getBody().front();
  func.setFunctionType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
}

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

RankedTensorType withShape(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

/// The new result types of `op`, or failure.
FailureOr<SmallVector<Type>> inferTypes(Operation *op) {
  auto emit = [&] { return op->emitOpError(); };
  auto one = [](FailureOr<Shape> shape,
                Type element) -> FailureOr<SmallVector<Type>> {
    if (failed(shape))
      return failure();
    return SmallVector<Type>{withShape(*shape, element)};
  };
  auto sameAs = [](Value v) -> FailureOr<SmallVector<Type>> {
    return SmallVector<Type>{v.getType()};
  };
  auto binary = [&](Value lhs, Value rhs) {
    return one(broadcastShapes(typeOf(lhs).getShape(), typeOf(rhs).getShape(),
                               emit),
               typeOf(lhs).getElementType());
  };
  return llvm::TypeSwitch<Operation *, FailureOr<SmallVector<Type>>>(op)
      .Case<AddOp, SubOp, MulOp, DivOp>(
          [&](auto op) { return binary(op.getLhs(), op.getRhs()); })
      .Case([&](MatmulOp mm) {
        return one(matmulShape(typeOf(mm.getLhs()).getShape(),
                               typeOf(mm.getRhs()).getShape(),
                               mm.getTransposeLhs(), mm.getTransposeRhs(),
                               emit),
                   typeOf(mm.getLhs()).getElementType());
      })
      .Case([&](EmbeddingOp emb) {
        Shape shape(typeOf(emb.getIds()).getShape());
        shape.push_back(typeOf(emb.getTable()).getShape().back());
        return one(shape, typeOf(emb.getTable()).getElementType());
      })
      .Case<LayerNormOp, SoftmaxOp, CausalMaskOp, GeluOp, ReluOp, ScaleOp,
            SqrtOp>([&](auto op) { return sameAs(op->getOperand(0)); })
      .Case([&](AttentionOp attn) { return sameAs(attn.getQuery()); })
      .Case([&](ReshapeOp reshape) -> FailureOr<SmallVector<Type>> {
        RankedTensorType input = typeOf(reshape.getInput());
        Shape shape(typeOf(reshape.getResult()).getShape());
        int64_t rest = 1;
        for (int64_t size : ArrayRef<int64_t>(shape).drop_front())
          rest *= size;
        if (shape.empty() || rest == 0 || input.getNumElements() % rest != 0) {
          reshape.emitOpError("cannot follow its input's new shape ")
              << formatShape(input.getShape()) << " by resizing its leading "
              << "dimension";
          return failure();
        }
        shape[0] = input.getNumElements() / rest;
        return one(shape, input.getElementType());
      })
      .Case([&](TransposeOp t) {
        return one(transposeShape(typeOf(t.getInput()).getShape(),
                                  t.getPermutation(), emit),
                   typeOf(t.getInput()).getElementType());
      })
      .Case([&](SplitOp split) -> FailureOr<SmallVector<Type>> {
        RankedTensorType input = typeOf(split.getInput());
        Shape shape(input.getShape());
        shape[split.getDim()] /= split.getNumResults();
        return SmallVector<Type>(split.getNumResults(),
                                 withShape(shape, input.getElementType()));
      })
      .Case([&](ConcatOp concat) {
        RankedTensorType first = typeOf(concat.getInputs().front());
        Shape shape(first.getShape());
        shape[concat.getDim()] = 0;
        for (Value input : concat.getInputs())
          shape[concat.getDim()] += typeOf(input).getDimSize(concat.getDim());
        return one(shape, first.getElementType());
      })
      .Case<SumOp, MeanOp>([&](auto op) {
        return one(reduceShape(typeOf(op.getInput()).getShape(), op.getDims(),
                               emit),
                   typeOf(op.getInput()).getElementType());
      })
      .Case([&](CastOp cast) {
        return one(Shape(typeOf(cast.getInput()).getShape()),
                   typeOf(cast.getResult()).getElementType());
      })
      .Case([&](BroadcastOp b) -> FailureOr<SmallVector<Type>> {
        RankedTensorType input = typeOf(b.getInput());
        return SmallVector<Type>{withShape(typeOf(b.getResult()).getShape(),
                                           input.getElementType())};
      })
      .Default([&](Operation *other) -> FailureOr<SmallVector<Type>> {
        // Ops whose result types do not depend on their operands' (reads,
        // fills, constants, cross-entropy's scalar loss, terminators).
        return SmallVector<Type>(other->getResultTypes());
      });
}

} // namespace

LogicalResult reinferResultTypes(Operation *op) {
  FailureOr<SmallVector<Type>> types = inferTypes(op);
  if (failed(types))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), *types))
    result.setType(type);
  return success();
}

} // namespace zeroc
