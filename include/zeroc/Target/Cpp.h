//===- Cpp.h - C++ (CPU) and CUDA C++ (GPU) source for the runtimes -*- C++ -*-===//
//
// Translates a per-rank training program (the output of the training
// pipeline) into one readable source file that defines zeroc_program() for a
// runtime implementing include/zeroc/Runtime/zrt.h: the state table, the
// training step, the forward (evaluation) and logits functions. Chains of
// elementwise ops become single fused loops: OpenMP loops in C++ for the CPU
// runtime, generated __global__ kernels in CUDA C++ for the CUDA runtime.
// Matmuls, normalizations, attention, losses, optimizer updates and
// collectives become runtime calls in both.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_TARGET_CPP_H
#define ZEROC_TARGET_CPP_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace zeroc {

/// The runtime a translation is written for.
enum class SourceTarget { Cpu, Cuda };

/// Writes the translation of `module` for `target` to `os`; reports
/// unsupported ops on the op and fails.
mlir::LogicalResult translateToSource(mlir::ModuleOp module,
                                      llvm::raw_ostream &os,
                                      SourceTarget target);

/// C++ for the CPU runtime (translateToSource with SourceTarget::Cpu).
inline mlir::LogicalResult translateToCpp(mlir::ModuleOp module,
                                          llvm::raw_ostream &os) {
  return translateToSource(module, os, SourceTarget::Cpu);
}

/// CUDA C++ for the CUDA runtime (SourceTarget::Cuda).
inline mlir::LogicalResult translateToCuda(mlir::ModuleOp module,
                                           llvm::raw_ostream &os) {
  return translateToSource(module, os, SourceTarget::Cuda);
}

} // namespace zeroc

#endif // ZEROC_TARGET_CPP_H
