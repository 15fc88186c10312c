//===- Passes.h - zeroc's transformations of train IR -----------*- C++ -*-===//

#ifndef ZEROC_TRANSFORMS_PASSES_H
#define ZEROC_TRANSFORMS_PASSES_H

#include "zeroc/Dialect/Train/IR/TrainDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace zeroc {

#define GEN_PASS_DECL
#include "zeroc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zeroc/Transforms/Passes.h.inc"

} // namespace zeroc

#endif // ZEROC_TRANSFORMS_PASSES_H
