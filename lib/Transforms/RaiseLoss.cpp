//===- RaiseLoss.cpp - log_softmax + gather (nll) to train.cross_entropy --===//
//
// PyTorch's F.cross_entropy with reduction='mean', written out on
// log-probabilities lp = log_softmax(logits) over the last dimension,
// becomes train.cross_entropy(logits, targets) with its ignore_index and
// label_smoothing. The loss is a sum of terms, each a constant times
//   - the NLL term: the mean over positions of lp gathered at the targets
//     (gather(lp, -1, targets[..., None]), maybe reshaped to [d...]);
//   - a smoothing term: the mean over positions of sum(lp, [-1]), or the
//     mean of every element of lp (a 1/V smaller weight);
// where, with an ignore_index k that is a token id, each mean is a masked
// one: sum(where(target != k, x, 0)) / sum(target != k), the mask a
// look-up of each target in a constant [V] vector (1 at k for ==, 0 at k
// for !=; 1 - mask flips it), the masking a train.select with a zero fill
// or a train.mul by the != mask. Every mask must compare the same targets
// with the same k, and the divisor must be the count of that != mask. The
// weights must be (1 - e) on the NLL term and e on the smoothing term
// (mean_c of -lp) for some e in [0, 1); all of lp's uses must be in the
// match. The negations are train.neg, train.scale by -1 or 0 - y, with any
// constant factor (train.scale, train.mul by a fill) before or after a
// mean. Anything else (other weights, another axis, a mask of another
// index, another divisor) stays generic.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::near;
using zeroc::raise::splatValue;
using zeroc::raise::typeOf;

namespace {

/// `coefficient * base`: `value` with its constant factors peeled off
/// (train.scale, train.neg, 0 - y, train.mul by a scalar fill).
struct Linear {
  double coefficient = 1.0;
  Value base;
  Operation *last = nullptr; // the peeled op that reads `base`
};

Linear linear(Value value) {
  Linear term{1.0, value};
  while (true) {
    Value v = term.base;
    if (v.getDefiningOp())
      term.last = v.getDefiningOp();
    if (auto scale = v.getDefiningOp<ScaleOp>()) {
      term.coefficient *= scale.getFactor().convertToDouble();
      term.base = scale.getInput();
    } else if (auto neg = v.getDefiningOp<NegOp>()) {
      term.coefficient = -term.coefficient;
      term.base = neg.getInput();
    } else if (auto sub = v.getDefiningOp<SubOp>();
               sub && splatValue(sub.getLhs()) == 0.0 &&
               sub.getRhs().getType() == sub.getType()) {
      term.coefficient = -term.coefficient;
      term.base = sub.getRhs();
    } else if (auto with = zeroc::raise::withConstant(v.getDefiningOp());
               with && isa<MulOp>(v.getDefiningOp()) &&
               typeOf(with->other).getRank() == typeOf(v).getRank()) {
      term.coefficient *= with->constant;
      term.base = with->other;
    } else {
      term.last = term.base == value ? nullptr : term.last;
      return term;
    }
  }
}

/// Whether `dims` lists every dimension of a rank-`rank` tensor.
bool allDims(ArrayRef<int64_t> dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank)
    return false;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      return false;
  return true;
}

/// `value` with its reshapes stripped (the same elements in the same
/// order).
Value unreshaped(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value;
}

/// A mask of targets: 1.0 where `targets == index` (`equal`) or
/// `targets != index`, 0.0 elsewhere.
struct Mask {
  Value targets; // reshapes stripped
  int64_t index = 0;
  bool equal = true;
  int64_t size = 0; // the constant vector's
};

/// `value` as a mask of targets: a train.gather of the targets (maybe
/// reshaped) in a constant [V] vector of zeros with a 1 at k (==) or ones
/// with a 0 at k (!=), maybe reshaped, or 1 - such a mask.
std::optional<Mask> maskOf(Value value) {
  value = unreshaped(value);
  if (auto sub = value.getDefiningOp<SubOp>();
      sub && splatValue(sub.getLhs()) == 1.0 &&
      sub.getRhs().getType() == sub.getType()) {
    std::optional<Mask> inner = maskOf(sub.getRhs());
    if (inner)
      inner->equal = !inner->equal;
    return inner;
  }
  auto gather = value.getDefiningOp<GatherOp>();
  if (!gather || gather.getDim() != 0 ||
      typeOf(gather.getInput()).getRank() != 1)
    return std::nullopt;
  auto constant = gather.getInput().getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense)
    return std::nullopt;
  SmallVector<double> table;
  for (APFloat v : dense.getValues<APFloat>())
    table.push_back(v.convertToDouble());
  // One element differs from all the others, which are 0 (==) or 1 (!=).
  for (bool equal : {true, false}) {
    double rest = equal ? 0.0 : 1.0, at = equal ? 1.0 : 0.0;
    int64_t found = -1, others = 0;
    for (auto [i, v] : llvm::enumerate(table)) {
      if (v == at && found < 0)
        found = static_cast<int64_t>(i);
      else if (v == rest)
        ++others;
    }
    if (found >= 0 && others + 1 == static_cast<int64_t>(table.size()))
      return Mask{unreshaped(gather.getIndex()), found, equal,
                  static_cast<int64_t>(table.size())};
  }
  return std::nullopt;
}

