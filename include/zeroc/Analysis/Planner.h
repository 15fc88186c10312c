//===- Planner.h - the memory-budget planner --------------------*- C++ -*-===//
//
// Which configuration of the training pipeline fits a per-rank memory
// budget, and sends the least? The planner compiles a model for every
// candidate (ZeRO stage x rematerialization policy x micro-batches x
// gradient bucket size) at one world size and precision, reads each one's
// per-rank peak memory and bytes sent per step off the static memory report
// of its planned program (MemoryReport.h: the figures --emit=memory-report
// prints for the same flags) and picks, among the candidates whose peak
// fits the budget, the one that sends the least (within 0.1%), then
// recomputes the least (none < selective < full), then has the fewest
// micro-batches, then the largest buckets, then the lowest stage. With a machine (PerfModel.h) each
// candidate also gets its predicted step time, from the same schedule.
//
//   zeroc MODEL --world-size=N --memory-budget=80GiB --emit=plan
//
// Work the candidates share is done once: the front of the pipeline
// (precision, data parallelism, autodiff) once, rematerialization and the
// optimizer once per policy, then the ZeRO passes, the schedule, the
// planning passes and the report per stage and bucket size, each on a clone
// (Pipeline.h, PipelineSection). docs/planner.md describes the table and the
// rules.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_ANALYSIS_PLANNER_H
#define ZEROC_ANALYSIS_PLANNER_H

#include "zeroc/Analysis/PerfModel.h"
#include "zeroc/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeroc {

/// Parses a size in bytes: plain bytes ("1073741824", or with a "B"), or a
/// number (decimals allowed) with a binary unit (KiB, MiB, GiB, TiB: powers
/// of 1024) or a decimal one (KB, MB, GB, TB: powers of 1000), units case
/// as written or in lower case. "80GiB", "24GB", "512MiB", "1.5GiB". The
/// error quotes `text`; the caller adds the flag's name.
llvm::Expected<int64_t> parseByteSize(llvm::StringRef text);

/// "80.00 GiB", "512.00 MiB", "512 B": a size as the plan table prints it.
std::string formatBytes(int64_t bytes);

/// The rematerialization policies, cheapest first (the picking order).
std::vector<std::string> rematPolicies();
/// 0 for none, 1 for selective, 2 for full.
int rematCost(llvm::StringRef policy);

/// The bucket sizes the planner tries without --bucket-bytes, largest
/// first: zeroc's default for the model (defaultBucketBytes of its
/// gradient bytes, Pipeline.h) and a fifth of it (rounded up to 64 KiB).
std::vector<int64_t> defaultPlanBucketSizes(int64_t gradientBytes);

/// The micro-batch counts the planner searches without --grad-accum (or a
/// model's train.micro_batches): 1, 2, 4, 8. A count after the first is
/// tried only for the configurations that do not fit at the counts before
/// it, and skipped when the per-rank batch does not split into it.
std::vector<int64_t> defaultPlanMicroBatches();

/// One configuration and its figures.
struct PlanCandidate {
  int64_t zeroStage = 0;
  std::string remat = "none";
  /// Micro-batches per step (gradient accumulation); 1: none.
  int64_t microBatches = 1;
  int64_t bucketBytes = 0;

  /// From the static memory report of this candidate's planned program.
  int64_t modelStateBytes = 0;
  int64_t transientPeakBytes = 0;
  /// modelStateBytes + transientPeakBytes: the report's
  /// peak_bytes_per_rank.
  int64_t peakBytes = 0;
  /// The report's communication_per_rank_per_step.bytes.
  int64_t commBytes = 0;
  /// peakBytes <= the budget.
  bool fits = false;

  /// With a machine: the performance model's prediction of the same
  /// schedule.
  bool predicted = false;
  double stepSeconds = 0;
  double mfu = 0;
};

/// The pipeline options that compile `candidate`: `base` (precision, world
/// size, max-in-flight) with the candidate's stage, policy, micro-batches
/// and bucket size.
PipelineOptions candidateOptions(const PipelineOptions &base,
                                 const PlanCandidate &candidate);

