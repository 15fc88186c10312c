//===- Pipeline.cpp - zeroc's training pipeline ---------------------------===//
//
// A placeholder written by the driver's author so that `zeroc` builds: it
// differentiates the model and expands its optimizer, and ignores the ZeRO
// options. The pipeline's owner replaces the body.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Pipeline/Pipeline.h"

#include "zeroc/Transforms/Passes.h"

void zeroc::buildTrainingPipeline(mlir::OpPassManager &pm,
                                  const PipelineOptions &options) {
  (void)options;
  pm.addPass(createTrainAutodiff());
  pm.addPass(createTrainOptimizer());
}