/// A value kept where the targets are not `index` and 0 there.
struct Masked {
  Value value;
  Value targets;
  int64_t index = 0;
  int64_t size = 0;
};

/// `value` as where(targets != k, x, 0): train.select(!= mask, x, 0),
/// train.select(== mask, 0, x) or x * (!= mask), peeled repeatedly while
/// the masks agree.
std::optional<Masked> maskedOf(Value value) {
  std::optional<Masked> result;
  while (true) {
    std::optional<Masked> layer;
    if (auto select = value.getDefiningOp<SelectOp>()) {
      std::optional<Mask> mask = maskOf(select.getMask());
      if (mask && !mask->equal && splatValue(select.getOnFalse()) == 0.0)
        layer = Masked{select.getOnTrue(), mask->targets, mask->index,
                       mask->size};
      else if (mask && mask->equal && splatValue(select.getOnTrue()) == 0.0)
        layer = Masked{select.getOnFalse(), mask->targets, mask->index,
                       mask->size};
    } else if (auto mul = value.getDefiningOp<MulOp>();
               mul && mul.getLhs().getType() == mul.getRhs().getType()) {
      for (auto [maskValue, other] : {std::pair(mul.getRhs(), mul.getLhs()),
                                      std::pair(mul.getLhs(), mul.getRhs())})
        if (std::optional<Mask> mask = maskOf(maskValue);
            mask && !mask->equal) {
          layer = Masked{other, mask->targets, mask->index, mask->size};
          break;
        }
    }
    if (!layer)
      return result;
    if (result && (layer->targets != result->targets ||
                   layer->index != result->index ||
                   layer->size != result->size))
      return std::nullopt; // masks of different indices
    result = layer;
    value = layer->value;
  }
}

/// One term of the loss: `weight` times the mean of the NLL (nll) or of
/// mean_c(-lp) (smoothing), over the positions or the counted ones.
struct Term {
  bool nll = true;
  double weight = 0;
  Value logp;
  Value targets;                // the NLL's, reshapes stripped
  Value gatherTargets;          // the NLL's [d...] targets
  std::optional<int64_t> index; // the mask's
  Value maskTargets;            // the mask's, reshapes stripped
  int64_t maskSize = 0;         // the mask's vocabulary
  SmallVector<Operation *> readers; // the ops of the term that read lp
};

/// The log-probabilities and targets of lp gathered at the targets along
/// the last dimension, maybe reshaped from [d..., 1] to [d...].
bool gatheredAt(Value value, Term &term) {
  if (auto squeeze = value.getDefiningOp<ReshapeOp>())
    value = squeeze.getInput();
  auto gather = value.getDefiningOp<GatherOp>();
  if (!gather)
    return false;
  RankedTensorType logp = typeOf(gather.getInput());
  int64_t rank = logp.getRank();
  if (rank < 1 || static_cast<int64_t>(gather.getDim()) != rank - 1 ||
      typeOf(value).getShape().back() != 1)
    return false;
  auto unsqueeze = gather.getIndex().getDefiningOp<ReshapeOp>();
  if (!unsqueeze)
    return false;
  Value targets = unsqueeze.getInput();
  ArrayRef<int64_t> positions = logp.getShape().drop_back();
  if (typeOf(targets).getShape() != positions ||
      typeOf(value).getShape().drop_back() != positions)
    return false;
  term.nll = true;
  term.logp = gather.getInput();
  term.gatherTargets = targets;
  term.targets = unreshaped(targets);
  term.readers.push_back(gather);
  return true;
}

/// sum(lp, [last]): the smoothing term's sum over the classes; `scale`
/// turns a coefficient on it into the weight of mean_c(-lp) (-V).
bool classSum(Value value, Term &term, double &scale) {
  auto sum = value.getDefiningOp<SumOp>();
  if (!sum)
    return false;
  int64_t rank = typeOf(sum.getInput()).getRank();
  if (rank < 1 || sum.getDims().size() != 1 || sum.getDims()[0] != rank - 1)
    return false;
  term.nll = false;
  term.logp = sum.getInput();
  term.readers.push_back(sum);
  scale = -static_cast<double>(typeOf(sum.getInput()).getShape().back());
  return true;
}

