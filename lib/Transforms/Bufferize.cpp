//===- Bufferize.cpp - each function of a step into buffers ---------------===//
//
// train-bufferize-ops (Passes.td, docs/backend.md): every function of a
// scheduled, fused per-rank program into the buffer form the back ends
// print, executing the decisions train-emplace and train-elide-copies wrote
// into the IR (BufferizeFacts.h) and making none: a read is its state's
// buffer or, marked train.copy, a copy; views are reinterpret_casts; an
// operand train.emplace lists is computed in place (a bucket's slice, a
// segment's slot, the rank's slot, a state, a whole storage); every other
// op is a train.kernel into a new allocation. Memory categories are
// train-allocate's, the entry signature train-entry-abi's, deallocation
// train-deallocate's.
//
//===----------------------------------------------------------------------===//

#include "BufferizeFacts.h"

#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINBUFFERIZEOPS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

#include <memory>

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::bufferize;

namespace {

RankedTensorType tensorOf(Type type) {
  if (auto future = dyn_cast<FutureType>(type))
    return future.getValueType();
  return cast<RankedTensorType>(type);
}

MemRefType memrefOf(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}


/// Where a value's elements are: a buffer that owns memory (an allocation,
/// a state's storage or a function argument) and the offset of the first
/// element in it, static plus (for a rank's slice) dynamic.
struct Place {
  Value base;
  int64_t offset = 0;
  Value dynamicOffset; // index, or null
};

/// Where train-emplace computes a value: into the slot at `offset` of the
/// buffer of `consumer` (a train.pack's bucket or segment, a train.write's
/// storage, an all-gather's rank slot of its train.into buffer).
struct Destination {
  Operation *consumer;
  int64_t offset;
};

/// Elements of a collective's full buffer that are not padding: the real
/// elements of the tensors packed into its input (reduce), or unpacked from
/// its result (gather), else all of them.
int64_t payloadOf(Operation *start, int64_t full) {
  auto elements = [](ValueRange values) {
    int64_t real = 0;
    for (Value value : values)
      real += tensorOf(value.getType()).getNumElements();
    return real;
  };
  if (!isa<AllGatherStartOp>(start)) {
    auto pack = start->getOperand(0).getDefiningOp<PackOp>();
    return pack ? elements(pack.getInputs()) : full;
  }
  for (Operation *wait : start->getResult(0).getUsers())
    for (Operation *user : wait->getResult(0).getUsers())
      if (auto unpack = dyn_cast<UnpackOp>(user))
        return elements(unpack.getResults());
  return full;
}

/// The train.buffer train-emplace computes `op` into (train.into), or "".
StringRef intoOf(Operation *op) {
  auto into = op->getAttrOfType<FlatSymbolRefAttr>(kIntoAttrName);
  return into ? into.getValue() : StringRef();
}

/// Whether a pack is a buffer of its own, its inputs computed into it: a
/// gradient bucket's train.buffer or a reduce-scatter's segment.
bool isBuffer(PackOp pack) {
  return !intoOf(pack).empty() || pack->hasAttr(kEmplaceAttrName);
}

class FunctionBufferizer {
public:
  FunctionBufferizer(func::FuncOp func, SymbolTable &symbols)
      : func(func), symbols(symbols), builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult readDestinations(Block &block);
  LogicalResult rewrite(Operation &op);
  void rewriteBucket(PackOp pack);
  void rewriteCollective(Operation &op);

  Location loc() const { return current->getLoc(); }

  /// `buffer`, a buffer that owns its memory.
  Value owning(Value buffer) {
    places[buffer] = {buffer, 0, nullptr};
    return buffer;
  }

  /// A new buffer (its memory category is train-allocate's).
  Value alloc(RankedTensorType type) {
    return owning(memref::AllocOp::create(builder, loc(), memrefOf(type)));
  }

  /// The buffer of `value` (a view where it is one).
  Value bufferOf(Value value) const { return buffers.lookup(value); }
  SmallVector<Value> buffersOf(ValueRange values) const {
    return llvm::map_to_vector(values, [&](Value v) { return bufferOf(v); });
  }

