//===- TrainPlannedOps.cpp - verifiers of the planned form ----------------===//
//
// train.fused (tensors) and the buffer ops that train-bufferize writes.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "llvm/Support/MathExtras.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace zeroc::train;

namespace {

/// Whether `tensor` is what a kernel body sees of the buffer `memref`: the
/// same shape and element type (the layout and memory space do not show).
bool mirrors(Type tensor, Type memref) {
  auto t = dyn_cast<RankedTensorType>(tensor);
  auto m = dyn_cast<MemRefType>(memref);
  return t && m && t.getShape() == m.getShape() &&
         t.getElementType() == m.getElementType();
}

bool isHost(MemRefType type) {
  return isa_and_nonnull<HostMemoryAttr>(type.getMemorySpace());
}

} // namespace

//===----------------------------------------------------------------------===//
// train.fused
//===----------------------------------------------------------------------===//

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " argument(s) for "
           << getInputs().size() << " input(s)";
  for (auto [index, arg, input] :
       llvm::enumerate(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("body argument #")
             << index << " has type " << arg.getType() << " but input #"
             << index << " has type " << input.getType();
  for (Operation &op : body.without_terminator())
    if (!isElementwise(&op))
      return emitOpError("body holds '")
             << op.getName()
             << "', which is not elementwise (a fused loop computes only "
                "Elementwise ops)";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != getResult().getType())
    return emitOpError("body must yield one value of the result type ")
           << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// train.kernel
//===----------------------------------------------------------------------===//

Operation *KernelOp::getSingleOp() {
  Block &body = getBody().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  return &body.front();
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getIns().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " argument(s) for " << getIns().size()
           << " input buffer(s)";
  for (auto [index, arg, in] : llvm::enumerate(body.getArguments(), getIns()))
    if (!mirrors(arg.getType(), in.getType()))
      return emitOpError("body argument #")
             << index << " of type " << arg.getType()
             << " does not mirror input buffer " << in.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with train.yield");
  if (yield.getValues().size() != getOuts().size())
    return emitOpError("body yields ")
           << yield.getValues().size() << " value(s) for " << getOuts().size()
           << " output buffer(s)";
  for (auto [index, value, out] :
       llvm::enumerate(yield.getValues(), getOuts()))
    if (!mirrors(value.getType(), out.getType()))
      return emitOpError("yielded value #")
             << index << " of type " << value.getType()
             << " does not fit output buffer " << out.getType();
  // The host computes the learning rate: its schedule, or a constant.
  auto isHostWork = [](Operation *op) {
    if (isa_and_nonnull<LRScheduleOp>(op))
      return true;
    auto fused = dyn_cast_or_null<FusedOp>(op);
    return fused && llvm::all_of(fused.getBody().front().without_terminator(),
                                 [](Operation &inner) { return isa<FillOp>(inner); });
  };
  for (Value out : getOuts())
    if (isHost(cast<MemRefType>(out.getType())) && !isHostWork(getSingleOp()))
      return emitOpError("writes the host buffer ")
             << out.getType()
             << "; only the learning-rate schedule (or a constant) is "
                "computed on the host";
  for (Operation &op : body.without_terminator())
    if (!isMemoryEffectFree(&op))
      return emitOpError("body holds '")
             << op.getName()
             << "', which has memory effects (a kernel's body is a pure "
                "tensor computation)";
  return success();
}

void KernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &in : getInsMutable())
    effects.emplace_back(MemoryEffects::Read::get(), &in,
                         SideEffects::DefaultResource::get());
  for (OpOperand &out : getOutsMutable())
    effects.emplace_back(MemoryEffects::Write::get(), &out,
                         SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// Buffers of state, collectives
//===----------------------------------------------------------------------===//

LogicalResult BufferOp::verify() {
  if (!getTensorType().hasStaticShape())
    return emitOpError("type ") << getType() << " must have a static size";
  if (getMembers().empty())
    return emitOpError("has no members");
  if (getMembers().size() != getOffsets().size())
    return emitOpError("has ")
           << getMembers().size() << " member(s) but " << getOffsets().size()
           << " offset(s)";
  if (std::optional<uint64_t> shards = getShards();
      shards && getTensorType().getNumElements() % static_cast<int64_t>(*shards))
    return emitOpError("has ")
           << getTensorType().getNumElements()
           << " elements, not a multiple of shards = " << *shards
           << " (a sharded buffer is padded to N equal shards)";
  return success();
}

LogicalResult BufferOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  int64_t numel = getTensorType().getNumElements();
  Type element = getTensorType().getElementType();
  int64_t end = 0;
  for (auto [member, offset] : llvm::zip(getMembers(), getOffsets())) {
    auto name = cast<FlatSymbolRefAttr>(member);
    Operation *symbol = symbolTable.lookupNearestSymbolFrom(*this, name);
    RankedTensorType type;
    if (auto param = dyn_cast_or_null<ParamOp>(symbol)) {
      type = param.getTensorType();
    } else if (auto state = dyn_cast_or_null<StateOp>(symbol)) {
      type = state.getTensorType();
    } else {
      return emitOpError("member ") << name << " is not a train.param or "
                                       "train.state";
    }
    if (type.getElementType() != element)
      return emitOpError("member ")
             << name << " has element type " << type.getElementType()
             << ", the buffer " << element;
    if (offset < end)
      return emitOpError("member ")
             << name << " at offset " << offset
             << " overlaps the member before it (which ends at " << end
             << "); offsets are increasing";
    end = offset + type.getNumElements();
    if (end > numel)
      return emitOpError("member ")
             << name << " ends at element " << end << ", past the buffer's "
             << numel;
  }
  return success();
}

