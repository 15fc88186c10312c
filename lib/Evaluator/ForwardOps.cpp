//===- ForwardOps.cpp - the train dialect's forward computation -----------===//
//
// One function per op, each a direct transcription of the op's description
// in TrainOps.td, computing in double. Results arrive allocated with the
// result type's shape; the interpreter rounds them afterwards.
//
//===----------------------------------------------------------------------===//

#include "AttentionDropout.h"
#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

/// Checks that `value` is an integer in [0, limit); reports at `op` if not.
LogicalResult checkIndex(Operation *op, StringRef what, double value,
                         int64_t position, int64_t limit, RankContext &ctx) {
  if (value >= 0 && value < static_cast<double>(limit) &&
      value == std::floor(value))
    return success();
  InFlightDiagnostic diag =
      op->emitOpError() << what << " " << formatValue(value) << " at position "
                        << position << " is outside [0, " << limit << ")";
  if (ctx.interpreter.options().ranks > 1)
    diag << " on rank " << ctx.rank;
  return failure();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

double addFn(double a, double b) { return a + b; }
double subFn(double a, double b) { return a - b; }
double mulFn(double a, double b) { return a * b; }
double divFn(double a, double b) { return a / b; }

/// `result = lhs OP rhs` with NumPy broadcasting.
template <typename OpTy, double (*Fn)(double, double)>
LogicalResult evalBroadcastBinary(OpTy, Operands in, Results &out,
                                  RankContext &) {
  Tensor &result = out[0];
  std::vector<int64_t> lhs = broadcastIndexMap(result.shape, in[0]->shape);
  std::vector<int64_t> rhs = broadcastIndexMap(result.shape, in[1]->shape);
  for (int64_t i = 0; i < result.numElements(); ++i)
    result.data[i] = Fn(in[0]->data[lhs[i]], in[1]->data[rhs[i]]);
  return success();
}

LogicalResult evalScale(ScaleOp op, Operands in, Results &out, RankContext &) {
  double factor = op.getFactor().convertToDouble();
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[i] * factor;
  return success();
}

} // namespace

double gelu(double x, bool tanhApproximation) {
  if (tanhApproximation) {
    double c = std::sqrt(2.0 / kPi);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

namespace {

LogicalResult evalGelu(GeluOp op, Operands in, Results &out, RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] =
        gelu(in[0]->data[i], op.getApproximation() == GeluApproximation::tanh);
  return success();
}

LogicalResult evalRelu(ReluOp, Operands in, Results &out, RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[i] > 0 ? in[0]->data[i] : 0.0;
  return success();
}

LogicalResult evalSqrt(SqrtOp, Operands in, Results &out, RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = std::sqrt(in[0]->data[i]);
  return success();
}

LogicalResult evalFill(FillOp op, Operands, Results &out, RankContext &) {
  std::fill(out[0].data.begin(), out[0].data.end(),
            op.getValue().convertToDouble());
  return success();
}

LogicalResult evalCast(CastOp, Operands in, Results &out, RankContext &) {
  out[0].data = in[0]->data; // the interpreter rounds to the result type
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding and matmul
//===----------------------------------------------------------------------===//

LogicalResult evalEmbedding(EmbeddingOp op, Operands in, Results &out,
                            RankContext &ctx) {
  const Tensor &table = *in[0], &ids = *in[1];
  int64_t vocab = table.shape[0], width = table.shape[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkIndex(op, "id", ids.data[p], p, vocab, ctx)))
      return failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    for (int64_t c = 0; c < width; ++c)
      out[0].data[p * width + c] = table.data[row * width + c];
  }
  return success();
}

} // namespace

void matmul(const Tensor &lhs, const Tensor &rhs, bool transposeLhs,
            bool transposeRhs, Tensor &result) {
  int64_t lr = lhs.rank(), rr = rhs.rank();
  int64_t m = lhs.shape[lr - (transposeLhs ? 1 : 2)];
  int64_t k = lhs.shape[lr - (transposeLhs ? 2 : 1)];
  int64_t n = rhs.shape[rr - (transposeRhs ? 2 : 1)];
  int64_t batches =
      numElements(std::vector<int64_t>(lhs.shape.begin(), lhs.shape.end() - 2));
  bool sharedRhs = rr == 2;
  for (int64_t b = 0; b < batches; ++b) {
    const double *a = lhs.data.data() + b * m * k;
    const double *w = rhs.data.data() + (sharedRhs ? 0 : b * k * n);
    double *c = result.data.data() + b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = transposeLhs ? a[p * m + i] : a[i * k + p];
          double y = transposeRhs ? w[j * k + p] : w[p * n + j];
          sum += x * y;
        }
        c[i * n + j] = sum;
      }
  }
}

