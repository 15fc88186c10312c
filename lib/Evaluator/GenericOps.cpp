//===- GenericOps.cpp - the reductions and gathers of ATen ----------------===//
//
// The forward ops and derivative helpers of TrainGenericOps.td (train.amax,
// train.var, train.log_softmax, train.gather), each a transcription of its
// description, in double. test/Evaluator/gradcheck-generic.mlir checks the
// derivatives against central differences of these definitions.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

/// For every element of `x`, the linear index of the element of the
/// reduction of x over `dims` (the dims removed) it contributes to.
std::vector<int64_t> reductionMap(const Tensor &x, ArrayRef<int64_t> dims) {
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t d : dims)
    reduced[d] = true;
  std::vector<int64_t> map(x.numElements());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    std::vector<int64_t> index = unravel(i, x.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!reduced[d])
        o = o * x.shape[d] + index[d];
    map[i] = o;
  }
  return map;
}

LogicalResult evalAmax(AmaxOp op, Operands in, Results &out, RankContext &) {
  const Tensor &x = *in[0];
  std::vector<int64_t> map = reductionMap(x, op.getDims());
  std::fill(out[0].data.begin(), out[0].data.end(),
            -std::numeric_limits<double>::infinity());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double &y = out[0].data[map[i]];
    // NaN propagates, as torch.amax.
    if (std::isnan(x.data[i]) || x.data[i] > y)
      y = std::isnan(y) ? y : x.data[i];
  }
  return success();
}

LogicalResult evalAmaxGrad(AmaxGradOp op, Operands in, Results &out,
                           RankContext &) {
  const Tensor &grad = *in[0], &x = *in[1], &y = *in[2];
  std::vector<int64_t> map = reductionMap(x, op.getDims());
  std::vector<double> ties(y.numElements(), 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.data[i] == y.data[map[i]])
      ties[map[i]] += 1.0;
  for (int64_t i = 0; i < x.numElements(); ++i)
    out[0].data[i] = x.data[i] == y.data[map[i]]
                         ? grad.data[map[i]] / ties[map[i]]
                         : 0.0;
  return success();
}

LogicalResult evalVar(VarOp op, Operands in, Results &out, RankContext &) {
  const Tensor &x = *in[0];
  std::vector<int64_t> map = reductionMap(x, op.getDims());
  int64_t outputs = out[0].numElements();
  int64_t count = x.numElements() / outputs;
  std::vector<double> mean(outputs, 0.0), squares(outputs, 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i)
    mean[map[i]] += x.data[i];
  for (double &m : mean)
    m /= static_cast<double>(count);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double d = x.data[i] - mean[map[i]];
    squares[map[i]] += d * d;
  }
  double divisor = static_cast<double>(count - op.getCorrection());
  for (int64_t o = 0; o < outputs; ++o)
    out[0].data[o] = squares[o] / divisor;
  return success();
}

LogicalResult evalLogSoftmax(LogSoftmaxOp, Operands in, Results &out,
                             RankContext &) {
  const Tensor &x = *in[0];
  int64_t width = lastDim(x), rows = numRows(x);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * width;
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < width; ++c)
      max = std::max(max, row[c]);
    double sum = 0;
    for (int64_t c = 0; c < width; ++c)
      sum += std::exp(row[c] - max);
    double logSum = max + std::log(sum);
    for (int64_t c = 0; c < width; ++c)
      out[0].data[r * width + c] = row[c] - logSum;
  }
  return success();
}

/// Calls visit(position in index, position in data) for every element of
/// `index`, where data (of `dataShape`) is the gathered tensor; fails,
/// reporting at `op`, on an index outside [0, dataShape[dim]).
template <typename Visit>
LogicalResult forEachGathered(Operation *op, const Tensor &index,
                              const std::vector<int64_t> &dataShape,
                              int64_t dim, RankContext &ctx, Visit visit) {
  int64_t limit = dataShape[dim];
  for (int64_t p = 0; p < index.numElements(); ++p) {
    double value = index.data[p];
    if (!(value >= 0 && value < static_cast<double>(limit) &&
          value == std::floor(value))) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "index " << formatValue(value)
                                << " at position " << p << " is outside [0, "
                                << limit << ")";
      if (ctx.interpreter.options().ranks > 1)
        diag << " on rank " << ctx.rank;
      return failure();
    }
    std::vector<int64_t> coordinates = unravel(p, index.shape);
    coordinates[dim] = static_cast<int64_t>(value);
    visit(p, ravel(coordinates, dataShape));
  }
  return success();
}

LogicalResult evalGather(GatherOp op, Operands in, Results &out,
                         RankContext &ctx) {
  const Tensor &x = *in[0], &index = *in[1];
  return forEachGathered(op, index, x.shape, op.getDim(), ctx,
                         [&](int64_t p, int64_t source) {
                           out[0].data[p] = x.data[source];
                         });
}

LogicalResult evalGatherGrad(GatherGradOp op, Operands in, Results &out,
                             RankContext &ctx) {
  const Tensor &grad = *in[0], &index = *in[1];
  std::fill(out[0].data.begin(), out[0].data.end(), 0.0);
  return forEachGathered(op, index, out[0].shape, op.getDim(), ctx,
                         [&](int64_t p, int64_t target) {
                           out[0].data[target] += grad.data[p];
                         });
}

} // namespace

void registerGenericOps(OpRegistry &registry) {
  registry.add<AmaxOp>(evalAmax);
  registry.add<AmaxGradOp>(evalAmaxGrad);
  registry.add<VarOp>(evalVar);
  registry.add<LogSoftmaxOp>(evalLogSoftmax);
  registry.add<GatherOp>(evalGather);
  registry.add<GatherGradOp>(evalGatherGrad);
}

} // namespace zeroc::eval
