//===- State.cpp - params and optimizer state of every rank ---------------===//
//
// Each simulated rank holds its own copy of every train.param and
// train.state, keyed by symbol name (of a member of a sharded train.buffer
// only the elements in the rank's shard of the buffer are meaningful).
// train.read copies a rank's value out, train.write replaces it. Initial
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

/// The declared (full) type of a train.param or train.state: what every
/// rank stores of it.
RankedTensorType declaredType(Operation *op) {
  if (auto param = dyn_cast<ParamOp>(op))
    return param.getTensorType();
  return cast<StateOp>(op).getTensorType();
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

FailureOr<Tensor> Interpreter::initialState(Operation *op) {
  RankedTensorType type = declaredType(op);
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
  int64_t numel = type.getNumElements();
  if (numel != param.getTensorType().getNumElements())
    return op->emitOpError("declares ")
           << numel << " elements, but its parameter @" << param.getSymName()
           << " has " << param.getTensorType().getNumElements();

  Tensor value(shapeOf(type), *element);
  std::string name =
      state ? state.getSymName().str() : param.getSymName().str();
  if (auto it = initValues.find(name); state && it != initValues.end()) {
    value.data = it->second.data; // a saved optimizer state
  } else if (!state || state.getKind() == StateKind::master) {
    // A param, or the f32 master copy of its initial value.
    for (int64_t i = 0; i < numel; ++i)
      value.data[i] = parameterStartElement(param, i);
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
    FailureOr<Tensor> value = initialState(&op);
    if (failed(value))
      return failure();
    for (int64_t rank = 0; rank < opts.ranks; ++rank)
      stateByRank[rank][names.back()] = *value;
    Layout layout;
    layout.shape = shapeOf(declaredType(&op));
    layouts[names.back()] = std::move(layout);
  }
  return initializeBuffers();
}

LogicalResult Interpreter::initializeBuffers() {
  buffers.clear();
  for (auto buffer : moduleOp.getOps<BufferOp>()) {
    Buffer info;
    info.numel = buffer.getTensorType().getNumElements();
    info.shards = static_cast<int64_t>(buffer.getShards().value_or(0));
    if (info.shards == 1)
      info.shards = 0;
    if (info.shards && info.shards != opts.ranks)
      return buffer.emitOpError("is sharded over ")
             << info.shards << " ranks (shards = " << info.shards
             << "), but the evaluator runs " << opts.ranks
             << " (--ranks): run the partitioned program on as many ranks "
                "as it was partitioned for";
    std::optional<ElementType> element =
        elementTypeOf(buffer.getTensorType().getElementType());
    if (!element)
      return buffer.emitOpError("element type ")
             << buffer.getTensorType().getElementType() << " is not supported";
    info.type = *element;
    for (auto [member, offset] :
         llvm::zip(buffer.getMembers(), buffer.getOffsets())) {
      std::string name = cast<FlatSymbolRefAttr>(member).getValue().str();
      auto layout = layouts.find(name);
      if (layout == layouts.end())
        return buffer.emitOpError("member @")
               << name << " is not a train.param or train.state";
      if (!layout->second.shardedBuffer.empty())
        return buffer.emitOpError("member @")
               << name << " is also a member of @"
               << layout->second.shardedBuffer;
      if (info.shards) {
        layout->second.shardedBuffer = buffer.getSymName().str();
        layout->second.bufferShard = info.numel / info.shards;
        layout->second.bufferOffset = offset;
      }
      info.members.push_back(name);
      info.offsets.push_back(offset);
    }
    buffers[buffer.getSymName().str()] = std::move(info);
  }
  return success();
}

StringRef Interpreter::shardedBufferOf(StringRef member) const {
  auto it = layouts.find(member.str());
  return it == layouts.end() ? StringRef() : StringRef(it->second.shardedBuffer);
}

Tensor Interpreter::readBuffer(int64_t rank, StringRef name) const {
  const Buffer &buffer = buffers.at(name.str());
  int64_t shard = buffer.shards ? buffer.numel / buffer.shards : buffer.numel;
  int64_t first = buffer.shards ? rank * shard : 0;
  Tensor value({shard}, buffer.type);
  for (auto [member, offset] : llvm::zip(buffer.members, buffer.offsets)) {
    const Tensor &part = stateByRank[rank].at(member);
    int64_t lo = std::max(offset, first), hi = std::min(offset + part.numElements(), first + shard);
    for (int64_t i = lo; i < hi; ++i)
      value.data[i - first] = part.data[i - offset];
  }
  return value;
}

void Interpreter::writeBuffer(int64_t rank, StringRef name, const Tensor &value) {
  const Buffer &buffer = buffers.at(name.str());
  int64_t shard = value.numElements();
  int64_t first = buffer.shards ? rank * shard : 0;
  for (auto [member, offset] : llvm::zip(buffer.members, buffer.offsets)) {
    Tensor &part = stateByRank[rank].at(member);
    int64_t lo = std::max(offset, first), hi = std::min(offset + part.numElements(), first + shard);
    // Already rounded as the mode asks (none under --fp64), as train.write.
    for (int64_t i = lo; i < hi; ++i)
      part.data[i - offset] = value.data[i - first];
  }
}

Tensor Interpreter::logicalState(StringRef name) const {
  const Layout &layout = layouts.at(name.str());
  const Tensor &first = stateByRank[0].at(name.str());
  if (!layout.shardedBuffer.empty()) {
    // Each element from the rank whose shard of the buffer holds it.
    Tensor value = first;
    for (int64_t i = 0; i < value.numElements(); ++i)
      value.data[i] = stateByRank[(layout.bufferOffset + i) / layout.bufferShard]
                          .at(name.str())
                          .data[i];
    return value;
  }
  return first;
}

std::optional<double> Interpreter::replicaMaxAbsDiff(StringRef name) const {
  const Layout &layout = layouts.at(name.str());
  if (!layout.shardedBuffer.empty())
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

/// A member of a sharded buffer is stored only through the buffer.
LogicalResult checkNotShardedMember(Operation *op, StringRef name,
                                    Interpreter &interpreter) {
  StringRef buffer = interpreter.shardedBufferOf(name);
  if (buffer.empty())
    return success();
  return op->emitOpError("@")
         << name << " is a member of the sharded buffer @" << buffer
         << ", which each rank stores only a shard of: read and write the "
            "buffer";
}

LogicalResult evalRead(ReadOp op, ArrayRef<const Tensor *>,
                       std::vector<Tensor> &out, RankContext &ctx) {
  if (ctx.interpreter.isBuffer(op.getName())) {
    Tensor value = ctx.interpreter.readBuffer(ctx.rank, op.getName());
    if (value.shape != out[0].shape || value.type != out[0].type)
      return op.emitOpError("buffer @")
             << op.getName() << " holds " << formatShape(value.shape)
             << " on a rank, not " << op.getType();
    out[0].data = std::move(value.data);
    return success();
  }
  if (failed(checkNotShardedMember(op, op.getName(), ctx.interpreter)))
    return failure();
  Tensor *value = ctx.interpreter.lookupState(ctx.rank, op.getName());
  if (!value)
    return op.emitOpError("no train.param, train.state or train.buffer named @")
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
  if (ctx.interpreter.isBuffer(op.getName())) {
    Tensor stored = ctx.interpreter.readBuffer(ctx.rank, op.getName());
    if (stored.shape != in[0]->shape || stored.type != in[0]->type)
      return op.emitOpError("cannot store a ")
             << formatShape(in[0]->shape) << " " << elementTypeName(in[0]->type)
             << " value into buffer @" << op.getName();
    ctx.interpreter.writeBuffer(ctx.rank, op.getName(), *in[0]);
    return success();
  }
  if (failed(checkNotShardedMember(op, op.getName(), ctx.interpreter)))
    return failure();
  Tensor *value = ctx.interpreter.lookupState(ctx.rank, op.getName());
  if (!value)
    return op.emitOpError("no train.param, train.state or train.buffer named @")
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