namespace {

LogicalResult evalMatmul(MatmulOp op, Operands in, Results &out,
                         RankContext &) {
  matmul(*in[0], *in[1], op.getTransposeLhs(), op.getTransposeRhs(), out[0]);
  return success();
}

/// The product, rounded to its type as train.matmul's result is (unless
/// fp64), then the bias added to every row: the separate ops' rounding
/// (train-fuse-matmul-bias is checked against them).
LogicalResult evalMatmulBias(MatmulBiasOp op, Operands in, Results &out,
                             RankContext &context) {
  Tensor &result = out[0];
  matmul(*in[0], *in[1], op.getTransposeLhs(), op.getTransposeRhs(), result);
  if (!context.interpreter.options().fp64)
    result.round();
  const Tensor &bias = *in[2];
  int64_t n = bias.numElements();
  for (int64_t i = 0; i < result.numElements(); ++i)
    result.data[i] += bias.data[i % n];
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, masks, attention
//===----------------------------------------------------------------------===//

LogicalResult evalLayerNorm(LayerNormOp op, Operands in, Results &out,
                            RankContext &) {
  const Tensor &x = *in[0], &weight = *in[1], &bias = *in[2];
  double eps = op.getEps().convertToDouble();
  int64_t width = lastDim(x), rows = numRows(x);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * width;
    double mean = 0;
    for (int64_t c = 0; c < width; ++c)
      mean += row[c];
    mean /= width;
    double var = 0;
    for (int64_t c = 0; c < width; ++c)
      var += (row[c] - mean) * (row[c] - mean);
    var /= width; // biased, as torch.nn.LayerNorm
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < width; ++c)
      out[0].data[r * width + c] =
          (row[c] - mean) * rstd * weight.data[c] + bias.data[c];
  }
  return success();
}

} // namespace

void softmaxRow(const double *in, double *out, int64_t width) {
  double max = -kInf;
  for (int64_t c = 0; c < width; ++c)
    max = std::max(max, in[c]);
  double sum = 0;
  for (int64_t c = 0; c < width; ++c) {
    out[c] = std::exp(in[c] - max);
    sum += out[c];
  }
  for (int64_t c = 0; c < width; ++c)
    out[c] /= sum;
}

namespace {

LogicalResult evalSoftmax(SoftmaxOp, Operands in, Results &out, RankContext &) {
  int64_t width = lastDim(*in[0]), rows = numRows(*in[0]);
  for (int64_t r = 0; r < rows; ++r)
    softmaxRow(in[0]->data.data() + r * width, out[0].data.data() + r * width,
               width);
  return success();
}

LogicalResult evalCausalMask(CausalMaskOp op, Operands in, Results &out,
                             RankContext &) {
  const Tensor &x = *in[0];
  int64_t t = x.shape[x.rank() - 2], s = x.shape[x.rank() - 1];
  double masked = op.getZero() ? 0.0 : -kInf;
  for (int64_t idx = 0; idx < x.numElements(); ++idx) {
    int64_t i = (idx / s) % t, j = idx % s;
    out[0].data[idx] = j > i ? masked : x.data[idx];
  }
  return success();
}

} // namespace

void attentionProbs(const Tensor &q, const Tensor &k, int64_t bh, bool causal,
                    double scale, std::vector<double> &probs) {
  int64_t t = q.shape[2], s = k.shape[2], d = q.shape[3];
  int64_t group = q.shape[1] / k.shape[1]; // query heads per key head
  const double *qb = q.data.data() + bh * t * d;
  const double *kb = k.data.data() + (bh / group) * s * d;
  std::vector<double> scores(t * s);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < s; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c)
        dot += qb[i * d + c] * kb[j * d + c];
      scores[i * s + j] = causal && j > i ? -kInf : scale * dot;
    }
  probs.assign(t * s, 0.0);
  for (int64_t i = 0; i < t; ++i)
    softmaxRow(scores.data() + i * s, probs.data() + i * s, s);
}

