//===- Interpreter.h - internals of the reference evaluator -----*- C++ -*-===//
//
// The interpreter walks a function's single block op by op. Each op name
// maps to one handler in the OpRegistry:
//
// * a *local* handler computes one rank's results from that rank's
//   operands (every train op, arith, tensor);
// * a *global* handler sees every rank's operands at once (collectives,
//   func.call).
//
// Before a handler runs, its results are allocated as zero tensors with the
// shape and element type of the op's result types; the handler fills their
// `data`. Afterwards the interpreter checks the element counts and rounds
// each result to its element type (unless fp64). Handlers therefore compute
// in double and never round.
//
// Adding an op is one function plus one `add<OpTy>(fn)` line in the
// register* function of the file it belongs to.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_EVALUATOR_INTERPRETER_H
#define ZEROC_LIB_EVALUATOR_INTERPRETER_H

#include "zeroc/Evaluator/Evaluator.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace zeroc::eval {

class Interpreter;

/// What a local handler knows beyond its operands.
struct RankContext {
  Interpreter &interpreter;
  int64_t rank;
};

/// Computes one rank's `results` (pre-allocated, zero) from `operands`.
using LocalHandler = std::function<mlir::LogicalResult(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
    std::vector<Tensor> &results, RankContext &context)>;

/// Computes every rank's results: `operands[i][r]`, `results[i][r]`
/// (pre-allocated, zero).
using GlobalHandler = std::function<mlir::LogicalResult(
    mlir::Operation *op, llvm::ArrayRef<const RankValues *> operands,
    std::vector<RankValues> &results, Interpreter &interpreter)>;

struct OpHandler {
  LocalHandler local;   // set for per-rank ops
  GlobalHandler global; // set for ops that combine ranks
};

class OpRegistry {
public:
  /// Registers a per-rank handler for OpTy.
  template <typename OpTy>
  void add(mlir::LogicalResult (*fn)(OpTy, llvm::ArrayRef<const Tensor *>,
                                     std::vector<Tensor> &, RankContext &)) {
    handlers[OpTy::getOperationName()].local =
        [fn](mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
             std::vector<Tensor> &results, RankContext &context) {
          return fn(llvm::cast<OpTy>(op), operands, results, context);
        };
  }

  /// Registers a handler for OpTy that sees every rank.
  template <typename OpTy>
  void addGlobal(mlir::LogicalResult (*fn)(OpTy,
                                           llvm::ArrayRef<const RankValues *>,
                                           std::vector<RankValues> &,
                                           Interpreter &)) {
    handlers[OpTy::getOperationName()].global =
        [fn](mlir::Operation *op, llvm::ArrayRef<const RankValues *> operands,
             std::vector<RankValues> &results, Interpreter &interpreter) {
          return fn(llvm::cast<OpTy>(op), operands, results, interpreter);
        };
  }

  /// Registers a per-rank handler by op name (for families of ops that
  /// share one implementation).
  void addNamed(llvm::StringRef name, LocalHandler handler) {
    handlers[name].local = std::move(handler);
  }

  const OpHandler *lookup(llvm::StringRef name) const {
    auto it = handlers.find(name);
    return it == handlers.end() ? nullptr : &it->second;
  }

  const llvm::StringMap<OpHandler> &all() const { return handlers; }

private:
  llvm::StringMap<OpHandler> handlers;
};

// One per file: each registers the handlers of its ops.
void registerForwardOps(OpRegistry &registry);     // ForwardOps.cpp
void registerGradOps(OpRegistry &registry);        // GradOps.cpp
void registerOptimizerOps(OpRegistry &registry);   // OptimizerOps.cpp
void registerCollectives(OpRegistry &registry);    // Collectives.cpp
void registerDistributedOps(OpRegistry &registry); // DistributedOps.cpp
void registerStateOps(OpRegistry &registry);       // State.cpp
void registerUpstreamOps(OpRegistry &registry);    // UpstreamOps.cpp
void registerLlamaOps(OpRegistry &registry);       // LlamaOps.cpp
void registerMathOps(OpRegistry &registry);        // MathOps.cpp
void registerGenericOps(OpRegistry &registry);     // GenericOps.cpp

/// The element type of a scalar type (f32, bf16, f64, i1, i32, i64, index),
/// or nullopt.
std::optional<ElementType> elementTypeOf(mlir::Type type);

/// A zero tensor of `type` (a static ranked tensor or a scalar), or nullopt
/// if the evaluator cannot represent it (an unsupported element type, a
/// dynamic shape, more than 2^48 elements).
std::optional<Tensor> zeroTensorOf(mlir::Type type);

/// The elements of a value of `type` (1 for a scalar), or nullopt when
/// zeroTensorOf cannot represent it; allocates nothing.
std::optional<int64_t> elementsOf(mlir::Type type);

