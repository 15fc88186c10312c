//===- PerfModel.h - predicted step time, MFU and memory --------*- C++ -*-===//
//
// A performance model of the compiled training step: the per-rank program
// the pipeline produces (the train.step function, with its train.*_start /
// train.wait collectives) is simulated op by op, in program order, on two
// streams: compute (each op's time from its TrainCostOpInterface figures and
// the machine's peaks and efficiencies) and communication (an alpha-beta
// model of ring and tree collectives across the node hierarchy). A wait
// blocks the compute stream until its collective is done; that time is the
// exposed communication. Memory comes from the static report
// (MemoryReport.h) of the same program.
//
//   zeroc MODEL --zero-stage=S --world-size=N --emit=perf-model --machine=M
//
// docs/performance-model.md describes the model, the machine files
// (share/zeroc/machines/*.machine) and how it compares with measured and
// published runs.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_ANALYSIS_PERFMODEL_H
#define ZEROC_ANALYSIS_PERFMODEL_H

#include "zeroc/Dialect/Train/IR/TrainCostInterface.h"
#include "zeroc/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zeroc {

//===----------------------------------------------------------------------===//
// Machines
//===----------------------------------------------------------------------===//

/// One machine: a kind of device, how many a node has, and the links between
/// them. Rates are in SI units (FLOP/s, bytes/s, seconds).
struct Machine {
  std::string name;
  std::string description;
  /// Dense GEMM peak of one device for f32 and bf16 products.
  double peakFlopsF32 = 0;
  double peakFlopsBF16 = 0;
  /// Achievable rate of elementwise arithmetic (the vector units).
  double vectorFlops = 0;
  /// Fraction of the GEMM peak large products reach.
  double gemmEfficiency = 0;
  /// Fraction of the GEMM peak a fused attention kernel's products reach
  /// (0: the file leaves it out, gemmEfficiency applies).
  double attentionEfficiency = 0;
  /// Memory bandwidth of one device, and the fraction memory-bound kernels
  /// reach.
  double memoryBandwidth = 0;
  double memoryEfficiency = 0;
  /// Memory of one device (what "fits" compares with).
  double memoryBytes = 0;
  /// Devices (GPUs, or cores for a CPU) per node, and nodes the machine has
  /// (0: as many as the world size needs; otherwise ranks beyond
  /// devicesPerNode * nodes share devices, oversubscribed).
  int64_t devicesPerNode = 1;
  int64_t nodes = 0;
  /// Bus bandwidth of a collective (as nccl-tests reports it) within a node
  /// and across nodes, per device, and the latency of one step of a ring
  /// (one hop of a tree).
  double intraBandwidth = 0;
  double intraLatency = 0;
  double interBandwidth = 0;
  double interLatency = 0;
  /// Added to each kernel or runtime call, and to each step (the host's
  /// part: the batch, the loss read back).
  double kernelOverhead = 0;
  double stepOverhead = 0;
  /// Collectives progress while the compute stream runs (GPUs: NCCL on its
  /// own stream); false: only while the rank waits for one (MPI without a
  /// progress thread, the CPU runtime).
  bool asyncProgress = true;

  /// The GEMM peak for products of `elementBits`-bit elements.
  double gemmPeak(unsigned elementBits) const {
    return elementBits <= 16 ? peakFlopsBF16 : peakFlopsF32;
  }
};

/// Parses a machine description (`key = value` lines, `#` comments; the
/// keys and their units are in docs/performance-model.md). Errors name
/// `fileName`, the line and the field.
llvm::Expected<Machine> parseMachine(llvm::StringRef text,
                                     llvm::StringRef fileName);

/// A preset's name (share/zeroc/machines/NAME.machine) or a file's path.
llvm::Expected<Machine> loadMachine(llvm::StringRef nameOrPath);

/// The names of the presets, sorted.
std::vector<std::string> machinePresets();

/// The folder of the presets.
std::string machinePresetDirectory();

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

struct CollectiveTime {
  double seconds = 0;
  /// "ring", "tree" or "copy" (one rank).
  const char *algorithm = "ring";
};

/// The time of one collective of `bufferBytes` (the whole buffer: the
/// all-reduce's and reduce-scatter's input, the all-gather's output) over
/// `ranks` ranks placed devicesPerNode to a node: the faster of a ring over
/// every rank (2(N-1) steps for an all-reduce, N-1 for the others, each of
/// the slowest link's latency, and 2(N-1)/N or (N-1)/N of the buffer at the
/// slowest link's bus bandwidth) and, for an all-reduce across nodes, a
/// tree (a chain within each node, a binary tree over the nodes: latency
/// logarithmic in the nodes, 2x the buffer at the bus bandwidth).
CollectiveTime collectiveTime(const Machine &machine,
                              train::CostCollective kind, double bufferBytes,
                              int64_t ranks);

//===----------------------------------------------------------------------===//
// Predictions
//===----------------------------------------------------------------------===//

