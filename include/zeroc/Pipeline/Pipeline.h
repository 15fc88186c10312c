//===- Pipeline.h - zeroc's training pipeline -------------------*- C++ -*-===//
//
// The passes that turn a model (train.forward + train.optimizer) into the
// per-rank training step for a ZeRO stage and world size. The `zeroc`
// driver runs this pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PIPELINE_PIPELINE_H
#define ZEROC_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace zeroc {

struct PipelineOptions {
  /// ZeRO stage, 0..3 (0: plain data parallelism).
  int64_t zeroStage = 0;
  /// Data-parallel ranks.
  int64_t worldSize = 1;
  /// "fp32" or "bf16"; "" keeps the model's precision.
  std::string precision;
  /// Target size of a gradient bucket, in bytes.
  int64_t bucketBytes = 25 << 20;
};

/// Adds the training pipeline to `pm` (a pass manager on builtin.module).
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options);

} // namespace zeroc

#endif // ZEROC_PIPELINE_PIPELINE_H
