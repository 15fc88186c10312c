//===- RaiseViews.cpp - canonical reshape / transpose chains --------------===//
//
// train-raise's `views` family: chains of train.reshape, train.transpose and
// train.broadcast brought to one canonical form, so that a computation
// reads the same however PyTorch decomposed its views. train-raise runs it
// after the other families (which match the views as the importer wrote
// them) and then the attention family once more: torch.einsum runs each
// contraction as a bmm between rank-5 permutes and reshapes with size-1
// dimensions; canonicalised, its attention is the `[B, H, T, D]` matmuls
// RaiseAttention knows.
//
//   - a reshape of a reshape is one reshape; a reshape to its own type,
//     and a transpose by the identity, are their input;
//   - a transpose of a transpose is one transpose (composed permutation);
//   - a transpose that moves size-1 dimensions is a reshape when the other
//     dimensions keep their order, otherwise a transpose of the others
//     between two reshapes that drop and restore the size-1 dimensions;
//   - a transpose of a reshape that only merges dimensions (none of size
//     1), keeping each merged group whole and in order, is done before the
//     reshape (transposes act on the finest dimensions); a transpose of a
//     broadcast of the same rank is done before the broadcast;
//   - a batched matmul of `[N, M, K]` by `[N, K, P]` operands, each the
//     reshape of a value of rank >= 4 whose leading dimensions merge to N
//     (`[b..., M, K]`, `[c..., K, P]`), is done on `[b..., M, K]` by
//     `[b..., K, P]` (the operand with the fewer leading dimensions gives
//     them; the other is reshaped to them) and reshaped to the result.
//
// Transposes move towards the inputs and never gain a size-1 dimension, so
// the rewriting ends. Dimension 0 (the batch) is never dropped and never
// moved: train-batch-size and train-data-parallel, which run after
// train-raise, find it leading as the importer wrote it.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::singleUse;
using zeroc::raise::typeOf;

namespace {

RankedTensorType withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, typeOf(like).getElementType());
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (int64_t i = 0, e = perm.size(); i < e; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/// reshape(reshape(x)) -> reshape(x); reshape(x) to x's type -> x.
struct FoldReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    if (auto inner = input.getDefiningOp<ReshapeOp>())
      input = inner.getInput();
    else if (input.getType() != op.getType())
      return failure();
    if (input.getType() == op.getType())
      rewriter.replaceOp(op, input);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), input);
    return success();
  }
};

/// transpose(x, identity) -> x; transpose(transpose(x, p1), p2) ->
/// transpose(x, p1[p2]).
struct FoldTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPermutation();
    if (isIdentity(perm)) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> first = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(first[p]);
    if (isIdentity(composed))
      rewriter.replaceOp(op, inner.getInput());
    else
      rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                               inner.getInput(), composed);
    return success();
  }
};

/// A transpose of a value with size-1 dimensions (other than dimension 0):
/// a reshape when the other dimensions keep their order, else the
/// transpose of the others between a squeezing and an unsqueezing reshape.
struct SqueezeTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPermutation();
    ArrayRef<int64_t> shape = typeOf(op.getInput()).getShape();
    if (perm.empty() || perm[0] != 0)
      return failure();
    auto unit = [&](int64_t d) { return d != 0 && shape[d] == 1; };
    if (llvm::none_of(perm, unit))
      return failure();
    // The kept dimensions, numbered among themselves.
    SmallVector<int64_t> index(shape.size(), -1);
    SmallVector<int64_t> squeezed;
    for (int64_t d = 0, e = shape.size(); d < e; ++d)
      if (!unit(d)) {
        index[d] = squeezed.size();
        squeezed.push_back(shape[d]);
      }
    SmallVector<int64_t> kept;
    for (int64_t p : perm)
      if (!unit(p))
        kept.push_back(index[p]);
    if (isIdentity(kept)) {
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
      return success();
    }
    SmallVector<int64_t> transposed;
    for (int64_t k : kept)
      transposed.push_back(squeezed[k]);
    Location loc = op.getLoc();
    Value in = ReshapeOp::create(rewriter, loc, withShape(op.getInput(), squeezed),
                                 op.getInput());
    Value t = TransposeOp::create(rewriter, loc,
                                  withShape(op.getInput(), transposed), in, kept);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), t);
    return success();
  }
};

