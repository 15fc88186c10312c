//===- RaiseRope.cpp - rotary position embeddings to train.rope -----------===//
//
// Two conventions of rotary embeddings, written out with generic ops and
// tables of cosines and sines, become one train.rope:
//
// rotate_half (Hugging Face, GPT-NeoX), on x of shape [..., D]:
//   x * cos + concat(-x[..., D/2:], x[..., :D/2], dim = -1) * sin
// interleaved (Meta's reference code, llama2.c; the importer writes
// view_as_complex's product as the same ops), on r = x viewed [..., D/2, 2]:
//   a = r[..., 0], b = r[..., 1]
//   concat((a * cos - b * sin)[..., None], (a * sin + b * cos)[..., None])
//
// The tables must be train.constant values (buffers, or tables computed in
// the forward pass and folded by the importer), broadcast against the
// rotated values. They are recognised by value: theta is fitted from one
// entry (position 1, the last pair), then EVERY entry is checked against
// train.rope's definition, cos / sin(p * theta^(-2i/D)) for position p
// along the sequence dimension and pair i, within a few f32 rounding
// errors. A table of another theta, of positions that do not start at 0,
// of scaled frequencies, with cos and sin swapped, or the formula with a
// sign, axis or pairing of its own stays generic.
//
//===----------------------------------------------------------------------===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace zeroc::train;
using zeroc::raise::singleUse;
using zeroc::raise::negationOf;
using zeroc::raise::typeOf;

namespace {

/// A table of floats: the values of a train.constant, row-major.
struct Table {
  SmallVector<double> values;
  SmallVector<int64_t> shape;
  /// The element type's relative rounding error.
  double epsilon;
};

std::optional<Table> tableOf(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense)
    return std::nullopt;
  Table table;
  auto type = cast<RankedTensorType>(dense.getType());
  table.shape.assign(type.getShape().begin(), type.getShape().end());
  for (const APFloat &v : dense.getValues<APFloat>())
    table.values.push_back(v.convertToDouble());
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  table.epsilon = std::ldexp(1.0, 1 - static_cast<int>(
                                          APFloat::semanticsPrecision(semantics)));
  return table;
}

/// The shape a table broadcast against `shape` (numpy's rule: aligned on
/// the right, each dimension 1 or equal) is aligned to, with leading 1s; none
/// when it does not broadcast, or when it broadcasts over the last
/// (feature) dimension.
std::optional<SmallVector<int64_t>> aligned(const Table &table,
                                            ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t tableRank = static_cast<int64_t>(table.shape.size());
  if (tableRank > rank || tableRank == 0)
    return std::nullopt;
  SmallVector<int64_t> result(rank - tableRank, 1);
  result.append(table.shape.begin(), table.shape.end());
  for (int64_t d = 0; d < rank; ++d)
    if (result[d] != 1 && result[d] != shape[d])
      return std::nullopt;
  if (result.back() != shape.back())
    return std::nullopt;
  return result;
}

/// The rotary tables of one rotation: cosines and sines over features of
/// `shape` (the rotated values: [..., D] for rotate_half, [..., D/2] for
/// the interleaved pairs), feature j belonging to pair `j % pairs`.
struct RopeFit {
  double theta;
  int64_t seqDim;
};

/// Whether `table` is, at every entry, `fn(p * theta^(-2i/D))` with p the
/// index along `seqDim` and i the entry's pair.
bool tableMatches(const Table &table, ArrayRef<int64_t> alignedShape,
                  int64_t seqDim, int64_t headDim, double theta,
                  double (*fn)(double)) {
  int64_t rank = static_cast<int64_t>(alignedShape.size());
  int64_t pairs = headDim / 2;
  // Elements per step along seqDim in the table's row-major layout.
  int64_t inner = 1;
  for (int64_t d = seqDim + 1; d < rank; ++d)
    inner *= alignedShape[d];
  int64_t width = alignedShape.back();
  for (int64_t k = 0, e = static_cast<int64_t>(table.values.size()); k < e;
       ++k) {
    int64_t p = (k / inner) % alignedShape[seqDim];
    int64_t i = (k % width) % pairs;
    double angle = static_cast<double>(p) *
                   std::pow(theta, -2.0 * static_cast<double>(i) /
                                       static_cast<double>(headDim));
    // The table was computed in its element type: the frequency, the
    // product and the cosine each round.
    double tolerance = 8.0 * table.epsilon * (1.0 + std::abs(angle));
    if (!(std::abs(table.values[k] - fn(angle)) <= tolerance))
      return false;
  }
  return true;
}