namespace {

LogicalResult evalAttention(AttentionOp op, Operands in, Results &out,
                            RankContext &ctx) {
  const Tensor &q = *in[0], &k = *in[1], &v = *in[2];
  int64_t heads = q.shape[0] * q.shape[1];
  int64_t t = q.shape[2], s = k.shape[2], d = v.shape[3];
  int64_t group = q.shape[1] / k.shape[1]; // query heads per key head
  double scale = op.getScale().convertToDouble();
  FailureOr<AttentionDropout> dropout =
      attentionDropout(op, op.getStep() ? in[3] : nullptr, q, k, ctx);
  if (failed(dropout))
    return failure();
  std::vector<double> probs;
  for (int64_t bh = 0; bh < heads; ++bh) {
    attentionProbs(q, k, bh, op.getCausal(), scale, probs);
    // The dropout of the probabilities (train.dropout's mask).
    if (dropout->active)
      for (int64_t e = 0; e < t * s; ++e)
        probs[e] *= dropout->factor(bh * t * s + e);
    const double *vb = v.data.data() + (bh / group) * s * d;
    double *yb = out[0].data.data() + bh * t * d;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < d; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < s; ++j)
          sum += probs[i * s + j] * vb[j * d + c];
        yb[i * d + c] = sum;
      }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult evalReshape(ReshapeOp, Operands in, Results &out, RankContext &) {
  out[0].data = in[0]->data; // row-major: the values do not move
  return success();
}

LogicalResult evalTranspose(TransposeOp op, Operands in, Results &out,
                            RankContext &) {
  const Tensor &x = *in[0];
  ArrayRef<int64_t> perm = op.getPermutation();
  for (int64_t o = 0; o < out[0].numElements(); ++o) {
    std::vector<int64_t> outIndex = unravel(o, out[0].shape);
    std::vector<int64_t> inIndex(x.rank());
    for (size_t i = 0; i < perm.size(); ++i)
      inIndex[perm[i]] = outIndex[i]; // result dim i is input dim perm[i]
    out[0].data[o] = x.data[ravel(inIndex, x.shape)];
  }
  return success();
}

} // namespace

void splitAround(const std::vector<int64_t> &shape, int64_t dim, int64_t &outer,
                 int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

namespace {

LogicalResult evalSplit(SplitOp op, Operands in, Results &out, RankContext &) {
  const Tensor &x = *in[0];
  int64_t dim = op.getDim(), outer, inner;
  splitAround(x.shape, dim, outer, inner);
  int64_t size = x.shape[dim], part = size / static_cast<int64_t>(out.size());
  for (size_t k = 0; k < out.size(); ++k)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < part; ++p)
        for (int64_t i = 0; i < inner; ++i)
          out[k].data[(o * part + p) * inner + i] =
              x.data[(o * size + k * part + p) * inner + i];
  return success();
}

LogicalResult evalConcat(ConcatOp op, Operands in, Results &out,
                         RankContext &) {
  Tensor &result = out[0];
  int64_t dim = op.getDim(), outer, inner;
  splitAround(result.shape, dim, outer, inner);
  int64_t total = result.shape[dim], offset = 0;
  for (const Tensor *x : in) {
    int64_t size = x->shape[dim];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < size; ++p)
        for (int64_t i = 0; i < inner; ++i)
          result.data[(o * total + offset + p) * inner + i] =
              x->data[(o * size + p) * inner + i];
    offset += size;
  }
  return success();
}

LogicalResult evalBroadcast(train::BroadcastOp, Operands in, Results &out,
                            RankContext &) {
  std::vector<int64_t> map = broadcastIndexMap(out[0].shape, in[0]->shape);
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[map[i]];
  return success();
}

} // namespace

void reduceSum(const Tensor &x, const std::vector<int64_t> &dims,
               Tensor &result) {
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t d : dims)
    reduced[d] = true;
  std::fill(result.data.begin(), result.data.end(), 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    std::vector<int64_t> index = unravel(i, x.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!reduced[d])
        o = o * x.shape[d] + index[d];
    result.data[o] += x.data[i];
  }
}