  /// A view of `source`'s elements from `offset` (static plus dynamic), with
  /// the shape of `type`.
  Value view(Value source, RankedTensorType type, int64_t offset,
             Value dynamicOffset) {
    Place from = places.lookup(source);
    Place to{from.base, from.offset + offset, from.dynamicOffset};
    if (dynamicOffset)
      to.dynamicOffset =
          to.dynamicOffset
              ? arith::AddIOp::create(builder, loc(), to.dynamicOffset,
                                      dynamicOffset)
                    .getResult()
              : dynamicOffset;
    auto baseType = cast<MemRefType>(to.base.getType());
    Value result;
    if (!to.dynamicOffset && to.offset == 0 &&
        baseType.getShape() == type.getShape() &&
        baseType.getElementType() == type.getElementType()) {
      result = to.base;
    } else {
      SmallVector<int64_t> strides = computeSuffixProduct(type.getShape());
      int64_t staticOffset =
          to.dynamicOffset ? ShapedType::kDynamic : to.offset;
      // Row-major from the base pointer itself is the identity layout.
      MemRefLayoutAttrInterface layout;
      if (staticOffset != 0)
        layout = StridedLayoutAttr::get(builder.getContext(), staticOffset,
                                        strides);
      auto resultType = MemRefType::get(type.getShape(), type.getElementType(),
                                        layout, baseType.getMemorySpace());
      OpFoldResult offsetValue = builder.getIndexAttr(to.offset);
      if (to.dynamicOffset) {
        Value total = to.dynamicOffset;
        if (to.offset)
          total = arith::AddIOp::create(
              builder, loc(), total,
              arith::ConstantIndexOp::create(builder, loc(), to.offset));
        offsetValue = total;
      }
      result = memref::ReinterpretCastOp::create(
          builder, loc(), resultType, to.base, offsetValue,
          getAsIndexOpFoldResult(builder.getContext(), type.getShape()),
          getAsIndexOpFoldResult(builder.getContext(), strides));
    }
    places[result] = to;
    return result;
  }

  /// The --trace site of `from` (train-trace-sites) on `to`.
  static void copyTrace(Operation *from, Operation *to) {
    TrainDialect &dialect = TrainDialect::get(from->getContext());
    if (DictionaryAttr site = dialect.getTraceAttrHelper().getAttr(from))
      dialect.getTraceAttrHelper().setAttr(to, site);
  }

  /// A train.kernel that computes `op` (cloned into its body) from the
  /// buffers `ins` into the buffers `outs`.
  void kernel(Operation *op, ArrayRef<Value> ins, ArrayRef<Value> outs) {
    auto k = KernelOp::create(builder, loc(), ins, outs);
    OpBuilder::InsertionGuard guard(builder);
    Block *body = builder.createBlock(&k.getBody());
    IRMapping mapping;
    for (auto [operand, in] : llvm::zip(op->getOperands(), ins)) {
      auto type = cast<MemRefType>(in.getType());
      mapping.map(operand,
                  body->addArgument(RankedTensorType::get(type.getShape(),
                                                          type.getElementType()),
                                    op->getLoc()));
    }
    Operation *clone = builder.clone(*op, mapping);
    clone->removeAttr(kEmplaceAttrName);
    YieldOp::create(builder, op->getLoc(), clone->getResults());
  }

  Value storage(StringRef name, RankedTensorType type) {
    return owning(StorageOp::create(builder, loc(), memrefOf(type), name));
  }

  /// The storage of the gradient bucket's train.buffer `name` (one
  /// train.storage for the function).
  Value bucketStorage(StringRef name) {
    auto [it, inserted] = bucketValues.try_emplace(name, Value());
    if (inserted)
      it->second = storage(name, symbols.lookup<BufferOp>(name).getTensorType());
    return it->second;
  }

