//===- FunctionEmitter.h - one func.func as a C++ function ------*- C++ -*-===//

#ifndef ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H
#define ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H

#include "TraceHook.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Runtime/zrt.h"
#include "zeroc/Target/Cpp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace zeroc::cpp {

/// Where each train.param / train.state lives in the generated state table.
struct StateTable {
  llvm::StringMap<unsigned> index;
};

/// A collective (zrt.h's zrt_collective).
enum class Collective {
  AllReduce = ZRT_ALL_REDUCE,
  ReduceScatter = ZRT_REDUCE_SCATTER,
  AllGather = ZRT_ALL_GATHER
};

/// The memory category of a buffer (zrt.h's zrt_mem_category).
enum class Category {
  Gathered = ZRT_MEM_GATHERED_PARAMETERS,
  Buckets = ZRT_MEM_GRADIENT_BUCKETS,
  Activations = ZRT_MEM_ACTIVATIONS
};

/// Emits one function: buffers allocated at their definition and freed
/// after their last use, fused elementwise loops, runtime calls. For CUDA,
/// every buffer is device memory and each fused loop becomes a __global__
/// kernel (written before the function) launched on the runtime's compute
/// stream; the step's scalars that the host needs (the learning rate, the
/// step) stay host values.
class FunctionEmitter {
public:
  FunctionEmitter(llvm::raw_ostream &out, const StateTable &states,
                  SourceTarget target)
      : out(out), states(states), cuda(target == SourceTarget::Cuda) {}

  enum class Kind { Step, Forward, Logits };

  /// Emits `func` as `static void NAME(...)` with the signature of its kind.
  mlir::LogicalResult emit(mlir::func::FuncOp func, llvm::StringRef name,
                           Kind kind);

private:
  // Planning.
  void plan(mlir::Block &block);
  bool isFusable(mlir::Operation *op) const;
  bool isInlined(mlir::Operation *op) const { return inlined.contains(op); }

  // Values.
  std::string var(mlir::Value value);
  std::string ptr(mlir::Value value); // typed pointer expression
  std::string cType(mlir::Type elementType) const;
  std::string dtype(mlir::Type elementType) const;
  void define(mlir::Value value, Category category);
  /// `view` reads the storage that the C expression `expr` points to.
  void alias(mlir::Value view, llvm::StringRef expr);
  void freeDead(mlir::Operation *op);

  // Ops.
  mlir::LogicalResult emitOp(mlir::Operation *op);
  mlir::LogicalResult emitElementwiseRoot(mlir::Operation *op);
  mlir::LogicalResult emitElementwiseKernel(mlir::Operation *op);
  void emitWait(mlir::Value started);
  /// Values computed on the host: the step argument and the learning rate.
  bool isHostScalar(mlir::Value value) const;
  mlir::LogicalResult checkHostScalarUses(mlir::Block &block);
  std::string scalarExpr(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                         llvm::StringRef index);
  std::string loadExpr(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                       llvm::StringRef index);
  mlir::LogicalResult emitUpdate(mlir::Operation *op);
  /// The ops of Llama-class models (LlamaEmitter.cpp): runtime calls.
  mlir::LogicalResult emitLlamaOp(mlir::Operation *op);

  llvm::raw_ostream &out;
  const StateTable &states;
  bool cuda;
  /// The function's body, and (CUDA) the kernels it launches: written to
  /// `out` kernels first once the function is done.
  std::string bodyText, kernelText;
  llvm::raw_string_ostream os{bodyText}, kernelOs{kernelText};
  /// While a kernel is written: its pointer parameter for each value it
  /// loads, and the host expressions passed for them, in order.
  llvm::DenseMap<mlir::Value, std::string> kernelParams;
  llvm::SmallVector<std::pair<mlir::Value, std::string>> kernelArgs;
  bool inKernel = false;
  unsigned nextKernel = 0;
  std::string functionName;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::DenseMap<mlir::Value, std::string> exprs;
  /// The buffer each value's storage belongs to (itself when it owns one).
  llvm::DenseMap<mlir::Value, mlir::Value> base;
  llvm::DenseMap<mlir::Value, Category> categories;
  /// Owned buffers that die after this op.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>> deaths;
  /// Elementwise ops computed inside their single user's loop.
  llvm::DenseSet<mlir::Operation *> inlined;
  /// Writes made redundant by an update computed in place.
  llvm::DenseSet<mlir::Operation *> elided;
  /// Update results computed in place on the state their operand reads.
  llvm::DenseMap<mlir::Value, mlir::Value> inPlaceSource;
  /// Reads that must copy because the state changes while they are live.
  llvm::DenseSet<mlir::Operation *> copyingReads;
  unsigned nextName = 0;
  /// Names each op of the step for --trace (TraceHook.h).
  TraceHook traceHook;
};

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H
