//===- Evaluator.h - the reference evaluator of train IR --------*- C++ -*-===//
//
// A test oracle: executes functions of any stage of `train` IR on the CPU,
// in-process, with plain loops (in the spirit of XLA's HloEvaluator).
// Simple and obviously correct beats fast.
//
// * Every SSA value holds one Tensor per simulated rank (SPMD). Ops run
//   rank by rank; the upstream `shard` dialect's collectives combine the
//   ranks' values.
// * Each op computes in double; by default its results are then rounded to
//   their element type (f32 by a cast, bf16 to nearest even of the f32
//   bits). With `fp64` nothing is rounded after initialization (for
//   gradient checks of f32 IR).
// * Each rank has its own copy of every train.param and train.state; a
//   sharded train.buffer is a view of the rank's shard of its members.
//
// Errors on ops are reported through MLIR diagnostics at the op (install a
// handler, e.g. a SourceMgrDiagnosticHandler); errors about files come back
// as llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_EVALUATOR_EVALUATOR_H
#define ZEROC_EVALUATOR_EVALUATOR_H

#include "zeroc/Evaluator/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zeroc::eval {

/// One value on every rank: element r is rank r's tensor.
using RankValues = std::vector<Tensor>;

/// Named tensors (parameter and state values, by symbol name).
using NamedTensors = std::map<std::string, Tensor>;

struct Options {
  /// Number of simulated SPMD ranks.
  int64_t ranks = 1;
  /// Seed of parameter initialization and generated inputs.
  uint64_t seed = 0;
  /// Keep doubles: no rounding of op results to their element type.
  bool fp64 = false;
  /// The most bytes the evaluator's values may hold at once (states, the
  /// arguments and every value of the functions being evaluated, on every
  /// simulated rank; 8 bytes per element): past it, the op that would
  /// allocate more fails with a message instead of running out of memory.
  /// 0: half of the machine's physical memory.
  int64_t maxBytes = 0;
};

/// Options::maxBytes with 0 resolved to half the physical memory.
int64_t memoryLimit(const Options &options);

class Interpreter;

class Evaluator {
public:
  Evaluator(mlir::ModuleOp module, Options options);
  ~Evaluator();
  Evaluator(const Evaluator &) = delete;
  Evaluator &operator=(const Evaluator &) = delete;

  const Options &options() const;
  mlir::ModuleOp module() const;

  /// Reads parameter (and optionally optimizer state) values from a
  /// safetensors file: names are symbol names; every train.param must be
  /// present, train.states may be; any other name, a wrong shape or an
  /// unsupported dtype (F32, BF16 and F64 are accepted) is an error naming
  /// the tensor. The values take effect at the next initializeState().
  llvm::Error loadInitFile(const std::string &path);

  /// (Re)initializes every rank's params and states: from the loaded init
  /// values where given, else from each declaration's initializer (see
  /// Interpreter::initialState). Reports errors at the declaration.
  mlir::LogicalResult initializeState();

  /// The train.param and train.state symbols, in declaration order.
  const std::vector<std::string> &stateNames() const;
  /// Rank `rank`'s value of the param or state `name` (which must exist).
  Tensor &state(int64_t rank, llvm::StringRef name);
  /// Rank `rank`'s params and states.
  NamedTensors &rankState(int64_t rank);

  /// The full declared tensor of the param or state `name`: rank 0's value
  /// if every rank holds it whole, or for a member of a sharded train.buffer
  /// each element from the rank whose shard of the buffer holds it.
  Tensor logicalState(llvm::StringRef name) const;

  /// For a param or state every rank holds whole: the largest absolute
  /// difference between any rank's value and rank 0's (0 on one rank).
  /// nullopt for a sharded one.
  std::optional<double> replicaMaxAbsDiff(llvm::StringRef name) const;

  /// Writes the logical value of every param (in its declared element type)
  /// and state (f32) to `path`, atomically: one file, whatever the number
  /// of ranks, that --init reads back.
  llvm::Error saveState(const std::string &path) const;

