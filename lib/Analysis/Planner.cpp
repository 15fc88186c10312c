//===- Planner.cpp - the memory-budget planner ----------------------------===//
//
// Compiles every candidate configuration through the real pipeline and reads
// its figures off the static memory report; see Planner.h and
// docs/planner.md.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Analysis/Planner.h"

#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Support/Format.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir;

namespace zeroc {

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

llvm::Expected<int64_t> parseByteSize(llvm::StringRef text) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cannot read '" + text + "' as a size: " + why +
            " (write bytes, or a number with KiB, MiB, GiB, TiB, KB, MB, GB "
            "or TB, e.g. 80GiB)");
  };
  llvm::StringRef rest = text.trim();
  size_t end = 0;
  bool digits = false, point = false;
  while (end < rest.size() &&
         (llvm::isDigit(rest[end]) || (rest[end] == '.' && !point))) {
    point |= rest[end] == '.';
    digits |= llvm::isDigit(rest[end]);
    ++end;
  }
  if (!digits)
    return bad("no number");
  llvm::StringRef number = rest.take_front(end);
  llvm::StringRef unit = rest.drop_front(end).trim();
  struct Unit {
    const char *name;
    double scale;
  };
  static const Unit units[] = {
      {"", 1},
      {"B", 1},
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
  };
  const Unit *found = nullptr;
  for (const Unit &u : units)
    if (unit == u.name || unit == llvm::StringRef(u.name).lower())
      found = &u;
  if (!found)
    return bad("unknown unit '" + unit + "'");
  double value = 0;
  if (number.getAsDouble(value))
    return bad("'" + number + "' is not a number");
  double bytes = std::round(value * found->scale);
  if (point && found->scale == 1 && bytes != value)
    return bad("a fraction of a byte");
  if (bytes < 1)
    return bad("it must be at least one byte");
  if (bytes >= 9.2e18)
    return bad("too large");
  return static_cast<int64_t>(bytes);
}

