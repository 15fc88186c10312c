//===- MathOps.cpp - the generic ops of TrainMathOps.td --------------------===//
//
// Each a transcription of its op's description, in double, as the other
// handlers; the interpreter rounds the results to their element types.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

/// `result[i] = fn(input[i])`.
template <typename Fn>
LogicalResult unary(Operands in, Results &out, Fn fn) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = fn(in[0]->data[i]);
  return success();
}

LogicalResult evalExp(ExpOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return std::exp(x); });
}
LogicalResult evalLog(LogOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return std::log(x); });
}
LogicalResult evalTanh(TanhOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return std::tanh(x); });
}
LogicalResult evalNeg(NegOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return -x; });
}
LogicalResult evalRsqrt(RsqrtOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return 1.0 / std::sqrt(x); });
}
LogicalResult evalErf(ErfOp, Operands in, Results &out, RankContext &) {
  return unary(in, out, [](double x) { return std::erf(x); });
}
LogicalResult evalPow(PowOp op, Operands in, Results &out, RankContext &) {
  double p = op.getExponentAttr().getValueAsDouble();
  return unary(in, out, [p](double x) { return std::pow(x, p); });
}

bool compare(ComparePredicate predicate, double a, double b) {
  switch (predicate) {
  case ComparePredicate::eq:
    return a == b;
  case ComparePredicate::ne:
    return a != b;
  case ComparePredicate::lt:
    return a < b;
  case ComparePredicate::le:
    return a <= b;
  case ComparePredicate::gt:
    return a > b;
  case ComparePredicate::ge:
    return a >= b;
  }
  return false;
}

LogicalResult evalCompare(CompareOp op, Operands in, Results &out,
                          RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] =
        compare(op.getPredicate(), in[0]->data[i], in[1]->data[i]) ? 1.0 : 0.0;
  return success();
}

LogicalResult evalSelect(SelectOp, Operands in, Results &out, RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[i] != 0.0 ? in[1]->data[i] : in[2]->data[i];
  return success();
}

/// Keeps `x[..., i, j]` where `keep(j - i)`, zeroes the rest.
template <typename Keep>
LogicalResult triangle(Operands in, Results &out, Keep keep) {
  const Tensor &x = *in[0];
  int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
  for (int64_t e = 0; e < x.numElements(); ++e) {
    int64_t j = e % cols, i = e / cols % rows;
    out[0].data[e] = keep(j - i) ? x.data[e] : 0.0;
  }
  return success();
}

LogicalResult evalTril(TrilOp op, Operands in, Results &out, RankContext &) {
  int64_t diagonal = op.getDiagonal();
  return triangle(in, out, [diagonal](int64_t d) { return d <= diagonal; });
}
LogicalResult evalTriu(TriuOp op, Operands in, Results &out, RankContext &) {
  int64_t diagonal = op.getDiagonal();
  return triangle(in, out, [diagonal](int64_t d) { return d >= diagonal; });
}

LogicalResult evalConstant(ConstantOp op, Operands, Results &out,
                           RankContext &) {
  auto value = cast<DenseIntOrFPElementsAttr>(op.getValueAttr());
  int64_t i = 0;
  if (isa<FloatType>(value.getElementType())) {
    for (const APFloat &element : value.getValues<APFloat>())
      out[0].data[i++] = element.convertToDouble();
  } else {
    for (const APInt &element : value.getValues<APInt>())
      out[0].data[i++] = static_cast<double>(element.getSExtValue());
  }
  return success();
}

} // namespace

void registerMathOps(OpRegistry &registry) {
  registry.add<ExpOp>(evalExp);
  registry.add<LogOp>(evalLog);
  registry.add<TanhOp>(evalTanh);
  registry.add<NegOp>(evalNeg);
  registry.add<RsqrtOp>(evalRsqrt);
  registry.add<ErfOp>(evalErf);
  registry.add<PowOp>(evalPow);
  registry.add<CompareOp>(evalCompare);
  registry.add<SelectOp>(evalSelect);
  registry.add<TrilOp>(evalTril);
  registry.add<TriuOp>(evalTriu);
  registry.add<ConstantOp>(evalConstant);
}

} // namespace zeroc::eval
