//===- RaiseAttention.cpp - scaled-dot-product attention to train.attention ===//
//
// softmax(mask(s * q @ k^T)) @ v, written out with train.matmul, a scale
// (train.scale, or a train.mul / train.div by a splat constant, on the
// scores or on q or k), an optional causal mask and train.softmax, becomes
// one train.attention. The causal mask is train.causal_mask (what the
// importer emits for is_causal); a mask made of other ops is not one this
// family recognises, and the attention stays generic. Grouped-query
// attention's repeated key/value heads (unsqueeze(2) + expand + reshape,
// i.e. repeat_interleave: query head h reads key/value head h / r) are
// folded into train.attention's own head grouping; `repeat` (head h reads
// h % Hkv) is a different computation and is left alone. Rank-3 attention
// ([N, T, D], as torch.bmm in nn.MultiheadAttention) is raised through a
// reshape to one head.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainLlamaShapes.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::singleUse;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

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

struct RaiseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    if (pv.getTransposeLhs() || pv.getTransposeRhs())
      return rewriter.notifyMatchFailure(pv, "transposed operand of p @ v");
    Value p = pv.getLhs();
    if (auto dropout = p.getDefiningOp<DropoutOp>()) {
      // train.attention has no dropout: only a dropout of p = 0 (the
      // identity) may be folded away.
      if (dropout.getP().convertToDouble() != 0.0 || !singleUse(p))
        return rewriter.notifyMatchFailure(pv, "dropout of the probabilities");
      p = dropout.getInput();
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
    }
    auto qk = scores.getDefiningOp<MatmulOp>();
    if (!qk || !singleUse(scores) || qk.getTransposeLhs())
      return rewriter.notifyMatchFailure(pv, "no q @ k^T");
    Value q = qk.getLhs(), k = qk.getRhs();
    if (!qk.getTransposeRhs()) {
      // q @ k.transpose(-2, -1)
      auto transpose = k.getDefiningOp<TransposeOp>();
      if (!transpose || !singleUse(k))
        return rewriter.notifyMatchFailure(pv, "k is not transposed");
      ArrayRef<int64_t> perm = transpose.getPermutation();
      int64_t rank = perm.size();
      for (int64_t i = 0; i < rank; ++i) {
        int64_t expected = i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2);
        if (perm[i] != expected)
          return rewriter.notifyMatchFailure(pv, "k transposed on other axes");
      }
      k = transpose.getInput();
    }
    q = stripScales(q, scale);
    k = stripScales(k, scale);
    Value v = pv.getRhs();
    if (!std::isfinite(scale) || scale <= 0.0)
      return rewriter.notifyMatchFailure(pv, "scale is not positive");
    int64_t rank = typeOf(q).getRank();
    if (rank != 3 && rank != 4)
      return rewriter.notifyMatchFailure(pv, "not rank 3 or 4");
    if (typeOf(k).getRank() != rank || typeOf(v).getRank() != rank)
      return rewriter.notifyMatchFailure(pv, "operand ranks differ");
    // Everything is matched; the only rewrites left are the raise itself.
    if (rank == 4) {
      Unrepeated ku = unrepeat(k), vu = unrepeat(v);
      if (ku.factor != vu.factor) {
        ku = {k, typeOf(k), 1};
        vu = {v, typeOf(v), 1};
      }
      if (failed(zeroc::train::attentionShape(typeOf(q).getShape(),
                                              ku.type.getShape(),
                                              vu.type.getShape(), causal)) ||
          ku.type.getElementType() != typeOf(q).getElementType() ||
          vu.type.getElementType() != typeOf(q).getElementType())
        return rewriter.notifyMatchFailure(pv, "shapes train.attention rejects");
      rewriter.setInsertionPoint(pv);
      k = materialize(ku, rewriter);
      v = materialize(vu, rewriter);
      rewriter.replaceOpWithNewOp<AttentionOp>(
          pv, pv.getType(), q, k, v,
          causal ? rewriter.getUnitAttr() : UnitAttr(),
          rewriter.getF64FloatAttr(scale));
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
            {typeOf(k).getDimSize(0), 1, typeOf(k).getDimSize(1),
             typeOf(k).getDimSize(2)},
            {typeOf(v).getDimSize(0), 1, typeOf(v).getDimSize(1),
             typeOf(v).getDimSize(2)},
            causal)))
      return rewriter.notifyMatchFailure(pv, "shapes train.attention rejects");
    rewriter.setInsertionPoint(pv);
    Value q4 = oneHead(q), k4 = oneHead(k), v4 = oneHead(v);
    auto attention = AttentionOp::create(
        rewriter, pv.getLoc(), q4.getType(), q4, k4, v4,
        causal ? rewriter.getUnitAttr() : UnitAttr(),
        rewriter.getF64FloatAttr(scale));
    rewriter.replaceOpWithNewOp<ReshapeOp>(pv, pv.getType(),
                                           attention.getResult());
    return success();
  }
};

} // namespace

void zeroc::raise::populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttention>(patterns.getContext());
}
