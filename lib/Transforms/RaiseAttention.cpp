//===- RaiseAttention.cpp - scaled-dot-product attention to train.attention ===//
//
// softmax(mask(s * q @ k^T)) @ v, written out with train.matmul, a scale
// (train.scale, or a train.mul / train.div by a splat constant, on the
// scores or on q or k), an optional causal mask and train.softmax, becomes
// one train.attention, a train.dropout of the probabilities (before the
// product with v) becoming the attention's own dropout (the same mask).
// The causal mask is train.causal_mask, or a constant mask computed at
// compile time from fills, constants, tril/triu, slices, broadcasts,
// compares and selects, added (-inf above the diagonal, 0
// elsewhere) or selected against a -inf fill; any other mask (not causal,
// another constant than -inf) leaves the attention generic. Grouped-query
// attention's repeated key/value heads (unsqueeze(2) + expand + reshape,
// i.e. repeat_interleave: query head h reads key/value head h / r) are
// folded into train.attention's own head grouping; `repeat` (head h reads
// h % Hkv) is a different computation and is left alone. Rank-3 attention
// ([N, T, D], as torch.bmm in nn.MultiheadAttention) is raised through a
// reshape to one head. k^T may be any transpose that contracts its input's
// last axis (k.transpose(-2, -1), or the [B, S, H, D] -> [B, H, D, S] that
// the views family (RaiseViews.cpp) makes of einsum's permutes), also
// after the repetition and behind a reshape of size-1 dimensions only; k
// is then that input transposed by the permutation with its last two
// entries swapped.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainLlamaShapes.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::singleUse;
using zeroc::raise::typeOf;

namespace {

/// Strips the constant scales of `value` (single-use train.scale, or
/// train.mul / train.div by a splat constant that keep the shape),
/// multiplying them into `scale`.
Value stripScales(Value value, double &scale) {
  while (Operation *op = value.getDefiningOp()) {
    if (!singleUse(value))
      return value;
    if (auto s = dyn_cast<ScaleOp>(op)) {
      scale *= s.getFactor().convertToDouble();
      value = s.getInput();
      continue;
    }
    std::optional<zeroc::raise::WithConstant> c = zeroc::raise::withConstant(op);
    if (c && isa<MulOp>(op)) {
      scale *= c->constant;
      value = c->other;
      continue;
    }
    if (c && isa<DivOp>(op) && !c->constantOnLeft && c->constant != 0.0) {
      scale /= c->constant;
      value = c->other;
      continue;
    }
    return value;
  }
  return value;
}

/// Key/value heads repeated as repeat_interleave does
/// (`x[:, :, None].expand(B, Hkv, r, S, D).reshape(B, Hkv * r, S, D)`):
/// the value before the repetition (`source`, of type `type` or a
/// [B, Hkv, 1, S, D] value to reshape to it) and the factor r; r = 1 and
/// the value itself when it is not repeated so.
struct Unrepeated {
  Value source;
  RankedTensorType type;
  int64_t factor;
};
Unrepeated unrepeat(Value value) {
  Unrepeated none{value, typeOf(value), 1};
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape || !singleUse(value))
    return none;
  auto broadcast = reshape.getInput().getDefiningOp<BroadcastOp>();
  if (!broadcast || !singleUse(broadcast.getResult()))
    return none;
  ArrayRef<int64_t> in = typeOf(broadcast.getInput()).getShape();
  ArrayRef<int64_t> out = typeOf(broadcast.getResult()).getShape();
  ArrayRef<int64_t> result = typeOf(value).getShape();
  if (in.size() != 5 || out.size() != 5 || result.size() != 4 || in[2] != 1 ||
      in[0] != out[0] || in[1] != out[1] || in[3] != out[3] ||
      in[4] != out[4] || result[0] != in[0] || result[1] != in[1] * out[2] ||
      result[2] != in[3] || result[3] != in[4])
    return none;
  Value source = broadcast.getInput();
  RankedTensorType type = RankedTensorType::get(
      {in[0], in[1], in[3], in[4]}, typeOf(source).getElementType());
  if (auto unsqueeze = source.getDefiningOp<ReshapeOp>();
      unsqueeze && unsqueeze.getInput().getType() == type)
    source = unsqueeze.getInput();
  return {source, type, out[2]};
}