  /// The buffer train-emplace computes `result` into (see Destination).
  Value destinationBuffer(Value result, Destination to) {
    RankedTensorType type = tensorOf(result.getType());
    if (auto write = dyn_cast<WriteOp>(to.consumer))
      return bucketNames.contains(write.getName())
                 ? bucketStorage(write.getName())
                 : storage(write.getName(), type);
    StringRef into = intoOf(to.consumer);
    if (isa<AllGatherStartOp>(to.consumer)) {
      Value buffer =
          storage(into, symbols.lookup<BufferOp>(into).getTensorType());
      return view(buffer, type, 0, rankOffset(type.getNumElements()));
    }
    Value buffer =
        into.empty() ? segmentBuffer(to.consumer) : bucketStorage(into);
    return view(buffer, type, to.offset, nullptr);
  }

  /// The buffer of a reduce-scatter's segment (the pack `pack`), allocated when
  /// its first part is computed into it.
  Value segmentBuffer(Operation *pack) {
    auto [it, inserted] = segments.try_emplace(pack, Value());
    if (inserted)
      it->second = alloc(tensorOf(pack->getResult(0).getType()));
    return it->second;
  }

  /// Whether `value`'s buffer is elements [offset, ...) of `base`.
  bool isAt(Value value, Value base, int64_t offset) const {
    Place place = places.lookup(bufferOf(value));
    return place.base == base && place.offset == offset && !place.dynamicOffset;
  }

  /// The index `rank * elements`: where this rank's slot of `elements`
  /// elements starts in a buffer of one slot per rank.
  Value rankOffset(int64_t elements) {
    return arith::MulIOp::create(
        builder, loc(), rank(),
        arith::ConstantIndexOp::create(builder, loc(), elements));
  }

  Value rank() {
    if (!rankValue) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(newBlock);
      rankValue = RankOp::create(builder, func.getLoc(),
                                 FlatSymbolRefAttr::get(builder.getContext(), "dp"));
    }
    return rankValue;
  }

  func::FuncOp func;
  SymbolTable &symbols;
  OpBuilder builder;
  llvm::StringMap<Value> bucketValues;
  llvm::StringSet<> bucketNames;
  llvm::DenseMap<Operation *, Value> segments;
  llvm::DenseMap<Value, Destination> destinations;
  Block *newBlock = nullptr;
  Operation *current = nullptr;
  Value rankValue;
  llvm::DenseMap<Value, Value> buffers;
  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, Value> requests; // future -> request
  llvm::DenseMap<Value, Value> received; // future -> recv buffer
};

/// Where train-emplace placed each value (train.emplace, train.into),
/// checked: the values each marked operand is computed into.
LogicalResult FunctionBufferizer::readDestinations(Block &block) {
  for (Operation &op : block) {
    auto marked = op.getAttrOfType<DenseI64ArrayAttr>(kEmplaceAttrName);
    StringRef into = intoOf(&op);
    if (!into.empty()) {
      Type type = tensorOf(op.getResult(0).getType());
      if (!replicatedBuffer(symbols, into, type))
        return op.emitOpError("is placed into @")
               << into << " ('train.into'), which is not a replicated "
               << "train.buffer of type " << type;
      if (isa<PackOp>(op))
        bucketNames.insert(into);
    }
    if (!marked || isa<StateUpdateOpInterface>(op))
      continue;
    if (isa<AllGatherStartOp>(op) && into.empty())
      return op.emitOpError("computes its send in place ('train.emplace') but "
                            "receives into no buffer ('train.into')");
    int64_t offset = 0;
    for (OpOperand &operand : op.getOpOperands()) {
      Value value = throughReshapes(operand.get());
      if (isEmplaced(&op, operand.getOperandNumber())) {
        if (computedByKernel(value.getDefiningOp()))
          destinations[value] = {&op, offset};
        else if (!isa<WriteOp>(op))
          return op.emitOpError("operand #")
                 << operand.getOperandNumber()
                 << " is placed ('train.emplace') but no kernel computes it";
      }
      offset += tensorOf(operand.get().getType()).getNumElements();
    }
  }
  return success();
}

