//===- State.cpp - params and optimizer state of every rank ---------------===//
//
// Each simulated rank holds its own copy of every train.param and
// train.state, keyed by symbol name, or with `shards = N` its flat shard of
// it. train.read copies a rank's value out, train.write replaces it. Initial
// values come from initialState(); outside the program (--init,
// --save-state, --print-state) every declaration is its full logical tensor
// (logicalState()).
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Support/Random.h"
#include "zeroc/Support/SafeTensors.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

std::vector<int64_t> shapeOf(RankedTensorType type) {
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

/// The declared (full) type of a train.param or train.state.
RankedTensorType declaredType(Operation *op) {
  if (auto param = dyn_cast<ParamOp>(op))
    return param.getTensorType();
  return cast<StateOp>(op).getTensorType();
}

/// What one rank stores: the declared type, or a flat shard with `shards`.
RankedTensorType storageType(Operation *op) {
  if (auto param = dyn_cast<ParamOp>(op))
    return param.getStorageType();
  return cast<StateOp>(op).getStorageType();
}

/// N of `shards = N`, or nullopt for a declaration every rank holds whole.
std::optional<int64_t> shardsOf(Operation *op) {
  std::optional<uint64_t> shards = isa<ParamOp>(op)
                                       ? cast<ParamOp>(op).getShards()
                                       : cast<StateOp>(op).getShards();
  if (!shards)
    return std::nullopt;
  return static_cast<int64_t>(*shards);
}

} // namespace

Tensor *Interpreter::lookupState(int64_t rank, StringRef name) {
  if (rank < 0 || rank >= static_cast<int64_t>(stateByRank.size()))
    return nullptr;
  auto it = stateByRank[rank].find(name.str());
  return it == stateByRank[rank].end() ? nullptr : &it->second;
}

double Interpreter::parameterStartElement(Operation *op, int64_t i) {
  auto param = cast<ParamOp>(op);
  std::string name = param.getSymName().str();
  double value = 0.0;
  if (auto it = initValues.find(name); it != initValues.end())
    value = it->second.data[i];
  else if (param.getInit() == InitKind::ones)
    value = 1.0;
  else if (param.getInit() == InitKind::normal)
    value = random::normal(name, opts.seed,
                           param.getStdAttr().getValueAsDouble(), i);
  // An f32 value, whatever the param's element type.
  return roundTo(value, ElementType::F32);
}

FailureOr<Tensor> Interpreter::initialState(Operation *op, int64_t rank,
                                            int64_t ranks) {
  RankedTensorType type = storageType(op);
  std::optional<ElementType> element = elementTypeOf(type.getElementType());
  if (!element)
    return op->emitOpError("element type ")
           << type.getElementType() << " is not supported";

  // The full parameter this declaration belongs to.
  auto param = dyn_cast<ParamOp>(op);
  auto state = dyn_cast<StateOp>(op);
  if (state) {
    param = symbols().lookupNearestSymbolFrom<ParamOp>(op, state.getOfAttr());
    if (!param)
      return op->emitOpError("state belongs to ")
             << state.getOfAttr() << ", which is not a train.param";
  }
  int64_t numel = declaredType(op).getNumElements();
  if (numel != param.getTensorType().getNumElements())
    return op->emitOpError("declares ")
           << numel << " elements, but its parameter @" << param.getSymName()
           << " has " << param.getTensorType().getNumElements();

  // The flat elements [begin, end) of the logical tensor that this rank
  // stores: all of them, or with `shards = N` chunk `rank` of
  // K = ceil(numel / N) elements, zero-padded past the end.
  int64_t begin = 0, end = numel;
  if (std::optional<int64_t> shards = shardsOf(op)) {
    if (*shards != ranks)
      return op->emitOpError("is sharded over ")
             << *shards << " ranks (shards = " << *shards
             << "), but the evaluator runs " << ranks
             << " (--ranks): run the partitioned program on as many ranks "
                "as it was partitioned for";
    int64_t chunk = (numel + *shards - 1) / *shards;
    if (type.getNumElements() != chunk)
      return op->emitOpError("evaluator bug: a shard of ")
             << numel << " elements over " << *shards << " ranks stores "
             << type.getNumElements() << " elements, not " << chunk;
    begin = std::min(numel, rank * chunk);
    end = std::min(numel, begin + chunk);
  }

  Tensor value(shapeOf(type), *element);
  std::string name =
      state ? state.getSymName().str() : param.getSymName().str();
  if (auto it = initValues.find(name); state && it != initValues.end()) {
    for (int64_t i = begin; i < end; ++i) // a saved optimizer state
      value.data[i - begin] = it->second.data[i];
  } else if (!state || state.getKind() == StateKind::master) {
    // A param, or the f32 master copy of its initial value.
    for (int64_t i = begin; i < end; ++i)
      value.data[i - begin] = parameterStartElement(param, i);
  }
  value.round();
  return value;
}

LogicalResult Interpreter::initializeState() {
  names.clear();
  layouts.clear();
  stateByRank.assign(opts.ranks, NamedTensors());
  liveElements -= stateElements;
  stateElements = 0;
  for (Operation &op : moduleOp.getBody()->getOperations()) {
    if (!isa<ParamOp, StateOp>(op))
      continue;
    names.push_back(cast<SymbolOpInterface>(op).getName().str());
    std::optional<int64_t> elements = elementsOf(declaredType(&op));
    if (!elements)
      return op.emitOpError("its type is not supported by the reference "
                            "evaluator");
    if (failed(reserve(&op, *elements, opts.ranks, "its value on every rank")))
      return failure();
    stateElements += *elements * opts.ranks;
    for (int64_t rank = 0; rank < opts.ranks; ++rank) {
      FailureOr<Tensor> value = initialState(&op, rank, opts.ranks);
      if (failed(value))
        return failure();
      stateByRank[rank][names.back()] = std::move(*value);
    }
    Layout layout;
    layout.shape = shapeOf(declaredType(&op));
    layout.shards = shardsOf(&op).value_or(0);
    layouts[names.back()] = std::move(layout);
  }
  return success();
}

