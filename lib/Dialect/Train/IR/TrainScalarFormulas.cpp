//===- TrainScalarFormulas.cpp - one element of each elementwise op -------===//
//
// ScalarFormulaOpInterface, one function per op: the C expression the back
// ends print for one element (TrainInterfaces.td). `$i` is operand i's
// element as f32, `#i` the op's i-th constant; the zc_* functions are the
// preambles' (lib/Target/Cpp/Preambles.cpp), defined for both targets.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace zeroc::train;

namespace {
/// Calls `placeholder(kind, index)` for each `$i` / `#i` of `pattern` and
/// `text` for the characters between them.
void walkPattern(StringRef pattern,
                 llvm::function_ref<void(char, unsigned)> placeholder,
                 llvm::function_ref<void(char)> text) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if ((c != '$' && c != '#') || i + 1 == pattern.size() ||
        !llvm::isDigit(pattern[i + 1])) {
      text(c);
      continue;
    }
    unsigned n = 0;
    while (i + 1 < pattern.size() && llvm::isDigit(pattern[i + 1]))
      n = n * 10 + static_cast<unsigned>(pattern[++i] - '0');
    placeholder(c, n);
  }
}
} // namespace

std::string ScalarFormula::expand(
    llvm::function_ref<std::string(unsigned)> operand,
    llvm::function_ref<std::string(double)> constant) const {
  std::string out;
  walkPattern(
      pattern,
      [&](char kind, unsigned n) {
        out += kind == '$' ? operand(n) : constant(constants[n]);
      },
      [&](char c) { out += c; });
  return out;
}

bool ScalarFormula::fits(unsigned operands) const {
  bool valid = true;
  walkPattern(
      pattern,
      [&](char kind, unsigned n) {
        valid &= n < (kind == '$' ? operands : constants.size());
      },
      [](char) {});
  return valid;
}

LogicalResult zeroc::train::verifyElementwiseTrait(Operation *op) {
  auto formula = dyn_cast<ScalarFormulaOpInterface>(op);
  if (!formula)
    return op->emitOpError("is Elementwise but does not implement "
                           "ScalarFormulaOpInterface: a fused loop could "
                           "not print it");
  ScalarFormula f = formula.getScalarFormula();
  if (!f.fits(op->getNumOperands()))
    return op->emitOpError("has the scalar formula '")
           << f.pattern << "', which names an operand or constant the op ("
           << op->getNumOperands() << " operand(s), " << f.constants.size()
           << " constant(s)) does not have";
  return success();
}

ScalarFormula AddOp::getScalarFormula() { return {"($0 + $1)", {}}; }
ScalarFormula SubOp::getScalarFormula() { return {"($0 - $1)", {}}; }
ScalarFormula MulOp::getScalarFormula() { return {"($0 * $1)", {}}; }
ScalarFormula DivOp::getScalarFormula() { return {"($0 / $1)", {}}; }

ScalarFormula ScaleOp::getScalarFormula() {
  return {"($0 * #0)", {getFactorAttr().getValueAsDouble()}};
}

ScalarFormula GeluOp::getScalarFormula() {
  return {getApproximation() == GeluApproximation::tanh ? "zc_gelu_tanh($0)"
                                                         : "zc_gelu_erf($0)",
          {}};
}

ScalarFormula GeluGradOp::getScalarFormula() {
  return {getApproximation() == GeluApproximation::tanh
              ? "zc_gelu_tanh_grad($0, $1)"
              : "zc_gelu_erf_grad($0, $1)",
          {}};
}

ScalarFormula ReluOp::getScalarFormula() { return {"zc_relu($0)", {}}; }
ScalarFormula ReluGradOp::getScalarFormula() {
  return {"zc_relu_grad($0, $1)", {}};
}

ScalarFormula SiluOp::getScalarFormula() { return {"zc_silu($0)", {}}; }
ScalarFormula SiluGradOp::getScalarFormula() {
  return {"zc_silu_grad($0, $1)", {}};
}

ScalarFormula SqrtOp::getScalarFormula() { return {"sqrtf($0)", {}}; }

// Loads and stores convert bf16 elements, so a cast is its operand.
ScalarFormula CastOp::getScalarFormula() { return {"$0", {}}; }
// The loop indexes a broadcast operand at its own shape.
ScalarFormula BroadcastOp::getScalarFormula() { return {"$0", {}}; }

ScalarFormula FillOp::getScalarFormula() {
  return {"(#0)", {getValueAttr().getValueAsDouble()}};
}

// The generic functions of TrainMathOps.td. Both preambles include math.h
// (CUDA's device math has the same names).
ScalarFormula ExpOp::getScalarFormula() { return {"expf($0)", {}}; }
ScalarFormula LogOp::getScalarFormula() { return {"logf($0)", {}}; }
ScalarFormula TanhOp::getScalarFormula() { return {"tanhf($0)", {}}; }
ScalarFormula NegOp::getScalarFormula() { return {"(-$0)", {}}; }
ScalarFormula RsqrtOp::getScalarFormula() {
  return {"(1.0f / sqrtf($0))", {}};
}
ScalarFormula ErfOp::getScalarFormula() { return {"erff($0)", {}}; }
ScalarFormula PowOp::getScalarFormula() {
  return {"powf($0, #0)", {getExponentAttr().getValueAsDouble()}};
}

ScalarFormula CompareOp::getScalarFormula() {
  const char *pattern = nullptr;
  switch (getPredicate()) {
  case ComparePredicate::eq:
    pattern = "(($0 == $1) ? 1.0f : 0.0f)";
    break;
  case ComparePredicate::ne:
    pattern = "(($0 != $1) ? 1.0f : 0.0f)";
    break;
  case ComparePredicate::lt:
    pattern = "(($0 < $1) ? 1.0f : 0.0f)";
    break;
  case ComparePredicate::le:
    pattern = "(($0 <= $1) ? 1.0f : 0.0f)";
    break;
  case ComparePredicate::gt:
    pattern = "(($0 > $1) ? 1.0f : 0.0f)";
    break;
  case ComparePredicate::ge:
    pattern = "(($0 >= $1) ? 1.0f : 0.0f)";
    break;
  }
  return {pattern, {}};
}

ScalarFormula SelectOp::getScalarFormula() {
  return {"(($0 != 0.0f) ? $1 : $2)", {}};
}
