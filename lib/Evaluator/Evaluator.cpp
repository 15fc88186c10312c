//===- Evaluator.cpp - dispatch: walks a function op by op ----------------===//

#include "Interpreter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>

#include <unistd.h>

using namespace mlir;

namespace zeroc::eval {

std::optional<ElementType> elementTypeOf(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isF64())
    return ElementType::F64;
  if (type.isIndex())
    return ElementType::Index;
  if (type.isInteger(1))
    return ElementType::I1;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  return std::nullopt;
}

int64_t memoryLimit(const Options &options) {
  if (options.maxBytes > 0)
    return options.maxBytes;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return int64_t(8) << 30;
  return static_cast<int64_t>(pages) * pageSize / 2;
}

std::optional<int64_t> elementsOf(Type type) {
  // A collective in flight holds its value.
  if (auto future = dyn_cast<zeroc::train::FutureType>(type))
    type = future.getValueType();
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (!ranked.hasStaticShape() || !elementTypeOf(ranked.getElementType()))
      return std::nullopt;
    // Zero-sized dimensions are fine here (an empty upstream tensor); the
    // count must stay below 2^48 without overflowing on the way.
    int64_t count = 1;
    for (int64_t dim : ranked.getShape()) {
      if (dim < 0)
        return std::nullopt;
      if (dim > 0 && count > train::kMaxElements / dim)
        return std::nullopt;
      count *= dim;
    }
    return count;
  }
  if (elementTypeOf(type))
    return 1;
  return std::nullopt;
}

std::optional<Tensor> zeroTensorOf(Type type) {
  // A collective in flight holds its value: the simulation completes it at
  // once.
  if (auto future = dyn_cast<zeroc::train::FutureType>(type))
    type = future.getValueType();
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (!elementsOf(type))
      return std::nullopt;
    std::optional<ElementType> element = elementTypeOf(ranked.getElementType());
    if (!element)
      return std::nullopt;
    return Tensor(std::vector<int64_t>(ranked.getShape().begin(),
                                       ranked.getShape().end()),
                  *element);
  }
  if (std::optional<ElementType> element = elementTypeOf(type))
    return Tensor({}, *element);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

Interpreter::Interpreter(ModuleOp module, Options options)
    : moduleOp(module), opts(options),
      limitElements(memoryLimit(options) / 8) {
  registerForwardOps(registry);
  registerGradOps(registry);
  registerOptimizerOps(registry);
  registerCollectives(registry);
  registerDistributedOps(registry);
  registerStateOps(registry);
  registerUpstreamOps(registry);
  registerLlamaOps(registry);
  registerMathOps(registry);
}

/// Checks a handler's results against the op's result types and rounds them
/// to their element types.
static LogicalResult finishResults(Operation &op, std::vector<Tensor> &results,
                                   bool fp64) {
  for (auto [index, result] : llvm::enumerate(results)) {
    std::optional<Tensor> expected =
        zeroTensorOf(op.getResult(index).getType());
    if (result.shape != expected->shape || result.type != expected->type ||
        result.numElements() != expected->numElements())
      return op.emitOpError("evaluator bug: result #")
             << index << " came out as " << formatShape(result.shape) << " "
             << elementTypeName(result.type) << " with " << result.numElements()
             << " values, but its type is " << op.getResult(index).getType();
    if (!fp64)
      result.round();
  }
  return success();
}

LogicalResult Interpreter::reserve(Operation *op, int64_t elements,
                                   int64_t copies, StringRef what) {
  // elements <= 2^62 and copies <= 2^14: no overflow in the checks.
  if (elements <= limitElements / copies &&
      elements * copies <= limitElements - liveElements) {
    liveElements += elements * copies;
    return success();
  }
  auto gib = [](double n) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", n * 8.0 / (1 << 30));
    return std::string(text);
  };
  InFlightDiagnostic diag = op ? op->emitOpError() : moduleOp.emitError();
  diag << what << " would need "
       << gib(static_cast<double>(elements) * static_cast<double>(copies))
       << " GiB, and the evaluator holds " << gib(liveElements)
       << " GiB already: over its memory limit of " << gib(limitElements)
       << " GiB (8 bytes per element and rank; zeroc-run --max-memory)";
  return failure();
}