Tensor Interpreter::logicalState(StringRef name) const {
  const Layout &layout = layouts.at(name.str());
  const Tensor &first = stateByRank[0].at(name.str());
  if (layout.shards == 0)
    return first;
  // Rank-ordered shards, the padding dropped.
  Tensor value(layout.shape, first.type);
  int64_t numel = value.numElements();
  int64_t chunk = first.numElements();
  for (int64_t i = 0; i < numel; ++i)
    value.data[i] = stateByRank[i / chunk].at(name.str()).data[i % chunk];
  return value;
}

std::optional<double> Interpreter::replicaMaxAbsDiff(StringRef name) const {
  if (layouts.at(name.str()).shards != 0)
    return std::nullopt;
  const Tensor &first = stateByRank[0].at(name.str());
  double worst = 0.0;
  for (size_t rank = 1; rank < stateByRank.size(); ++rank) {
    const Tensor &other = stateByRank[rank].at(name.str());
    for (int64_t i = 0; i < first.numElements(); ++i) {
      double a = first.data[i], b = other.data[i];
      if (std::isnan(a) && std::isnan(b))
        continue;
      double diff = a == b ? 0.0 : std::abs(a - b); // inf == inf is no diff
      worst = std::max(worst, std::isnan(diff) ? INFINITY : diff);
    }
  }
  return worst;
}

llvm::Error Interpreter::loadInitFile(const std::string &path) {
  safetensors::File file;
  if (std::string error = safetensors::readFile(path, file); !error.empty())
    return llvm::createStringError(error);
  NamedTensors values;
  for (const safetensors::Tensor &tensor : file.tensors) {
    auto fail = [&](const Twine &what) {
      return llvm::createStringError(path + ": tensor '" + tensor.name +
                                     "': " + what);
    };
    Operation *op = moduleOp.lookupSymbol(tensor.name);
    if (!op || !isa<ParamOp, StateOp>(op))
      return fail("the module has no train.param or train.state of that name");
    if (tensor.dtype != safetensors::DType::F32 &&
        tensor.dtype != safetensors::DType::BF16 &&
        tensor.dtype != safetensors::DType::F64)
      return fail(Twine("dtype ") + safetensors::dtypeName(tensor.dtype) +
                  " is not a float type (F32, BF16 or F64)");
    RankedTensorType type = declaredType(op);
    if (tensor.shape != shapeOf(type))
      return fail("shape " + formatShape(tensor.shape) + " differs from @" +
                  tensor.name + "'s declared " + formatShape(shapeOf(type)));
    Tensor value(tensor.shape, ElementType::F64);
    value.data = safetensors::toDoubles(tensor);
    values[tensor.name] = std::move(value);
  }
  for (auto param : moduleOp.getOps<ParamOp>())
    if (!values.count(param.getSymName().str()))
      return llvm::createStringError(path + ": no tensor for parameter @" +
                                     param.getSymName().str());
  initValues = std::move(values);
  return llvm::Error::success();
}

llvm::Error Interpreter::saveState(const std::string &path) const {
  safetensors::File file;
  file.metadata["format"] = "pt";
  file.metadata["producer"] = "zeroc-run";
  file.metadata["ranks"] = std::to_string(opts.ranks);
  file.metadata["seed"] = std::to_string(opts.seed);
  for (const std::string &name : names) {
    Tensor value = logicalState(name);
    auto dtype = static_cast<safetensors::DType>(safetensorsDType(value.type));
    file.tensors.push_back(
        safetensors::fromDoubles(name, dtype, value.shape, value.data));
  }
  if (std::string error = safetensors::writeFile(path, file); !error.empty())
    return llvm::createStringError(error);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// train.read / train.write
//===----------------------------------------------------------------------===//

namespace {

LogicalResult evalRead(ReadOp op, ArrayRef<const Tensor *>,
                       std::vector<Tensor> &out, RankContext &ctx) {
  Tensor *value = ctx.interpreter.lookupState(ctx.rank, op.getName());
  if (!value)
    return op.emitOpError("no train.param or train.state named @")
           << op.getName() << " (was the state initialized?)";
  if (value->shape != out[0].shape || value->type != out[0].type)
    return op.emitOpError("@")
           << op.getName() << " holds a " << formatShape(value->shape) << " "
           << elementTypeName(value->type) << " value, not " << op.getType();
  out[0].data = value->data;
  return success();
}

LogicalResult evalWrite(WriteOp op, ArrayRef<const Tensor *> in,
                        std::vector<Tensor> &, RankContext &ctx) {
  Tensor *value = ctx.interpreter.lookupState(ctx.rank, op.getName());
  if (!value)
    return op.emitOpError("no train.param or train.state named @")
           << op.getName() << " (was the state initialized?)";
  if (value->shape != in[0]->shape || value->type != in[0]->type)
    return op.emitOpError("cannot store a ")
           << formatShape(in[0]->shape) << " " << elementTypeName(in[0]->type)
           << " value into @" << op.getName();
  value->data = in[0]->data;
  return success();
}

} // namespace

void registerStateOps(OpRegistry &registry) {
  registry.add<ReadOp>(evalRead);
  registry.add<WriteOp>(evalWrite);
}

} // namespace zeroc::eval
