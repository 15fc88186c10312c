//===- zeroc-run.cpp - run train IR on the reference evaluator ------------===//
//
//   zeroc-run FILE.mlir [--entry NAME] [--ranks N] [--seed S] [--steps K]
//             [--inputs F.safetensors] [--init F.safetensors]
//             [--int-range K] [--fp64] [--save-inputs F]
//             [--save-state F.safetensors] [--print-state]
//   zeroc-run FILE.mlir --gradcheck [--samples K] [--fd-step H]
//             [--atol A] [--rtol R]
//
// Prints JSON to stdout (see docs/evaluator.md); errors go to stderr with a
// non-zero exit status.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Dialect/Train/IR/TrainParse.h"
#include "zeroc/Evaluator/Evaluator.h"
#include "zeroc/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace zeroc::eval;
namespace cl = llvm::cl;

static cl::OptionCategory category("zeroc-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the func with attribute "
                       "train.step, else train.forward)"),
              cl::value_desc("name"), cl::cat(category));
static cl::opt<int64_t> ranks("ranks", cl::desc("Simulated SPMD ranks"),
                              cl::init(1), cl::cat(category));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of initialization and inputs"),
                              cl::init(0), cl::cat(category));
static cl::opt<int64_t> steps("steps", cl::desc("Times to run the entry"),
                              cl::init(1), cl::cat(category));