class Interpreter {
public:
  Interpreter(mlir::ModuleOp module, Options options);

  const Options &options() const { return opts; }
  mlir::ModuleOp module() const { return moduleOp; }
  mlir::SymbolTableCollection &symbols() { return symbolTables; }

  /// Runs `func` on every rank (see Evaluator::call).
  mlir::FailureOr<std::vector<RankValues>>
  call(mlir::func::FuncOp func, const std::vector<RankValues> &args);

  //===--- State (State.cpp) ----------------------------------------------===//

  /// The initial value of the train.param or train.state `op`, the whole
  /// declared tensor on every rank: the loaded --init values or the
  /// initializer at each flat index.
  mlir::FailureOr<Tensor> initialState(mlir::Operation *op);

  /// Initializes every rank's state through initialState.
  mlir::LogicalResult initializeState();
  llvm::Error loadInitFile(const std::string &path);
  /// Writes the logical value (logicalState) of every param and state.
  llvm::Error saveState(const std::string &path) const;

  /// The full declared tensor `name` stands for: rank 0's value, or for a
  /// member of a sharded train.buffer each element from the rank whose
  /// shard of the buffer holds it.
  Tensor logicalState(llvm::StringRef name) const;
  /// For a replicated declaration, the largest |value on rank r - value on
  /// rank 0| over ranks and elements (0 on one rank); nullopt for a member
  /// of a sharded train.buffer.
  std::optional<double> replicaMaxAbsDiff(llvm::StringRef name) const;

  const std::vector<std::string> &stateNames() const { return names; }

  /// Counts `elements` more elements on each of `copies` ranks against the
  /// memory limit (Options::maxBytes); fails, reporting on `op`, past it.
  mlir::LogicalResult reserve(mlir::Operation *op, int64_t elements,
                              int64_t copies, llvm::StringRef what);
  NamedTensors &rankState(int64_t rank) { return stateByRank[rank]; }
  /// Rank `rank`'s value of `name`, or null if there is no such symbol.
  Tensor *lookupState(int64_t rank, llvm::StringRef name);

  /// A train.buffer: its members are stored as declarations of their own
  /// (above), and the buffer is a view of them.
  bool isBuffer(llvm::StringRef name) const { return buffers.count(name.str()); }
  /// The sharded buffer `name` is a member of, or "" (replicated or none).
  llvm::StringRef shardedBufferOf(llvm::StringRef member) const;
  /// What rank `rank` stores of buffer `name` (the whole buffer, or its
  /// flat shard), assembled from the members, padding zero.
  Tensor readBuffer(int64_t rank, llvm::StringRef name) const;
  /// Stores `value` (what readBuffer gives) into the members' elements on
  /// rank `rank`.
  void writeBuffer(int64_t rank, llvm::StringRef name, const Tensor &value);

private:
  /// Flat element `i` of the value the param `paramOp` starts from, in f32
  /// precision (before rounding to the param's element type): loaded, or
  /// from its initializer.
  double parameterStartElement(mlir::Operation *paramOp, int64_t i);

  mlir::FailureOr<std::vector<RankValues>>
  runBlock(mlir::func::FuncOp func, mlir::Block &block,
           llvm::DenseMap<mlir::Value, RankValues> &env);
  mlir::LogicalResult execute(mlir::Operation &op,
                              llvm::DenseMap<mlir::Value, RankValues> &env);

  mlir::ModuleOp moduleOp;
  Options opts;
  mlir::SymbolTableCollection symbolTables;
  OpRegistry registry;
  int callDepth = 0;
  /// Elements the live values hold (every rank), and the limit.
  int64_t liveElements = 0;
  int64_t limitElements = 0;
  int64_t stateElements = 0; // of liveElements, the states'.

  /// How a declaration is laid out on the ranks.
  struct Layout {
    std::vector<int64_t> shape; // the declared (logical) shape
    /// A member of a sharded train.buffer: the buffer's shard size S and
    /// the member's offset in it (element i lives on rank (offset + i) / S).
    std::string shardedBuffer;
    int64_t bufferShard = 0, bufferOffset = 0;
  };
  /// A train.buffer: members (declarations) at offsets, numel elements,
  /// with `shards = N` (0: replicated) rank r holding [r*S, (r+1)*S).
  struct Buffer {
    std::vector<std::string> members;
    std::vector<int64_t> offsets;
    int64_t numel = 0, shards = 0;
    ElementType type = ElementType::F32;
  };
  mlir::LogicalResult initializeBuffers();

  std::vector<std::string> names;
  std::map<std::string, Layout> layouts;
  std::map<std::string, Buffer> buffers;
  std::vector<NamedTensors> stateByRank;
  NamedTensors initValues; // from --init
};

} // namespace zeroc::eval

#endif // ZEROC_LIB_EVALUATOR_INTERPRETER_H