/// The unrepeated value, reshaped to its [B, Hkv, S, D] type if needed.
Value materialize(const Unrepeated &u, PatternRewriter &rewriter) {
  if (u.source.getType() == u.type)
    return u.source;
  return ReshapeOp::create(rewriter, u.source.getLoc(), u.type, u.source);
}

/// k from `kT = transpose(x, p)`: x transposed by p with its last two
/// entries swapped (x itself when that is the identity), reshaped to
/// `kType` when kT was reshaped (size-1 dimensions only); `x` is kT's
/// input or that input's unscaled value.
Value untranspose(Value x, TransposeOp kT, RankedTensorType kType,
                  PatternRewriter &rewriter) {
  SmallVector<int64_t> perm(kT.getPermutation());
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  bool identity = true;
  for (int64_t i = 0, e = perm.size(); i < e; ++i)
    identity &= perm[i] == i;
  SmallVector<int64_t> shape(typeOf(kT.getResult()).getShape());
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  auto type = RankedTensorType::get(shape, kType.getElementType());
  Value k = identity ? x
                     : TransposeOp::create(rewriter, kT.getLoc(), type, x, perm)
                           .getResult();
  if (type != kType)
    k = ReshapeOp::create(rewriter, kT.getLoc(), kType, k);
  return k;
}

/// Whether `from` and `to` differ only by size-1 dimensions, with the same
/// last two dimensions, none of size 1.
bool onlyUnitDims(RankedTensorType from, RankedTensorType to) {
  auto squeeze = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> kept;
    for (int64_t d : shape)
      if (d != 1)
        kept.push_back(d);
    return kept;
  };
  ArrayRef<int64_t> a = from.getShape(), b = to.getShape();
  return a.size() >= 2 && b.size() >= 2 && a.take_back(2) == b.take_back(2) &&
         a[a.size() - 1] != 1 && a[a.size() - 2] != 1 &&
         squeeze(a) == squeeze(b);
}

/// The last two dimensions of a constant mask, computed at compile time:
/// `rows` x `cols` values, the same for every leading index. Built from
/// fills, `train.constant`s (uniform over the leading dimensions),
/// tril/triu, slices, broadcasts, reshapes of the leading dimensions, casts,
/// compares and selects: what `torch.tril(torch.ones(T, T))`, nanoGPT's
/// `bias[:, :, :T, :T] == 0` or `torch.full(...).triu(1)` import to.
struct Matrix {
  int64_t rows = 1, cols = 1;
  std::vector<double> values;
  double at(int64_t i, int64_t j) const { return values[i * cols + j]; }
};

constexpr int64_t kMaxMaskElements = int64_t(1) << 22;

std::pair<int64_t, int64_t> lastTwo(RankedTensorType type) {
  int64_t rank = type.getRank();
  return {rank >= 2 ? type.getDimSize(rank - 2) : 1,
          rank >= 1 ? type.getDimSize(rank - 1) : 1};
}