/// The groups of a reshape from `from` to `to` without size-1 dimensions:
/// runs of consecutive dimensions of equal products, as pairs of
/// [begin, end) in `from` and in `to`.
struct Group {
  int64_t fromBegin, fromEnd, toBegin, toEnd;
};
std::optional<SmallVector<Group>> reshapeGroups(ArrayRef<int64_t> from,
                                                ArrayRef<int64_t> to) {
  SmallVector<Group> groups;
  int64_t i = 0, j = 0, n = from.size(), m = to.size();
  while (i < n && j < m) {
    Group g{i, i + 1, j, j + 1};
    int64_t a = from[i], b = to[j];
    while (a != b) {
      if (a < b) {
        if (g.fromEnd == n)
          return std::nullopt;
        a *= from[g.fromEnd++];
      } else {
        if (g.toEnd == m)
          return std::nullopt;
        b *= to[g.toEnd++];
      }
    }
    groups.push_back(g);
    i = g.fromEnd;
    j = g.toEnd;
  }
  if (i != n || j != m)
    return std::nullopt;
  return groups;
}

/// transpose(reshape(y), p) -> reshape(transpose(y, p')) when p keeps each
/// group of the reshape whole and in order.
struct TransposeBeforeReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    ArrayRef<int64_t> perm = op.getPermutation();
    if (!reshape || !singleUse(op.getInput()) || perm.empty() || perm[0] != 0 ||
        !isa<FloatType>(typeOf(reshape.getInput()).getElementType()))
      return failure();
    ArrayRef<int64_t> from = typeOf(reshape.getInput()).getShape();
    ArrayRef<int64_t> to = typeOf(reshape.getResult()).getShape();
    if (llvm::is_contained(from, 1) || llvm::is_contained(to, 1) ||
        llvm::is_contained(from, ShapedType::kDynamic))
      return failure();
    std::optional<SmallVector<Group>> groups = reshapeGroups(from, to);
    // Only through merges: a transpose is done on the finest dimensions,
    // never on dimensions a reshape merged from a split of them.
    if (!groups || llvm::any_of(*groups, [](const Group &g) {
          return g.toEnd - g.toBegin != 1;
        }))
      return failure();
    SmallVector<int64_t> groupOf(to.size());
    for (auto [k, g] : llvm::enumerate(*groups))
      for (int64_t d = g.toBegin; d < g.toEnd; ++d)
        groupOf[d] = k;
    SmallVector<int64_t> fromPerm, fromShape;
    for (int64_t i = 0, e = perm.size(); i < e;) {
      const Group &g = (*groups)[groupOf[perm[i]]];
      // The group's dimensions, in order, starting here.
      for (int64_t d = g.toBegin; d < g.toEnd; ++d, ++i)
        if (i >= e || perm[i] != d)
          return failure();
      for (int64_t d = g.fromBegin; d < g.fromEnd; ++d) {
        fromPerm.push_back(d);
        fromShape.push_back(from[d]);
      }
    }
    if (isIdentity(fromPerm))
      return failure(); // the transpose moves nothing (FoldTranspose's case)
    Value t = TransposeOp::create(rewriter, op.getLoc(),
                                  withShape(reshape.getInput(), fromShape),
                                  reshape.getInput(), fromPerm);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), t);
    return success();
  }
};

/// transpose(broadcast(z), p) -> broadcast(transpose(z, p)) for a broadcast
/// of the same rank.
struct TransposeBeforeBroadcast : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getInput().getDefiningOp<BroadcastOp>();
    if (!broadcast || !singleUse(op.getInput()))
      return failure();
    ArrayRef<int64_t> perm = op.getPermutation();
    ArrayRef<int64_t> in = typeOf(broadcast.getInput()).getShape();
    if (in.size() != perm.size())
      return failure();
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(in[p]);
    Value t = TransposeOp::create(rewriter, op.getLoc(),
                                  withShape(broadcast.getInput(), shape),
                                  broadcast.getInput(), perm);
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(), t);
    return success();
  }
};

