//===- Cpp.h - C++ source for the CPU runtime -------------------*- C++ -*-===//
//
// Translates a per-rank training program (the output of the training
// pipeline) into one readable C++ file that defines zeroc_program() for the
// CPU runtime (include/zeroc/Runtime/zrt.h): the state table, the training
// step and the forward (evaluation) function. Chains of elementwise ops
// become single fused loops; matmuls, normalizations, attention, losses,
// optimizer updates and collectives become runtime calls.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_TARGET_CPP_H
#define ZEROC_TARGET_CPP_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace zeroc {

/// Writes the C++ translation of `module` to `os`; reports unsupported ops
/// on the op and fails.
mlir::LogicalResult translateToCpp(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace zeroc

#endif // ZEROC_TARGET_CPP_H
