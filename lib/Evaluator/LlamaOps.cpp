//===- LlamaOps.cpp - the ops of Llama-class models -----------------------===//
//
// The forward ops and derivative helpers of TrainLlamaOps.td, each a
// transcription of its description, in double. Grouped-query attention is
// train.attention's own handler (ForwardOps.cpp, GradOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "AttentionDropout.h"
#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Support/Random.h"
#include "zeroc/Support/Rope.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

LogicalResult evalRmsNorm(RmsNormOp op, Operands in, Results &out,
                          RankContext &) {
  const Tensor &x = *in[0], &weight = *in[1];
  double eps = op.getEps().convertToDouble();
  int64_t width = lastDim(x), rows = numRows(x);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * width;
    double meanSquare = 0;
    for (int64_t c = 0; c < width; ++c)
      meanSquare += row[c] * row[c];
    meanSquare /= width;
    double rrms = 1.0 / std::sqrt(meanSquare + eps);
    for (int64_t c = 0; c < width; ++c)
      out[0].data[r * width + c] = row[c] * rrms * weight.data[c];
  }
  return success();
}

LogicalResult evalRmsNormGrad(RmsNormGradOp op, Operands in, Results &out,
                              RankContext &) {
  const Tensor &dy = *in[0], &x = *in[1], &weight = *in[2];
  Tensor &dx = out[0], &dweight = out[1];
  double eps = op.getEps().convertToDouble();
  int64_t width = lastDim(x), rows = numRows(x);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * width;
    const double *dyRow = dy.data.data() + r * width;
    double meanSquare = 0;
    for (int64_t c = 0; c < width; ++c)
      meanSquare += row[c] * row[c];
    meanSquare /= width;
    double rrms = 1.0 / std::sqrt(meanSquare + eps);
    // y = x * rrms * w: with g = dy * w, dx = rrms * (g - x * rrms^2 *
    // mean(g * x)).
    double meanGX = 0;
    for (int64_t c = 0; c < width; ++c) {
      meanGX += dyRow[c] * weight.data[c] * row[c];
      dweight.data[c] += dyRow[c] * row[c] * rrms;
    }
    meanGX /= width;
    for (int64_t c = 0; c < width; ++c)
      dx.data[r * width + c] =
          rrms * (dyRow[c] * weight.data[c] - row[c] * rrms * rrms * meanGX);
  }
  return success();
}

LogicalResult evalSilu(SiluOp, Operands in, Results &out, RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[i] * sigmoid(in[0]->data[i]);
  return success();
}

LogicalResult evalSiluGrad(SiluGradOp, Operands in, Results &out,
                           RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i) {
    double x = in[1]->data[i], s = sigmoid(x);
    out[0].data[i] = in[0]->data[i] * s * (1.0 + x * (1.0 - s));
  }
  return success();
}

/// The op's `scaling` attribute (none, [factor] or llama3's four values).
rope::Scaling ropeScaling(RopeOp op) {
  rope::Scaling scaling;
  if (std::optional<ArrayRef<double>> values = op.getScaling()) {
    scaling.factor = (*values)[0];
    if (values->size() == 4) {
      scaling.lowFreqFactor = (*values)[1];
      scaling.highFreqFactor = (*values)[2];
      scaling.original = (*values)[3];
    }
  }
  return scaling;
}

LogicalResult evalRope(RopeOp op, Operands in, Results &out, RankContext &) {
  const Tensor &x = *in[0];
  int64_t d = lastDim(x), half = d / 2, seqDim = op.getSeqDim();
  int64_t inner = 1; // elements per position
  for (int64_t k = seqDim + 1; k < x.rank(); ++k)
    inner *= x.shape[k];
  int64_t positions = x.shape[seqDim];
  double theta = op.getTheta().convertToDouble();
  double sign = op.getInverse() ? -1.0 : 1.0;
  bool interleaved = op.getStyle() == RopeStyle::interleaved;
  rope::Scaling scaling = ropeScaling(op);
  for (int64_t row = 0; row < numRows(x); ++row) {
    int64_t p = (row * d / inner) % positions;
    const double *xr = x.data.data() + row * d;
    double *yr = out[0].data.data() + row * d;
    for (int64_t i = 0; i < half; ++i) {
      double angle =
          static_cast<double>(p) *
          rope::scaledInvFreq(std::pow(theta, -2.0 * static_cast<double>(i) /
                                                  static_cast<double>(d)),
                              scaling);
      double c = std::cos(angle), s = sign * std::sin(angle);
      int64_t a = interleaved ? 2 * i : i,
              b = interleaved ? 2 * i + 1 : i + half;
      yr[a] = xr[a] * c - xr[b] * s;
      yr[b] = xr[b] * c + xr[a] * s;
    }
  }
  return success();
}

