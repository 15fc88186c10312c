//===- TrainMathOps.cpp - verifiers and type rules of TrainMathOps.td ------===//
//
// The generic elementwise, comparison, selection, triangle and constant ops
// (issue 31). Each op has one type rule; its verifier names the operand at
// fault. The unary functions, pow and tril/triu take theirs from
// SameOperandsAndResultType; compare and select from the inferReturnTypes
// below, which the verifiers share.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "TypeRules.h"

#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::train::rules;

namespace {

/// The type rule of compare and select: every operand has the type of the
/// first (named `firstName`), which is the result type.
LogicalResult
inferOneType(std::optional<Location> location, StringRef opName,
             ArrayRef<std::pair<StringRef, Value>> operands,
             SmallVectorImpl<Type> &types) {
  auto [firstName, first] = operands.front();
  for (auto [name, value] : operands.drop_front()) {
    if (value.getType() != first.getType())
      return report(RuleErrors{location, opName}, name, " type ",
                    value.getType(), " differs from ", firstName, " type ",
                    first.getType(),
                    " (broadcast the operands to one shape first)");
  }
  types.push_back(first.getType());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// custom<OneType>: the single type of compare's and select's operands and
// result, written once.
//===----------------------------------------------------------------------===//

ParseResult zeroc::train::parseOneType(OpAsmParser &parser, Type &a, Type &b,
                                       Type &c) {
  if (parser.parseType(a))
    return failure();
  b = c = a;
  return success();
}

ParseResult zeroc::train::parseOneType(OpAsmParser &parser, Type &a, Type &b,
                                       Type &c, Type &d) {
  if (parseOneType(parser, a, b, c))
    return failure();
  d = a;
  return success();
}

void zeroc::train::printOneType(OpAsmPrinter &printer, Operation *, Type a,
                                Type, Type) {
  printer << a;
}

void zeroc::train::printOneType(OpAsmPrinter &printer, Operation *, Type a,
                                Type, Type, Type) {
  printer << a;
}

//===----------------------------------------------------------------------===//
// train.pow
//===----------------------------------------------------------------------===//

LogicalResult PowOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  double exponent = getExponentAttr().getValueAsDouble();
  if (!std::isfinite(exponent))
    return emitOpError("exponent must be finite, got ")
           << (std::isnan(exponent) ? "nan" : exponent > 0 ? "inf" : "-inf");
  return success();
}

//===----------------------------------------------------------------------===//
// train.compare, train.select
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferOneType(location, getOperationName(),
                      {{"lhs", adaptor.getLhs()}, {"rhs", adaptor.getRhs()}},
                      types);
}

LogicalResult CompareOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferOneType(location, getOperationName(),
                      {{"on_true", adaptor.getOnTrue()},
                       {"mask", adaptor.getMask()},
                       {"on_false", adaptor.getOnFalse()}},
                      types);
}

LogicalResult SelectOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

//===----------------------------------------------------------------------===//
// train.tril, train.triu
//===----------------------------------------------------------------------===//

static LogicalResult verifyTriangle(Operation *op, Value input) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  if (tensorType(input).getRank() < 2)
    return op->emitOpError("input must have rank >= 2 (the mask acts on its "
                           "last two dimensions), got ")
           << input.getType();
  return success();
}

LogicalResult TrilOp::verify() { return verifyTriangle(*this, getInput()); }
LogicalResult TriuOp::verify() { return verifyTriangle(*this, getInput()); }

//===----------------------------------------------------------------------===//
// train.constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto value = dyn_cast_or_null<DenseIntOrFPElementsAttr>(adaptor.getValue());
  if (!value)
    return report(RuleErrors{location, getOperationName()},
                  "value must be a dense<...> tensor attribute, got ",
                  adaptor.getValue());
  types.push_back(value.getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  return verifyInferredTypes(*this);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }
