//===- RaiseNorms.cpp - LayerNorm and RMSNorm to train.layernorm/rmsnorm --===//
//
// RMSNorm:   x * rsqrt(mean(x * x, -1, keepdim) + eps) * w
// LayerNorm: (x - mean(x, -1, keepdim)) / sqrt(var + eps) * w + b, with
//            var the mean of the squared deviation or train.var with
//            correction = 0 (the biased variance nn.LayerNorm uses)
// The normalization may be written `* rsqrt(t)`, `* (1 / sqrt(t))` or
// `/ sqrt(t)`, the square `x * x` or `pow(x, 2)`; `w` (and `b`) are
// vectors of the last dimension's size. Over another axis than the last,
// with another constant, an unbiased variance or without the weight, the
// computation stays generic.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::keepdimMeanOfLast;
using zeroc::raise::singleUse;
using zeroc::raise::typeOf;

namespace {

/// The generic ops of the other engineers' ODS, matched by name so that
/// this file does not depend on their C++ classes.
bool isOp(Operation *op, StringRef name) {
  return op && op->getName().getStringRef() == name;
}

/// The f64 attribute of a generic op (pow's exponent), if it has one.
std::optional<double> floatAttribute(Operation *op) {
  for (NamedAttribute attr : op->getAttrDictionary())
    if (auto f = dyn_cast<FloatAttr>(attr.getValue()))
      return f.getValueAsDouble();
  return std::nullopt;
}

/// If `value` is `a * a` or `pow(a, 2)`, returns `a`.
Value squareOf(Value value) {
  Operation *op = value.getDefiningOp();
  if (auto mul = dyn_cast_or_null<MulOp>(op); mul && mul.getLhs() == mul.getRhs())
    return mul.getLhs();
  if (isOp(op, "train.pow") && floatAttribute(op) == 2.0)
    return op->getOperand(0);
  return {};
}

/// `x * rsqrt(mean(s) + eps)`, `x * (1 / sqrt(mean(s) + eps))` or
/// `x / sqrt(mean(s) + eps)`, with the mean over the last axis, kept.
struct Normalized {
  Value x;         // the numerator
  Value statistic; // what eps is added to
  double eps;
};

/// `rsqrt(t)` or `1 / sqrt(t)`: returns t.
Value inverseSqrtOf(Value value) {
  if (!singleUse(value))
    return {};
  Operation *op = value.getDefiningOp();
  if (isOp(op, "train.rsqrt"))
    return op->getOperand(0);
  if (auto div = dyn_cast_or_null<DivOp>(op)) {
    std::optional<double> one = zeroc::raise::splatValue(div.getLhs());
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (one == 1.0 && sqrt && singleUse(div.getRhs()) &&
        div.getRhs().getType() == div.getType())
      return sqrt.getInput();
  }
  return {};
}

std::optional<Normalized> normalized(Value n) {
  if (!singleUse(n))
    return std::nullopt;
  Operation *op = n.getDefiningOp();
  Value x, t;
  if (auto mul = dyn_cast_or_null<MulOp>(op)) {
    for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (Value inner = inverseSqrtOf(b); inner && a.getType() == n.getType()) {
        x = a;
        t = inner;
        break;
      }
  } else if (auto div = dyn_cast_or_null<DivOp>(op)) {
    auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
    if (sqrt && singleUse(div.getRhs()) && div.getLhs().getType() == n.getType()) {
      x = div.getLhs();
      t = sqrt.getInput();
    }
  }
  if (!x || !singleUse(t))
    return std::nullopt;
  std::optional<zeroc::raise::WithConstant> plus =
      zeroc::raise::withConstant(t.getDefiningOp());
  if (!plus || !isa<AddOp>(t.getDefiningOp()) || plus->constant <= 0.0 ||
      !singleUse(plus->other))
    return std::nullopt;
  return Normalized{x, plus->other, plus->constant};
}

/// `mean(s, -1, keepdim)` with `s` of `x`'s type: s.
Value meanOfLike(Value statistic, Value x) {
  Value s = keepdimMeanOfLast(statistic);
  return s && s.getType() == x.getType() && singleUse(s) ? s : Value();
}

/// `var(x, -1, correction = 0, keepdim)`, the biased variance: x.
Value biasedVarianceOf(Value statistic) {
  auto reshape = statistic.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto var = reshape.getInput().getDefiningOp<VarOp>();
  if (!var || !singleUse(var.getResult()) || var.getCorrection() != 0)
    return {};
  auto input = typeOf(var.getInput());
  if (var.getDims().size() != 1 || var.getDims()[0] != input.getRank() - 1)
    return {};
  SmallVector<int64_t> keep(input.getShape());
  keep.back() = 1;
  if (typeOf(statistic).getShape() != ArrayRef<int64_t>(keep))
    return {};
  return var.getInput();
}

/// If `value` is `x - mean(x, -1, keepdim)`, returns x.
Value centered(Value value) {
  auto sub = value.getDefiningOp<SubOp>();
  if (!sub || sub.getLhs().getType() != sub.getType())
    return {};
  Value x = keepdimMeanOfLast(sub.getRhs());
  return x == sub.getLhs() ? x : Value();
}

/// `n * w` or `w * n` with `w` a vector of the last dimension's size: n.
std::optional<std::pair<Value, Value>> weighted(MulOp mul) {
  for (auto [n, w] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    RankedTensorType nt = typeOf(n), wt = typeOf(w);
    if (nt == mul.getType() && wt.getRank() == 1 && nt.getRank() >= 1 &&
        wt.getDimSize(0) == nt.getShape().back())
      return std::pair(n, w);
  }
  return std::nullopt;
}

struct RaiseRmsNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto nw = weighted(mul);
    if (!nw)
      return failure();
    std::optional<Normalized> norm = normalized(nw->first);
    if (!norm)
      return failure();
    Value meanOf = meanOfLike(norm->statistic, norm->x);
    if (!meanOf || squareOf(meanOf) != norm->x)
      return failure();
    // A centered x is a LayerNorm (RaiseLayerNorm takes it whole).
    if (centered(norm->x))
      return failure();
    rewriter.replaceOpWithNewOp<RmsNormOp>(mul, mul.getType(), norm->x,
                                           nw->second,
                                           rewriter.getF64FloatAttr(norm->eps));
    return success();
  }
};