double cosine(double a) { return std::cos(a); }
double sine(double a) { return std::sin(a); }

/// Fits theta and the sequence dimension to a cosine and a sine table
/// broadcast against `shape`, and checks every entry of both. `headDim` is
/// D (the rotation's feature count); the tables' last dimension is
/// `shape.back()`.
std::optional<RopeFit> fitTables(Value cosValue, Value sinValue,
                                 ArrayRef<int64_t> shape, int64_t headDim) {
  std::optional<Table> cos = tableOf(cosValue), sin = tableOf(sinValue);
  if (!cos || !sin)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> cosShape = aligned(*cos, shape);
  std::optional<SmallVector<int64_t>> sinShape = aligned(*sin, shape);
  if (!cosShape || !sinShape || *cosShape != *sinShape)
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t pairs = headDim / 2;
  // The sequence dimension: the table's one dimension (other than the
  // features) that is not broadcast; with none, a single position.
  SmallVector<int64_t> candidates;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if ((*cosShape)[d] != 1)
      candidates.push_back(d);
  if (candidates.empty()) {
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (shape[d] == 1) {
        candidates.push_back(d);
        break;
      }
  }
  for (int64_t seqDim : candidates) {
    // Broadcast along the sequence would give every position one angle.
    if ((*cosShape)[seqDim] != shape[seqDim])
      continue;
    double theta = 10000.0; // what D = 2 or a single position leave free
    if (pairs >= 2 && shape[seqDim] >= 2) {
      // Position 1, pair pairs - 1 (the other indices 0): f = theta^(-2i/D).
      int64_t inner = 1;
      for (int64_t d = seqDim + 1; d < rank; ++d)
        inner *= (*cosShape)[d];
      int64_t at = inner + (pairs - 1);
      double f = std::atan2(sin->values[at], cos->values[at]);
      if (!(f > 0.0 && f < 1.0))
        continue;
      theta = std::pow(f, -static_cast<double>(headDim) /
                              (2.0 * static_cast<double>(pairs - 1)));
      if (!std::isfinite(theta))
        continue;
      // The theta of a model is a round number, the fit its f32 rounding.
      double round = std::round(theta);
      if (std::abs(round - theta) <= 1e-4 * theta)
        theta = round;
    }
    if (tableMatches(*cos, *cosShape, seqDim, headDim, theta, cosine) &&
        tableMatches(*sin, *cosShape, seqDim, headDim, theta, sine))
      return RopeFit{theta, seqDim};
  }
  return std::nullopt;
}

/// If `value` is `train.slice` of the last dimension of `x`'s type-mate
/// (all other dimensions whole, stride 1) starting at `offset` and `size`
/// wide, returns the sliced value.
Value sliceOfLast(Value value, int64_t offset, int64_t size) {
  auto slice = value.getDefiningOp<SliceOp>();
  if (!slice)
    return {};
  ArrayRef<int64_t> in = typeOf(slice.getInput()).getShape();
  ArrayRef<int64_t> out = typeOf(slice.getResult()).getShape();
  int64_t rank = static_cast<int64_t>(in.size());
  for (int64_t d = 0; d < rank; ++d) {
    bool last = d == rank - 1;
    if (slice.getStrides()[d] != 1 ||
        slice.getOffsets()[d] != (last ? offset : 0) ||
        out[d] != (last ? size : in[d]))
      return {};
  }
  return slice.getInput();
}

