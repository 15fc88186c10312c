//===- FuseHeadSplit.cpp - q/k/v split and head transposes as one ---------===//
//
// Attention's input projection computes q, k and v side by side ([B, T,
// 3C]); the model splits them along the last dimension, views each as
// heads ([B, T, H, D]) and transposes each to [B, H, T, D]. Computed as
// written that is a split kernel (a copy of the whole projection) and one
// transpose per part. The same values are one transpose of the projection
// viewed as [B, T, 3, H, D] to [3, B, H, T, D], whose three contiguous
// parts are q, k and v: train.unpack of the flattened result, views in the
// buffer form. One pass over the projection fewer, two kernels fewer per
// layer.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"
#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINFUSEHEADSPLIT
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// One part of the split: its optional reshape and its transpose.
struct Part {
  ReshapeOp reshape; // null: the part is transposed as it is
  TransposeOp transpose;
};

/// The reshape and transpose that are a split result's only uses, when
/// the reshape only splits the last dimension.
std::optional<Part> partOf(Value result, int64_t leading) {
  if (!result.hasOneUse())
    return std::nullopt;
  Operation *user = *result.getUsers().begin();
  Part part{dyn_cast<ReshapeOp>(user), dyn_cast<TransposeOp>(user)};
  if (part.reshape) {
    ArrayRef<int64_t> from = typeOf(result).getShape();
    ArrayRef<int64_t> to = typeOf(part.reshape.getResult()).getShape();
    if (static_cast<int64_t>(to.size()) < leading ||
        from.take_front(leading) != to.take_front(leading) ||
        !part.reshape.getResult().hasOneUse())
      return std::nullopt;
    part.transpose =
        dyn_cast<TransposeOp>(*part.reshape.getResult().getUsers().begin());
  }
  if (!part.transpose || part.transpose->getBlock() != result.getParentBlock())
    return std::nullopt;
  return part;
}

void fuse(SplitOp split) {
  Value input = split.getInput();
  RankedTensorType inputType = typeOf(input);
  int64_t rank = inputType.getRank();
  int64_t parts = split.getNumResults();
  if (parts < 2 || static_cast<int64_t>(split.getDim()) != rank - 1)
    return;
  Type partType = split.getResult(0).getType();
  SmallVector<Part> found;
  for (Value result : split.getResults()) {
    std::optional<Part> part = partOf(result, rank - 1);
    if (!part || result.getType() != partType)
      return;
    found.push_back(*part);
  }
  // Every part viewed and transposed alike.
  Part &first = found.front();
  ArrayRef<int64_t> perm = first.transpose.getPermutation();
  Type transposed = first.transpose.getResult().getType();
  for (Part &part : found)
    if (static_cast<bool>(part.reshape) != static_cast<bool>(first.reshape) ||
        (part.reshape && part.reshape.getResult().getType() !=
                             first.reshape.getResult().getType()) ||
        part.transpose.getPermutation() != perm ||
        part.transpose.getResult().getType() != transposed)
      return;

  // The part's view: the leading dimensions, then those of the last one.
  ArrayRef<int64_t> view =
      first.reshape ? typeOf(first.reshape.getResult()).getShape()
                    : typeOf(split.getResult(0)).getShape();
  int64_t leading = rank - 1;
  SmallVector<int64_t> stacked(view.take_front(leading));
  stacked.push_back(parts);
  llvm::append_range(stacked, view.drop_front(leading));
  // The parts' axis first, then the parts' permutation, past it.
  SmallVector<int64_t> stackedPerm{leading};
  for (int64_t p : perm)
    stackedPerm.push_back(p < leading ? p : p + 1);
  auto transposedType = cast<RankedTensorType>(transposed);
  SmallVector<int64_t> resultShape{parts};
  llvm::append_range(resultShape, transposedType.getShape());
  Type element = inputType.getElementType();

  OpBuilder b(split);
  Location loc = split.getLoc();
  // Discardable attributes (train.micro_batch, the trace site) carried
  // over; views are not traced.
  auto copyAttrs = [](Operation *from, Operation *to, bool traced) {
    for (NamedAttribute attr : from->getDiscardableAttrs())
      if (traced || attr.getName() != TrainDialect::TraceAttrHelper::getNameStr())
        to->setAttr(attr.getName(), attr.getValue());
  };
  auto heads = ReshapeOp::create(
      b, loc, RankedTensorType::get(stacked, element), input);
  auto moved = TransposeOp::create(
      b, first.transpose.getLoc(), RankedTensorType::get(resultShape, element),
      heads, b.getDenseI64ArrayAttr(stackedPerm));
  auto flat = ReshapeOp::create(
      b, loc,
      RankedTensorType::get({parts * transposedType.getNumElements()},
                            element),
      moved);
  SmallVector<Type> partTypes(parts, transposed);
  auto unpack = UnpackOp::create(b, loc, partTypes, flat);
  // The views keep the split's attributes but its trace site; the
  // transpose is traced as the first part's.
  for (Operation *view : {heads.getOperation(), flat.getOperation(),
                          unpack.getOperation()})
    copyAttrs(split, view, /*traced=*/false);
  copyAttrs(first.transpose, moved, /*traced=*/true);

  for (auto [index, part] : llvm::enumerate(found)) {
    part.transpose.getResult().replaceAllUsesWith(unpack.getResult(index));
    part.transpose->erase();
    if (part.reshape)
      part.reshape->erase();
  }
  split->erase();
}

struct TrainFuseHeadSplitPass
    : zeroc::impl::TrainFuseHeadSplitBase<TrainFuseHeadSplitPass> {
  void runOnOperation() override {
    SmallVector<SplitOp> splits;
    getOperation().walk([&](SplitOp split) { splits.push_back(split); });
    for (SplitOp split : splits)
      fuse(split);
  }
};

} // namespace
