//===- InitAll.h - register zeroc's dialects and passes ---------*- C++ -*-===//

#ifndef ZEROC_INITALL_H
#define ZEROC_INITALL_H

#include "zeroc/Analysis/CostModels.h"
#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Pipeline/Pipeline.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace zeroc {

/// The train dialect and the upstream dialects zeroc's IR uses, with the
/// ops' cost models (the performance model's TrainCostOpInterface).
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<train::TrainDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::shard::ShardDialect, mlir::memref::MemRefDialect,
                  mlir::emitc::EmitCDialect>();
  registerCostModels(registry);
}

/// zeroc's passes and the upstream cleanups run between them.
inline void registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  registerTransformsPasses();
  registerTrainingPipeline();
}

} // namespace zeroc

#endif // ZEROC_INITALL_H