/// `a * b` (train.mul of two operands, one a table of `tableShape`'s
/// broadcast, one of type `type`): {operand, table}, either order.
struct Scaled {
  Value operand, table;
};
std::optional<Scaled> scaledByTable(Value value, Type type) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul || mul.getType() != type || !singleUse(value))
    return std::nullopt;
  if (mul.getLhs().getType() == type && mul.getRhs().getDefiningOp<ConstantOp>())
    return Scaled{mul.getLhs(), mul.getRhs()};
  if (mul.getRhs().getType() == type && mul.getLhs().getDefiningOp<ConstantOp>())
    return Scaled{mul.getRhs(), mul.getLhs()};
  return std::nullopt;
}

Value createRope(PatternRewriter &rewriter, Location loc, Value x,
                 const RopeFit &fit, RopeStyle style) {
  return RopeOp::create(rewriter, loc, x.getType(), x,
                        rewriter.getF64FloatAttr(fit.theta),
                        rewriter.getI64IntegerAttr(fit.seqDim),
                        RopeStyleAttr::get(rewriter.getContext(), style),
                        UnitAttr(), DenseF64ArrayAttr());
}

/// rotate_half: x * cos + concat(-x2, x1) * sin, anchored on the add.
struct RaiseRotateHalf : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto type = add.getType();
    if (!isa<RankedTensorType>(type))
      return failure();
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getRank() < 2 || !tensor.hasStaticShape())
      return failure();
    int64_t headDim = tensor.getShape().back();
    if (headDim < 2 || headDim % 2 != 0)
      return failure();
    int64_t half = headDim / 2;
    for (int order = 0; order < 2; ++order) {
      std::optional<Scaled> byCos =
          scaledByTable(add->getOperand(order), type);
      std::optional<Scaled> bySin =
          scaledByTable(add->getOperand(1 - order), type);
      if (!byCos || !bySin)
        continue;
      Value x = byCos->operand;
      auto concat = bySin->operand.getDefiningOp<ConcatOp>();
      if (!concat || !singleUse(bySin->operand) ||
          concat.getInputs().size() != 2 ||
          static_cast<int64_t>(concat.getDim()) != tensor.getRank() - 1)
        continue;
      Value negated = concat.getInputs()[0];
      if (!singleUse(negated))
        continue;
      Value secondHalf = negationOf(negated);
      if (!secondHalf || sliceOfLast(secondHalf, half, half) != x ||
          sliceOfLast(concat.getInputs()[1], 0, half) != x)
        continue;
      std::optional<RopeFit> fit =
          fitTables(byCos->table, bySin->table, tensor.getShape(), headDim);
      if (!fit)
        continue;
      rewriter.replaceOp(add, createRope(rewriter, add.getLoc(), x, *fit,
                                         RopeStyle::rotate_half));
      return success();
    }
    return failure();
  }
};

/// The operands of `a * c - b * s` (train.sub) or `a * s + b * c`
/// (train.add, either order) with c, s tables: the two products in the
/// formula's order.
std::optional<std::pair<Scaled, Scaled>> products(Value value, bool isSub) {
  Operation *op = value.getDefiningOp();
  if (!op || !singleUse(value) || (isSub ? !isa<SubOp>(op) : !isa<AddOp>(op)))
    return std::nullopt;
  Type type = value.getType();
  std::optional<Scaled> lhs = scaledByTable(op->getOperand(0), type);
  std::optional<Scaled> rhs = scaledByTable(op->getOperand(1), type);
  if (!lhs || !rhs)
    return std::nullopt;
  return std::make_pair(*lhs, *rhs);
}