/// The index of the candidate to pick among `candidates` (their figures
/// filled), -1 when none fits: of those that fit, the ones whose bytes
/// sent per step are within 0.1% of the least (stages 0-2 send the same
/// up to rounding), and of those the one with the least recomputation
/// (rematCost), then the fewest micro-batches, the largest buckets, the
/// stage in the order 2, 1, 0, 3 (at the same traffic, the one that holds
/// the least), the fewest bytes sent.
int pickCandidate(llvm::ArrayRef<PlanCandidate> candidates);

struct PlanRequest {
  /// Precision, world size and max-in-flight for every candidate (its
  /// zeroStage, remat, bucketBytes are ignored: the lists below say).
  PipelineOptions base;
  /// Per-rank memory budget in bytes.
  int64_t budgetBytes = 0;
  /// The dimensions to enumerate; a flag given explicitly fixes one to a
  /// single value.
  std::vector<int64_t> stages = {0, 1, 2, 3};
  std::vector<std::string> remats = rematPolicies();
  std::vector<int64_t> microBatches = defaultPlanMicroBatches();
  /// Empty: defaultPlanBucketSizes of the model's gradient bytes.
  std::vector<int64_t> bucketSizes;
  /// Predict each candidate's step on this machine (null: no step column).
  const Machine *machine = nullptr;
  /// When nothing fits, compile the smallest candidate at 2N, 4N, ...,
  /// 64N ranks (while the batch divides) for the world size at which it
  /// would fit.
  bool adviseWorldSize = true;
};

struct Plan {
  int64_t budgetBytes = 0;
  int64_t worldSize = 1;
  /// From the reports: Ψ and "bf16" / "fp32".
  int64_t parameters = 0;
  std::string precision;
  /// The machine's name when steps were predicted, else empty.
  std::string machine;
  /// Sorted by stage, policy (none, selective, full), micro-batches, bucket
  /// size (largest first).
  std::vector<PlanCandidate> candidates;
  /// Index of the picked candidate, -1 when none fits.
  int picked = -1;
  /// Index of the candidate with the smallest peak.
  int smallest = -1;
  /// When none fits and adviseWorldSize: the smallest world size tried at
  /// which the smallest candidate's configuration fits (0: none tried fit),
  /// and its peak there.
  int64_t fitWorldSize = 0;
  int64_t fitWorldSizePeak = 0;
  /// The largest world size that search compiled (0: none).
  int64_t triedWorldSize = 0;
  /// Seconds the plan took (the table's last line), and where they went
  /// (wall clock, in the order first spent; zeroc --timings prints them).
  double seconds = 0;
  /// Summed over candidates: with `parallel` threads they add up to more
  /// than the wall clock.
  std::vector<std::pair<std::string, double>> timings;
  /// Threads the candidates compiled on (the context's).
  int parallel = 1;

  const PlanCandidate *pickedCandidate() const {
    return picked < 0 ? nullptr : &candidates[picked];
  }
};

/// Plans `model` (a model, before the pipeline; it is not modified).
/// Fails after an error diagnostic (a pass of the pipeline, the report or
/// the performance model failing for some candidate, naming it).
mlir::FailureOr<Plan> planMemory(mlir::ModuleOp model,
                                 const PlanRequest &request);

/// "ZeRO stage 2, --remat=none, 1 micro-batch, 25.00 MiB buckets".
std::string describeCandidate(const PlanCandidate &candidate);

/// The table of every candidate, the picked one marked with '*'.
void printPlanTable(llvm::raw_ostream &os, const Plan &plan);
/// The same as JSON.
void printPlanJSON(llvm::raw_ostream &os, const Plan &plan);

/// Nothing fits: the smallest peak found, the budget, and what would make
/// it fit (a larger budget, more ranks). One line, without "error:".
std::string noFitMessage(const Plan &plan);

} // namespace zeroc

#endif // ZEROC_ANALYSIS_PLANNER_H