  /// Runs `func` on every rank: `args[i][r]` is rank r's argument i. Returns
  /// the results as `results[i][r]`, or failure after reporting at the op.
  mlir::FailureOr<std::vector<RankValues>>
  call(mlir::func::FuncOp func, const std::vector<RankValues> &args);

private:
  std::unique_ptr<Interpreter> interpreter;
};

/// The ops of the dialect `dialectNamespace` registered in `context` that
/// the evaluator cannot run (module-level declarations excluded), sorted.
std::vector<std::string> unsupportedOps(mlir::MLIRContext *context,
                                        llvm::StringRef dialectNamespace);

//===----------------------------------------------------------------------===//
// Entry points and inputs
//===----------------------------------------------------------------------===//

/// The function to run: `name` if given, else the func with the unit
/// attribute `train.step`, else the one with `train.forward`.
llvm::Expected<mlir::func::FuncOp> findEntry(mlir::ModuleOp module,
                                             llvm::StringRef name);

struct InputOptions {
  /// A safetensors file with keys "arg0", "arg1", ... (by position).
  std::string inputsPath;
  /// Integer arguments are generated uniform in [0, intRange); default: the
  /// smallest vocabulary in the function.
  std::optional<int64_t> intRange;
};

/// The global inputs of a function: one tensor per argument.
struct Inputs {
  std::vector<Tensor> global;
  /// Argument i is the step counter (a scalar tensor<i64>); global[i]
  /// holds its value at step 0.
  std::vector<bool> isStepCounter;
};

/// Reads or generates the global inputs of `func` (see docs/evaluator.md):
/// generated float arguments are normal(0, 1), integers uniform in
/// [0, K); an argument of shape [b, ...] on N > 1 ranks is generated as the
/// global [N*b, ...] batch that the ranks split.
llvm::Expected<Inputs> makeInputs(mlir::func::FuncOp func,
                                  const Options &options,
                                  const InputOptions &inputOptions);

/// Rank-by-rank arguments of `func` at step `step` (counted from 0): rank r
/// gets rows [r*b, (r+1)*b) of a global input of N*b rows, or the whole
/// input when its shape is the argument's.
llvm::Expected<std::vector<RankValues>>
argumentsForStep(mlir::func::FuncOp func, const Inputs &inputs, int64_t ranks,
                 int64_t step);

/// Writes the global inputs as "arg0", "arg1", ... to `path`.
llvm::Error saveInputs(const std::string &path, const Inputs &inputs);

//===----------------------------------------------------------------------===//
// Gradient check
//===----------------------------------------------------------------------===//

struct GradCheckOptions {
  /// Relative finite-difference step: h = fdStep * max(1, |p|).
  double fdStep = 1e-6;
  double atol = 1e-7;
  double rtol = 1e-5;
  /// Elements checked per parameter; 0 checks every element.
  int64_t samples = 0;
};

/// Compares the function with attribute `train.gradients = [@p, ...]`
/// (results: loss, d loss/d p, ...) with central differences of the
/// `train.forward` function, in fp64. Prints a JSON summary to `out`.
/// Returns 0 when every checked element passes, 1 when one fails (naming
/// the worst offender on `errs`), 2 on an error.
int runGradCheck(mlir::ModuleOp module, Options options,
                 const InputOptions &inputOptions, const std::string &initPath,
                 const GradCheckOptions &checkOptions, llvm::raw_ostream &out,
                 llvm::raw_ostream &errs);

//===----------------------------------------------------------------------===//
// JSON output
//===----------------------------------------------------------------------===//

/// Prints `value` as a JSON number with %.17g, or as the string "nan",
/// "inf" or "-inf".
void printJsonNumber(llvm::raw_ostream &os, double value);
/// Prints `text` as a JSON string.
void printJsonString(llvm::raw_ostream &os, llvm::StringRef text);

} // namespace zeroc::eval

#endif // ZEROC_EVALUATOR_EVALUATOR_H