/// One op of the simulated step (with SimulateOptions::keepOps).
struct SimulatedOp {
  mlir::Operation *op = nullptr;
  /// "matmul", "all_gather_start", ...
  std::string kind;
  train::CostEngine engine = train::CostEngine::None;
  /// "forward", "backward" or "optimizer".
  std::string phase;
  /// Seconds from the start of the step; a collective's span is on the
  /// communication stream, a wait's is the time the compute stream stalls.
  double start = 0;
  double end = 0;
  train::OpCost cost;
  /// Collectives: bytes sent per rank (ring accounting) and the algorithm.
  double bytesSent = 0;
  std::string algorithm;
};

struct PerfPrediction {
  std::string machine;
  int64_t worldSize = 1;
  int64_t stage = 0;
  std::string precision;
  /// Sequences of one rank's step, their length, and the tokens of the
  /// whole step over every rank.
  int64_t batchPerRank = 0;
  int64_t seqLen = 0;
  int64_t tokensPerStep = 0;

  double stepSeconds = 0;
  /// Busy time of the compute stream, split by engine.
  double computeSeconds = 0;
  double gemmSeconds = 0;
  double memorySeconds = 0;
  /// Busy time of the communication stream.
  double commSeconds = 0;
  /// Time the compute stream waits for collectives, in total and per phase
  /// ("forward", "backward", "optimizer").
  double exposedCommSeconds = 0;
  std::map<std::string, double> exposedByPhase;
  /// Of the communication time, the fraction hidden behind compute.
  double overlap = 1;
  /// Bytes each rank sends per step (ring accounting of the whole buffers).
  double bytesSent = 0;
  int64_t collectives = 0;

  /// GEMM and attention FLOPs of one rank's step (what MFU counts),
  /// recomputation (ops marked train.recomputed) excluded.
  double modelFlops = 0;
  double tokensPerSecond = 0;
  double tokensPerSecondPerDevice = 0;
  /// modelFlops / (stepSeconds * the GEMM peak of the model's precision).
  double mfu = 0;

  /// Rank 0's peak memory: model states + the transient peak of the static
  /// report; whether it fits in one device.
  int64_t peakMemoryBytes = 0;
  int64_t modelStateBytes = 0;
  bool fits = true;

  /// Compute-stream seconds per op kind ("matmul", "layernorm", ...).
  std::map<std::string, double> secondsByKind;
  std::vector<SimulatedOp> ops;
};

struct SimulateOptions {
  /// Keep every op's span in PerfPrediction::ops.
  bool keepOps = false;
  /// Predict the same schedule on this many ranks instead of the module's
  /// train.world_size, at the same per-rank batch (0: the module's). The
  /// ops and their order do not depend on N; what does is derived from the
  /// compiled one: ops on this rank's shards (optimizer updates, norms,
  /// shard copies) scale by N0/N, collectives run over N ranks with the
  /// same buffers, sharded model states shrink as 1/N and the transient
  /// peak is the compiled one (docs/performance-model.md, "--sweep").
  int64_t worldSize = 0;
};

/// Simulates the train.step function of `module` (a per-rank program as
/// zeroc's pipeline writes it; the stage and world size come from its
/// train.zero_stage and train.world_size) on `machine`. Fails after an
/// error on the op without a cost model, or on the module when it has no
/// step function.
mlir::FailureOr<PerfPrediction>
simulateStep(mlir::ModuleOp module, const Machine &machine,
             const SimulateOptions &options = {});

/// Compiles a clone of `model` (a model, before the pipeline) with the
/// pipeline's `options` and simulates its step: the entry point for tools
/// that weigh configurations (the memory-budget planner).
mlir::FailureOr<PerfPrediction>
predictStep(mlir::ModuleOp model, const PipelineOptions &options,
            const Machine &machine, const SimulateOptions &simulate = {});

/// The world sizes of --sweep: 8, 16, ..., 1024.
std::vector<int64_t> defaultSweepSizes();

/// Weak scaling: the step `compiled` holds (a per-rank program for N0 >= 2
/// ranks) predicted at every N of `worldSizes`, at its per-rank batch
/// (SimulateOptions::worldSize), from one compilation: the pipeline is not
/// run again, so 1,024 ranks of a 1.5B model take as long as one.
mlir::FailureOr<std::vector<PerfPrediction>>
sweep(mlir::ModuleOp compiled, const Machine &machine,
      llvm::ArrayRef<int64_t> worldSizes);

/// The text table of `predictions` (one row each), and the same as JSON
/// (with each op's span for a single prediction made with keepOps).
void printPerfTable(llvm::raw_ostream &os,
                    llvm::ArrayRef<PerfPrediction> predictions,
                    const Machine &machine);
void printPerfJSON(llvm::raw_ostream &os,
                   llvm::ArrayRef<PerfPrediction> predictions,
                   const Machine &machine);

} // namespace zeroc

#endif // ZEROC_ANALYSIS_PERFMODEL_H
