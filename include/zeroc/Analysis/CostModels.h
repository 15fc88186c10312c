//===- CostModels.h - TrainCostOpInterface for every op ---------*- C++ -*-===//
//
// What each op of a compiled step costs (its FLOPs, the bytes it moves, the
// engine that runs it), attached to the train and shard ops as external
// models of TrainCostOpInterface (include/zeroc/Dialect/Train/IR/
// TrainCostInterface.h). zeroc::registerAllDialects registers them; the
// performance model (PerfModel.h) reads them.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_ANALYSIS_COSTMODELS_H
#define ZEROC_ANALYSIS_COSTMODELS_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace zeroc {

/// Adds the cost models of the train and shard ops to `registry`.
void registerCostModels(mlir::DialectRegistry &registry);

/// Makes sure `context` has them (a context made without
/// registerAllDialects, e.g. by a library user).
void ensureCostModels(mlir::MLIRContext &context);

} // namespace zeroc

#endif // ZEROC_ANALYSIS_COSTMODELS_H
