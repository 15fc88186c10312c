//===- GradCheck.cpp - analytic gradients against central differences -----===//
//
// The module holds a `train.forward` function (returning the scalar loss)
// and a function with `train.gradients = [@p1, @p2, ...]` whose results are
// (loss, d loss/d p1, d loss/d p2, ...). In fp64, every checked element j
// of every listed parameter p compares
//
//   analytic = (d loss/d p)[j]
//   fd       = (forward(p[j] + h) - forward(p[j] - h)) / 2h,
//              h = fdStep * max(1, |p[j]|)
//
// and passes if |analytic - fd| <= atol + rtol * |fd|.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "zeroc/Dialect/Train/IR/TrainDialect.h"

#include "zeroc/Support/Random.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace mlir;

namespace zeroc::eval {

namespace {

/// The element indices to check in a parameter of `count` elements: all,
/// or `samples` of them drawn from the seed, always with the first and the
/// last.
std::vector<int64_t> sampleIndices(const std::string &name, int64_t count,
                                   int64_t samples, uint64_t seed) {
  std::vector<int64_t> indices;
  if (samples <= 0 || samples >= count) {
    for (int64_t i = 0; i < count; ++i)
      indices.push_back(i);
    return indices;
  }
  std::set<int64_t> chosen = {0, count - 1};
  std::string stream = "gradcheck:" + name;
  for (int64_t draw = 0;
       static_cast<int64_t>(chosen.size()) < samples && draw < 64 * samples;
       ++draw)
    chosen.insert(1 + random::uniformInt(stream, seed, count - 2, draw));
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

struct ParamReport {
  std::string name;
  int64_t checked = 0;
  double maxAbsErr = 0, maxRelErr = 0;
  int64_t worstIndex = -1;
  double worstRatio = -1; // error / tolerance of the worst element
  double worstAnalytic = 0, worstFd = 0;
  bool ok = true;
};

bool within(double analytic, double reference, const GradCheckOptions &o) {
  return std::abs(analytic - reference) <=
         o.atol + o.rtol * std::abs(reference);
}

} // namespace

int runGradCheck(ModuleOp module, Options options,
                 const InputOptions &inputOptions, const std::string &initPath,
                 const GradCheckOptions &check, llvm::raw_ostream &out,
                 llvm::raw_ostream &errs) {
  options.fp64 = true;
  if (options.ranks != 1) {
    errs << "zeroc-run: --gradcheck runs on one rank (got --ranks "
         << options.ranks << ")\n";
    return 2;
  }
  func::FuncOp forward, gradients;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (train::trainDialect(func).getForwardAttrHelper().isAttrPresent(func))
      forward = func;
    if (train::trainDialect(func).getGradientsAttrHelper().isAttrPresent(func))
      gradients = func;
  }
  if (!forward || !gradients) {
    errs << "zeroc-run: --gradcheck needs a func with attribute "
         << (forward ? "train.gradients" : "train.forward") << "\n";
    return 2;
  }
  auto list = train::trainDialect(gradients).getGradientsAttrHelper().getAttr(gradients);
  std::vector<std::string> params;
  for (Attribute entry : list ? list.getValue() : ArrayRef<Attribute>()) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(entry);
    if (!ref) {
      list = nullptr;
      break;
    }
    params.push_back(ref.getValue().str());
  }
  if (!list) {
    errs << "zeroc-run: train.gradients of @" << gradients.getSymName()
         << " must be an array of parameter symbols [@p1, @p2, ...]\n";
    return 2;
  }
  if (gradients.getNumResults() != params.size() + 1) {
    errs << "zeroc-run: @" << gradients.getSymName() << " lists "
         << params.size() << " parameters in train.gradients, so it must "
         << "return " << params.size() + 1 << " results (the loss first), not "
         << gradients.getNumResults() << "\n";
    return 2;
  }
  if (gradients.getArgumentTypes() != forward.getArgumentTypes()) {
    errs << "zeroc-run: @" << gradients.getSymName() << " and @"
         << forward.getSymName() << " must take the same arguments\n";
    return 2;
  }