/// `value` as one term: coefficient * a mean (plain or masked).
std::optional<Term> termOf(Value value) {
  Linear outer = linear(value);
  Term term;
  double scale = -1.0; // weight = coefficient * scale
  if (auto mean = outer.base.getDefiningOp<MeanOp>()) {
    if (!allDims(mean.getDims(), typeOf(mean.getInput()).getRank()))
      return std::nullopt;
    Linear inner = linear(mean.getInput());
    outer.coefficient *= inner.coefficient;
    if (inner.base.getDefiningOp<LogSoftmaxOp>()) {
      // The mean of every element of lp: -mean_n mean_c(-lp).
      term.nll = false;
      term.logp = inner.base;
      term.readers.push_back(inner.last ? inner.last : mean.getOperation());
    } else if (!gatheredAt(inner.base, term) &&
               !classSum(inner.base, term, scale)) {
      return std::nullopt;
    }
  } else if (auto div = outer.base.getDefiningOp<DivOp>()) {
    // sum(where(t != k, x, 0)) / sum(t != k)
    auto numerator = div.getLhs().getDefiningOp<SumOp>();
    auto denominator = div.getRhs().getDefiningOp<SumOp>();
    if (!numerator || !denominator ||
        !allDims(numerator.getDims(), typeOf(numerator.getInput()).getRank()) ||
        !allDims(denominator.getDims(),
                 typeOf(denominator.getInput()).getRank()))
      return std::nullopt;
    std::optional<Masked> masked = maskedOf(numerator.getInput());
    std::optional<Mask> count = maskOf(denominator.getInput());
    if (!masked || !count || count->equal ||
        count->targets != masked->targets || count->index != masked->index ||
        count->size != masked->size ||
        typeOf(denominator.getInput()).getNumElements() !=
            typeOf(numerator.getInput()).getNumElements())
      return std::nullopt;
    Linear inner = linear(masked->value);
    outer.coefficient *= inner.coefficient;
    if (!gatheredAt(inner.base, term) && !classSum(inner.base, term, scale))
      return std::nullopt;
    term.index = masked->index;
    term.maskTargets = masked->targets;
    term.maskSize = masked->size;
  } else {
    return std::nullopt;
  }
  if (!term.logp.getDefiningOp<LogSoftmaxOp>())
    return std::nullopt;
  term.weight = outer.coefficient * scale;
  return term;
}

/// The terms of a sum (train.add chains), or nothing if one is not a term.
bool collectTerms(Value value, SmallVectorImpl<Term> &terms) {
  if (auto add = value.getDefiningOp<AddOp>();
      add && add.getLhs().getType() == add.getType() &&
      add.getRhs().getType() == add.getType())
    return collectTerms(add.getLhs(), terms) &&
           collectTerms(add.getRhs(), terms);
  std::optional<Term> term = termOf(value);
  if (!term)
    return false;
  terms.push_back(*term);
  return true;
}

struct RaiseCrossEntropy : RewritePattern {
  RaiseCrossEntropy(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Type f32 = Float32Type::get(getContext());
    if (op->getNumResults() != 1 ||
        op->getResult(0).getType() != RankedTensorType::get({}, f32))
      return failure();
    Value loss = op->getResult(0);
    SmallVector<Term> terms;
    if (!collectTerms(loss, terms) || terms.empty())
      return failure();
    // One log_softmax, one NLL term, the same targets and ignore_index.
    Value logp = terms.front().logp;
    const Term *nll = nullptr;
    double nllWeight = 0, smoothWeight = 0;
    llvm::SmallPtrSet<Operation *, 4> readers;
    for (const Term &term : terms) {
      if (term.logp != logp || term.index != terms.front().index)
        return failure();
      if (term.nll) {
        if (nll)
          return failure();
        nll = &term;
        nllWeight += term.weight;
      } else {
        smoothWeight += term.weight;
      }
      readers.insert(term.readers.begin(), term.readers.end());
    }
    if (!nll)
      return failure();
    for (const Term &term : terms)
      if (term.maskTargets && term.maskTargets != nll->targets)
        return failure();
    // (1 - e) * nll + e * smooth, e in [0, 1).
    if (!near(nllWeight + smoothWeight, 1.0) || smoothWeight < 0 ||
        smoothWeight >= 1.0 || nllWeight <= 0)
      return failure();
    if (smoothWeight < 1e-12)
      smoothWeight = 0;
    // lp is read only here (else its log_softmax stays and is computed
    // twice).
    for (Operation *user : logp.getUsers())
      if (!readers.contains(user))
        return failure();
    Value logits = logp.getDefiningOp<LogSoftmaxOp>().getInput();
    if (typeOf(logits).getElementType() != f32)
      return failure();
    // The masks look the targets up in vectors of the vocabulary's size.
    int64_t vocab = typeOf(logits).getShape().back();
    for (const Term &term : terms)
      if (term.maskTargets && term.maskSize != vocab)
        return failure();
    IntegerAttr ignore;
    if (nll->index) {
      ignore = rewriter.getI64IntegerAttr(*nll->index);
    }
    FloatAttr smoothing =
        smoothWeight > 0 ? rewriter.getF64FloatAttr(smoothWeight) : FloatAttr();
    rewriter.replaceOpWithNewOp<CrossEntropyOp>(
        op, loss.getType(), logits, nll->gatherTargets, /*count=*/Value(),
        ignore, smoothing);
    return success();
  }
};

} // namespace

void zeroc::raise::populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseCrossEntropy>(patterns.getContext());
}