LogicalResult FunctionBufferizer::run() {
  Block &block = func.getBody().front();
  if (failed(readDestinations(block)))
    return failure();

  // The new body, owned here until it replaces the old: a failure frees it.
  auto owned = std::make_unique<Block>();
  newBlock = owned.get();
  for (BlockArgument arg : block.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitOpError("argument #")
             << arg.getArgNumber() << " of type " << arg.getType()
             << " is not a tensor; train-bufferize takes tensor arguments";
    buffers[arg] = owning(newBlock->addArgument(memrefOf(type), arg.getLoc()));
  }
  builder.setInsertionPointToEnd(newBlock);
  for (Operation &op : block) {
    current = &op;
    if (failed(rewrite(op)))
      return failure();
  }

  // Swap the bodies.
  Region &region = func.getBody();
  region.push_back(owned.release());
  block.dropAllDefinedValueUses();
  block.erase();
  func.setFunctionType(
      FunctionType::get(func.getContext(), newBlock->getArgumentTypes(),
                        newBlock->getTerminator()->getOperandTypes()));
  return success();
}

void FunctionBufferizer::rewriteBucket(PackOp pack) {
  // A gradient bucket's buffer (the train.buffer train-zero declared) or a
  // reduce-scatter's segment: the pack is that buffer; a gradient that is
  // not already in its slice is copied there.
  StringRef into = intoOf(pack);
  Value bucket = into.empty() ? segments.lookup(pack) : bucketStorage(into);
  int64_t offset = 0;
  for (Value input : pack.getInputs()) {
    if (!isAt(input, bucket, offset))
      memref::CopyOp::create(
          builder, loc(), bufferOf(input),
          view(bucket, tensorOf(input.getType()), offset, nullptr));
    offset += tensorOf(input.getType()).getNumElements();
  }
  buffers[pack.getResult()] = bucket;
}

void FunctionBufferizer::rewriteCollective(Operation &op) {
  RankedTensorType type = tensorOf(op.getResult(0).getType());
  // A bucket's all-reduce runs in place; a reduce-scatter of a bucket or of
  // a segment computed in place leaves the rank's shard at its slot of the
  // buffer; an all-gather into the parameter buffer receives there (its
  // send is the rank's slot).
  auto pack = op.getOperand(0).getDefiningOp<PackOp>();
  bool inPlace = pack && isBuffer(pack);
  Value recv;
  if (inPlace && isa<AllReduceStartOp>(op))
    recv = bufferOf(op.getOperand(0));
  else if (inPlace && isa<ReduceScatterStartOp>(op))
    recv = view(bufferOf(op.getOperand(0)), type, 0,
                rankOffset(type.getNumElements()));
  else if (StringRef into = intoOf(&op); !into.empty())
    recv = storage(into, type);
  else
    recv = alloc(type);
  CollectiveKind kind = isa<AllReduceStartOp>(op) ? CollectiveKind::all_reduce
                        : isa<ReduceScatterStartOp>(op)
                            ? CollectiveKind::reduce_scatter
                            : CollectiveKind::all_gather;
  Value send = bufferOf(op.getOperand(0));
  int64_t full = kind == CollectiveKind::all_gather
                     ? type.getNumElements()
                     : tensorOf(op.getOperand(0).getType()).getNumElements();
  auto grid = op.getAttrOfType<FlatSymbolRefAttr>("grid");
  auto start = CollectiveStartOp::create(builder, loc(), kind, send, recv,
                                         grid.getValue(), payloadOf(&op, full));
  copyTrace(&op, start);
  requests[op.getResult(0)] = start.getRequest();
  received[op.getResult(0)] = recv;
}