std::string formatBytes(int64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
  double b = static_cast<double>(bytes);
  if (b >= kGiB)
    return llvm::formatv("{0:f2} GiB", b / kGiB).str();
  if (b >= kMiB)
    return llvm::formatv("{0:f2} MiB", b / kMiB).str();
  if (b >= kKiB)
    return llvm::formatv("{0:f2} KiB", b / kKiB).str();
  return llvm::formatv("{0} B", bytes).str();
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

std::vector<std::string> rematPolicies() { return {"none", "selective", "full"}; }

int rematCost(llvm::StringRef policy) {
  return policy == "none" ? 0 : policy == "selective" ? 1 : 2;
}

std::vector<int64_t> defaultPlanBucketSizes(int64_t gradientBytes) {
  constexpr int64_t kRound = int64_t{64} << 10;
  int64_t large = defaultBucketBytes(gradientBytes);
  int64_t small = ((large + 4) / 5 + kRound - 1) / kRound * kRound;
  return {large, small};
}

std::vector<int64_t> defaultPlanMicroBatches() { return {1, 2, 4, 8}; }

static int stagePreference(int64_t stage) {
  // At the same traffic, the stage that holds the least: stage 2 (the
  // gradients sharded too), then 1, then 0 -- the guide's advice (start
  // with stage 2). Stage 3 sends more, except on one rank, where nothing
  // is sent and it gains nothing: last.
  switch (stage) {
  case 2:
    return 0;
  case 1:
    return 1;
  case 0:
    return 2;
  default:
    return 3;
  }
}

PipelineOptions candidateOptions(const PipelineOptions &base,
                                 const PlanCandidate &candidate) {
  PipelineOptions options = base;
  options.zeroStage = candidate.zeroStage;
  options.remat = candidate.remat;
  options.bucketBytes = candidate.bucketBytes;
  options.gradAccum = candidate.microBatches;
  return options;
}

int pickCandidate(llvm::ArrayRef<PlanCandidate> candidates) {
  int64_t least = -1;
  for (const PlanCandidate &c : candidates)
    if (c.fits && (least < 0 || c.commBytes < least))
      least = c.commBytes;
  if (least < 0)
    return -1;
  // Within 0.1% of the least counts as the least: stages 0, 1 and 2 send
  // the same 2(N-1)/N elements of gradients and parameters, up to a few
  // bytes of rounding and padding per collective.
  int64_t near = least + least / 1000;
  int picked = -1;
  auto key = [](const PlanCandidate &c) {
    return std::make_tuple(rematCost(c.remat), c.microBatches, -c.bucketBytes,
                           stagePreference(c.zeroStage), c.commBytes);
  };
  for (auto [i, c] : llvm::enumerate(candidates))
    if (c.fits && c.commBytes <= near &&
        (picked < 0 || key(c) < key(candidates[picked])))
      picked = static_cast<int>(i);
  return picked;
}

std::string describeCandidate(const PlanCandidate &c) {
  return llvm::formatv("ZeRO stage {0}, --remat={1}, {2} micro-batch{3}, "
                       "{4} buckets",
                       c.zeroStage, c.remat, c.microBatches,
                       c.microBatches == 1 ? "" : "es",
                       formatBytes(c.bucketBytes))
      .str();
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

namespace {

using Clock = std::chrono::steady_clock;

/// Runs the passes `build` adds on `module`. The IR is not verified after
/// each pass (a third of the pipeline's time on a 70B model): the passes
/// write the same IR either way, and the driver compiles the picked
/// candidate again with the verifier on.
LogicalResult runPasses(ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  pm.enableVerifier(false);
  build(pm);
  return pm.run(module);
}

/// The report of `scheduled` (the pipeline's output, planned in place).
FailureOr<MemoryReport> planAndReport(ModuleOp scheduled) {
  if (failed(runPasses(scheduled,
                       [](OpPassManager &pm) { buildPlanningPipeline(pm); })))
    return failure();
  return computeMemoryReport(scheduled);
}

/// Where one candidate's time went, what its report said, and the step
/// that failed (empty: none).
struct CandidateTimes {
  double clone = 0, zero = 0, model = 0, planning = 0, report = 0;
  int64_t parameters = 0;
  std::string precision;
  std::string failedStep;
};

double secondsSince(Clock::time_point &since) {
  Clock::time_point now = Clock::now();
  double seconds = std::chrono::duration<double>(now - since).count();
  since = now;
  return seconds;
}

/// Compiles `c` from `optimized` (the pipeline up to train-optimizer, for
/// c's policy) on a clone: the ZeRO section, the performance model (with a
/// machine), the planning passes and the memory report; fills c's figures.
LogicalResult evaluateCandidate(ModuleOp optimized, const PlanRequest &request,
                                PlanCandidate &c, CandidateTimes &times) {
  Clock::time_point t = Clock::now();
  OwningOpRef<ModuleOp> step = optimized.clone();
  times.clone = secondsSince(t);
  if (failed(runPasses(*step, [&](OpPassManager &pm) {
        buildTrainingPipelineSection(pm, candidateOptions(request.base, c),
                                     PipelineSection::Zero);
      }))) {
    times.failedStep = "the pipeline";
    return failure();
  }
  times.zero = secondsSince(t);
  if (request.machine) {
    FailureOr<PerfPrediction> prediction =
        simulateStep(*step, *request.machine);
    if (failed(prediction)) {
      times.failedStep = "the performance model";
      return failure();
    }
    c.predicted = true;
    c.stepSeconds = prediction->stepSeconds;
    c.mfu = prediction->mfu;
    times.model = secondsSince(t);
  }
  if (failed(runPasses(*step,
                       [](OpPassManager &pm) { buildPlanningPipeline(pm); }))) {
    times.failedStep = "planning";
    return failure();
  }
  times.planning = secondsSince(t);
  FailureOr<MemoryReport> report = computeMemoryReport(*step);
  if (failed(report)) {
    times.failedStep = "the memory report";
    return failure();
  }
  times.report = secondsSince(t);
  times.parameters = report->parameters;
  times.precision = report->precision;
  c.modelStateBytes = report->perRank.modelStates;
  c.transientPeakBytes = report->transient.peak;
  c.peakBytes = c.modelStateBytes + c.transientPeakBytes;
  c.commBytes = report->commBytes;
  c.fits = c.peakBytes <= request.budgetBytes;
  return success();
}

/// The peak of `options` compiled from `model` in full, or failure (its
/// diagnostics swallowed: a world size the batch does not divide).
FailureOr<int64_t> quietPeak(ModuleOp model, const PipelineOptions &options) {
  ScopedDiagnosticHandler quiet(model.getContext(),
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> clone = model.clone();
  if (failed(runPasses(*clone, [&](OpPassManager &pm) {
        buildTrainingPipeline(pm, options);
      })))
    return failure();
  FailureOr<MemoryReport> report = planAndReport(*clone);
  if (failed(report))
    return failure();
  return report->perRank.modelStates + report->transient.peak;
}

} // namespace

FailureOr<Plan> planMemory(ModuleOp model, const PlanRequest &request) {
  Clock::time_point start = Clock::now();
  Plan plan;
  plan.budgetBytes = request.budgetBytes;
  plan.worldSize = request.base.worldSize;
  if (request.machine)
    plan.machine = request.machine->name;

  auto addTime = [&](llvm::StringRef what, double seconds) {
    auto it = llvm::find_if(plan.timings,
                            [&](const auto &t) { return t.first == what; });
    if (it == plan.timings.end())
      plan.timings.emplace_back(what.str(), seconds);
    else
      it->second += seconds;
  };
  auto lap = [&](llvm::StringRef what, Clock::time_point &since) {
    addTime(what, secondsSince(since));
  };
  auto fail = [&](const PlanCandidate &c, llvm::StringRef what) {
    model.emitError() << "planner: " << what << " failed for "
                      << describeCandidate(c);
    return failure();
  };

  // The sections of the pipeline, each once per value of what it reads,
  // on clones of the section before; the candidates of one policy (every
  // stage and bucket size) compile in parallel on the context's threads,
  // each on its own clone.
  //
  // Micro-batch counts after the first are searched, not given: a count
  // whose micro-batch the per-rank batch does not divide is skipped, and
  // a configuration (stage, policy, bucket size) that fits at a count is
  // not compiled at larger ones: more micro-batches shrink the activations
  // only, never send less, and the rule prefers fewer.
  MLIRContext *context = model.getContext();
  std::vector<int64_t> bucketSizes =
      !request.bucketSizes.empty()
          ? request.bucketSizes
          : defaultPlanBucketSizes(
                modelGradientBytes(model, request.base.precision));
  auto configuration = [](const PlanCandidate &c) {
    return std::make_tuple(c.zeroStage, c.remat, c.bucketBytes);
  };
  std::set<std::tuple<int64_t, std::string, int64_t>> fitted;
  // The front (precision, logits, data parallelism, autodiff) reads none
  // of the dimensions: once.
  Clock::time_point frontStart = Clock::now();
  OwningOpRef<ModuleOp> differentiated = model.clone();
  if (failed(runPasses(*differentiated, [&](OpPassManager &pm) {
        buildTrainingPipelineSection(pm, request.base, PipelineSection::Front);
      }))) {
    // No candidate yet: what failed is common to all of them.
    model.emitError() << "planner: the front of the pipeline (precision, "
                         "logits, data parallelism, autodiff) failed, for "
                         "every candidate";
    return failure();
  }
  lap("front of the pipeline (once)", frontStart);
  for (auto [index, micro] : llvm::enumerate(request.microBatches)) {
    bool searched = index > 0;
    PlanCandidate front;
    front.microBatches = micro;
    for (const std::string &remat : request.remats) {
      PlanCandidate rematted = front;
      rematted.remat = remat;
      // This policy's configurations that do not fit at a smaller count.
      std::vector<PlanCandidate> batch;
      for (int64_t stage : request.stages) {
        for (int64_t bucket : bucketSizes) {
          PlanCandidate c = rematted;
          c.zeroStage = stage;
          c.bucketBytes = bucket;
          if (!fitted.count(configuration(c)))
            batch.push_back(std::move(c));
        }
      }
      if (batch.empty())
        continue;
      Clock::time_point t = Clock::now();
      OwningOpRef<ModuleOp> optimized = differentiated->clone();
      {
        std::optional<ScopedDiagnosticHandler> quiet;
        if (searched)
          quiet.emplace(context, [](Diagnostic &) { return success(); });
        if (failed(runPasses(*optimized, [&](OpPassManager &pm) {
              buildTrainingPipelineSection(
                  pm, candidateOptions(request.base, rematted),
                  PipelineSection::Remat);
            }))) {
          // A searched count whose micro-batch the per-rank batch does not
          // divide (train-accumulate refuses it): skip the count.
          if (!searched)
            return fail(rematted, "the pipeline");
          break;
        }
      }
      lap("remat, accumulation and optimizer (once per policy and "
          "micro-batch count)",
          t);

      std::vector<CandidateTimes> times(batch.size());
      auto evaluate = [&](size_t i) {
        return evaluateCandidate(*optimized, request, batch[i], times[i]);
      };
      // The first alone (the passes load what they need into the context),
      // the others in parallel; their diagnostics in candidate order.
      if (!batch.empty() && failed(evaluate(0)))
        return fail(batch[0], times[0].failedStep);
      if (batch.size() > 1) {
        ParallelDiagnosticHandler diagnostics(context);
        LogicalResult result = failableParallelForEachN(
            context, size_t(1), batch.size(), [&](size_t i) {
              diagnostics.setOrderIDForThread(i);
              LogicalResult r = evaluate(i);
              diagnostics.eraseOrderIDForThread();
              return r;
            });
        if (failed(result)) {
          for (size_t i = 1; i < batch.size(); ++i)
            if (!times[i].failedStep.empty())
              return fail(batch[i], times[i].failedStep);
          return failure();
        }
      }
      for (auto [c, time] : llvm::zip(batch, times)) {
        plan.parameters = time.parameters;
        plan.precision = time.precision;
        for (auto [what, seconds] :
             {std::pair<llvm::StringRef, double>{"clones", time.clone},
              {"ZeRO passes and schedule (per candidate)", time.zero},
              {"performance model (per candidate)", time.model},
              {"planning passes (per candidate)", time.planning},
              {"memory report (per candidate)", time.report}}) {
          if (seconds > 0)
            addTime(what, seconds);
        }
        if (c.fits)
          fitted.insert(configuration(c));
        plan.candidates.push_back(std::move(c));
      }
    }
  }
  plan.parallel = context->isMultithreadingEnabled()
                      ? static_cast<int>(context->getNumThreads())
                      : 1;

  llvm::stable_sort(plan.candidates, [](const PlanCandidate &a,
                                        const PlanCandidate &b) {
    return std::make_tuple(a.zeroStage, rematCost(a.remat), a.microBatches,
                           -a.bucketBytes) <
           std::make_tuple(b.zeroStage, rematCost(b.remat), b.microBatches,
                           -b.bucketBytes);
  });
  for (auto [i, c] : llvm::enumerate(plan.candidates)) {
    int index = static_cast<int>(i);
    if (plan.smallest < 0 ||
        c.peakBytes < plan.candidates[plan.smallest].peakBytes)
      plan.smallest = index;
  }
  plan.picked = pickCandidate(plan.candidates);

  // Nothing fits: at how many ranks would the smallest configuration?
  if (plan.picked < 0 && plan.smallest >= 0 && request.adviseWorldSize) {
    Clock::time_point t = Clock::now();
    const PlanCandidate &smallest = plan.candidates[plan.smallest];
    for (int64_t factor = 2; factor <= 64; factor *= 2) {
      PipelineOptions options = candidateOptions(request.base, smallest);
      options.worldSize = request.base.worldSize * factor;
      // More ranks leave fewer sequences per rank: as many micro-batches
      // as still divide them.
      FailureOr<int64_t> peak = quietPeak(model, options);
      while (failed(peak) && options.gradAccum > 1) {
        options.gradAccum /= 2;
        peak = quietPeak(model, options);
      }
      if (failed(peak))
        break;
      plan.triedWorldSize = options.worldSize;
      if (*peak <= request.budgetBytes) {
        plan.fitWorldSize = options.worldSize;
        plan.fitWorldSizePeak = *peak;
        break;
      }
    }
    lap("more ranks for the smallest (no fit)", t);
  }
  plan.seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return plan;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

void printPlanTable(llvm::raw_ostream &os, const Plan &plan) {
  os << "zeroc plan: N = " << plan.worldSize
     << (plan.worldSize == 1 ? " rank" : " ranks") << ", " << plan.precision
     << ", " << withCommas(plan.parameters) << " parameters, budget "
     << formatBytes(plan.budgetBytes) << " per rank\n";
  if (!plan.machine.empty())
    os << "step time: the performance model on " << plan.machine << "\n";
  os << "\n";
  os << llvm::format("    %5s  %-9s  %5s  %10s  %13s  %13s  %13s  %13s  %4s",
                     "stage", "remat", "micro", "bucket", "model states",
                     "transient", "peak", "sent/step", "fits");
  if (!plan.machine.empty())
    os << llvm::format("  %10s  %6s", "step (ms)", "MFU");
  os << "\n";
  for (auto [i, c] : llvm::enumerate(plan.candidates)) {
    os << llvm::format(
        "  %s %5lld  %-9s  %5lld  %10s  %13s  %13s  %13s  %13s  %4s",
        static_cast<int>(i) == plan.picked ? "*" : " ",
        static_cast<long long>(c.zeroStage), c.remat.c_str(),
        static_cast<long long>(c.microBatches),
        formatBytes(c.bucketBytes).c_str(),
        formatBytes(c.modelStateBytes).c_str(),
        formatBytes(c.transientPeakBytes).c_str(),
        formatBytes(c.peakBytes).c_str(), formatBytes(c.commBytes).c_str(),
        c.fits ? "yes" : "no");
    if (c.predicted)
      os << llvm::format("  %10.3f  %5.1f%%", c.stepSeconds * 1e3,
                         c.mfu * 100.0);
    os << "\n";
  }
  os << "\n";
  if (const PlanCandidate *picked = plan.pickedCandidate())
    os << "picked (*): " << describeCandidate(*picked) << ": peak "
       << formatBytes(picked->peakBytes) << " of "
       << formatBytes(plan.budgetBytes) << ", "
       << formatBytes(picked->commBytes) << " sent per step\n";
  else
    os << "picked: none (" << noFitMessage(plan) << ")\n";
  os << "rule: of those that fit, the least sent per step (within 0.1%), "
        "then the least recomputation (none, selective, full), fewer "
        "micro-batches, larger buckets, stage 2, 1, 0, 3 in that order\n";
  os << llvm::format("planned %zu candidates in %.2f s\n",
                     plan.candidates.size(), plan.seconds);
}

void printPlanJSON(llvm::raw_ostream &os, const Plan &plan) {
  llvm::json::Array candidates;
  for (const PlanCandidate &c : plan.candidates) {
    llvm::json::Object row{
        {"stage", c.zeroStage},
        {"remat", c.remat},
        {"micro_batches", c.microBatches},
        {"bucket_bytes", c.bucketBytes},
        {"model_state_bytes", c.modelStateBytes},
        {"transient_peak_bytes", c.transientPeakBytes},
        {"peak_bytes_per_rank", c.peakBytes},
        {"comm_bytes_per_step", c.commBytes},
        {"fits", c.fits},
    };
    if (c.predicted) {
      row["step_seconds"] = c.stepSeconds;
      row["mfu"] = c.mfu;
    }
    candidates.push_back(std::move(row));
  }
  llvm::json::Object root{
      {"world_size", plan.worldSize},
      {"parameters", plan.parameters},
      {"precision", plan.precision},
      {"budget_bytes", plan.budgetBytes},
      {"candidates", std::move(candidates)},
      {"picked", plan.picked < 0 ? llvm::json::Value(nullptr)
                                 : llvm::json::Value(plan.picked)},
      {"smallest", plan.smallest},
  };
  if (!plan.machine.empty())
    root["machine"] = plan.machine;
  if (plan.picked < 0) {
    root["no_fit"] = noFitMessage(plan);
    if (plan.fitWorldSize)
      root["fit_world_size"] = plan.fitWorldSize;
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

/// The --memory-budget value that `bytes` fits in: rounded up to a
/// hundredth of a GiB or MiB, plain bytes below a MiB.
static std::string budgetFlagFor(int64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
  double b = static_cast<double>(bytes);
  if (b >= kGiB)
    return llvm::formatv("{0:f2}GiB", std::ceil(b / kGiB * 100) / 100).str();
  if (b >= kMiB)
    return llvm::formatv("{0:f2}MiB", std::ceil(b / kMiB * 100) / 100).str();
  return std::to_string(bytes);
}

std::string noFitMessage(const Plan &plan) {
  if (plan.smallest < 0)
    return "no candidate to weigh";
  const PlanCandidate &s = plan.candidates[plan.smallest];
  std::string message =
      llvm::formatv("no candidate fits a budget of {0} per rank: the "
                    "smallest peak is {1} ({2}) at --world-size={3}; it "
                    "fits with --memory-budget={4} or more",
                    formatBytes(plan.budgetBytes), formatBytes(s.peakBytes),
                    describeCandidate(s), plan.worldSize, budgetFlagFor(s.peakBytes))
          .str();
  if (plan.fitWorldSize)
    message += llvm::formatv(", or at --world-size={0} (peak {1})",
                             plan.fitWorldSize,
                             formatBytes(plan.fitWorldSizePeak))
                   .str();
  else if (plan.triedWorldSize)
    message += llvm::formatv(" (more ranks, up to --world-size={0} where the "
                             "batch still divides, do not bring it under "
                             "the budget)",
                             plan.triedWorldSize)
                   .str();
  else
    message += " (the batch does not divide over twice the ranks)";
  return message;
}

} // namespace zeroc