/// Calls fn(input linear index, slice linear index) for every element of a
/// slice of `large` shaped `small`.
template <typename Fn>
void forEachSliced(const std::vector<int64_t> &large,
                   const std::vector<int64_t> &small, ArrayRef<int64_t> offsets,
                   ArrayRef<int64_t> strides, Fn &&fn) {
  int64_t count = numElements(small);
  std::vector<int64_t> index(large.size());
  for (int64_t o = 0; o < count; ++o) {
    std::vector<int64_t> at = unravel(o, small);
    for (size_t dim = 0; dim < large.size(); ++dim)
      index[dim] = offsets[dim] + at[dim] * strides[dim];
    fn(ravel(index, large), o);
  }
}

LogicalResult evalSlice(SliceOp op, Operands in, Results &out, RankContext &) {
  forEachSliced(
      in[0]->shape, out[0].shape, op.getOffsets(), op.getStrides(),
      [&](int64_t from, int64_t to) { out[0].data[to] = in[0]->data[from]; });
  return success();
}

LogicalResult evalSliceGrad(SliceGradOp op, Operands in, Results &out,
                            RankContext &) {
  forEachSliced(
      out[0].shape, in[0]->shape, op.getOffsets(), op.getStrides(),
      [&](int64_t to, int64_t from) { out[0].data[to] = in[0]->data[from]; });
  return success();
}

LogicalResult evalDropout(DropoutOp op, Operands in, Results &out,
                          RankContext &ctx) {
  const Tensor &x = *in[0];
  if (!op.getStep()) { // evaluation: the identity
    out[0].data = x.data;
    return success();
  }
  double stepValue = in[1]->data[0];
  if (!(stepValue >= 0) || stepValue != std::floor(stepValue))
    return op.emitOpError("step ")
           << formatValue(stepValue) << " is not a non-negative integer";
  uint64_t step = static_cast<uint64_t>(stepValue);
  double p = op.getP().convertToDouble();
  uint64_t seed = static_cast<uint64_t>(op.getSeed());
  // Where this rank's elements sit in the global batch.
  int64_t rows, inner, offset, globalRows;
  if (failed(dropoutSplit(op, x.shape, ctx, inner, rows, offset, globalRows)))
    return failure();
  uint32_t threshold = random::dropoutThreshold(p);
  double scale = 1.0 / (1.0 - p);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    uint64_t position = random::dropoutPosition(
        static_cast<uint64_t>(i), static_cast<uint64_t>(inner),
        static_cast<uint64_t>(rows), static_cast<uint64_t>(offset),
        static_cast<uint64_t>(globalRows));
    out[0].data[i] = random::dropoutKeeps(seed, step, position, threshold)
                         ? x.data[i] * scale
                         : 0.0;
  }
  return success();
}

} // namespace

void registerLlamaOps(OpRegistry &registry) {
  registry.add<RmsNormOp>(evalRmsNorm);
  registry.add<RmsNormGradOp>(evalRmsNormGrad);
  registry.add<SiluOp>(evalSilu);
  registry.add<SiluGradOp>(evalSiluGrad);
  registry.add<RopeOp>(evalRope);
  registry.add<SliceOp>(evalSlice);
  registry.add<SliceGradOp>(evalSliceGrad);
  registry.add<DropoutOp>(evalDropout);
}

} // namespace zeroc::eval
