//===- Collectives.cpp - collectives across simulated ranks ---------------===//
//
// The simulated ranks form a 1-D shard.grid of size N (--ranks): rank r is
// the process with linear (and multi-) index r. A collective over
// grid_axes = [0] combines every rank's value, in rank order; one with no
// grid_axes is a group of one (the value itself). The upstream `shard`
// collectives and zeroc's own asynchronous train.*_start ops live here.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::shard;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const RankValues *>;
using Results = std::vector<RankValues>;

/// Checks that `gridName` is a 1-D grid of the simulated size and that
/// `axes` is [] or [0]; returns the group size (1 or N).
FailureOr<int64_t> groupSize(Operation *op, FlatSymbolRefAttr gridName,
                             ArrayRef<int16_t> axes, Interpreter &interp) {
  auto grid = interp.symbols().lookupNearestSymbolFrom<GridOp>(op, gridName);
  if (!grid)
    return op->emitOpError("no shard.grid named ") << gridName;
  int64_t ranks = interp.options().ranks;
  ArrayRef<int64_t> shape = grid.getShape();
  if (shape.size() != 1 ||
      (shape[0] != ShapedType::kDynamic && shape[0] != ranks)) {
    InFlightDiagnostic diag = op->emitOpError("grid ")
                              << gridName << " has shape [";
    llvm::interleaveComma(shape, diag);
    diag << "], but --ranks " << ranks << " simulates a 1-D grid of size "
         << ranks;
    return diag;
  }
  if (axes.empty())
    return int64_t(1);
  if (axes.size() == 1 && axes[0] == 0)
    return ranks;
  InFlightDiagnostic diag = op->emitOpError("grid_axes [");
  llvm::interleaveComma(axes, diag);
  diag << "] are not supported on a 1-D grid (use [0])";
  return diag;
}

/// The members of `rank`'s group: itself, or every rank.
std::vector<int64_t> groupOf(int64_t rank, int64_t size) {
  if (size == 1)
    return {rank};
  std::vector<int64_t> members(size);
  for (int64_t r = 0; r < size; ++r)
    members[r] = r;
  return members;
}

/// Reduces the members' values elementwise into `result`, each converted
/// first to the result's element type.
LogicalResult reduceInto(Operation *op, ReductionKind kind,
                         const RankValues &inputs,
                         const std::vector<int64_t> &members, bool fp64,
                         Tensor &result) {
  auto converted = [&](int64_t member, int64_t i) {
    double value = inputs[member].data[i];
    return fp64 ? value : roundTo(value, result.type);
  };
  bool integer = !isFloat(result.type);
  for (int64_t i = 0; i < result.numElements(); ++i) {
    double acc = converted(members[0], i);
    for (size_t m = 1; m < members.size(); ++m) {
      double value = converted(members[m], i);
      switch (kind) {
      case ReductionKind::Sum:
      case ReductionKind::Average:
        acc += value;
        break;
      case ReductionKind::Max:
        acc = std::max(acc, value);
        break;
      case ReductionKind::Min:
        acc = std::min(acc, value);
        break;
      case ReductionKind::Product:
        acc *= value;
        break;
      case ReductionKind::BitwiseAnd:
      case ReductionKind::BitwiseOr:
      case ReductionKind::BitwiseXor: {
        if (!integer)
          return op->emitOpError("bitwise reduction of a float tensor");
        int64_t a = static_cast<int64_t>(acc), b = static_cast<int64_t>(value);
        acc = static_cast<double>(kind == ReductionKind::BitwiseAnd  ? (a & b)
                                  : kind == ReductionKind::BitwiseOr ? (a | b)
                                                                     : (a ^ b));
        break;
      }
      case ReductionKind::Generic:
        return op->emitOpError("reduction = generic is not supported by the "
                               "reference evaluator");
      }
    }
    if (kind == ReductionKind::Average)
      acc /= static_cast<double>(members.size());
    result.data[i] = acc;
  }
  return success();
}

/// Part `part` of `parts` equal pieces of `input` along `axis`.
Tensor sliceAlong(const Tensor &input, int64_t axis, int64_t part,
                  int64_t parts) {
  std::vector<int64_t> shape = input.shape;
  int64_t size = shape[axis], piece = size / parts, outer, inner;
  shape[axis] = piece;
  Tensor result(shape, input.type);
  splitAround(input.shape, axis, outer, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < piece; ++p)
      for (int64_t i = 0; i < inner; ++i)
        result.data[(o * piece + p) * inner + i] =
            input.data[(o * size + part * piece + p) * inner + i];
  return result;
}

