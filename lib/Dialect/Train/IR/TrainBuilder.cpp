//===- TrainBuilder.cpp - typed construction of train ops -----------------===//

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"

using namespace mlir;

namespace zeroc::train {

// Ops with a type rule (InferTypeOpInterface) are created without result
// types: their ODS builders call the rule, as the verifier does. A rule
// that fails here is a bug in the pass that asked, reported as a fatal
// error by the builder.

template <typename OpTy>
Value TrainBuilder::broadcastBinary(Value lhs, Value rhs) {
  return OpTy::create(b, loc, lhs, rhs);
}

Value TrainBuilder::add(Value lhs, Value rhs) {
  return broadcastBinary<AddOp>(lhs, rhs);
}
Value TrainBuilder::sub(Value lhs, Value rhs) {
  return broadcastBinary<SubOp>(lhs, rhs);
}
Value TrainBuilder::mul(Value lhs, Value rhs) {
  return broadcastBinary<MulOp>(lhs, rhs);
}
Value TrainBuilder::div(Value lhs, Value rhs) {
  return broadcastBinary<DivOp>(lhs, rhs);
}

Value TrainBuilder::scale(Value input, double factor) {
  return ScaleOp::create(b, loc, input, b.getF64FloatAttr(factor));
}

Value TrainBuilder::matmul(Value lhs, Value rhs, bool transposeLhs,
                           bool transposeRhs) {
  return MatmulOp::create(b, loc, lhs, rhs, transposeLhs, transposeRhs);
}

Value TrainBuilder::reshape(Value input, ArrayRef<int64_t> shape) {
  if (typeOf(input).getShape() == shape)
    return input;
  auto type = RankedTensorType::get(shape, typeOf(input).getElementType());
  return ReshapeOp::create(b, loc, type, input);
}

Value TrainBuilder::transpose(Value input, ArrayRef<int64_t> permutation) {
  return TransposeOp::create(b, loc, input,
                             b.getDenseI64ArrayAttr(permutation));
}

Value TrainBuilder::transposeLastTwo(Value input) {
  int64_t rank = typeOf(input).getRank();
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 1], permutation[rank - 2]);
  return transpose(input, permutation);
}

Value TrainBuilder::sum(Value input, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return input;
  return SumOp::create(b, loc, input, b.getDenseI64ArrayAttr(dims));
}

Value TrainBuilder::broadcast(Value input, ArrayRef<int64_t> shape) {
  if (typeOf(input).getShape() == shape)
    return input;
  auto type = RankedTensorType::get(shape, typeOf(input).getElementType());
  return BroadcastOp::create(b, loc, type, input);
}

Value TrainBuilder::fill(RankedTensorType type, double value) {
  return FillOp::create(b, loc, type, b.getF64FloatAttr(value));
}

Value TrainBuilder::cast(Value input, Type elementType) {
  if (typeOf(input).getElementType() == elementType)
    return input;
  auto type = RankedTensorType::get(typeOf(input).getShape(), elementType);
  return CastOp::create(b, loc, type, input);
}

Value TrainBuilder::sqrt(Value input) {
  return SqrtOp::create(b, loc, input);
}

Value TrainBuilder::read(RankedTensorType type, StringRef symbol) {
  return ReadOp::create(b, loc, type, symbol);
}

void TrainBuilder::write(Value value, StringRef symbol) {
  WriteOp::create(b, loc, value, symbol);
}

Value TrainBuilder::sumToShape(Value input, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = typeOf(input).getShape();
  if (from == shape)
    return input;
  int64_t lead = static_cast<int64_t>(from.size() - shape.size());
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, lead));
  for (auto [i, size] : llvm::enumerate(shape))
    if (size == 1 && from[lead + i] != 1)
      dims.push_back(lead + i);
  return reshape(sum(input, dims), shape);
}

} // namespace zeroc::train
