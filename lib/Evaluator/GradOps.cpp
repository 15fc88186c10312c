//===- GradOps.cpp - the train dialect's derivative helper ops ------------===//
//
// Each op takes the cotangent of its forward op's result first. The
// formulas are the textbook derivatives of the forward definitions in
// ForwardOps.cpp; test/Evaluator/gradcheck.mlir checks them against
// central differences of those definitions.
//
//===----------------------------------------------------------------------===//

#include "AttentionDropout.h"
#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

constexpr double kPi = 3.14159265358979323846;

/// d gelu(x) / dx.
double geluDerivative(double x, bool tanhApproximation) {
  if (tanhApproximation) {
    // gelu = 0.5 x (1 + tanh(u)), u = c (x + a x^3)
    double c = std::sqrt(2.0 / kPi), a = 0.044715;
    double t = std::tanh(c * (x + a * x * x * x));
    return 0.5 * (1.0 + t) +
           0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * a * x * x);
  }
  // gelu = x Phi(x): Phi(x) + x phi(x)
  double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
  double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi);
  return cdf + x * pdf;
}

LogicalResult evalEmbeddingGrad(EmbeddingGradOp op, Operands in, Results &out,
                                RankContext &ctx) {
  const Tensor &grad = *in[0], &ids = *in[1];
  Tensor &result = out[0];
  int64_t vocab = result.shape[0], width = result.shape[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    double id = ids.data[p];
    if (!(id >= 0 && id < static_cast<double>(vocab) && id == std::floor(id))) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "id " << formatValue(id) << " at position "
                                << p << " is outside [0, " << vocab << ")";
      if (ctx.interpreter.options().ranks > 1)
        diag << " on rank " << ctx.rank;
      return failure();
    }
    int64_t row = static_cast<int64_t>(id);
    if (op.getPaddingIdx() &&
        row == static_cast<int64_t>(*op.getPaddingIdx()))
      continue; // the padding row gets no gradient
    for (int64_t c = 0; c < width; ++c)
      result.data[row * width + c] += grad.data[p * width + c];
  }
  return success();
}

LogicalResult evalGeluGrad(GeluGradOp op, Operands in, Results &out,
                           RankContext &) {
  bool tanh = op.getApproximation() == GeluApproximation::tanh;
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[0]->data[i] * geluDerivative(in[1]->data[i], tanh);
  return success();
}

LogicalResult evalReluGrad(ReluGradOp, Operands in, Results &out,
                           RankContext &) {
  for (int64_t i = 0; i < out[0].numElements(); ++i)
    out[0].data[i] = in[1]->data[i] > 0 ? in[0]->data[i] : 0.0;
  return success();
}

LogicalResult evalSoftmaxGrad(SoftmaxGradOp, Operands in, Results &out,
                              RankContext &) {
  const Tensor &grad = *in[0], &output = *in[1];
  int64_t width = lastDim(grad), rows = numRows(grad);
  for (int64_t r = 0; r < rows; ++r) {
    const double *g = grad.data.data() + r * width;
    const double *y = output.data.data() + r * width;
    double dot = 0;
    for (int64_t c = 0; c < width; ++c)
      dot += g[c] * y[c];
    for (int64_t c = 0; c < width; ++c)
      out[0].data[r * width + c] = y[c] * (g[c] - dot);
  }
  return success();
}

LogicalResult evalLayerNormGrad(LayerNormGradOp op, Operands in, Results &out,
                                RankContext &) {
  const Tensor &dy = *in[0], &x = *in[1], &weight = *in[2];
  Tensor &dx = out[0], &dweight = out[1], &dbias = out[2];
  double eps = op.getEps().convertToDouble();
  int64_t width = lastDim(x), rows = numRows(x);
  std::vector<double> xhat(width), g(width);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * width;
    const double *dyRow = dy.data.data() + r * width;
    double mean = 0;
    for (int64_t c = 0; c < width; ++c)
      mean += row[c];
    mean /= width;
    double var = 0;
    for (int64_t c = 0; c < width; ++c)
      var += (row[c] - mean) * (row[c] - mean);
    var /= width;
    double rstd = 1.0 / std::sqrt(var + eps);
    double meanG = 0, meanGXhat = 0;
    for (int64_t c = 0; c < width; ++c) {
      xhat[c] = (row[c] - mean) * rstd;
      g[c] = dyRow[c] * weight.data[c]; // cotangent of xhat
      meanG += g[c];
      meanGXhat += g[c] * xhat[c];
      dweight.data[c] += dyRow[c] * xhat[c];
      dbias.data[c] += dyRow[c];
    }
    meanG /= width;
    meanGXhat /= width;
    for (int64_t c = 0; c < width; ++c)
      dx.data[r * width + c] = rstd * (g[c] - meanG - xhat[c] * meanGXhat);
  }
  return success();
}