static cl::opt<std::string>
    inputsPath("inputs",
               cl::desc("Arguments from a safetensors file (arg0, arg1, ...)"),
               cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    initPath("init",
             cl::desc("Parameter (and state) values from a "
                      "safetensors file"),
             cl::value_desc("file"), cl::cat(category));
static cl::opt<int64_t>
    intRange("int-range",
             cl::desc("Generate integer arguments in [0, K) (default: the "
                      "smallest vocabulary in the function)"),
             cl::value_desc("K"), cl::cat(category));
static cl::opt<bool> fp64("fp64",
                          cl::desc("Keep doubles: no rounding to f32/bf16"),
                          cl::cat(category));
static cl::opt<std::string>
    saveInputsPath("save-inputs",
                   cl::desc("Write the global inputs to a safetensors file"),
                   cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> saveStatePath(
    "save-state",
    cl::desc("Write params and states after the last step (full tensors: "
             "sharded ones reassembled from every rank)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> printState(
    "print-state",
    cl::desc("Print params and states (full tensors) after the last step"),
    cl::cat(category));
static cl::opt<bool>
    gradcheck("gradcheck",
              cl::desc("Check the train.gradients function against central "
                       "differences of the train.forward function"),
              cl::cat(category));
static cl::opt<int64_t>
    samples("samples",
            cl::desc("Gradient check: elements per parameter (0 = all)"),
            cl::init(0), cl::cat(category));
static cl::opt<double> fdStep("fd-step",
                              cl::desc("Gradient check: relative step h"),
                              cl::init(1e-6), cl::cat(category));
static cl::opt<double>
    atolOption("atol", cl::desc("Gradient check: absolute tolerance"),
               cl::init(1e-7), cl::cat(category));
static cl::opt<double>
    rtolOption("rtol", cl::desc("Gradient check: relative tolerance"),
               cl::init(1e-5), cl::cat(category));

static cl::opt<int64_t> maxMemory(
    "max-memory",
    cl::desc("The most memory the evaluator's values may take, in MiB (8 "
             "bytes per element and simulated rank; default: half the "
             "physical memory); past it an evaluation fails with a message"),
    cl::value_desc("MiB"), cl::init(0), cl::cat(category));

static cl::opt<bool> listUnsupported(
    "list-unsupported-train-ops",
    cl::desc("Print the train dialect's ops the evaluator cannot run"),
    cl::Hidden, cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "zeroc-run: " << message << "\n";
  return 1;
}

static void printValues(llvm::raw_ostream &os, const std::vector<double> &data,
                        bool &first) {
  for (double value : data) {
    if (!first)
      os << ", ";
    first = false;
    printJsonNumber(os, value);
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "zeroc-run: evaluate train IR on the CPU\n");

  if (ranks < 1 || ranks > 16384)
    return fail("--ranks must be between 1 and 16384, got " +
                llvm::Twine(ranks));
  if (maxMemory < 0 || maxMemory > (int64_t(1) << 40))
    return fail("--max-memory must be a number of MiB between 0 and 2^40, "
                "got " +
                llvm::Twine(maxMemory));
  if (steps < 0)
    return fail("--steps must be non-negative, got " + llvm::Twine(steps));
  if (intRange.getNumOccurrences() && intRange < 1)
    return fail("--int-range must be positive, got " + llvm::Twine(intRange));
  if (samples < 0)
    return fail("--samples must be non-negative");
  if (!(fdStep > 0))
    return fail("--fd-step must be positive");

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);

  DialectRegistry registry;
  zeroc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = zeroc::train::parseModule(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);

  Options options;
  options.ranks = ranks;
  options.seed = seed;
  options.fp64 = fp64;
  options.maxBytes = maxMemory * (int64_t(1) << 20);
  InputOptions inputOptions;
  inputOptions.inputsPath = inputsPath;
  if (intRange.getNumOccurrences())
    inputOptions.intRange = intRange;

  if (listUnsupported) {
    for (const std::string &name : unsupportedOps(&context, "train"))
      llvm::outs() << name << "\n";
    return 0;
  }

  if (gradcheck) {
    GradCheckOptions check;
    check.fdStep = fdStep;
    check.atol = atolOption;
    check.rtol = rtolOption;
    check.samples = samples;
    return runGradCheck(*module, options, inputOptions, initPath, check,
                        llvm::outs(), llvm::errs());
  }

  llvm::Expected<func::FuncOp> entry = findEntry(*module, entryName);
  if (!entry)
    return fail(inputFile + ": " + llvm::toString(entry.takeError()));

  Evaluator evaluator(*module, options);
  if (!initPath.empty())
    if (llvm::Error error = evaluator.loadInitFile(initPath))
      return fail(llvm::toString(std::move(error)));
  if (failed(evaluator.initializeState()))
    return 1;

  llvm::Expected<Inputs> inputs = makeInputs(*entry, options, inputOptions);
  if (!inputs)
    return fail(llvm::toString(inputs.takeError()));
  if (!saveInputsPath.empty())
    if (llvm::Error error = saveInputs(saveInputsPath, *inputs))
      return fail(llvm::toString(std::move(error)));

  // results[step][rank]: every result of the step, flattened and joined.
  std::vector<std::vector<std::vector<double>>> stepResults;
  for (int64_t step = 0; step < steps; ++step) {
    llvm::Expected<std::vector<RankValues>> args =
        argumentsForStep(*entry, *inputs, ranks, step);
    if (!args)
      return fail(llvm::toString(args.takeError()));
    FailureOr<std::vector<RankValues>> results = evaluator.call(*entry, *args);
    if (failed(results))
      return fail("evaluation of @" + entry->getSymName() + " failed at step " +
                  llvm::Twine(step));
    std::vector<std::vector<double>> byRank(ranks);
    for (const RankValues &values : *results)
      for (int64_t rank = 0; rank < ranks; ++rank)
        byRank[rank].insert(byRank[rank].end(), values[rank].data.begin(),
                            values[rank].data.end());
    stepResults.push_back(std::move(byRank));
  }

  // A stage 1-2 step leaves its parameter gathers to the next step
  // (train-defer-gathers): complete them before the state is read.
  if (auto gather = module->lookupSymbol<func::FuncOp>("gather_params");
      gather && steps > 0 &&
      zeroc::train::TrainDialect::get(&context).getStepAttrHelper().isAttrPresent(
          *entry))
    if (failed(evaluator.call(gather, {})))
      return fail("evaluation of @gather_params failed");

  if (!saveStatePath.empty())
    if (llvm::Error error = evaluator.saveState(saveStatePath))
      return fail(llvm::toString(std::move(error)));

  llvm::raw_ostream &os = llvm::outs();
  os << "{\"entry\": ";
  printJsonString(os, entry->getSymName());
  os << ", \"ranks\": " << ranks << ", \"seed\": " << seed
     << ", \"result_shapes\": [";
  for (auto [index, type] : llvm::enumerate(entry->getResultTypes())) {
    os << (index ? ", [" : "[");
    if (auto ranked = dyn_cast<RankedTensorType>(type))
      llvm::interleaveComma(ranked.getShape(), os);
    os << "]";
  }
  os << "],\n \"steps\": [";
  for (auto [step, byRank] : llvm::enumerate(stepResults)) {
    os << (step ? ",\n   " : "\n   ") << "{\"step\": " << step
       << ", \"results\": [";
    for (auto [rank, values] : llvm::enumerate(byRank)) {
      os << (rank ? ", [" : "[");
      bool first = true;
      printValues(os, values, first);
      os << "]";
    }
    os << "]}";
  }
  os << "]";
  if (printState) {
    os << ",\n \"state\": {";
    for (auto [index, name] : llvm::enumerate(evaluator.stateNames())) {
      os << (index ? ",\n   " : "\n   ");
      printJsonString(os, name);
      os << ": [";
      bool first = true;
      printValues(os, evaluator.logicalState(name).data, first);
      os << "]";
    }
    os << "}";
    if (ranks > 1) {
      // How far each replicated param and state drifted between ranks.
      os << ",\n \"replica_max_abs_diff\": {";
      bool first = true;
      for (const std::string &name : evaluator.stateNames()) {
        std::optional<double> diff = evaluator.replicaMaxAbsDiff(name);
        if (!diff)
          continue;
        os << (first ? "\n   " : ",\n   ");
        first = false;
        printJsonString(os, name);
        os << ": ";
        printJsonNumber(os, *diff);
      }
      os << "}";
    }
  }
  os << "}\n";
  return 0;
}