LogicalResult StorageOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(*this, getNameAttr());
  RankedTensorType storage;
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    storage = param.getStorageType();
  else if (auto state = dyn_cast_or_null<StateOp>(symbol))
    storage = state.getStorageType();
  else if (auto buffer = dyn_cast_or_null<BufferOp>(symbol))
    storage = buffer.getStorageType();
  else
    return emitOpError("no train.param, train.state or train.buffer named ")
           << getNameAttr();
  auto type = cast<MemRefType>(getBuffer().getType());
  if (!mirrors(storage, type) || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return emitOpError("buffer type ")
           << type << " is not the storage " << storage << " of "
           << getNameAttr() << " (identity layout, default memory)";
  return success();
}

/// The static size of the 1-D grid `grid`, or failure after saying why.
static FailureOr<int64_t> gridRanks(Operation *op, FlatSymbolRefAttr grid,
                                    SymbolTableCollection &symbolTable) {
  auto gridOp = symbolTable.lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return op->emitOpError("no shard.grid named ") << grid;
  if (gridOp.getShape().size() != 1 ||
      ShapedType::isDynamic(gridOp.getShape()[0]))
    return op->emitOpError("collectives run on a 1-D grid of static size, but ")
           << grid << " has shape [" << formatShape(gridOp.getShape()) << "]";
  if (gridOp.getShape()[0] < 1)
    return op->emitOpError("collectives need at least one rank, but ")
           << grid << " has shape [" << formatShape(gridOp.getShape()) << "]";
  return gridOp.getShape()[0];
}

LogicalResult CollectiveStartOp::verify() {
  auto send = cast<MemRefType>(getSend().getType());
  auto recv = cast<MemRefType>(getRecv().getType());
  if (send.getElementType() != recv.getElementType())
    return emitOpError("send element type ")
           << send.getElementType() << " differs from recv element type "
           << recv.getElementType();
  if (send.getRank() != 1 || recv.getRank() != 1)
    return emitOpError("buffers must be 1-D, got ")
           << send << " and " << recv;
  if (isHost(send) || isHost(recv))
    return emitOpError("buffers must not be host memory");
  int64_t full = getKind() == CollectiveKind::all_gather ? recv.getNumElements()
                                                         : send.getNumElements();
  int64_t payload = static_cast<int64_t>(getPayload());
  if (payload < 0 || payload > full)
    return emitOpError("payload ")
           << payload << " must be in [0, " << full
           << "] (the elements of the full buffer)";
  return success();
}

LogicalResult
CollectiveStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> ranks = gridRanks(*this, getGridAttr(), symbolTable);
  if (failed(ranks))
    return failure();
  int64_t send = cast<MemRefType>(getSend().getType()).getNumElements();
  int64_t recv = cast<MemRefType>(getRecv().getType()).getNumElements();
  int64_t expected = recv;
  switch (getKind()) {
  case CollectiveKind::all_reduce:
    expected = send;
    break;
  case CollectiveKind::reduce_scatter:
    expected = send % *ranks ? -1 : send / *ranks;
    break;
  case CollectiveKind::all_gather:
    // A send too large to gather (the product overflows) matches no buffer.
    if (llvm::MulOverflow(send, *ranks, expected))
      expected = -1;
    break;
  }
  if (expected != recv)
    return emitOpError("a ")
           << stringifyCollectiveKind(getKind()) << " of " << send
           << " element(s) on " << *ranks << " rank(s) cannot receive " << recv;
  return success();
}

void CollectiveStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSendMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getRecvMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult CollectiveWaitOp::verify() {
  if (!getRequest().getDefiningOp<CollectiveStartOp>())
    return emitOpError("waits for a request that no train.collective_start "
                       "made");
  return success();
}

LogicalResult RankOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return gridRanks(*this, getGridAttr(), symbolTable);
}

LogicalResult ReadBackOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto host = cast<MemRefType>(getHost().getType());
  if (isHost(source))
    return emitOpError("source ") << source << " is host memory already";
  if (!isHost(host) || !host.getElementType().isF32())
    return emitOpError("destination must be f32 host memory "
                       "(memref<..., #train.host>), got ")
           << host;
  if (source.getNumElements() != host.getNumElements())
    return emitOpError("source has ")
           << source.getNumElements() << " element(s) but the destination "
           << host.getNumElements();
  return success();
}