/// Checks that dimension `axis` of `shape` exists and splits into `parts`.
LogicalResult checkSplittable(Operation *op, StringRef what,
                              const std::vector<int64_t> &shape, int64_t axis,
                              int64_t parts) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return op->emitOpError() << what << " " << axis
                             << " is out of range for rank " << shape.size();
  if (shape[axis] % parts != 0)
    return op->emitOpError()
           << what << " " << axis << " of size " << shape[axis]
           << " does not split into " << parts << " equal parts";
  return success();
}

LogicalResult checkShape(Operation *op, const Tensor &computed,
                         const Tensor &declared) {
  if (computed.shape == declared.shape)
    return success();
  return op->emitOpError("result should have shape ")
         << formatShape(computed.shape) << " on a grid of this size, but "
         << "its type says " << formatShape(declared.shape);
}

LogicalResult evalAllReduce(AllReduceOp op, Operands in, Results &out,
                            Interpreter &interp) {
  FailureOr<int64_t> size =
      groupSize(op, op.getGridAttr(), op.getGridAxes(), interp);
  if (failed(size))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank)
    if (failed(reduceInto(op, op.getReduction(), *in[0], groupOf(rank, *size),
                          interp.options().fp64, out[0][rank])))
      return failure();
  return success();
}

LogicalResult evalReduceScatter(ReduceScatterOp op, Operands in, Results &out,
                                Interpreter &interp) {
  FailureOr<int64_t> size =
      groupSize(op, op.getGridAttr(), op.getGridAxes(), interp);
  if (failed(size))
    return failure();
  int64_t axis = op.getScatterAxis().getSExtValue();
  const RankValues &inputs = *in[0];
  if (failed(checkSplittable(op, "scatter_axis", inputs[0].shape, axis, *size)))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank) {
    Tensor reduced(inputs[rank].shape, out[0][rank].type);
    if (failed(reduceInto(op, op.getReduction(), inputs, groupOf(rank, *size),
                          interp.options().fp64, reduced)))
      return failure();
    Tensor piece = sliceAlong(reduced, axis, *size == 1 ? 0 : rank, *size);
    if (failed(checkShape(op, piece, out[0][rank])))
      return failure();
    out[0][rank] = std::move(piece);
  }
  return success();
}

LogicalResult evalAllGather(AllGatherOp op, Operands in, Results &out,
                            Interpreter &interp) {
  FailureOr<int64_t> size =
      groupSize(op, op.getGridAttr(), op.getGridAxes(), interp);
  if (failed(size))
    return failure();
  int64_t axis = op.getGatherAxis().getSExtValue();
  const RankValues &inputs = *in[0];
  if (failed(checkSplittable(op, "gather_axis", inputs[0].shape, axis, 1)))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank) {
    std::vector<int64_t> members = groupOf(rank, *size);
    std::vector<int64_t> shape = inputs[rank].shape;
    int64_t piece = shape[axis];
    shape[axis] = piece * static_cast<int64_t>(members.size());
    Tensor gathered(shape, out[0][rank].type);
    if (failed(checkShape(op, gathered, out[0][rank])))
      return failure();
    int64_t outer, inner;
    splitAround(shape, axis, outer, inner);
    for (size_t m = 0; m < members.size(); ++m) {
      const Tensor &part = inputs[members[m]];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t p = 0; p < piece; ++p)
          for (int64_t i = 0; i < inner; ++i)
            gathered.data[(o * shape[axis] + m * piece + p) * inner + i] =
                part.data[(o * piece + p) * inner + i];
    }
    out[0][rank] = std::move(gathered);
  }
  return success();
}

LogicalResult evalAllSlice(AllSliceOp op, Operands in, Results &out,
                           Interpreter &interp) {
  FailureOr<int64_t> size =
      groupSize(op, op.getGridAttr(), op.getGridAxes(), interp);
  if (failed(size))
    return failure();
  int64_t axis = op.getSliceAxis().getSExtValue();
  const RankValues &inputs = *in[0];
  if (failed(checkSplittable(op, "slice_axis", inputs[0].shape, axis, *size)))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank) {
    Tensor piece = sliceAlong(inputs[rank], axis, *size == 1 ? 0 : rank, *size);
    piece.type = out[0][rank].type;
    if (failed(checkShape(op, piece, out[0][rank])))
      return failure();
    out[0][rank] = std::move(piece);
  }
  return success();
}

