//===- FunctionEmitter.h - one planned func.func as C++ ----------*- C++ -*-===//

#ifndef ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H
#define ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H

#include "TraceHook.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Target/Cpp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace zeroc::cpp {

/// Where each train.param / train.state lives in the generated state table.
struct StateTable {
  llvm::StringMap<unsigned> index;
  /// The train.buffer declarations, as indices into the zrt_buffer table.
  llvm::StringMap<unsigned> buffers;
};

/// zrt.h's name of a memory category (ZRT_MEM_...).
const char *categoryName(train::MemoryCategory category);

/// Prints one function in buffer form (train.planned, see
/// docs/backend.md): every op of the plan becomes its C++ counterpart,
/// and nothing is decided here. memref.alloc / dealloc are zrt_alloc /
/// zrt_free in their category, views are pointer arithmetic, a
/// train.kernel is a runtime call or (a train.fused body) one loop, which
/// on CUDA is a __global__ kernel written before the function and launched
/// on the runtime's compute stream.
class FunctionEmitter {
public:
  FunctionEmitter(llvm::raw_ostream &out, const StateTable &states,
                  SourceTarget target)
      : out(out), states(states), cuda(target == SourceTarget::Cuda) {}

  enum class Kind { Step, Forward, Logits, GatherParams };

  /// Emits `func` as `static void NAME(...)` with the signature of its kind.
  mlir::LogicalResult emit(mlir::func::FuncOp func, llvm::StringRef name,
                           Kind kind);

private:
  // Values: C variables and expressions.
  std::string var(mlir::Value value);
  std::string ptr(mlir::Value value);
  std::string index(mlir::Value value);
  std::string cType(mlir::Type elementType) const;
  std::string dtype(mlir::Type elementType) const;
  void alias(mlir::Value value, std::string expr) { exprs[value] = expr; }

  // Ops of the plan.
  mlir::LogicalResult emitOp(mlir::Operation *op);
  mlir::LogicalResult emitKernel(train::KernelOp kernel);
  mlir::LogicalResult emitCall(mlir::Operation *op);
  /// The ops of Llama-class models (LlamaEmitter.cpp): runtime calls.
  mlir::LogicalResult emitLlamaOp(mlir::Operation *op);
  /// tril, triu and constant (MathEmitter.cpp): generated loops and kernels.
  mlir::LogicalResult emitMathOp(mlir::Operation *op);
  /// The generic reductions and gathers (GenericEmitter.cpp).
  mlir::LogicalResult emitGenericOp(mlir::Operation *op);
  mlir::LogicalResult emitUpdate(mlir::Operation *op);
  mlir::LogicalResult emitFusedLoop(train::FusedOp fused, mlir::Value out);
  mlir::LogicalResult emitFusedKernel(train::FusedOp fused, mlir::Value out);
  /// The C expression of element `index` of `value` (a value of the fused
  /// body) over a loop of `shape`.
  std::string scalarExpr(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                         llvm::StringRef index);
  std::string loadExpr(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                       llvm::StringRef index);

  llvm::raw_ostream &out;
  const StateTable &states;
  bool cuda;
  /// The function's body, and (CUDA) the kernels it launches: written to
  /// `out` kernels first once the function is done.
  std::string bodyText, kernelText;
  /// Prints the --trace sites of the step's ops (TraceHook.h).
  TraceHook traceHook;
  llvm::raw_string_ostream os{bodyText}, kernelOs{kernelText};
  /// While a fused kernel is written: its pointer parameter for each value
  /// it loads, and the host expressions passed for them, in order.
  llvm::DenseMap<mlir::Value, std::string> kernelParams;
  llvm::SmallVector<std::pair<mlir::Value, std::string>> kernelArgs;
  bool inKernel = false;
  /// While a CPU loop is written as rows (emitFusedLoop): the row length;
  /// element i is `r * rowLength + j`, and an operand repeated along the
  /// leading dimensions is indexed from the row's offset and `j`.
  int64_t rowLength = 0;
  unsigned nextKernel = 0;
  std::string functionName;
  llvm::DenseMap<mlir::Value, std::string> names;
  /// Pointer (or index) expressions of views, states, arguments and of the
  /// tensors inside a kernel body.
  llvm::DenseMap<mlir::Value, std::string> exprs;
  unsigned nextName = 0;
};

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_FUNCTIONEMITTER_H
