//===- Pipeline.h - zeroc's training pipeline -------------------*- C++ -*-===//
//
// The passes that turn a model (train.forward + train.optimizer) into the
// per-rank training step for a ZeRO stage and world size. The `zeroc`
// driver runs this pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PIPELINE_PIPELINE_H
#define ZEROC_PIPELINE_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace zeroc {

struct PipelineOptions {
  /// ZeRO stage, 0..3 (0: plain data parallelism).
  int64_t zeroStage = 0;
  /// Data-parallel ranks.
  int64_t worldSize = 1;
  /// The global batch in sequences (train-batch-size's global-batch;
  /// zeroc's --micro-batch-size x --grad-accum x --world-size, or
  /// --global-batch-size); 0 keeps the model's.
  int64_t globalBatch = 0;
  /// "fp32" or "bf16"; "" keeps the model's precision.
  std::string precision;
  /// Target size of a gradient bucket, in bytes. zeroc's default is
  /// defaultBucketBytes(modelGradientBytes(...)), not this value.
  int64_t bucketBytes = 25 << 20;
  /// Gradient buckets whose reduction may be in flight at once.
  int64_t maxInFlight = 2;
  /// Activation rematerialization: "none", "full" or "selective"
  /// (train-remat's policy).
  std::string remat = "none";
  /// Micro-batches per step (--grad-accum): train-accumulate's K.
  int64_t gradAccum = 1;
  /// Raise written-out attention, norms and activations to the fast ops
  /// (train-raise, first); zeroc's --raise.
  bool raise = true;
};

/// Adds the training pipeline to `pm` (a pass manager on builtin.module):
/// [train-raise] [train-batch-size] [train-mixed-precision] train-logits
/// train-data-parallel train-autodiff
/// train-remat train-accumulate train-optimizer train-zero train-schedule
/// canonicalize cse. It is the three sections below, in order.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options);

/// The training pipeline in three consecutive sections, so that a tool that
/// weighs configurations (the memory-budget planner, Planner.h) runs what
/// they share once and clones the module between sections; running the
/// three in order is buildTrainingPipeline.
///   - Front: [train-batch-size] [train-mixed-precision] train-logits
///     train-data-parallel train-autodiff (reads globalBatch, precision and
///     worldSize);
///   - Remat: train-remat train-accumulate train-optimizer (reads remat and
///     gradAccum);
///   - Zero: train-zero train-schedule canonicalize cse (reads zeroStage,
///     worldSize, bucketBytes and maxInFlight).
enum class PipelineSection { Front, Remat, Zero };
void buildTrainingPipelineSection(mlir::OpPassManager &pm,
                                  const PipelineOptions &options,
                                  PipelineSection section);

/// Adds the planning passes to `pm` (docs/backend.md): the scheduled
/// per-rank program to the buffer form the back ends print and the memory
/// report reads: train-fuse-optimizer train-fuse-matmul-bias
/// train-fuse-head-split train-fuse-elementwise train-bufferize cse
/// train-defer-gathers train-deallocate train-verify-emittable. `maxInFlight` (the training pipeline's
/// max-in-flight) bounds the fp32 stage 1-2 parameter gathers that
/// train-defer-gathers defers on the buffers.
void buildPlanningPipeline(mlir::OpPassManager &pm, int64_t maxInFlight = 2);

/// Registers the pipelines as `--train-pipeline="stage=S world-size=N ..."`
/// and `--train-planning` for zeroc-opt.
void registerTrainingPipeline();

/// The gradient bucket size zeroc picks when --bucket-bytes is not given
/// (the memory-budget planner's first candidate too; the performance model
/// reads the buckets of the compiled step, so it sees the same): an eighth
/// of the model's gradient bytes, rounded up to 64 KiB, within [1 MiB,
/// 25 MiB]. About 8 buckets, so that backward overlaps the reduction of 7
/// of them and only the last (an eighth of the traffic) is left after it,
/// at about 8 collectives per step; 1 MiB keeps each collective's fixed
/// cost small beside its transfer, and 25 MiB (PyTorch DDP's default) keeps
/// the buckets of a large model few and their transient memory bounded.
/// docs/benchmarks.md (issue 34) measures it.
int64_t defaultBucketBytes(int64_t gradientBytes);
inline constexpr int64_t kMinDefaultBucketBytes = int64_t{1} << 20;
inline constexpr int64_t kMaxDefaultBucketBytes = int64_t{25} << 20;
inline constexpr int64_t kDefaultBucketCount = 8;

/// The bytes of `module`'s gradients: every train.param's elements at the
/// training precision's width (`precision` "bf16": 2 bytes, "fp32": 4,
/// "": the declared element type's).
int64_t modelGradientBytes(mlir::ModuleOp module, llvm::StringRef precision);

} // namespace zeroc

#endif // ZEROC_PIPELINE_PIPELINE_H