std::optional<Matrix> constantMatrix(Value value, int depth = 0) {
  if (depth > 16)
    return std::nullopt;
  RankedTensorType type = typeOf(value);
  int64_t rows = lastTwo(type).first, cols = lastTwo(type).second;
  if (rows * cols > kMaxMaskElements)
    return std::nullopt;
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto fill = dyn_cast<FillOp>(op)) {
    m.values.assign(rows * cols, fill.getValue().convertToDouble());
    return m;
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !isa<FloatType>(dense.getElementType()))
      return std::nullopt;
    std::vector<double> all;
    for (const APFloat &v : dense.getValues<APFloat>())
      all.push_back(v.convertToDouble());
    if (all.size() % (rows * cols) != 0)
      return std::nullopt;
    m.values.assign(all.begin(), all.begin() + rows * cols);
    for (size_t k = 0; k < all.size(); ++k)
      if (all[k] != m.values[k % (rows * cols)] &&
          !(std::isnan(all[k]) && std::isnan(m.values[k % (rows * cols)])))
        return std::nullopt; // not uniform over the leading dimensions
    return m;
  }
  if (isa<TrilOp, TriuOp, CastOp>(op)) {
    std::optional<Matrix> in = constantMatrix(op->getOperand(0), depth + 1);
    if (!in || in->rows != rows || in->cols != cols)
      return std::nullopt;
    if (isa<CastOp>(op))
      return in;
    bool lower = isa<TrilOp>(op);
    int64_t diagonal = lower ? cast<TrilOp>(op).getDiagonal()
                             : cast<TriuOp>(op).getDiagonal();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool kept = lower ? j - i <= diagonal : j - i >= diagonal;
        if (!kept)
          in->values[i * cols + j] = 0.0;
      }
    return in;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Only the leading dimensions may change.
    RankedTensorType in = typeOf(reshape.getInput());
    if (lastTwo(in) != std::pair(rows, cols) ||
        std::min<int64_t>(in.getRank(), 2) != std::min<int64_t>(type.getRank(), 2))
      return std::nullopt;
    return constantMatrix(reshape.getInput(), depth + 1);
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    RankedTensorType in = typeOf(broadcast.getInput());
    std::optional<Matrix> src = constantMatrix(broadcast.getInput(), depth + 1);
    if (!src)
      return std::nullopt;
    // Aligned at the last dimension; a missing dimension counts as 1.
    int64_t srcRows = in.getRank() >= 2 ? src->rows : 1;
    if ((srcRows != rows && srcRows != 1) || (src->cols != cols && src->cols != 1))
      return std::nullopt;
    m.values.resize(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        m.values[i * cols + j] =
            src->values[(srcRows == 1 ? 0 : i) * src->cols + (src->cols == 1 ? 0 : j)];
    return m;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    RankedTensorType in = typeOf(slice.getInput());
    int64_t rank = in.getRank();
    if (rank < 2)
      return std::nullopt;
    std::optional<Matrix> src = constantMatrix(slice.getInput(), depth + 1);
    if (!src)
      return std::nullopt;
    ArrayRef<int64_t> offsets = slice.getOffsets(), strides = slice.getStrides();
    m.values.resize(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        m.values[i * cols + j] =
            src->at(offsets[rank - 2] + i * strides[rank - 2],
                    offsets[rank - 1] + j * strides[rank - 1]);
    return m;
  }
  if (auto compare = dyn_cast<CompareOp>(op)) {
    std::optional<Matrix> a = constantMatrix(compare.getLhs(), depth + 1),
                          b = constantMatrix(compare.getRhs(), depth + 1);
    if (!a || !b || a->values.size() != b->values.size())
      return std::nullopt;
    m.values.resize(rows * cols);
    for (size_t k = 0; k < m.values.size(); ++k) {
      double x = a->values[k], y = b->values[k];
      bool r = false;
      switch (compare.getPredicate()) {
      case ComparePredicate::eq: r = x == y; break;
      case ComparePredicate::ne: r = x != y; break;
      case ComparePredicate::lt: r = x < y; break;
      case ComparePredicate::le: r = x <= y; break;
      case ComparePredicate::gt: r = x > y; break;
      case ComparePredicate::ge: r = x >= y; break;
      }
      m.values[k] = r ? 1.0 : 0.0;
    }
    return m;
  }
  if (auto select = dyn_cast<SelectOp>(op)) {
    std::optional<Matrix> c = constantMatrix(select.getMask(), depth + 1),
                          a = constantMatrix(select.getOnTrue(), depth + 1),
                          b = constantMatrix(select.getOnFalse(), depth + 1);
    if (!c || !a || !b || c->values.size() != a->values.size() ||
        a->values.size() != b->values.size())
      return std::nullopt;
    m.values.resize(rows * cols);
    for (size_t k = 0; k < m.values.size(); ++k)
      m.values[k] = c->values[k] != 0.0 ? a->values[k] : b->values[k];
    return m;
  }
  return std::nullopt;
}

