//===- zeroc.cpp - the zeroc compiler driver ------------------------------===//
//
//   zeroc INPUT.mlir [--zero-stage=S] [--world-size=N] [--precision=fp32|bf16]
//         [--bucket-bytes=B] [--remat=none|full|selective]
//         [--grad-accum=K] [--micro-batch-size=B] [--global-batch-size=G]
//         [--target=cpu|cuda] [--cuda-arch=sm_90,sm_80]
//         [--emit=exe|source|mlir|memory-report|memory-table|perf-model|
//                 perf-model-json|plan|plan-json] [--machine=NAME|FILE]
//         [--sweep] [--memory-budget=SIZE]
//         [-o FILE] [--keep-source] [--timings] [--no-pipeline]
//
// Parses a model in the `train` dialect, runs the training pipeline
// (zeroc::buildTrainingPipeline) for the ZeRO stage and world size, and
// emits a sharded executable (C++ compiled with mpicxx against the CPU
// runtime, or CUDA C++ compiled with nvcc against the CUDA runtime), or
// stops early at the generated source, the per-rank program, its static
// memory and communication report (docs/memory-report.md) or its predicted
// step time on a machine (docs/performance-model.md). With
// --memory-budget the memory-budget planner (zeroc/Analysis/Planner.h,
// docs/planner.md) picks the stage, rematerialization policy, micro-batch
// count and bucket size first: --emit=plan prints its candidates, anything
// else compiles the one it picks. Errors go to stderr as "zeroc: error:
// ..." naming the stage, with a non-zero exit status, and leave the -o file
// untouched.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Dialect/Train/IR/TrainParse.h"
#include "zeroc/Analysis/PerfModel.h"
#include "zeroc/Analysis/Planner.h"
#include "zeroc/InitAll.h"
#include "zeroc/Pipeline/Pipeline.h"
#include "zeroc/Transforms/Passes.h"
#include "zeroc/Support/OutputFile.h"
#include "zeroc/Target/Cpp.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("zeroc options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<input.mlir>"), cl::Required,
                                      cl::cat(category));
static cl::opt<int64_t>
    zeroStage("zero-stage",
              cl::desc("ZeRO stage: 0 (plain data parallelism, the "
                       "default), 1 (shard optimizer states), 2 (+ "
                       "gradients), 3 (+ parameters)"),
              cl::value_desc("0-3"), cl::init(0), cl::cat(category));
static cl::opt<int64_t> worldSize("world-size",
                                  cl::desc("Number of data-parallel ranks (default: 1)"),
                                  cl::value_desc("N"), cl::init(1),
                                  cl::cat(category));
