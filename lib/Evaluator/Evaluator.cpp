//===- Evaluator.cpp - dispatch: walks a function op by op ----------------===//

#include "Interpreter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"

#include <cmath>

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

std::optional<Tensor> zeroTensorOf(Type type) {
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (!ranked.hasStaticShape())
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
    : moduleOp(module), opts(options) {
  registerForwardOps(registry);
  registerGradOps(registry);
  registerOptimizerOps(registry);
  registerCollectives(registry);
  registerDistributedOps(registry);
  registerStateOps(registry);
  registerUpstreamOps(registry);
  registerLlamaOps(registry);
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

LogicalResult Interpreter::execute(Operation &op,
                                   DenseMap<Value, RankValues> &env) {
  const OpHandler *handler = registry.lookup(op.getName().getStringRef());
  if (!handler)
    return op.emitOpError("is not supported by the reference evaluator");
  int64_t ranks = opts.ranks;

  // Result buffers, zero, with the result types' shapes.
  std::vector<Tensor> prototypes;
  for (Value result : op.getResults()) {
    std::optional<Tensor> zero = zeroTensorOf(result.getType());
    if (!zero)
      return op.emitOpError("result type ")
             << result.getType()
             << " is not supported by the reference evaluator (static "
                "tensors and scalars of f32, bf16, f64, i1, i32, i64, index)";
    prototypes.push_back(std::move(*zero));
  }
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

  DenseMap<Value, RankValues> env;
  for (auto [index, arg] : llvm::enumerate(block.getArguments())) {
    std::optional<Tensor> expected = zeroTensorOf(arg.getType());
    if (!expected)
      return func.emitOpError("argument #")
             << index << " of type " << arg.getType()
             << " is not supported by the reference evaluator";
    if (args[index].size() != static_cast<size_t>(opts.ranks))
      return func.emitOpError("argument #")
             << index << " has values for " << args[index].size()
             << " ranks, expected " << opts.ranks;
    for (const Tensor &value : args[index])
      if (value.shape != expected->shape || value.type != expected->type)
        return func.emitOpError("argument #")
               << index << " of @" << func.getSymName() << " has type "
               << arg.getType() << " but was given a "
               << formatShape(value.shape) << " " << elementTypeName(value.type)
               << " tensor";
    env[arg] = args[index];
  }

  ++callDepth;
  FailureOr<std::vector<RankValues>> results = runBlock(func, block, env);
  --callDepth;
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
  // Declarations the interpreter reads from the module, never executes.
  const StringRef declarations[] = {"train.param", "train.state",
                                    "train.optimizer", "shard.grid"};
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
  for (StringRef attr : {"train.step", "train.forward"})
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(attr))
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