/// A batched matmul of rank-3 operands, each reshaped from a value of
/// rank >= 4 by merging its leading dimensions (the last two kept), done
/// on those values: matmul(reshape(a), reshape(b)) ->
/// reshape(matmul(a, reshape(b))), with the leading dimensions of the
/// operand that has fewer of them (the lhs's on a tie), the other operand
/// reshaped to them. With `onlyProbs`, only where the lhs is attention
/// probabilities of rank 4 (softmax or its dropout) used by the product
/// alone, so that the attention family raises p @ v.
struct UnmergeMatmulBatch : OpRewritePattern<MatmulOp> {
  UnmergeMatmulBatch(MLIRContext *context, bool onlyProbs = false)
      : OpRewritePattern(context), onlyProbs(onlyProbs) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<ReshapeOp>();
    auto rhs = op.getRhs().getDefiningOp<ReshapeOp>();
    if (!lhs || !rhs)
      return failure();
    if (onlyProbs &&
        (op.getTransposeLhs() || op.getTransposeRhs() ||
         !singleUse(op.getLhs()) || typeOf(lhs.getInput()).getRank() != 4 ||
         !isa_and_nonnull<SoftmaxOp, DropoutOp>(
             lhs.getInput().getDefiningOp())))
      return failure();
    ArrayRef<int64_t> out = typeOf(op.getResult()).getShape();
    // The leading dimensions of a reshape of rank >= 4 to rank 3 that
    // keeps the last two, or none.
    auto leading = [&](ReshapeOp r) -> std::optional<ArrayRef<int64_t>> {
      ArrayRef<int64_t> merged = typeOf(r.getResult()).getShape();
      ArrayRef<int64_t> in = typeOf(r.getInput()).getShape();
      if (merged.size() != 3 || in.size() < 4 ||
          in.take_back(2) != merged.take_back(2))
        return std::nullopt;
      int64_t n = 1;
      for (int64_t d : in.drop_back(2))
        n *= d;
      if (n != merged[0])
        return std::nullopt;
      return in.drop_back(2);
    };
    std::optional<ArrayRef<int64_t>> l = leading(lhs), r = leading(rhs);
    if (!l || !r || out.size() != 3)
      return failure();
    ArrayRef<int64_t> batch = l->size() <= r->size() ? *l : *r;
    auto operand = [&](ReshapeOp reshape) -> Value {
      Value in = reshape.getInput();
      ArrayRef<int64_t> shape = typeOf(in).getShape();
      if (shape.drop_back(2) == batch)
        return in;
      SmallVector<int64_t> to(batch);
      to.append(shape.end() - 2, shape.end());
      return ReshapeOp::create(rewriter, reshape.getLoc(), withShape(in, to), in);
    };
    SmallVector<int64_t> shape(batch);
    shape.push_back(out[1]);
    shape.push_back(out[2]);
    Value a = operand(lhs), b = operand(rhs);
    Value product =
        MatmulOp::create(rewriter, op.getLoc(), withShape(op.getResult(), shape),
                         a, b, op.getTransposeLhsAttr(), op.getTransposeRhsAttr());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), product);
    return success();
  }

private:
  bool onlyProbs;
};

} // namespace

void zeroc::raise::populateUnmergeProbsPatterns(RewritePatternSet &patterns) {
  patterns.add<UnmergeMatmulBatch>(patterns.getContext(), /*onlyProbs=*/true);
}

void zeroc::raise::populateViewPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldReshape, FoldTranspose, SqueezeTranspose,
               TransposeBeforeReshape, TransposeBeforeBroadcast,
               UnmergeMatmulBatch>(patterns.getContext());
}