static cl::opt<bool> raisePatterns(
    "raise",
    cl::desc("Raise attention, LayerNorm, RMSNorm, SiLU, GELU and "
             "cross-entropy written out with generic ops to the fast ops "
             "(train-raise, the "
             "pipeline's first pass; --raise=false keeps them generic, e.g. "
             "to check that both forms give the same losses; default: on)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string>
    precision("precision",
              cl::desc("Training precision: fp32, or bf16 mixed precision "
                       "with fp32 master weights (default: the model's)"),
              cl::value_desc("fp32|bf16"), cl::cat(category));
static cl::opt<int64_t>
    bucketBytes("bucket-bytes",
                cl::desc("Target size of a gradient bucket in bytes "
                         "(default: by the model's size: an eighth of its "
                         "gradient bytes, rounded up to 64 KiB, within 1 MiB "
                         "and 25 MiB)"),
                cl::value_desc("B"), cl::init(25 << 20), cl::cat(category));
static cl::opt<std::string>
    remat("remat",
          cl::desc("Activation rematerialization: none (keep every "
                   "activation, the default), full (keep each transformer "
                   "block's input, recompute the block in backward) or "
                   "selective (keep GEMM and attention outputs, recompute "
                   "elementwise ops and norms)"),
          cl::value_desc("none|full|selective"), cl::init("none"),
          cl::cat(category));
static cl::opt<int64_t> gradAccum(
    "grad-accum",
    cl::desc("Gradient accumulation: micro-batches per step. Each rank "
             "runs K micro-batches of its batch/K sequences and one "
             "optimizer update; the loss is the mean over the whole "
             "global batch (default: the model's train.micro_batches, "
             "from the builders' --micro-batches, else 1; this flag wins)"),
    cl::value_desc("K"), cl::init(1), cl::cat(category));
static cl::opt<int64_t> microBatchSize(
    "micro-batch-size",
    cl::desc("Sequences per rank per micro-batch (DeepSpeed's "
             "train_micro_batch_size_per_gpu): the global batch becomes "
             "B x --grad-accum x --world-size, whatever the model file's "
             "batch (default: the model's batch divided by --grad-accum and "
             "--world-size)"),
    cl::value_desc("B"), cl::init(0), cl::cat(category));
static cl::opt<int64_t> globalBatchSize(
    "global-batch-size",
    cl::desc("Sequences per optimizer step over all ranks (DeepSpeed's "
             "train_batch_size), G = --micro-batch-size x --grad-accum x "
             "--world-size: of G, the micro-batch size and the world size, "
             "give any two (--grad-accum defaults to the model's, else 1) "
             "and zeroc derives the third; values that disagree are an "
             "error naming each flag (default: the model's batch)"),
    cl::value_desc("G"), cl::init(0), cl::cat(category));
static cl::opt<std::string>
    emitKind("emit",
             cl::desc("What to write: exe (a sharded executable, the "
                      "default; needs -o), source (the generated C++ or CUDA "
                      "C++), mlir (the per-rank training step), planned "
                      "(the same in the buffer form the back ends print, "
                      "docs/backend.md), memory-report (JSON), memory-table "
                      "(text), perf-model (the predicted step on --machine, "
                      "text), perf-model-json, plan (with --memory-budget: "
                      "the planner's candidates, the picked one marked, "
                      "text), plan-json"),
             cl::value_desc("exe|source|mlir|planned|memory-report|"
                            "memory-table|perf-model|perf-model-json|plan|"
                            "plan-json"),
             cl::init("exe"), cl::cat(category));
static cl::opt<std::string> machineName(
    "machine",
    cl::desc("With --emit=perf-model (or plan: a step-time column): the "
             "machine, a preset (a100-sxm-ib, h100-sxm-ib, h100-hbm2e-500w-ib, "
             "h200-sxm-ib, v100-dgx2, cpu) or a machine file"),
    cl::value_desc("NAME|FILE"), cl::cat(category));
static cl::opt<bool> sweepSizes(
    "sweep",
    cl::desc("With --emit=perf-model: predict N = 8, 16, ..., 1024 ranks at "
             "the per-rank batch of --world-size, one row each, derived from "
             "the schedule compiled for --world-size"),
    cl::cat(category));
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Per-rank memory budget (80GiB, 24GB, 512MiB, bytes; GiB, "
             "MiB, KiB are powers of 1024 and GB, MB, KB powers of 1000, "
             "so a card sold as 80 GB is 80GB = 74.5GiB): the "
             "planner compiles every ZeRO stage (0-3) x --remat (none, "
             "selective, full) x bucket size (the --bucket-bytes "
             "default for the model, and a fifth of it) at "
             "--world-size, each at 1 micro-batch and, where it does not "
             "fit, at 2, 4, 8 (those the per-rank batch splits into), and "
             "picks among those whose static peak fits the one that sends "
             "the least per step, then recomputes the least, then has fewer "
             "micro-batches, then larger buckets, then stage 2, 1, 0, 3 in that order. "
             "--zero-stage, --remat, --bucket-bytes or --grad-accum given "
             "too fix that dimension. --emit=plan prints the candidates; "
             "any other --emit (an executable by default) is the picked "
             "one's. "
             "Nothing fits: an error naming the smallest peak"),
    cl::value_desc("SIZE"), cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Backend: cpu (C++ with MPI, OpenMP and OpenBLAS; the "
                    "default) or cuda (CUDA kernels, cuBLASLt and NCCL; one "
                    "GPU per rank)"),
           cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> cudaArch(
    "cuda-arch",
    cl::desc("With --target=cuda: the GPU architectures to compile for, "
             "comma-separated (default: sm_90,sm_80)"),
    cl::value_desc("sm_XY,..."), cl::init("sm_90,sm_80"), cl::cat(category));
static cl::opt<std::string> nvcc(
    "nvcc",
    cl::desc("With --target=cuda: the CUDA compiler (default: "
             "/usr/local/cuda/bin/nvcc, else nvcc on PATH)"),
    cl::value_desc("path"), cl::cat(category));
static cl::opt<std::string> outputFile("o",
                                       cl::desc("Output file (default: stdout; "
                                                "required for an executable)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<bool> keepSource(
    "keep-source",
    cl::desc("With --emit=exe, keep the generated source as FILE.cpp "
             "(FILE.cu for --target=cuda)"),
    cl::cat(category));
static cl::opt<std::string> cxx(
    "cxx",
    cl::desc("With --target=cpu: the C++ compiler driver (default: " ZEROC_GENERATED_CXX ")"),
    cl::value_desc("path"), cl::init(ZEROC_GENERATED_CXX), cl::cat(category));
static cl::opt<bool>
    timings("timings",
            cl::desc("Print the time of parse, pipeline and emit on stderr"),
            cl::cat(category));
static cl::opt<bool> noPipeline(
    "no-pipeline",
    cl::desc("The input already is a per-rank training step (e.g. written "
             "by --emit=mlir): skip the pipeline; the report takes the stage "
             "and world size from the module's train.zero_stage and "
             "train.world_size"),
    cl::cat(category));

// The launcher's and torchrun's names, which the compiler does not take:
// given, each is an error that names the compiler's flag (rather than
// cl's guess at the nearest option).
static cl::opt<std::string> launcherStage("stage", cl::Hidden,
                                          cl::cat(category));
static cl::opt<std::string> launcherRanks("ranks", cl::Hidden,
                                          cl::cat(category));
static cl::opt<std::string> torchrunRanks("nproc-per-node", cl::Hidden,
                                          cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "zeroc: error: " << message << "\n";
  return 1;
}

/// Checks the flags; the message names the flag at fault.
static std::optional<std::string> validateOptions() {
  if (launcherStage.getNumOccurrences())
    return "--stage is the launcher's name (python3 -m zeroc train); the "
           "compiler's is --zero-stage=" +
           launcherStage;
  for (cl::opt<std::string> *ranks : {&launcherRanks, &torchrunRanks})
    if (ranks->getNumOccurrences())
      return "--" + ranks->ArgStr.str() +
             " is a launcher's name; the compiler's is --world-size=" +
             ranks->getValue();
  if (zeroStage < 0 || zeroStage > 3)
    return "--zero-stage must be 0, 1, 2 or 3, got " +
           std::to_string(zeroStage);
  if (worldSize < 1)
    return "--world-size must be at least 1, got " + std::to_string(worldSize);
  if (precision.getNumOccurrences() && precision != "fp32" &&
      precision != "bf16")
    return "--precision must be fp32 or bf16, got '" + precision + "'";
  if (bucketBytes < 1)
    return "--bucket-bytes must be positive, got " +
           std::to_string(bucketBytes);
  if (remat != "none" && remat != "full" && remat != "selective")
    return "--remat must be none, full or selective, got '" + remat + "'";
  if (gradAccum < 1)
    return "--grad-accum must be at least 1, got " + std::to_string(gradAccum);
  if (microBatchSize.getNumOccurrences() && microBatchSize < 1)
    return "--micro-batch-size must be at least 1, got " +
           std::to_string(microBatchSize);
  if (globalBatchSize.getNumOccurrences() && globalBatchSize < 1)
    return "--global-batch-size must be at least 1, got " +
           std::to_string(globalBatchSize);
  bool perfModel = emitKind == "perf-model" || emitKind == "perf-model-json";
  bool plan = emitKind == "plan" || emitKind == "plan-json";
  if (emitKind != "exe" && emitKind != "source" && emitKind != "mlir" &&
      emitKind != "planned" && emitKind != "memory-report" &&
      emitKind != "memory-table" && !perfModel && !plan)
    return "--emit must be exe, source, mlir, planned, memory-report, "
           "memory-table, perf-model, perf-model-json, plan or plan-json, "
           "got '" +
           emitKind + "'";
  if (perfModel && machineName.empty()) {
    std::string presets;
    for (const std::string &name : zeroc::machinePresets())
      presets += (presets.empty() ? "" : ", ") + name;
    return "--emit=" + emitKind +
           " needs --machine=NAME or FILE (the presets: " + presets +
           "; a machine file: docs/performance-model.md)";
  }
  if (!perfModel && sweepSizes)
    return "--sweep needs --emit=perf-model";
  if (!perfModel && !plan && machineName.getNumOccurrences())
    return "--machine needs --emit=perf-model or --emit=plan";
  if (plan && !memoryBudget.getNumOccurrences())
    return "--emit=" + emitKind +
           " needs --memory-budget=SIZE (the per-rank budget to plan for, "
           "e.g. 80GiB)";
  if (memoryBudget.getNumOccurrences()) {
    llvm::Expected<int64_t> budget = zeroc::parseByteSize(memoryBudget);
    if (!budget)
      return "--memory-budget: " + llvm::toString(budget.takeError());
    if (noPipeline)
      return "--memory-budget plans the pipeline's configurations: it has "
             "no effect with --no-pipeline";
    if (perfModel)
      return "--memory-budget with --emit=" + emitKind +
             ": use --emit=plan --machine=M for the step time of every "
             "candidate";
  }
  if (sweepSizes && !noPipeline && worldSize < 2)
    return "--sweep derives every world size from the schedule compiled for "
           "--world-size, which must be 2 or more (8, its first row, is "
           "best)";
  if (target != "cpu" && target != "cuda")
    return "--target must be cpu or cuda, got '" + target + "'";
  if (target == "cuda") {
    llvm::SmallVector<llvm::StringRef> archs;
    llvm::StringRef(cudaArch).split(archs, ',');
    for (llvm::StringRef arch : archs) {
      unsigned version = 0;
      if (!arch.consume_front("sm_") || arch.getAsInteger(10, version) ||
          version < 70)
        return "--cuda-arch must list architectures such as sm_90,sm_80 "
               "(sm_70 or newer), got '" +
               cudaArch + "'";
    }
  } else if (cudaArch.getNumOccurrences() || nvcc.getNumOccurrences()) {
    return std::string("--") +
           (cudaArch.getNumOccurrences() ? "cuda-arch" : "nvcc") +
           " needs --target=cuda";
  }
  if (emitKind == "exe" && outputFile == "-")
    return "an executable needs a file name: pass -o FILE (or --emit=mlir, "
           "source or memory-report to print to stdout)";
  if (noPipeline) {
    for (cl::Option *option :
         std::initializer_list<cl::Option *>{&zeroStage, &worldSize,
                                             &precision, &bucketBytes,
                                             &remat, &gradAccum, &raisePatterns,
                                             &microBatchSize, &globalBatchSize})
      if (option->getNumOccurrences())
        return "--" + option->ArgStr.str() +
               " has no effect with --no-pipeline (the module's own "
               "train.zero_stage and train.world_size are reported)";
  }
  return std::nullopt;
}

/// DeepSpeed's identity G = B x K x N for --global-batch-size (G),
/// --micro-batch-size (B), --grad-accum (K, `gradAccum`: the flag's or the
/// model's) and --world-size (N): sets `worldSizeOut`, `gradAccumOut` and
/// returns G (0 when neither batch flag is given: the model's batch stays),
/// or an error naming every flag involved.
static std::optional<std::string>
resolveBatchSizes(int64_t gradAccumIn, int64_t &globalOut,
                  int64_t &worldSizeOut, int64_t &gradAccumOut) {
  bool haveG = globalBatchSize.getNumOccurrences();
  bool haveB = microBatchSize.getNumOccurrences();
  bool haveN = worldSize.getNumOccurrences();
  bool haveK = gradAccum.getNumOccurrences();
  int64_t k = gradAccumIn, n = worldSize;
  globalOut = 0;
  worldSizeOut = n;
  gradAccumOut = k;
  if (!haveG && !haveB)
    return std::nullopt;
  std::string kName =
      haveK ? "--grad-accum=" + std::to_string(k)
            : "--grad-accum=" + std::to_string(k) + " (the " +
                  (k == 1 ? std::string("default") : "model's") + ")";
  std::string nName = haveN ? "--world-size=" + std::to_string(n)
                            : "--world-size=" + std::to_string(n) +
                                  " (the default)";
  if (haveB && !haveG) {
    globalOut = microBatchSize * k * n;
    return std::nullopt;
  }
  std::string gName = "--global-batch-size=" + std::to_string(globalBatchSize);
  if (!haveB) {
    // G and N (given or 1): B = G / (K x N).
    if (globalBatchSize % (k * n) != 0)
      return gName + " does not divide into " + kName + " x " + nName +
             " micro-batches of equal size (--micro-batch-size = G / (K x "
             "N))";
    globalOut = globalBatchSize;
    return std::nullopt;
  }
  std::string bName = "--micro-batch-size=" + std::to_string(microBatchSize);
  int64_t g = globalBatchSize, b = microBatchSize;
  if (haveN && haveK) {
    if (g != b * k * n)
      return gName + " is not " + bName + " x " + kName + " x " + nName +
             " = " + std::to_string(b * k * n) +
             " (G = B x K x N; give any two of G, B and N)";
  } else if (haveN) {
    // K derived, as DeepSpeed derives gradient_accumulation_steps.
    if (g % (b * n) != 0)
      return gName + " is not a multiple of " + bName + " x " + nName +
             " = " + std::to_string(b * n) +
             " (--grad-accum = G / (B x N) must be a whole number)";
    gradAccumOut = g / (b * n);
  } else {
    // N derived from G and B x K.
    if (g % (b * k) != 0)
      return gName + " is not a multiple of " + bName + " x " + kName +
             " = " + std::to_string(b * k) +
             " (--world-size = G / (B x K) must be a whole number)";
    worldSizeOut = g / (b * k);
  }
  globalOut = g;
  return std::nullopt;
}

namespace {
/// Remembers the first pass that failed (the innermost, for nested ones).
struct FailedPassRecorder : public PassInstrumentation {
  explicit FailedPassRecorder(std::string &name) : name(name) {}
  void runAfterPassFailed(Pass *pass, Operation *) override {
    if (!name.empty())
      return;
    name = pass->getArgument().empty() ? pass->getName().str()
                                       : pass->getArgument().str();
  }
  std::string &name;
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
} // namespace

/// Fails, naming `path` as given, when the directory a new output would go
/// to does not exist (rather than naming the temporary written there).
static LogicalResult checkDirectory(llvm::StringRef path) {
  namespace out = zeroc::output;
  if (out::classify(path.str()) != out::Kind::Missing)
    return success();
  std::string resolved = out::resolve(path.str());
  llvm::StringRef dir = llvm::sys::path::parent_path(resolved);
  if (dir.empty() || llvm::sys::fs::is_directory(dir))
    return success();
  fail("cannot write '" + path + "': the directory '" + dir +
       "' does not exist");
  return failure();
}

/// Writes what `emit` prints to `path` ("-": stdout). A regular file (or a
/// new path) is written under a temporary name and renamed at the end, so a
/// failure leaves no partial output behind; a device or a FIFO (-o
/// /dev/null) is written in place, never replaced (zeroc/Support/OutputFile.h).
static LogicalResult
writeOutput(llvm::StringRef path,
            llvm::function_ref<void(llvm::raw_ostream &)> emit) {
  if (path == "-") {
    emit(llvm::outs());
    llvm::outs().flush();
    return success();
  }
  if (failed(checkDirectory(path)))
    return failure();
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    emit(os);
  }
  if (std::string error =
          zeroc::output::writeFile(path.str(), text.data(), text.size());
      !error.empty()) {
    fail("cannot write " + error);
    return failure();
  }
  return success();
}

/// The command line that compiles the generated source `sourcePath` with
/// the runtime of --target into `exe`; fails naming what is missing.
static FailureOr<llvm::SmallVector<std::string>>
compilerCommand(llvm::StringRef sourcePath, llvm::StringRef exe) {
  std::string includeFlag = std::string("-I") + ZEROC_INCLUDE_DIR;
  if (target == "cpu") {
    llvm::ErrorOr<std::string> compiler = llvm::sys::findProgramByName(cxx);
    if (!compiler) {
      fail("the C++ compiler '" + cxx +
           "' is not on PATH (install openmpi-bin and libopenmpi-dev, or pass "
           "--cxx)");
      return failure();
    }
    return llvm::SmallVector<std::string>{
        *compiler, "-std=c++17", "-O3", "-march=native", "-fopenmp",
        includeFlag, sourcePath.str(), ZEROC_RUNTIME_LIBRARY, "-lopenblas",
        "-lm", "-o", exe.str()};
  }
  if (llvm::StringRef(ZEROC_CUDA_RUNTIME_LIBRARY).empty()) {
    fail("--target=cuda: this zeroc was built without the CUDA runtime (no "
         "nvcc when it was configured; see docs/cuda.md)");
    return failure();
  }
  std::string compilerName = nvcc;
  if (compilerName.empty())
    compilerName = llvm::sys::fs::exists("/usr/local/cuda/bin/nvcc")
                       ? "/usr/local/cuda/bin/nvcc"
                       : "nvcc";
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(compilerName);
  if (!compiler || !llvm::sys::fs::can_execute(*compiler)) {
    fail("--target=cuda: the CUDA compiler '" + compilerName +
         "' is not there (install the CUDA toolkit, or pass --nvcc)");
    return failure();
  }
  llvm::SmallVector<std::string> args = {*compiler, "-std=c++17", "-O3",
                                         "-no-compress"};
  llvm::SmallVector<llvm::StringRef> archs;
  llvm::StringRef(cudaArch).split(archs, ',');
  for (llvm::StringRef arch : archs) {
    llvm::StringRef version = arch.drop_front(3);
    args.push_back("-gencode=arch=compute_" + version.str() + ",code=sm_" +
                   version.str());
  }
  // The runtime finds libzeroc_mpi.so (loaded only for world sizes above
  // 1) next to the executable or in this build tree.
  std::string runtimeDir =
      llvm::sys::path::parent_path(ZEROC_CUDA_RUNTIME_LIBRARY).str();
  args.append({includeFlag, sourcePath.str(), ZEROC_CUDA_RUNTIME_LIBRARY,
               "-lcublasLt", "-lnccl", "-ldl",
               "-Xlinker=-rpath,$ORIGIN:" + runtimeDir, "-o", exe.str()});
  return args;
}

/// Compiles `source` with the runtime into the executable `path`. The
/// source and the compiler's output are temporaries (beside PATH, or in
/// the temporary directory when PATH is a device or a FIFO); the executable
/// replaces PATH only on success, by the rules of OutputFile.h (a device is
/// written in place). --keep-source keeps the source as PATH.cpp (PATH.cu).
static LogicalResult compileExecutable(llvm::StringRef source,
                                       llvm::StringRef path, bool keep) {
  namespace out = zeroc::output;
  std::string extension = target == "cuda" ? ".cu" : ".cpp";
  std::string keptSource = (path + extension).str();
  out::Kind kind = out::classify(path.str());
  if (kind == out::Kind::Directory) {
    fail("cannot write '" + path + "': is a directory");
    return failure();
  }
  std::string tempBase = path.str();
  if (failed(checkDirectory(path)))
    return failure();
  if (kind == out::Kind::Special) {
    if (keep) {
      fail("--keep-source needs -o to name a regular file ('" + path +
           "' is a device or a FIFO)");
      return failure();
    }
    llvm::SmallString<128> dir;
    llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, dir);
    llvm::sys::path::append(dir, llvm::sys::path::filename(path));
    tempBase = dir.str().str();
  }
  std::string sourcePath = out::temporaryName(tempBase, extension);
  std::string tempExe = out::temporaryName(tempBase, ".exe");
  FailureOr<llvm::SmallVector<std::string>> command =
      compilerCommand(sourcePath, tempExe);
  if (failed(command))
    return failure();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(sourcePath, ec, llvm::sys::fs::OF_None);
    if (ec) {
      fail("cannot write '" + path + "' (its temporary source '" +
           sourcePath + "'): " + ec.message());
      return failure();
    }
    os << source;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(sourcePath);
      fail("cannot write '" + path + "' (its temporary source '" +
           sourcePath + "'): " + message);
      return failure();
    }
  }
  llvm::SmallVector<llvm::StringRef> args(command->begin(), command->end());
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("zeroc-cxx", "log", log);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string errorMessage;
  int status = llvm::sys::ExecuteAndWait(args.front(), args, std::nullopt,
                                         redirects, 0, 0, &errorMessage);
  auto output = llvm::MemoryBuffer::getFile(log);
  llvm::sys::fs::remove(log);
  if (status != 0) {
    llvm::sys::fs::remove(tempExe);
    llvm::sys::fs::remove(sourcePath);
    llvm::errs() << "zeroc: error: the "
                 << (target == "cuda" ? "CUDA" : "C++")
                 << " compiler failed (status " << status
                 << (errorMessage.empty() ? "" : ", " + errorMessage) << ")\n";
    llvm::errs() << "  command:";
    for (llvm::StringRef arg : args)
      llvm::errs() << " " << arg;
    llvm::errs() << "\n";
    if (output)
      llvm::errs() << (*output)->getBuffer();
    return failure();
  }
  if (std::string error = out::commitTemporary(tempExe, path.str());
      !error.empty()) {
    llvm::sys::fs::remove(sourcePath);
    fail("cannot write " + error);
    return failure();
  }
  if (!keep) {
    llvm::sys::fs::remove(sourcePath);
  } else if (std::string error = out::commitTemporary(sourcePath, keptSource);
             !error.empty()) {
    fail("cannot keep the source: " + error);
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's --mlir-* debugging flags (--mlir-print-ir-after-all, ...) work
  // too; --help-hidden lists them.
  registerAsmPrinterCLOptions();
  registerPassManagerCLOptions();
  // --mlir-disable-threading: the planner compiles its candidates on the
  // context's threads unless it is given.
  registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zeroc: compile a train-dialect model for ZeRO data-parallel training\n\n"
      "  Parses INPUT.mlir (a model: train.param, train.optimizer and a\n"
      "  train.forward function), runs the training pipeline for the ZeRO\n"
      "  stage and world size and writes a sharded executable (-o EXE; run\n"
      "  it with mpirun -np N EXE --data FILE, see docs/executable.md; for\n"
      "  GPUs, --target=cuda, one rank per GPU, see docs/cuda.md), or\n"
      "  stops early: the generated source (--emit=source), the per-rank\n"
      "  training step (--emit=mlir), its static per-rank memory and\n"
      "  communication report (--emit=memory-report: JSON,\n"
      "  --emit=memory-table: text; see docs/memory-report.md) or its\n"
      "  predicted step time, MFU and memory on a machine\n"
      "  (--emit=perf-model --machine=M [--sweep]; see\n"
      "  docs/performance-model.md). --memory-budget=SIZE picks the stage,\n"
      "  rematerialization, micro-batches and bucket size that fit\n"
      "  (--emit=plan lists the candidates; see docs/planner.md).\n");

  if (std::optional<std::string> error = validateOptions())
    return fail(*error);

  Clock::time_point start = Clock::now();
  std::string openError;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(inputFile, &openError);
  if (!buffer)
    return fail(openError);

  DialectRegistry registry;
  zeroc::registerAllDialects(registry);
  zeroc::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the source line; no dump of the op after them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module =
      zeroc::train::parseModule(sourceMgr, &context);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");
  double parseSeconds = secondsSince(start);

  zeroc::PipelineOptions options;
  options.zeroStage = zeroStage;
  options.worldSize = worldSize;
  options.precision = precision;
  options.bucketBytes =
      bucketBytes.getNumOccurrences()
          ? bucketBytes
          : zeroc::defaultBucketBytes(
                zeroc::modelGradientBytes(*module, precision));
  options.raise = raisePatterns;
  options.remat = remat;
  // --grad-accum wins over the micro-batches the model asks for.
  options.gradAccum = gradAccum;
  if (!gradAccum.getNumOccurrences())
    if (auto requested = zeroc::train::trainDialect(*module)
                             .getMicroBatchesAttrHelper()
                             .getAttr(*module))
      options.gradAccum = requested.getInt();
  if (std::optional<std::string> error =
          resolveBatchSizes(options.gradAccum, options.globalBatch,
                            options.worldSize, options.gradAccum))
    return fail(*error);

  // The planner: weigh the candidates, print them or compile the pick.
  Clock::time_point planStart = Clock::now();
  double planSeconds = 0;
  if (memoryBudget.getNumOccurrences()) {
    zeroc::PlanRequest request;
    request.base = options;
    request.budgetBytes = cantFail(zeroc::parseByteSize(memoryBudget));
    if (zeroStage.getNumOccurrences())
      request.stages = {zeroStage};
    if (remat.getNumOccurrences())
      request.remats = {remat};
    if (bucketBytes.getNumOccurrences())
      request.bucketSizes = {bucketBytes};
    // --grad-accum=K (or the model's train.micro_batches) fixes the
    // micro-batch dimension the same way.
    // So does --micro-batch-size: the global batch it gives is B x K x N.
    if (options.gradAccum != 1 || microBatchSize.getNumOccurrences())
      request.microBatches = {options.gradAccum};
    std::optional<zeroc::Machine> machine;
    if (machineName.getNumOccurrences()) {
      llvm::Expected<zeroc::Machine> loaded = zeroc::loadMachine(machineName);
      if (!loaded)
        return fail("--machine: " + llvm::toString(loaded.takeError()));
      machine = std::move(*loaded);
      request.machine = &*machine;
    }
    FailureOr<zeroc::Plan> plan = zeroc::planMemory(*module, request);
    if (failed(plan))
      return fail("cannot plan '" + inputFile + "' for --memory-budget=" +
                  memoryBudget);
    planSeconds = secondsSince(planStart);
    bool printPlan = emitKind == "plan" || emitKind == "plan-json";
    auto print = [&](llvm::raw_ostream &os) {
      if (emitKind == "plan-json")
        zeroc::printPlanJSON(os, *plan);
      else
        zeroc::printPlanTable(os, *plan);
    };
    const zeroc::PlanCandidate *picked = plan->pickedCandidate();
    if (!picked) {
      fail("--memory-budget=" + memoryBudget + ": " +
           zeroc::noFitMessage(*plan));
      if (printPlan)
        print(llvm::errs());
      return 1;
    }
    if (printPlan) {
      if (failed(writeOutput(outputFile, print)))
        return 1;
      if (timings) {
        llvm::errs() << llvm::format("zeroc: timings (wall clock)\n"
                                     "  parse     %9.3f s\n"
                                     "  plan      %9.3f s\n",
                                     parseSeconds, planSeconds);
        for (const auto &[what, seconds] : plan->timings)
          llvm::errs() << llvm::format("    %9.3f s  %s\n", seconds,
                                       what.c_str());
      }
      return 0;
    }
    llvm::errs() << "zeroc: --memory-budget=" << memoryBudget << ": "
                 << zeroc::describeCandidate(*picked) << " (peak "
                 << zeroc::formatBytes(picked->peakBytes) << ", "
                 << zeroc::formatBytes(picked->commBytes)
                 << " sent per step)\n";
    options = zeroc::candidateOptions(options, *picked);
  }

  Clock::time_point pipelineStart = Clock::now();
  if (!noPipeline) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("invalid --mlir-* pass manager options");
    std::string failedPass;
    pm.addInstrumentation(std::make_unique<FailedPassRecorder>(failedPass));
    zeroc::buildTrainingPipeline(pm, options);
    if (failed(pm.run(*module))) {
      if (failedPass.empty())
        return fail("the pipeline failed");
      return fail("the pipeline failed at pass '" + failedPass + "'");
    }
  }
  // The back ends and the memory report read the planned (buffer) form: a
  // module already planned (hand-written, or from --emit=planned) is only
  // checked.
  // The performance model simulates the scheduled program (and plans a copy
  // for its memory figure).
  bool perfModelEmit = emitKind.getValue().rfind("perf-model", 0) == 0;
  if (emitKind != "mlir" && !perfModelEmit) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("invalid --mlir-* pass manager options");
    std::string failedPass;
    pm.addInstrumentation(std::make_unique<FailedPassRecorder>(failedPass));
    bool planned = false;
    for (auto func : module->getOps<func::FuncOp>())
      planned |= zeroc::train::trainDialect(func)
                     .getPlannedAttrHelper()
                     .isAttrPresent(func);
    if (planned) {
      pm.addPass(zeroc::createTrainVerifyEmittable());
    } else {
      // The executable's --trace sites, named on the tensor program.
      if (emitKind == "source" || emitKind == "exe")
        pm.addPass(zeroc::createTrainTraceSites());
      zeroc::buildPlanningPipeline(pm);
    }
    if (failed(pm.run(*module)))
      return fail("planning '" + inputFile + "' failed at pass '" +
                  failedPass + "'");
  }
  double pipelineSeconds = secondsSince(pipelineStart);

  Clock::time_point emitStart = Clock::now();
  double compileSeconds = 0;
  LogicalResult written = success();
  zeroc::SourceTarget sourceTarget = target == "cuda"
                                         ? zeroc::SourceTarget::Cuda
                                         : zeroc::SourceTarget::Cpu;
  std::string backendName = target == "cuda" ? "CUDA" : "C++";
  if (emitKind == "source") {
    std::string source;
    llvm::raw_string_ostream sourceOs(source);
    if (failed(zeroc::translateToSource(*module, sourceOs, sourceTarget)))
      return fail("the " + backendName + " backend cannot translate '" +
                  inputFile + "'");
    written = writeOutput(outputFile,
                          [&](llvm::raw_ostream &os) { os << source; });
  } else if (emitKind == "exe") {
    std::string source;
    llvm::raw_string_ostream sourceOs(source);
    if (failed(zeroc::translateToSource(*module, sourceOs, sourceTarget)))
      return fail("the " + backendName + " backend cannot translate '" +
                  inputFile + "'");
    Clock::time_point compileStart = Clock::now();
    if (failed(compileExecutable(source, outputFile, keepSource)))
      return 1;
    compileSeconds = secondsSince(compileStart);
  } else if (emitKind == "mlir" || emitKind == "planned") {
    written = writeOutput(outputFile, [&](llvm::raw_ostream &os) {
      module->print(os);
      os << "\n";
    });
  } else if (emitKind.getValue().rfind("perf-model", 0) == 0) {
    llvm::Expected<zeroc::Machine> machine = zeroc::loadMachine(machineName);
    if (!machine)
      return fail("--machine: " + llvm::toString(machine.takeError()));
    std::vector<zeroc::PerfPrediction> predictions;
    if (sweepSizes) {
      auto swept =
          zeroc::sweep(*module, *machine, zeroc::defaultSweepSizes());
      if (failed(swept))
        return fail("cannot model '" + inputFile + "' on " + machineName);
      predictions = std::move(*swept);
    } else {
      zeroc::SimulateOptions simulate;
      simulate.keepOps = emitKind == "perf-model-json";
      auto prediction = zeroc::simulateStep(*module, *machine, simulate);
      if (failed(prediction))
        return fail("cannot model '" + inputFile + "' on " + machineName);
      predictions.push_back(std::move(*prediction));
    }
    written = writeOutput(outputFile, [&](llvm::raw_ostream &os) {
      if (emitKind == "perf-model")
        zeroc::printPerfTable(os, predictions, *machine);
      else
        zeroc::printPerfJSON(os, predictions, *machine);
    });
  } else {
    FailureOr<zeroc::MemoryReport> report =
        zeroc::computeMemoryReport(*module);
    if (failed(report))
      return fail("cannot compute the memory report of '" + inputFile + "'");
    written = writeOutput(outputFile, [&](llvm::raw_ostream &os) {
      if (emitKind == "memory-report")
        report->toJSON(os);
      else
        report->toTable(os);
    });
  }
  if (failed(written))
    return 1;
  double emitSeconds = secondsSince(emitStart);

  if (timings) {
    llvm::errs() << "zeroc: timings (wall clock)\n";
    auto line = [](llvm::StringRef what, double seconds) {
      llvm::errs() << llvm::format("  %-9s %9.3f s\n", what.str().c_str(),
                                   seconds);
    };
    line("parse", parseSeconds);
    if (memoryBudget.getNumOccurrences())
      line("plan", planSeconds);
    line("pipeline", pipelineSeconds);
    line("emit", emitSeconds - compileSeconds);
    if (emitKind == "exe")
      line(target == "cuda" ? "nvcc" : "c++", compileSeconds);
    line("total", secondsSince(start));
  }
  return 0;
}