LogicalResult FunctionBufferizer::rewrite(Operation &op) {
  if (isa<func::ReturnOp>(op)) {
    func::ReturnOp::create(builder, loc(), buffersOf(op.getOperands()));
    return success();
  }
  if (auto read = dyn_cast<ReadOp>(op)) {
    Value buffer = storage(read.getName(), read.getType());
    if (read->hasAttr(kCopyAttrName)) {
      Value state = buffer;
      buffer = alloc(read.getType());
      memref::CopyOp::create(builder, loc(), state, buffer);
    }
    buffers[read.getResult()] = buffer;
    return success();
  }
  if (auto write = dyn_cast<WriteOp>(op)) {
    if (!isEmplaced(write, 0))
      memref::CopyOp::create(
          builder, loc(), bufferOf(write.getValue()),
          storage(write.getName(), tensorOf(write.getValue().getType())));
    return success();
  }
  if (Value source = viewSource(&op)) {
    if (auto wait = dyn_cast<WaitOp>(op)) {
      auto waited = CollectiveWaitOp::create(builder, loc(),
                                             requests.lookup(wait.getFuture()));
      copyTrace(&op, waited);
      buffers[wait.getResult()] = received.lookup(wait.getFuture());
      return success();
    }
    Value from = bufferOf(source);
    if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
      RankedTensorType type = tensorOf(slice.getResult().getType());
      buffers[slice.getResult()] =
          view(from, type, 0, rankOffset(type.getNumElements()));
      return success();
    }
    int64_t offset = 0;
    for (Value result : op.getResults()) {
      RankedTensorType type = tensorOf(result.getType());
      buffers[result] = view(from, type, offset, nullptr);
      offset += type.getNumElements();
    }
    return success();
  }
  if (auto pack = dyn_cast<PackOp>(op);
      pack && isBuffer(pack)) {
    rewriteBucket(pack);
    return success();
  }
  if (isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp>(op)) {
    rewriteCollective(op);
    return success();
  }
  if (isa<ReleaseOp>(op))
    return success(); // the end of a buffer's life is train-deallocate's
  if (auto update = dyn_cast<StateUpdateOpInterface>(op)) {
    // Each state result is its state (in place) or a copy of the operand.
    SmallVector<Value> ins = buffersOf(op.getOperands()), outs;
    for (unsigned i : update.getUpdatedOperands()) {
      Value target = ins[i];
      if (!isEmplaced(&op, i)) {
        target = alloc(tensorOf(op.getOperand(i).getType()));
        memref::CopyOp::create(builder, loc(), ins[i], target);
        ins[i] = target;
      }
      outs.push_back(target);
      buffers[update.getUpdatedResult(i)] = target;
    }
    kernel(&op, ins, outs);
    return success();
  }
  // Collectives are train.*_start / train.wait pairs (that each start is
  // waited for once is train-verify-emittable's check).
  if (isa<shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp,
          shard::BroadcastOp, shard::GatherOp, shard::ScatterOp,
          shard::ShiftOp, shard::AllToAllOp, shard::SendOp, shard::RecvOp>(op))
    return op.emitOpError("is a blocking collective; the back ends take only "
                          "train.*_start / train.wait pairs (run "
                          "train-schedule)");
  if (!isMemoryEffectFree(&op))
    return op.emitOpError("has memory effects that train-bufferize does not "
                          "know how to keep");
  SmallVector<Value> ins = buffersOf(op.getOperands()), outs;
  for (Value result : op.getResults()) {
    // Computed where train-emplace placed it, or into a new buffer.
    auto dest = destinations.find(result);
    outs.push_back(dest != destinations.end()
                       ? destinationBuffer(result, dest->second)
                       : alloc(tensorOf(result.getType())));
    buffers[result] = outs.back();
  }
  kernel(&op, ins, outs);
  return success();
}

struct TrainBufferizeOpsPass
    : zeroc::impl::TrainBufferizeOpsBase<TrainBufferizeOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (trainDialect(func).getPlannedAttrHelper().isAttrPresent(func)) {
        func.emitOpError("is already in buffer form (train.planned is set)");
        return signalPassFailure();
      }
      FunctionBufferizer bufferizer(func, symbols);
      if (failed(bufferizer.run()))
        return signalPassFailure();
      trainDialect(func).getPlannedAttrHelper().setAttr(
          func, UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