/// `r[..., k]` of r shaped [..., D/2, 2] (a slice of the last dimension at
/// k, reshaped to drop it): r.
Value pairComponent(Value value, int64_t k) {
  auto squeeze = value.getDefiningOp<ReshapeOp>();
  if (!squeeze)
    return {};
  Value pairs = sliceOfLast(squeeze.getInput(), k, 1);
  if (!pairs)
    return {};
  ArrayRef<int64_t> shape = typeOf(pairs).getShape();
  if (shape.size() < 3 || shape.back() != 2 ||
      typeOf(value).getShape() != shape.drop_back())
    return {};
  return pairs;
}

/// interleaved: concat((a*cos - b*sin)[..., None], (a*sin + b*cos)[..., None])
/// over the pairs (a, b) of r, anchored on the concat.
struct RaiseInterleaved : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = typeOf(concat.getResult());
    int64_t rank = type.getRank();
    if (rank < 3 || !type.hasStaticShape() || concat.getInputs().size() != 2 ||
        static_cast<int64_t>(concat.getDim()) != rank - 1 ||
        type.getShape().back() != 2)
      return failure();
    ArrayRef<int64_t> halfShape = type.getShape().drop_back();
    Value parts[2];
    for (int k = 0; k < 2; ++k) {
      auto unsqueeze = concat.getInputs()[k].getDefiningOp<ReshapeOp>();
      if (!unsqueeze || !singleUse(concat.getInputs()[k]) ||
          typeOf(unsqueeze.getInput()).getShape() != halfShape)
        return failure();
      parts[k] = unsqueeze.getInput();
    }
    // real = a * c - b * s.
    std::optional<std::pair<Scaled, Scaled>> real = products(parts[0], true);
    std::optional<std::pair<Scaled, Scaled>> imag = products(parts[1], false);
    if (!real || !imag)
      return failure();
    Value pairs = pairComponent(real->first.operand, 0);
    if (!pairs || pairComponent(real->second.operand, 1) != pairs ||
        typeOf(pairs) != type)
      return failure();
    // imag = a * s + b * c, either order of the sum.
    Scaled aSin = imag->first, bCos = imag->second;
    if (pairComponent(aSin.operand, 0) != pairs)
      std::swap(aSin, bCos);
    if (pairComponent(aSin.operand, 0) != pairs ||
        pairComponent(bCos.operand, 1) != pairs)
      return failure();
    int64_t headDim = 2 * halfShape.back();
    std::optional<RopeFit> fit =
        fitTables(real->first.table, real->second.table, halfShape, headDim);
    if (!fit)
      return failure();
    // The same tables (by value) in the second component.
    std::optional<RopeFit> second =
        fitTables(bCos.table, aSin.table, halfShape, headDim);
    if (!second || second->theta != fit->theta ||
        second->seqDim != fit->seqDim)
      return failure();

    // x: the pairs viewed [..., D] (through the reshape that made them).
    SmallVector<int64_t> flat(halfShape);
    flat.back() = headDim;
    auto flatType = RankedTensorType::get(flat, type.getElementType());
    Value source = pairs;
    if (auto view = pairs.getDefiningOp<ReshapeOp>())
      source = view.getInput();
    Location loc = concat.getLoc();
    Value x = source.getType() == flatType
                  ? source
                  : ReshapeOp::create(rewriter, loc, flatType, source)
                        .getResult();
    Value rope = createRope(rewriter, loc, x, *fit, RopeStyle::interleaved);
    // Users that view the pairs as another shape read the rotation
    // directly; any other user reads it viewed as pairs.
    for (OpOperand &use : llvm::make_early_inc_range(concat->getUses())) {
      auto view = dyn_cast<ReshapeOp>(use.getOwner());
      if (!view)
        continue;
      if (view.getType() == flatType)
        rewriter.replaceOp(view, rope);
      else
        rewriter.replaceOpWithNewOp<ReshapeOp>(view, view.getType(), rope);
    }
    if (concat->use_empty())
      rewriter.eraseOp(concat);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(concat, type, rope);
    return success();
  }
};

} // namespace

void zeroc::raise::populateRopePatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseRotateHalf, RaiseInterleaved>(patterns.getContext());
}