/// Whether `m` is `value(i, j)` for a square T x T matrix.
template <typename F>
bool isSquare(const std::optional<Matrix> &m, int64_t t, F value) {
  if (!m || m->rows != t || m->cols != t)
    return false;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) {
      double want = value(i, j), got = m->at(i, j);
      if (!(got == want))
        return false;
    }
  return true;
}

/// A causal mask written with generic ops around `scores` ([..., T, T]):
/// `scores + M` with M = -inf above the diagonal and 0 elsewhere,
/// `select(P, scores, -inf)` with P non-zero exactly on and below the
/// diagonal, or `select(P, -inf, scores)` with P non-zero exactly above.
/// Returns the scores, or null.
Value unmaskCausal(Value masked) {
  if (!singleUse(masked))
    return {};
  RankedTensorType type = typeOf(masked);
  int64_t t = lastTwo(type).first;
  if (type.getRank() < 2 || t != lastTwo(type).second)
    return {};
  const double inf = std::numeric_limits<double>::infinity();
  auto above = [](int64_t i, int64_t j) { return j > i; };
  Operation *op = masked.getDefiningOp();
  if (auto add = dyn_cast_or_null<AddOp>(op)) {
    for (auto [x, mask] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
      if (x.getType() != type)
        continue;
      RankedTensorType maskType = typeOf(mask);
      if (maskType.getRank() < 2 || lastTwo(maskType) != std::pair(t, t))
        continue;
      if (isSquare(constantMatrix(mask), t, [&](int64_t i, int64_t j) {
            return above(i, j) ? -inf : 0.0;
          }))
        return x;
    }
    return {};
  }
  if (auto select = dyn_cast_or_null<SelectOp>(op)) {
    std::optional<double> onTrue = zeroc::raise::splatValue(select.getOnTrue());
    std::optional<double> onFalse = zeroc::raise::splatValue(select.getOnFalse());
    auto nonZero = [&](bool where) {
      std::optional<Matrix> m = constantMatrix(select.getMask());
      if (m)
        for (double &v : m->values)
          v = v != 0.0 ? 1.0 : 0.0;
      return isSquare(m, t, [&](int64_t i, int64_t j) {
        return above(i, j) == where ? 1.0 : 0.0;
      });
    };
    if (onFalse == -inf && nonZero(/*where above=*/false))
      return select.getOnTrue();
    if (onTrue == -inf && nonZero(/*where above=*/true))
      return select.getOnFalse();
  }
  return {};
}

/// Gives `attention` the dropout `dropout` draws (none when null): the
/// probabilities tensor it drops from is the attention's [B, H, T, S] one
/// (a rank-3 [N, T, S] is [N, 1, T, S], with the same element positions).
void copyDropout(DropoutOp dropout, AttentionOp attention) {
  if (!dropout)
    return;
  attention.setDropoutAttr(dropout.getPAttr());
  attention.setSeedAttr(dropout.getSeedAttr());
  if (Value step = dropout.getStep())
    attention.getStepMutable().assign(step);
  attention.setBatchDimAttr(dropout.getBatchDimAttr());
  attention.setRanksAttr(dropout.getRanksAttr());
  attention.setMicroBatchAttr(dropout.getMicroBatchAttr());
  attention.setMicroBatchesAttr(dropout.getMicroBatchesAttr());
}

