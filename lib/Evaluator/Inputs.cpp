//===- Inputs.cpp - a function's arguments: read, generated, split --------===//
//
// The global inputs of a function are one tensor per argument, read from a
// safetensors file ("arg0", "arg1", ...) or generated from the seed. Each
// rank then gets its rows of the global batch (see argumentsForStep).
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Support/Random.h"
#include "zeroc/Support/SafeTensors.h"

#include "mlir/IR/SymbolTable.h"

#include <set>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

bool isStepCounterType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.getRank() == 0 &&
         ranked.getElementType().isInteger(64);
}

/// The smallest vocabulary among the embedding tables, cross-entropy logits
/// and gathered dimensions of `func` and the functions it calls, or 0 if
/// there is none.
int64_t smallestVocabulary(func::FuncOp func, std::set<Operation *> &seen) {
  if (!seen.insert(func).second || func.isExternal())
    return 0;
  int64_t smallest = 0;
  auto consider = [&](int64_t size) {
    if (size > 0 && (smallest == 0 || size < smallest))
      smallest = size;
  };
  auto dim = [](Value value, int64_t index) {
    auto type = cast<RankedTensorType>(value.getType());
    return type.getDimSize(index < 0 ? type.getRank() + index : index);
  };
  func.walk([&](Operation *op) {
    if (auto embedding = dyn_cast<EmbeddingOp>(op))
      consider(dim(embedding.getTable(), 0));
    else if (auto grad = dyn_cast<EmbeddingGradOp>(op))
      consider(dim(grad.getResult(), 0));
    else if (auto gather = dyn_cast<GatherOp>(op))
      consider(dim(gather.getInput(), gather.getDim()));
    else if (auto grad = dyn_cast<GatherGradOp>(op))
      consider(dim(grad.getResult(), grad.getDim()));
    else if (auto loss = dyn_cast<CrossEntropyOp>(op))
      consider(dim(loss.getLogits(), -1));
    else if (auto loss = dyn_cast<CrossEntropyGradOp>(op))
      consider(dim(loss.getLogits(), -1));
    else if (auto call = dyn_cast<func::CallOp>(op))
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr()))
        consider(smallestVocabulary(callee, seen));
  });
  return smallest;
}

/// The global shape of an argument of `shape` on `ranks` ranks when the
/// inputs are generated: the ranks split dimension 0.
std::vector<int64_t> generatedShape(const std::vector<int64_t> &shape,
                                    int64_t ranks) {
  std::vector<int64_t> global = shape;
  if (!global.empty())
    global[0] *= ranks;
  return global;
}

std::string describe(func::FuncOp func, unsigned index) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "argument #" << index << " of @" << func.getSymName() << " ("
     << func.getArgumentTypes()[index] << ")";
  return text;
}

} // namespace