LogicalResult evalAttentionGrad(AttentionGradOp op, Operands in, Results &out,
                                RankContext &ctx) {
  const Tensor &dy = *in[0], &q = *in[1], &k = *in[2], &v = *in[3];
  Tensor &dq = out[0], &dk = out[1], &dv = out[2];
  int64_t heads = q.shape[0] * q.shape[1];
  int64_t t = q.shape[2], s = k.shape[2], d = q.shape[3];
  // Grouped-query attention: query head bh reads key/value head bh / group,
  // whose cotangents sum over the group (the results start at zero).
  int64_t group = q.shape[1] / k.shape[1];
  double scale = op.getScale().convertToDouble();
  FailureOr<AttentionDropout> dropout =
      attentionDropout(op, op.getStep() ? in[4] : nullptr, q, k, ctx);
  if (failed(dropout))
    return failure();
  // With dropout, y = (P * M) v for the mask factors M: dv and dP go
  // through P * M, and dP is multiplied by M before the softmax's backward.
  std::vector<double> probs, dropped(t * s), mask(t * s, 1.0), dprobs(t * s),
      dscores(t * s);
  for (int64_t bh = 0; bh < heads; ++bh) {
    attentionProbs(q, k, bh, op.getCausal(), scale, probs);
    for (int64_t e = 0; e < t * s; ++e) {
      mask[e] = dropout->factor(bh * t * s + e);
      dropped[e] = probs[e] * mask[e];
    }
    int64_t kvh = bh / group;
    const double *dyb = dy.data.data() + bh * t * d;
    const double *qb = q.data.data() + bh * t * d;
    const double *kb = k.data.data() + kvh * s * d;
    const double *vb = v.data.data() + kvh * s * d;
    double *dqb = dq.data.data() + bh * t * d;
    double *dkb = dk.data.data() + kvh * s * d;
    double *dvb = dv.data.data() + kvh * s * d;
    // y = P v: dv = P^T dy, dP = dy v^T.
    for (int64_t j = 0; j < s; ++j)
      for (int64_t c = 0; c < d; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < t; ++i)
          sum += dropped[i * s + j] * dyb[i * d + c];
        dvb[j * d + c] += sum;
      }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j) {
        double sum = 0;
        for (int64_t c = 0; c < d; ++c)
          sum += dyb[i * d + c] * vb[j * d + c];
        dprobs[i * s + j] = sum * mask[i * s + j];
      }
    // Softmax backward per row; masked entries have P = 0, so dS = 0.
    for (int64_t i = 0; i < t; ++i) {
      double dot = 0;
      for (int64_t j = 0; j < s; ++j)
        dot += probs[i * s + j] * dprobs[i * s + j];
      for (int64_t j = 0; j < s; ++j)
        dscores[i * s + j] = probs[i * s + j] * (dprobs[i * s + j] - dot);
    }
    // S = scale q k^T: dq = scale dS k, dk = scale dS^T q.
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < d; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < s; ++j)
          sum += dscores[i * s + j] * kb[j * d + c];
        dqb[i * d + c] = scale * sum;
      }
    for (int64_t j = 0; j < s; ++j)
      for (int64_t c = 0; c < d; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < t; ++i)
          sum += dscores[i * s + j] * qb[i * d + c];
        dkb[j * d + c] += scale * sum;
      }
  }
  return success();
}

LogicalResult evalCrossEntropyGrad(CrossEntropyGradOp op, Operands in,
                                   Results &out, RankContext &ctx) {
  double grad = in[0]->data[0];
  const Tensor &logits = *in[1], &targets = *in[2];
  int64_t vocab = lastDim(logits), rows = numRows(logits);
  std::optional<int64_t> ignore = op.getIgnoreIndex();
  double smoothing = op.getSmoothing();
  auto ignored = [&](int64_t r) {
    return ignore && targets.data[r] == static_cast<double>(*ignore);
  };
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r)
    counted += ignored(r) ? 0 : 1;
  // A given count (a data-parallel part's) divides instead.
  double divisor = op.getCount() ? in[3]->data[0] : static_cast<double>(counted);
  for (int64_t r = 0; r < rows; ++r) {
    double *row = out[0].data.data() + r * vocab;
    if (ignored(r)) {
      std::fill(row, row + vocab, 0.0);
      continue;
    }
    double target = targets.data[r];
    if (!(target >= 0 && target < static_cast<double>(vocab) &&
          target == std::floor(target))) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "target " << formatValue(target)
                                << " at position " << r << " is outside [0, "
                                << vocab << ")";
      if (ctx.interpreter.options().ranks > 1)
        diag << " on rank " << ctx.rank;
      return failure();
    }
    softmaxRow(logits.data.data() + r * vocab, row, vocab);
    row[static_cast<int64_t>(target)] -= 1.0 - smoothing;
    for (int64_t c = 0; c < vocab; ++c)
      row[c] = (row[c] - smoothing / static_cast<double>(vocab)) * grad /
               divisor;
  }
  return success();
}

} // namespace

void registerGradOps(OpRegistry &registry) {
  registry.add<EmbeddingGradOp>(evalEmbeddingGrad);
  registry.add<GeluGradOp>(evalGeluGrad);
  registry.add<ReluGradOp>(evalReluGrad);
  registry.add<SoftmaxGradOp>(evalSoftmaxGrad);
  registry.add<LayerNormGradOp>(evalLayerNormGrad);
  registry.add<AttentionGradOp>(evalAttentionGrad);
  registry.add<CrossEntropyGradOp>(evalCrossEntropyGrad);
}

} // namespace zeroc::eval