namespace {

LogicalResult evalSum(SumOp op, Operands in, Results &out, RankContext &) {
  reduceSum(*in[0], op.getDims().vec(), out[0]);
  return success();
}

LogicalResult evalMean(MeanOp op, Operands in, Results &out, RankContext &) {
  reduceSum(*in[0], op.getDims().vec(), out[0]);
  int64_t count = 1;
  for (int64_t d : op.getDims())
    count *= in[0]->shape[d];
  for (double &value : out[0].data)
    value /= static_cast<double>(count);
  return success();
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

LogicalResult evalCrossEntropy(CrossEntropyOp op, Operands in, Results &out,
                               RankContext &ctx) {
  const Tensor &logits = *in[0], &targets = *in[1];
  int64_t vocab = lastDim(logits), rows = numRows(logits);
  std::optional<int64_t> ignore = op.getIgnoreIndex();
  double smoothing = op.getSmoothing();
  double total = 0;
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (ignore && targets.data[r] == static_cast<double>(*ignore))
      continue;
    if (failed(checkIndex(op, "target", targets.data[r], r, vocab, ctx)))
      return failure();
    const double *row = logits.data.data() + r * vocab;
    double max = -kInf;
    for (int64_t c = 0; c < vocab; ++c)
      max = std::max(max, row[c]);
    double sum = 0, all = 0;
    for (int64_t c = 0; c < vocab; ++c) {
      sum += std::exp(row[c] - max);
      all += row[c];
    }
    double logsumexp = max + std::log(sum);
    double nll = logsumexp - row[static_cast<int64_t>(targets.data[r])];
    double smooth = logsumexp - all / static_cast<double>(vocab);
    total += (1.0 - smoothing) * nll + smoothing * smooth;
    ++counted;
  }
  // No position counted: 0 / 0, NaN, as PyTorch's mean; with a given
  // count (the global batch's, for a data-parallel part), 0 unless that
  // count is 0 too (every target of the global batch ignored: NaN).
  if (op.getCount())
    out[0].data[0] = counted != 0 ? total / in[2]->data[0]
                     : in[2]->data[0] == 0.0
                         ? std::numeric_limits<double>::quiet_NaN()
                         : 0.0;
  else
    out[0].data[0] = total / static_cast<double>(counted);
  return success();
}

LogicalResult evalCountTargets(CountTargetsOp op, Operands in, Results &out,
                               RankContext &) {
  double ignore = static_cast<double>(op.getIgnoreIndex());
  out[0].data[0] = static_cast<double>(
      llvm::count_if(in[0]->data, [&](double t) { return t != ignore; }));
  return success();
}

} // namespace

void registerForwardOps(OpRegistry &registry) {
  registry.add<AddOp>(evalBroadcastBinary<AddOp, addFn>);
  registry.add<SubOp>(evalBroadcastBinary<SubOp, subFn>);
  registry.add<MulOp>(evalBroadcastBinary<MulOp, mulFn>);
  registry.add<DivOp>(evalBroadcastBinary<DivOp, divFn>);
  registry.add<ScaleOp>(evalScale);
  registry.add<GeluOp>(evalGelu);
  registry.add<ReluOp>(evalRelu);
  registry.add<SqrtOp>(evalSqrt);
  registry.add<FillOp>(evalFill);
  registry.add<CastOp>(evalCast);
  registry.add<EmbeddingOp>(evalEmbedding);
  registry.add<MatmulOp>(evalMatmul);
  registry.add<MatmulBiasOp>(evalMatmulBias);
  registry.add<LayerNormOp>(evalLayerNorm);
  registry.add<SoftmaxOp>(evalSoftmax);
  registry.add<CausalMaskOp>(evalCausalMask);
  registry.add<AttentionOp>(evalAttention);
  registry.add<ReshapeOp>(evalReshape);
  registry.add<TransposeOp>(evalTranspose);
  registry.add<SplitOp>(evalSplit);
  registry.add<ConcatOp>(evalConcat);
  registry.add<train::BroadcastOp>(evalBroadcast);
  registry.add<SumOp>(evalSum);
  registry.add<MeanOp>(evalMean);
  registry.add<CrossEntropyOp>(evalCrossEntropy);
  registry.add<CountTargetsOp>(evalCountTargets);
}

} // namespace zeroc::eval