  Evaluator evaluator(module, options);
  if (!initPath.empty())
    if (llvm::Error error = evaluator.loadInitFile(initPath)) {
      errs << "zeroc-run: " << llvm::toString(std::move(error)) << "\n";
      return 2;
    }
  if (failed(evaluator.initializeState()))
    return 2;
  for (auto [index, name] : llvm::enumerate(params)) {
    const std::vector<std::string> &names = evaluator.stateNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      errs << "zeroc-run: train.gradients names @" << name
           << ", which is not a train.param\n";
      return 2;
    }
    std::optional<Tensor> type =
        zeroTensorOf(gradients.getResultTypes()[index + 1]);
    if (!type || type->shape != evaluator.state(0, name).shape) {
      errs << "zeroc-run: result #" << index + 1 << " of @"
           << gradients.getSymName() << " has type "
           << gradients.getResultTypes()[index + 1] << ", not the shape of @"
           << name << "\n";
      return 2;
    }
  }

  llvm::Expected<Inputs> inputs = makeInputs(forward, options, inputOptions);
  if (!inputs) {
    errs << "zeroc-run: " << llvm::toString(inputs.takeError()) << "\n";
    return 2;
  }
  llvm::Expected<std::vector<RankValues>> args =
      argumentsForStep(forward, *inputs, 1, 0);
  if (!args) {
    errs << "zeroc-run: " << llvm::toString(args.takeError()) << "\n";
    return 2;
  }

  // Every evaluation starts from the same state.
  NamedTensors initial = evaluator.rankState(0);
  auto evaluate = [&](func::FuncOp func) -> FailureOr<std::vector<RankValues>> {
    FailureOr<std::vector<RankValues>> results = evaluator.call(func, *args);
    evaluator.rankState(0) = initial;
    return results;
  };
  auto lossOf = [&](const std::vector<RankValues> &results) -> double {
    return results.empty() ? NAN : results[0][0].data[0];
  };

  FailureOr<std::vector<RankValues>> analytic = evaluate(gradients);
  if (failed(analytic))
    return 2;
  FailureOr<std::vector<RankValues>> base = evaluate(forward);
  if (failed(base))
    return 2;
  double forwardLoss = lossOf(*base), gradientsLoss = lossOf(*analytic);
  bool lossOk = within(gradientsLoss, forwardLoss, check);

  std::vector<ParamReport> reports;
  for (auto [index, name] : llvm::enumerate(params)) {
    ParamReport report;
    report.name = name;
    const Tensor &grad = (*analytic)[index + 1][0];
    int64_t count = initial.at(name).numElements();
    for (int64_t j : sampleIndices(name, count, check.samples, options.seed)) {
      double p = initial.at(name).data[j];
      double h = check.fdStep * std::max(1.0, std::abs(p));
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        evaluator.state(0, name).data[j] = side == 0 ? p + h : p - h;
        FailureOr<std::vector<RankValues>> results = evaluate(forward);
        if (failed(results))
          return 2;
        loss[side] = lossOf(*results);
      }
      double fd = (loss[0] - loss[1]) / (2 * h);
      double a = grad.data[j];
      double err = std::abs(a - fd);
      double tolerance = check.atol + check.rtol * std::abs(fd);
      double ratio = std::isnan(err) ? INFINITY : err / tolerance;
      ++report.checked;
      report.maxAbsErr = std::max(report.maxAbsErr, err);
      // Relative to the larger magnitude; 0 when both are 0.
      double scale = std::max(std::abs(fd), std::abs(a));
      report.maxRelErr =
          std::max(report.maxRelErr, scale > 0 ? err / scale : err);
      if (ratio > report.worstRatio) {
        report.worstRatio = ratio;
        report.worstIndex = j;
        report.worstAnalytic = a;
        report.worstFd = fd;
      }
      if (!(err <= tolerance))
        report.ok = false;
    }
    reports.push_back(report);
  }

  bool ok = lossOk;
  const ParamReport *worst = nullptr;
  for (const ParamReport &report : reports) {
    ok &= report.ok;
    if (!report.ok && (!worst || report.worstRatio > worst->worstRatio))
      worst = &report;
  }

  out << "{\"gradcheck\": {\"forward\": ";
  printJsonString(out, forward.getSymName());
  out << ", \"gradients\": ";
  printJsonString(out, gradients.getSymName());
  out << ", \"atol\": ";
  printJsonNumber(out, check.atol);
  out << ", \"rtol\": ";
  printJsonNumber(out, check.rtol);
  out << ", \"fd_step\": ";
  printJsonNumber(out, check.fdStep);
  out << ",\n  \"loss\": {\"forward\": ";
  printJsonNumber(out, forwardLoss);
  out << ", \"gradients\": ";
  printJsonNumber(out, gradientsLoss);
  out << ", \"ok\": " << (lossOk ? "true" : "false") << "},\n  \"params\": [";
  for (auto [index, report] : llvm::enumerate(reports)) {
    out << (index ? ",\n    " : "\n    ") << "{\"name\": ";
    printJsonString(out, report.name);
    out << ", \"checked\": " << report.checked << ", \"max_abs_err\": ";
    printJsonNumber(out, report.maxAbsErr);
    out << ", \"max_rel_err\": ";
    printJsonNumber(out, report.maxRelErr);
    out << ", \"worst_index\": " << report.worstIndex
        << ", \"ok\": " << (report.ok ? "true" : "false") << "}";
  }
  out << "],\n  \"ok\": " << (ok ? "true" : "false") << "}}\n";
  out.flush();

  if (!lossOk) {
    errs << "zeroc-run: gradcheck failed: the loss of @"
         << gradients.getSymName() << " ("
         << llvm::format("%.17g", gradientsLoss) << ") differs from @"
         << forward.getSymName() << " (" << llvm::format("%.17g", forwardLoss)
         << ")\n";
  }
  if (worst) {
    errs << "zeroc-run: gradcheck failed: worst offender @" << worst->name
         << " element " << worst->worstIndex << ": analytic "
         << llvm::format("%.10g", worst->worstAnalytic)
         << ", finite difference " << llvm::format("%.10g", worst->worstFd)
         << " (|difference| "
         << llvm::format("%.3g",
                         std::abs(worst->worstAnalytic - worst->worstFd))
         << " > atol + rtol * |fd| = "
         << llvm::format("%.3g",
                         check.atol + check.rtol * std::abs(worst->worstFd))
         << ")\n";
  }
  return ok ? 0 : 1;
}

} // namespace zeroc::eval