LogicalResult Interpreter::execute(Operation &op,
                                   DenseMap<Value, RankValues> &env) {
  // A fused elementwise chain computes what its body computes.
  if (auto fused = dyn_cast<zeroc::train::FusedOp>(op)) {
    Block &body = fused.getBody().front();
    for (auto [arg, input] : llvm::zip(body.getArguments(), fused.getInputs()))
      env[arg] = env.lookup(input);
    for (Operation &inner : body.without_terminator())
      if (failed(execute(inner, env)))
        return failure();
    env[fused.getResult()] = env.lookup(
        cast<zeroc::train::YieldOp>(body.getTerminator()).getValues().front());
    return success();
  }
  const OpHandler *handler = registry.lookup(op.getName().getStringRef());
  if (!handler)
    return op.emitOpError("is not supported by the reference evaluator");
  int64_t ranks = opts.ranks;

  // Result buffers, zero, with the result types' shapes, within the
  // memory limit.
  int64_t resultElements = 0;
  for (Value result : op.getResults()) {
    std::optional<int64_t> elements = elementsOf(result.getType());
    if (!elements)
      return op.emitOpError("result type ")
             << result.getType()
             << " is not supported by the reference evaluator (static "
                "tensors and scalars of f32, bf16, f64, i1, i32, i64, index, "
                "of at most 2^48 elements)";
    resultElements += *elements;
  }
  if (failed(reserve(&op, resultElements, ranks, "its results")))
    return failure();
  std::vector<Tensor> prototypes;
  for (Value result : op.getResults())
    prototypes.push_back(std::move(*zeroTensorOf(result.getType())));
  std::vector<const RankValues *> operands;
  for (Value operand : op.getOperands()) {
    auto it = env.find(operand);
    if (it == env.end())
      return op.emitOpError("evaluator bug: an operand has no value");
    operands.push_back(&it->second);
  }

  std::vector<RankValues> byResult(op.getNumResults(), RankValues(ranks));
  if (handler->global) {
    for (auto [index, prototype] : llvm::enumerate(prototypes))
      byResult[index].assign(ranks, prototype);
    if (failed(handler->global(&op, operands, byResult, *this)))
      return failure();
    for (int64_t rank = 0; rank < ranks; ++rank) {
      std::vector<Tensor> results;
      for (RankValues &values : byResult)
        results.push_back(std::move(values[rank]));
      if (failed(finishResults(op, results, opts.fp64)))
        return failure();
      for (auto [index, result] : llvm::enumerate(results))
        byResult[index][rank] = std::move(result);
    }
  } else {
    for (int64_t rank = 0; rank < ranks; ++rank) {
      std::vector<const Tensor *> rankOperands;
      for (const RankValues *values : operands)
        rankOperands.push_back(&(*values)[rank]);
      std::vector<Tensor> results = prototypes;
      RankContext context{*this, rank};
      if (failed(handler->local(&op, rankOperands, results, context)) ||
          failed(finishResults(op, results, opts.fp64)))
        return failure();
      for (auto [index, result] : llvm::enumerate(results))
        byResult[index][rank] = std::move(result);
    }
  }
  for (auto [result, values] : llvm::zip(op.getResults(), byResult))
    env[result] = std::move(values);
  return success();
}

FailureOr<std::vector<RankValues>>
Interpreter::runBlock(func::FuncOp func, Block &block,
                      DenseMap<Value, RankValues> &env) {
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<RankValues> results;
      for (Value operand : ret.getOperands())
        results.push_back(env.lookup(operand));
      return results;
    }
    if (failed(execute(op, env)))
      return failure();
  }
  return func.emitOpError("@")
         << func.getSymName() << " does not end with func.return";
}

