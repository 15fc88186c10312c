//===- MemoryReport.h - static per-rank memory and traffic ------*- C++ -*-===//
//
// What one rank of a ZeRO-partitioned training step holds and sends, read
// off the IR's types alone (no tensor is ever allocated, so a 175B-parameter
// model reports in well under a second):
//
//   - persistent model states of rank 0: parameters, gradient buffers and
//     optimizer states, from the train.param / train.state declarations
//     and the train.buffers that hold them (a sharded buffer is the rank's
//     shard, padding included);
//   - transient memory: a liveness sweep over the function marked
//     `train.step`, split into gathered parameters, gradient buckets and
//     activations, each with its own peak and the combined peak;
//   - communication per rank and step: ring-algorithm traffic of every
//     collective, with padding excluded from the payload.
//
// See docs/memory-report.md for the exact rules.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_ANALYSIS_MEMORYREPORT_H
#define ZEROC_ANALYSIS_MEMORYREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc {

/// One collective of the step function, in program order.
struct CollectiveTraffic {
  /// "all_reduce", "reduce_scatter" or "all_gather".
  std::string op;
  /// True for train.*_start (asynchronous), false for upstream shard.*.
  bool async = false;
  /// N: the ranks of the ring (the grid's size, else the world size).
  int64_t ranks = 1;
  /// n: the payload in elements, padding excluded (see `tensors`).
  int64_t payloadElements = 0;
  /// The collective's buffer as typed (input for all-reduce and
  /// reduce-scatter, output for all-gather), padding included.
  int64_t bufferElements = 0;
  /// Tensors packed into the buffer (1 if it was not packed).
  int64_t tensors = 1;
  /// Bytes of one element of the buffer.
  int64_t elementBytes = 0;
  /// Elements one rank sends: 2(N-1)/N*n for all-reduce, (N-1)/N*n for
  /// reduce-scatter and all-gather, rounded to the nearest integer.
  int64_t elements = 0;
  /// elements * elementBytes.
  int64_t bytes = 0;
};

struct MemoryReport {
  /// Ψ: logical elements of every train.param (declared type, not shard).
  int64_t parameters = 0;
  /// N and the ZeRO stage, from the module attributes `train.world_size`
  /// and `train.zero_stage` (absent: 1 and 0).
  int64_t worldSize = 1;
  int64_t stage = 0;
  /// "fp32" or "bf16" (the train.params' element type); "mixed" when they
  /// differ, "none" without parameters.
  std::string precision;
  /// The function the transient and communication figures come from.
  std::string stepFunction;

  /// Persistent bytes of rank 0, padding excluded.
  struct PerRank {
    int64_t parameters = 0;
    int64_t gradients = 0;
    int64_t optimizerStates = 0;
    int64_t modelStates = 0;
  } perRank;

  /// Peak bytes live over the step function, per category and combined.
  struct Transient {
    int64_t gatheredParameters = 0;
    int64_t gradientBuckets = 0;
    int64_t activations = 0;
    int64_t peak = 0;
  } transient;

  /// Sums over `collectives`.
  int64_t commElements = 0;
  int64_t commBytes = 0;
  std::vector<CollectiveTraffic> collectives;

  /// The report as a JSON object (docs/memory-report.md lists the keys).
  void toJSON(llvm::raw_ostream &os) const;
  /// The same figures as an aligned text table in MiB/GiB.
  void toTable(llvm::raw_ostream &os) const;
};

/// Computes the report of `module`, a per-rank partitioned program with one
/// `func.func` marked `train.step`. Emits an error on the module (and
/// returns failure) when there is no such function, more than one, or one
/// with more than one block.
mlir::FailureOr<MemoryReport> computeMemoryReport(mlir::ModuleOp module);

} // namespace zeroc

#endif // ZEROC_ANALYSIS_MEMORYREPORT_H