struct RaiseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    if (pv.getTransposeLhs() || pv.getTransposeRhs())
      return rewriter.notifyMatchFailure(pv, "transposed operand of p @ v");
    Value p = pv.getLhs();
    // A dropout of the probabilities becomes train.attention's own (the
    // same attributes, so the same mask); one of p = 0 is the identity.
    DropoutOp dropout = p.getDefiningOp<DropoutOp>();
    if (dropout) {
      if (!singleUse(p))
        return rewriter.notifyMatchFailure(pv, "dropout used elsewhere");
      if (dropout.getP().convertToDouble() == 0.0)
        dropout = {};
      else if (dropout.getBatchDim() && *dropout.getBatchDim() != 0 &&
               typeOf(p).getRank() != 4)
        return rewriter.notifyMatchFailure(pv, "dropout split off dim 0");
      p = p.getDefiningOp<DropoutOp>().getInput();
    }
    auto softmax = p.getDefiningOp<SoftmaxOp>();
    if (!softmax || !singleUse(p))
      return rewriter.notifyMatchFailure(pv, "no softmax");
    double scale = 1.0;
    Value scores = stripScales(softmax.getInput(), scale);
    bool causal = false;
    if (auto mask = scores.getDefiningOp<CausalMaskOp>();
        mask && !mask.getZero() && singleUse(scores)) {
      causal = true;
      scores = stripScales(mask.getInput(), scale);
    } else if (Value unmasked = unmaskCausal(scores)) {
      causal = true;
      scores = stripScales(unmasked, scale);
    }
    auto qk = scores.getDefiningOp<MatmulOp>();
    if (!qk || !singleUse(scores) || qk.getTransposeLhs())
      return rewriter.notifyMatchFailure(pv, "no q @ k^T");
    Value q = stripScales(qk.getLhs(), scale);
    Value v = pv.getRhs();
    // k, or k^T (`kT`, the rhs of q @ k^T without transpose_rhs), before
    // its constant scales.
    Value k = qk.getRhs();
    bool kTransposed = !qk.getTransposeRhs();
    k = stripScales(k, scale);
    if (!std::isfinite(scale) || scale <= 0.0)
      return rewriter.notifyMatchFailure(pv, "scale is not positive");
    int64_t rank = typeOf(q).getRank();
    if (rank != 3 && rank != 4)
      return rewriter.notifyMatchFailure(pv, "not rank 3 or 4");
    if (typeOf(k).getRank() != rank || typeOf(v).getRank() != rank)
      return rewriter.notifyMatchFailure(pv, "operand ranks differ");
    // Grouped-query attention's repetition, of k or of k^T (the
    // repetition's shapes are the same with S and D swapped).
    Unrepeated ku{k, typeOf(k), 1}, vu{v, typeOf(v), 1};
    if (rank == 4) {
      ku = unrepeat(k);
      vu = unrepeat(v);
      if (ku.factor != vu.factor) {
        ku = {k, typeOf(k), 1};
        vu = {v, typeOf(v), 1};
      }
    }
    // k^T must be a transpose (q @ k.transpose(-2, -1), or another
    // permutation that contracts its input's last axis: einsum's canonical
    // views); its input, with the constant scales stripped, transposed by
    // that permutation with its last two entries swapped is k.
    TransposeOp kTranspose;
    Value kInput;
    if (kTransposed) {
      auto transposeOf = [&](const Unrepeated &u) {
        if (u.source.getType() != u.type || !singleUse(u.source))
          return TransposeOp();
        Value t = u.source;
        // A reshape that only adds or drops size-1 dimensions and keeps
        // the last two (the views' form of a one-head k^T) is seen through.
        if (auto reshape = t.getDefiningOp<ReshapeOp>();
            reshape && onlyUnitDims(typeOf(reshape.getInput()), typeOf(t)) &&
            singleUse(reshape.getInput()))
          t = reshape.getInput();
        return t.getDefiningOp<TransposeOp>();
      };
      kTranspose = transposeOf(ku);
      if (!kTranspose && ku.factor != 1) {
        // Repeated from a value of another shape: the repetition stays.
        ku = {k, typeOf(k), 1};
        vu = {v, typeOf(v), 1};
        kTranspose = transposeOf(ku);
      }
      if (!kTranspose)
        return rewriter.notifyMatchFailure(pv, "k is not transposed");
      // The contracted axis of k^T is its input's last one (the feature
      // axis, as k.transpose(-2, -1) and einsum's views have it), not
      // another axis swapped in.
      ArrayRef<int64_t> perm = kTranspose.getPermutation();
      if (perm[perm.size() - 2] != int64_t(perm.size()) - 1)
        return rewriter.notifyMatchFailure(pv, "k transposed on other axes");
      kInput = stripScales(kTranspose.getInput(), scale);
      if (!std::isfinite(scale) || scale <= 0.0)
        return rewriter.notifyMatchFailure(pv, "scale is not positive");
    }
    RankedTensorType kType = ku.type;
    if (kTransposed) {
      SmallVector<int64_t> shape(kType.getShape());
      std::swap(shape[rank - 2], shape[rank - 1]);
      kType = RankedTensorType::get(shape, kType.getElementType());
    }
    // Everything is matched; the only rewrites left are the raise itself.
    if (rank == 4) {
      if (failed(zeroc::train::attentionShape(typeOf(q).getShape(),
                                              kType.getShape(),
                                              vu.type.getShape(), causal)) ||
          kType.getElementType() != typeOf(q).getElementType() ||
          vu.type.getElementType() != typeOf(q).getElementType())
        return rewriter.notifyMatchFailure(pv, "shapes train.attention rejects");
      rewriter.setInsertionPoint(pv);
      k = kTransposed ? untranspose(kInput, kTranspose, kType, rewriter)
                      : materialize(ku, rewriter);
      v = materialize(vu, rewriter);
      auto attention = AttentionOp::create(
          rewriter, pv.getLoc(), pv.getType(), q, k, v, Value(),
          causal ? rewriter.getUnitAttr() : UnitAttr(),
          rewriter.getF64FloatAttr(scale), FloatAttr(), IntegerAttr(),
          IntegerAttr(), IntegerAttr(), IntegerAttr(), IntegerAttr());
      copyDropout(dropout, attention);
      rewriter.replaceOp(pv, attention.getResult());
      return success();
    }
    // Rank 3: one head.
    auto oneHead = [&](Value x) -> Value {
      ArrayRef<int64_t> s = typeOf(x).getShape();
      return ReshapeOp::create(
          rewriter, x.getLoc(),
          RankedTensorType::get({s[0], 1, s[1], s[2]},
                                typeOf(x).getElementType()),
          x);
    };
    if (failed(zeroc::train::attentionShape(
            {typeOf(q).getDimSize(0), 1, typeOf(q).getDimSize(1),
             typeOf(q).getDimSize(2)},
            {kType.getDimSize(0), 1, kType.getDimSize(1), kType.getDimSize(2)},
            {typeOf(v).getDimSize(0), 1, typeOf(v).getDimSize(1),
             typeOf(v).getDimSize(2)},
            causal)))
      return rewriter.notifyMatchFailure(pv, "shapes train.attention rejects");
    rewriter.setInsertionPoint(pv);
    if (kTransposed)
      k = untranspose(kInput, kTranspose, kType, rewriter);
    Value q4 = oneHead(q), k4 = oneHead(k), v4 = oneHead(v);
    auto attention = AttentionOp::create(
        rewriter, pv.getLoc(), q4.getType(), q4, k4, v4, Value(),
        causal ? rewriter.getUnitAttr() : UnitAttr(),
        rewriter.getF64FloatAttr(scale), FloatAttr(), IntegerAttr(),
        IntegerAttr(), IntegerAttr(), IntegerAttr(), IntegerAttr());
    copyDropout(dropout, attention);
    rewriter.replaceOpWithNewOp<ReshapeOp>(pv, pv.getType(),
                                           attention.getResult());
    return success();
  }
};

} // namespace

void zeroc::raise::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttention>(patterns.getContext());
  populateUnmergeProbsPatterns(patterns);
}