FailureOr<std::vector<RankValues>>
Interpreter::call(func::FuncOp func, const std::vector<RankValues> &args) {
  if (func.isExternal())
    return func.emitOpError("@")
           << func.getSymName() << " has no body to evaluate";
  if (!llvm::hasSingleElement(func.getBody()))
    return func.emitOpError("@")
           << func.getSymName() << " has " << func.getBody().getBlocks().size()
           << " blocks; the reference evaluator runs straight-line "
              "functions (one block)";
  if (callDepth > 64)
    return func.emitOpError("call depth exceeds 64 (recursion?)");
  Block &block = func.getBody().front();
  if (args.size() != block.getNumArguments())
    return func.emitOpError("@")
           << func.getSymName() << " takes " << block.getNumArguments()
           << " arguments but was given " << args.size();

  // The callee's values die when it returns (what it returns is counted
  // again as the results of its caller's func.call).
  int64_t live = liveElements;
  DenseMap<Value, RankValues> env;
  for (auto [index, arg] : llvm::enumerate(block.getArguments())) {
    // The expected shape and element type, without allocating a value.
    std::optional<int64_t> count = elementsOf(arg.getType());
    if (!count)
      return func.emitOpError("argument #")
             << index << " of type " << arg.getType()
             << " is not supported by the reference evaluator";
    std::vector<int64_t> shape;
    if (auto ranked = dyn_cast<RankedTensorType>(arg.getType()))
      shape.assign(ranked.getShape().begin(), ranked.getShape().end());
    ElementType type = *elementTypeOf(getElementTypeOrSelf(arg.getType()));
    if (args[index].size() != static_cast<size_t>(opts.ranks))
      return func.emitOpError("argument #")
             << index << " has values for " << args[index].size()
             << " ranks, expected " << opts.ranks;
    for (const Tensor &value : args[index])
      if (value.shape != shape || value.type != type ||
          value.numElements() != *count)
        return func.emitOpError("argument #")
               << index << " of @" << func.getSymName() << " has type "
               << arg.getType() << " but was given a "
               << formatShape(value.shape) << " " << elementTypeName(value.type)
               << " tensor";
    if (failed(reserve(func, *count, opts.ranks,
                       "argument #" + std::to_string(index)))) {
      liveElements = live;
      return failure();
    }
    env[arg] = args[index];
  }

  ++callDepth;
  FailureOr<std::vector<RankValues>> results = runBlock(func, block, env);
  --callDepth;
  liveElements = live;
  return results;
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

Evaluator::Evaluator(ModuleOp module, Options options)
    : interpreter(std::make_unique<Interpreter>(module, options)) {}

Evaluator::~Evaluator() = default;

const Options &Evaluator::options() const { return interpreter->options(); }
ModuleOp Evaluator::module() const { return interpreter->module(); }

llvm::Error Evaluator::loadInitFile(const std::string &path) {
  return interpreter->loadInitFile(path);
}

LogicalResult Evaluator::initializeState() {
  return interpreter->initializeState();
}

const std::vector<std::string> &Evaluator::stateNames() const {
  return interpreter->stateNames();
}

Tensor &Evaluator::state(int64_t rank, StringRef name) {
  Tensor *value = interpreter->lookupState(rank, name);
  assert(value && "no such param or state");
  return *value;
}

NamedTensors &Evaluator::rankState(int64_t rank) {
  return interpreter->rankState(rank);
}

Tensor Evaluator::logicalState(StringRef name) const {
  return interpreter->logicalState(name);
}

std::optional<double> Evaluator::replicaMaxAbsDiff(StringRef name) const {
  return interpreter->replicaMaxAbsDiff(name);
}

llvm::Error Evaluator::saveState(const std::string &path) const {
  return interpreter->saveState(path);
}

FailureOr<std::vector<RankValues>>
Evaluator::call(func::FuncOp func, const std::vector<RankValues> &args) {
  return interpreter->call(func, args);
}

std::vector<std::string> unsupportedOps(MLIRContext *context,
                                        StringRef dialectNamespace) {
  OpRegistry registry;
  registerForwardOps(registry);
  registerGradOps(registry);
  registerOptimizerOps(registry);
  registerCollectives(registry);
  registerDistributedOps(registry);
  registerStateOps(registry);
  registerUpstreamOps(registry);
  registerLlamaOps(registry);
  registerMathOps(registry);
  // Declarations the interpreter reads from the module, never executes.
  // Declarations, the fused region (run through its body, see execute) and
  // the buffer form the planning passes write for the back ends, which the
  // evaluator does not run (it runs tensor IR; the executables run buffers).
  const StringRef declarations[] = {
      "train.param",           "train.state",  "train.optimizer",
      "shard.grid",            "train.fused",  "train.yield",
      "train.storage",         "train.kernel", "train.collective_start",
      "train.collective_wait", "train.rank",   "train.read_back",
      "train.buffer"};
  std::vector<std::string> missing;
  for (RegisteredOperationName name : context->getRegisteredOperations()) {
    if (name.getDialectNamespace() != dialectNamespace ||
        llvm::is_contained(declarations, name.getStringRef()) ||
        registry.lookup(name.getStringRef()))
      continue;
    missing.push_back(name.getStringRef().str());
  }
  llvm::sort(missing);
  return missing;
}

llvm::Expected<func::FuncOp> findEntry(ModuleOp module, StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func) {
      std::string available;
      for (auto candidate : module.getOps<func::FuncOp>())
        available +=
            (available.empty() ? "@" : ", @") + candidate.getSymName().str();
      return llvm::createStringError(
          "no function @" + name.str() + " in the module (functions: " +
          (available.empty() ? std::string("none") : available) + ")");
    }
    return func;
  }
  auto &train = zeroc::train::TrainDialect::get(module.getContext());
  for (auto func : module.getOps<func::FuncOp>())
    if (train.getStepAttrHelper().isAttrPresent(func))
      return func;
  for (auto func : module.getOps<func::FuncOp>())
    if (train.getForwardAttrHelper().isAttrPresent(func))
      return func;
  return llvm::createStringError(
      "no function has the attribute train.step or train.forward; name one "
      "with --entry");
}

void printJsonNumber(llvm::raw_ostream &os, double value) {
  if (std::isnan(value))
    os << "\"nan\"";
  else if (std::isinf(value))
    os << (value > 0 ? "\"inf\"" : "\"-inf\"");
  else
    os << llvm::format("%.17g", value);
}

void printJsonString(llvm::raw_ostream &os, StringRef text) {
  os << '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (u < 0x20)
      os << llvm::format("\\u%04x", u);
    else
      os << c;
  }
  os << '"';
}

} // namespace zeroc::eval
