//===- State.cpp - params and optimizer state of every rank ---------------===//
//
// Each simulated rank holds its own copy of every train.param and
// train.state, keyed by symbol name. train.read copies a rank's value out,
// train.write replaces it. Initial values come from initialState().
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Support/Random.h"
#include "zeroc/Support/SafeTensors.h"

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

} // namespace

Tensor *Interpreter::lookupState(int64_t rank, StringRef name) {
  if (rank < 0 || rank >= static_cast<int64_t>(stateByRank.size()))
    return nullptr;
  auto it = stateByRank[rank].find(name.str());
  return it == stateByRank[rank].end() ? nullptr : &it->second;
}

FailureOr<Tensor> Interpreter::parameterStartValue(Operation *op) {
  auto param = cast<ParamOp>(op);
  RankedTensorType type = param.getTensorType();
  std::string name = param.getSymName().str();
  Tensor value(shapeOf(type), ElementType::F32);
  if (auto it = initValues.find(name); it != initValues.end()) {
    value.data = it->second.data;
  } else if (param.getInit() == InitKind::ones) {
    std::fill(value.data.begin(), value.data.end(), 1.0);
  } else if (param.getInit() == InitKind::normal) {
    double std = param.getStdAttr().getValueAsDouble();
    for (int64_t i = 0; i < value.numElements(); ++i)
      value.data[i] = random::normal(name, opts.seed, std, i);
  }
  value.round(); // an f32 value, whatever the param's element type
  return value;
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
  RankedTensorType full = param.getTensorType();
  if (type.getNumElements() != full.getNumElements())
    // A shard of the parameter (ZeRO, `shards = N`): rank `rank` of `ranks`
    // would hold its own element range of the full value here.
    return op->emitOpError("sharded state is not supported yet: each rank "
                           "stores ")
           << type << ", " << type.getNumElements() << " of the "
           << full.getNumElements() << " elements of @" << param.getSymName()
           << " (rank " << rank << " of " << ranks << ")";

  Tensor value(shapeOf(type), *element);
  std::string name =
      state ? state.getSymName().str() : param.getSymName().str();
  if (auto it = initValues.find(name); state && it != initValues.end()) {
    value.data = it->second.data; // a saved optimizer state
  } else if (!state || state.getKind() == StateKind::master) {
    // A param, or the f32 master copy of its initial value.
    FailureOr<Tensor> start = parameterStartValue(param);
    if (failed(start))
      return failure();
    value.data = start->data;
  }
  value.round();
  return value;
}

LogicalResult Interpreter::initializeState() {
  names.clear();
  stateByRank.assign(opts.ranks, NamedTensors());
  for (Operation &op : moduleOp.getBody()->getOperations()) {
    if (!isa<ParamOp, StateOp>(op))
      continue;
    names.push_back(cast<SymbolOpInterface>(op).getName().str());
    for (int64_t rank = 0; rank < opts.ranks; ++rank) {
      FailureOr<Tensor> value = initialState(&op, rank, opts.ranks);
      if (failed(value))
        return failure();
      stateByRank[rank][names.back()] = std::move(*value);
    }
  }
  return success();
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

llvm::Error Interpreter::saveState(const std::string &path,
                                   int64_t rank) const {
  safetensors::File file;
  file.metadata["format"] = "pt";
  file.metadata["producer"] = "zeroc-run";
  file.metadata["rank"] = std::to_string(rank);
  file.metadata["ranks"] = std::to_string(opts.ranks);
  file.metadata["seed"] = std::to_string(opts.seed);
  for (const std::string &name : names) {
    const Tensor &value = stateByRank[rank].at(name);
    safetensors::DType dtype;
    switch (value.type) {
    case ElementType::BF16:
      dtype = safetensors::DType::BF16;
      break;
    case ElementType::F64:
      dtype = safetensors::DType::F64;
      break;
    default:
      dtype = safetensors::DType::F32;
      break;
    }
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