/// LayerNorm: the input x when `n` normalizes x - mean(x) by its biased
/// variance.
std::optional<std::pair<Value, double>> layerNormOf(Value n) {
  std::optional<Normalized> norm = normalized(n);
  if (!norm)
    return std::nullopt;
  Value x = centered(norm->x);
  if (!x)
    return std::nullopt;
  // The variance: torch.var(x, -1, correction=0), or the mean of the
  // square of the same deviation (the same value, or x - mean(x) computed
  // again).
  if (biasedVarianceOf(norm->statistic) == x)
    return std::pair(x, norm->eps);
  Value meanOf = meanOfLike(norm->statistic, norm->x);
  Value deviation = meanOf ? squareOf(meanOf) : Value();
  if (!deviation || (deviation != norm->x && centered(deviation) != x))
    return std::nullopt;
  return std::pair(x, norm->eps);
}

struct RaiseLayerNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto nw = weighted(mul);
    if (!nw)
      return failure();
    auto xe = layerNormOf(nw->first);
    if (!xe)
      return failure();
    auto [x, eps] = *xe;
    Value weight = nw->second, bias;
    Operation *replaced = mul;
    if (singleUse(mul.getResult())) {
      if (auto add = dyn_cast<AddOp>(*mul->getUsers().begin())) {
        Value b = add.getLhs() == mul.getResult() ? add.getRhs() : add.getLhs();
        if (add.getType() == mul.getType() && b.getType() == weight.getType()) {
          bias = b;
          replaced = add;
        }
      }
    }
    if (weight.getType() != typeOf(x).clone(typeOf(weight).getShape()))
      return failure();
    rewriter.setInsertionPoint(replaced);
    if (!bias)
      bias = FillOp::create(rewriter, mul.getLoc(), weight.getType(),
                            rewriter.getF64FloatAttr(0.0));
    rewriter.replaceOpWithNewOp<LayerNormOp>(replaced, mul.getType(), x, weight,
                                             bias, rewriter.getF64FloatAttr(eps));
    return success();
  }
};

} // namespace

void zeroc::raise::populateNormPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseRmsNorm, RaiseLayerNorm>(patterns.getContext());
}
