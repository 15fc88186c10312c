//===- RaiseActivations.cpp - SiLU and GELU to train.silu / train.gelu ----===//
//
// SiLU:  x * sigmoid(x) or x / (1 + exp(-x)), sigmoid(x) written
//        1 / (1 + exp(-x)) (SwiGLU's silu(a) * b raises its silu(a));
// GELU:  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), the tanh
//        form (GPT-2, minGPT's NewGELU), with x^3 written pow(x, 3) or as
//        products; and 0.5 * x * (1 + erf(x / sqrt(2))), the erf form
//        (nn.GELU() written out), with x / sqrt(2) as a division by
//        sqrt(2) or a product by 1 / sqrt(2).
// Products are matched whatever their order and grouping: a product of
// single-use train.mul / train.scale / train.pow is flattened into its
// constant and its other factors. exp, neg, tanh and pow are the generic
// ops of issue 31, matched by name.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::near;
using zeroc::raise::singleUse;
using zeroc::raise::negationOf;
using zeroc::raise::splatValue;

namespace {

bool isOp(Operation *op, StringRef name) {
  return op && op->getName().getStringRef() == name;
}

std::optional<double> floatAttribute(Operation *op) {
  for (NamedAttribute attr : op->getAttrDictionary())
    if (auto f = dyn_cast<FloatAttr>(attr.getValue()))
      return f.getValueAsDouble();
  return std::nullopt;
}

/// A product: a constant times factors.
struct Product {
  double constant = 1.0;
  SmallVector<Value> factors;
};

/// Flattens `value` into `product`: single-use (unless `root`) products of
/// same-shaped values, scales and multiplications by splat constants, and
/// integer powers 2 and 3.
void flatten(Value value, Product &product, bool root) {
  Operation *op = value.getDefiningOp();
  if (!op || (!root && !singleUse(value))) {
    product.factors.push_back(value);
    return;
  }
  if (auto scale = dyn_cast<ScaleOp>(op)) {
    product.constant *= scale.getFactor().convertToDouble();
    return flatten(scale.getInput(), product, false);
  }
  if (auto mul = dyn_cast<MulOp>(op)) {
    if (std::optional<zeroc::raise::WithConstant> c =
            zeroc::raise::withConstant(op)) {
      product.constant *= c->constant;
      return flatten(c->other, product, false);
    }
    if (mul.getLhs().getType() == mul.getType() &&
        mul.getRhs().getType() == mul.getType()) {
      // x * x: x has two uses, both here; a factor either way.
      flatten(mul.getLhs(), product, false);
      flatten(mul.getRhs(), product, false);
      return;
    }
  }
  if (isOp(op, "train.pow") && op->getOperand(0).getType() == value.getType()) {
    std::optional<double> p = floatAttribute(op);
    if (p == 2.0 || p == 3.0) {
      for (int i = 0; i < static_cast<int>(*p); ++i)
        product.factors.push_back(op->getOperand(0));
      return;
    }
  }
  product.factors.push_back(value);
}

/// `1 + t` (either order, both single-use): the op defining t.
Operation *onePlus(Value value) {
  if (!singleUse(value))
    return nullptr;
  Operation *op = value.getDefiningOp();
  std::optional<zeroc::raise::WithConstant> plus = zeroc::raise::withConstant(op);
  if (!plus || !isa<AddOp>(op) || plus->constant != 1.0 ||
      !singleUse(plus->other))
    return nullptr;
  return plus->other.getDefiningOp();
}

/// `1 + exp(-x)` (either order): x.
Value onePlusExpNeg(Value value) {
  Operation *exp = onePlus(value);
  if (!isOp(exp, "train.exp") || !singleUse(exp->getOperand(0)))
    return {};
  return negationOf(exp->getOperand(0));
}

/// `1 / (1 + exp(-x))`: x.
Value sigmoidOf(Value value) {
  auto div = value.getDefiningOp<DivOp>();
  if (!div || !singleUse(value) || splatValue(div.getLhs()) != 1.0 ||
      div.getRhs().getType() != div.getType())
    return {};
  return onePlusExpNeg(div.getRhs());
}

/// `1 + tanh(t)` (either order): t.
Value onePlusTanh(Value value) {
  if (!singleUse(value))
    return {};
  Operation *op = value.getDefiningOp();
  std::optional<zeroc::raise::WithConstant> plus = zeroc::raise::withConstant(op);
  if (!plus || !isa<AddOp>(op) || plus->constant != 1.0 ||
      !singleUse(plus->other))
    return {};
  Operation *tanh = plus->other.getDefiningOp();
  if (!isOp(tanh, "train.tanh") || !singleUse(tanh->getOperand(0)))
    return {};
  return tanh->getOperand(0);
}

/// Whether `t` is `sqrt(2/pi) * (x + 0.044715 * x^3)`.
bool isGeluTanhArgument(Value t, Value x) {
  Product outer;
  flatten(t, outer, /*root=*/true);
  if (!near(outer.constant, std::sqrt(2.0 / M_PI)) || outer.factors.size() != 1)
    return false;
  auto add = outer.factors[0].getDefiningOp<AddOp>();
  if (!add || !singleUse(outer.factors[0]) || add.getLhs().getType() != x.getType() ||
      add.getRhs().getType() != x.getType())
    return false;
  Value cubic = add.getLhs() == x ? add.getRhs()
                                  : (add.getRhs() == x ? add.getLhs() : Value());
  if (!cubic || !singleUse(cubic))
    return false;
  Product inner;
  flatten(cubic, inner, /*root=*/true);
  return near(inner.constant, 0.044715) && inner.factors.size() == 3 &&
         llvm::all_of(inner.factors, [&](Value f) { return f == x; });
}

/// `1 + erf(t)` (either order): t.
Value onePlusErf(Value value) {
  auto erf = dyn_cast_or_null<ErfOp>(onePlus(value));
  if (!erf || !singleUse(erf.getInput()))
    return {};
  return erf.getInput();
}

/// Whether `t` is `x / sqrt(2)` (a division by a splat sqrt(2), or a
/// product by 1 / sqrt(2)).
bool isGeluErfArgument(Value t, Value x) {
  if (auto div = t.getDefiningOp<DivOp>()) {
    std::optional<zeroc::raise::WithConstant> c =
        zeroc::raise::withConstant(div);
    return c && !c->constantOnLeft && c->other == x &&
           near(c->constant, std::sqrt(2.0));
  }
  Product product;
  flatten(t, product, /*root=*/true);
  return near(product.constant, 1.0 / std::sqrt(2.0)) &&
         product.factors.size() == 1 && product.factors[0] == x;
}

/// Anchored on the outermost train.mul or train.scale of the product.
struct RaiseActivation : RewritePattern {
  RaiseActivation(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *mul,
                                PatternRewriter &rewriter) const override {
    if (!isa<MulOp, ScaleOp>(mul))
      return failure();
    Product product;
    flatten(mul->getResult(0), product, /*root=*/true);
    if (product.factors.size() != 2)
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value x = product.factors[i], other = product.factors[1 - i];
      if (x.getType() != mul->getResult(0).getType())
        continue;
      // SiLU: x * sigmoid(x).
      if (product.constant == 1.0 && sigmoidOf(other) == x) {
        rewriter.replaceOpWithNewOp<SiluOp>(mul, x.getType(), x);
        return success();
      }
      // GELU: 0.5 * x * (1 + tanh(...)).
      if (near(product.constant, 0.5)) {
        Value t = onePlusTanh(other);
        if (t && isGeluTanhArgument(t, x)) {
          rewriter.replaceOpWithNewOp<GeluOp>(mul, x.getType(), x,
                                              GeluApproximation::tanh);
          return success();
        }
        // GELU: 0.5 * x * (1 + erf(x / sqrt(2))).
        Value e = onePlusErf(other);
        if (e && isGeluErfArgument(e, x)) {
          rewriter.replaceOpWithNewOp<GeluOp>(mul, x.getType(), x,
                                              GeluApproximation::erf);
          return success();
        }
      }
    }
    return failure();
  }
};

/// SiLU as x / (1 + exp(-x)).
struct RaiseSiluDivision : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    Value x = div.getLhs();
    if (x.getType() != div.getType() || div.getRhs().getType() != div.getType() ||
        onePlusExpNeg(div.getRhs()) != x)
      return failure();
    rewriter.replaceOpWithNewOp<SiluOp>(div, div.getType(), x);
    return success();
  }
};

} // namespace

void zeroc::raise::populateActivationPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseActivation, RaiseSiluDivision>(patterns.getContext());
}