llvm::Expected<Inputs> makeInputs(func::FuncOp func, const Options &options,
                                  const InputOptions &inputOptions) {
  Inputs inputs;
  safetensors::File file;
  bool fromFile = !inputOptions.inputsPath.empty();
  const std::string &path = inputOptions.inputsPath;
  if (fromFile) {
    if (std::string error = safetensors::readFile(path, file); !error.empty())
      return llvm::createStringError(error);
    for (const safetensors::Tensor &tensor : file.tensors) {
      StringRef name = tensor.name;
      unsigned index;
      if (!name.consume_front("arg") || name.getAsInteger(10, index) ||
          index >= func.getNumArguments())
        return llvm::createStringError(
            path + ": tensor '" + tensor.name + "' names no argument of @" +
            func.getSymName().str() + " (keys are arg0..arg" +
            std::to_string(func.getNumArguments() - 1) + ")");
    }
  }

  std::set<Operation *> seen;
  int64_t vocabulary = smallestVocabulary(func, seen);
  // The inputs are held globally and once per rank: they must fit the
  // memory limit together.
  int64_t budget = memoryLimit(options) / 8 / (options.ranks + 1);
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    std::optional<int64_t> elements = elementsOf(type);
    if (!elements || !isa<RankedTensorType>(type))
      return llvm::createStringError(describe(func, index) +
                                     ": zeroc-run takes static tensor "
                                     "arguments of f32, bf16, f64, i32, i64 "
                                     "of at most 2^48 elements");
    if (*elements > budget)
      return llvm::createStringError(
          describe(func, index) + ": " + std::to_string(*elements) +
          " elements do not fit the evaluator's memory limit (zeroc-run "
          "--max-memory)");
    budget -= *elements;
    std::optional<Tensor> prototype = zeroTensorOf(type);
    std::string key = "arg" + std::to_string(index);
    bool step = isStepCounterType(type);
    inputs.isStepCounter.push_back(step);

    if (fromFile) {
      const safetensors::Tensor *tensor = file.find(key);
      if (!tensor)
        return llvm::createStringError(path + ": no tensor '" + key + "' for " +
                                       describe(func, index));
      bool floatData = tensor->dtype == safetensors::DType::F32 ||
                       tensor->dtype == safetensors::DType::BF16 ||
                       tensor->dtype == safetensors::DType::F64;
      if (floatData != isFloat(prototype->type))
        return llvm::createStringError(
            path + ": tensor '" + key + "' has dtype " +
            safetensors::dtypeName(tensor->dtype) + ", which does not fit " +
            describe(func, index));
      const std::vector<int64_t> &shape = prototype->shape;
      bool whole = tensor->shape == shape;
      bool split =
          !shape.empty() && tensor->shape.size() == shape.size() &&
          tensor->shape[0] == shape[0] * options.ranks &&
          std::equal(shape.begin() + 1, shape.end(), tensor->shape.begin() + 1);
      if (!whole && !split)
        return llvm::createStringError(
            path + ": tensor '" + key + "' has shape " +
            formatShape(tensor->shape) + ", but " + describe(func, index) +
            " needs " + formatShape(shape) +
            (shape.empty() || options.ranks == 1
                 ? std::string()
                 : " or the global " +
                       formatShape(generatedShape(shape, options.ranks))));
      Tensor value(tensor->shape, prototype->type);
      value.data = safetensors::toDoubles(*tensor);
      value.round();
      inputs.global.push_back(std::move(value));
      continue;
    }

    if (step) {
      inputs.global.push_back(*prototype); // step 0
      continue;
    }
    Tensor value(generatedShape(prototype->shape, options.ranks),
                 prototype->type);
    if (isFloat(value.type)) {
      for (int64_t i = 0; i < value.numElements(); ++i)
        value.data[i] = random::normal(key, options.seed, 1.0, i);
      value.round();
    } else {
      int64_t range = inputOptions.intRange.value_or(vocabulary);
      if (range <= 0)
        return llvm::createStringError(
            "cannot generate integer " + describe(func, index) +
            ": the function has no train.embedding or train.cross_entropy "
            "to take a vocabulary size from; pass --int-range");
      for (int64_t i = 0; i < value.numElements(); ++i)
        value.data[i] = static_cast<double>(
            random::uniformInt(key, options.seed, range, i));
    }
    inputs.global.push_back(std::move(value));
  }
  return inputs;
}

llvm::Expected<std::vector<RankValues>> argumentsForStep(func::FuncOp func,
                                                         const Inputs &inputs,
                                                         int64_t ranks,
                                                         int64_t step) {
  std::vector<RankValues> args;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    const Tensor &global = inputs.global[index];
    std::optional<Tensor> prototype = zeroTensorOf(type);
    RankValues values;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      if (global.shape == prototype->shape) {
        values.push_back(global); // every rank gets the whole input
        continue;
      }
      int64_t rows = prototype->shape[0];
      if (global.shape.empty() || global.shape[0] != rows * ranks)
        return llvm::createStringError(
            "global input " + formatShape(global.shape) +
            " does not split "
            "into " +
            std::to_string(ranks) + " parts of " +
            formatShape(prototype->shape) + " for " + describe(func, index));
      int64_t rowSize = prototype->numElements() / (rows == 0 ? 1 : rows);
      Tensor part = *prototype;
      std::copy(global.data.begin() + rank * rows * rowSize,
                global.data.begin() + (rank + 1) * rows * rowSize,
                part.data.begin());
      values.push_back(std::move(part));
    }
    if (inputs.isStepCounter[index])
      for (Tensor &value : values)
        value.data[0] += static_cast<double>(step);
    args.push_back(std::move(values));
  }
  return args;
}

llvm::Error saveInputs(const std::string &path, const Inputs &inputs) {
  safetensors::File file;
  file.metadata["producer"] = "zeroc-run";
  for (auto [index, value] : llvm::enumerate(inputs.global)) {
    auto dtype = static_cast<safetensors::DType>(safetensorsDType(value.type));
    file.tensors.push_back(safetensors::fromDoubles(
        "arg" + std::to_string(index), dtype, value.shape, value.data));
  }
  if (std::string error = safetensors::writeFile(path, file); !error.empty())
    return llvm::createStringError(error);
  return llvm::Error::success();
}

} // namespace zeroc::eval