LogicalResult evalProcessLinearIndex(ProcessLinearIndexOp op, Operands,
                                     Results &out, Interpreter &interp) {
  if (failed(groupSize(op, op.getGridAttr(), {}, interp)))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank)
    out[0][rank].data[0] = static_cast<double>(rank);
  return success();
}

LogicalResult evalProcessMultiIndex(ProcessMultiIndexOp op, Operands,
                                    Results &out, Interpreter &interp) {
  if (failed(groupSize(op, op.getGridAttr(), {}, interp)))
    return failure();
  ArrayRef<int16_t> axes = op.getAxes();
  if (!(axes.empty() || (axes.size() == 1 && axes[0] == 0)))
    return op.emitOpError("axes must be [] or [0] on a 1-D grid");
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank)
    out[0][rank].data[0] = static_cast<double>(rank);
  return success();
}

LogicalResult evalGridShape(GridShapeOp op, Operands, Results &out,
                            Interpreter &interp) {
  if (failed(groupSize(op, op.getGridAttr(), {}, interp)))
    return failure();
  for (RankValues &values : out)
    for (Tensor &value : values)
      value.data[0] = static_cast<double>(interp.options().ranks);
  return success();
}

//===----------------------------------------------------------------------===//
// zeroc's asynchronous collectives: flat tensors, every rank of a 1-D grid,
// sum. The simulation completes them at once; train.wait passes the result.
//===----------------------------------------------------------------------===//

LogicalResult evalAllReduceStart(zeroc::train::AllReduceStartOp op, Operands in,
                                 Results &out, Interpreter &interp) {
  FailureOr<int64_t> size = groupSize(op, op.getGridAttr(), {0}, interp);
  if (failed(size))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank)
    if (failed(reduceInto(op, ReductionKind::Sum, *in[0], groupOf(rank, *size),
                          interp.options().fp64, out[0][rank])))
      return failure();
  return success();
}

LogicalResult evalReduceScatterStart(zeroc::train::ReduceScatterStartOp op,
                                     Operands in, Results &out,
                                     Interpreter &interp) {
  FailureOr<int64_t> size = groupSize(op, op.getGridAttr(), {0}, interp);
  if (failed(size))
    return failure();
  const RankValues &inputs = *in[0];
  if (failed(checkSplittable(op, "dimension", inputs[0].shape, 0, *size)))
    return failure();
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank) {
    Tensor reduced(inputs[rank].shape, out[0][rank].type);
    if (failed(reduceInto(op, ReductionKind::Sum, inputs, groupOf(rank, *size),
                          interp.options().fp64, reduced)))
      return failure();
    Tensor piece = sliceAlong(reduced, 0, rank, *size);
    if (failed(checkShape(op, piece, out[0][rank])))
      return failure();
    out[0][rank] = std::move(piece);
  }
  return success();
}

LogicalResult evalAllGatherStart(zeroc::train::AllGatherStartOp op, Operands in,
                                 Results &out, Interpreter &interp) {
  FailureOr<int64_t> size = groupSize(op, op.getGridAttr(), {0}, interp);
  if (failed(size))
    return failure();
  const RankValues &inputs = *in[0];
  Tensor gathered({inputs[0].numElements() * *size}, out[0][0].type);
  if (failed(checkShape(op, gathered, out[0][0])))
    return failure();
  for (int64_t member = 0; member < *size; ++member)
    std::copy(inputs[member].data.begin(), inputs[member].data.end(),
              gathered.data.begin() + member * inputs[0].numElements());
  for (int64_t rank = 0; rank < interp.options().ranks; ++rank)
    out[0][rank] = gathered;
  return success();
}

} // namespace

void registerCollectives(OpRegistry &registry) {
  registry.addGlobal<zeroc::train::AllReduceStartOp>(evalAllReduceStart);
  registry.addGlobal<zeroc::train::ReduceScatterStartOp>(
      evalReduceScatterStart);
  registry.addGlobal<zeroc::train::AllGatherStartOp>(evalAllGatherStart);
  registry.addGlobal<AllReduceOp>(evalAllReduce);
  registry.addGlobal<ReduceScatterOp>(evalReduceScatter);
  registry.addGlobal<AllGatherOp>(evalAllGather);
  registry.addGlobal<AllSliceOp>(evalAllSlice);
  registry.addGlobal<ProcessLinearIndexOp>(evalProcessLinearIndex);
  registry.addGlobal<ProcessMultiIndexOp>(evalProcessMultiIndex);
  registry.addGlobal<GridShapeOp>(evalGridShape);
}

} // namespace zeroc::eval
