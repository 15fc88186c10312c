//===- Bufferize.cpp - each function of a step into buffers ---------------===//
//
// train-bufferize-ops (Passes.td, docs/backend.md): every function of a
// per-rank step into the buffer form the back ends print, executing the
// decisions train-emplace and train-elide-copies wrote into the IR
// (BufferizeFacts.h) and making none.
//
//===----------------------------------------------------------------------===//

#include "BufferizeFacts.h"

#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINBUFFERIZEOPS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

#include <memory>

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::bufferize;

namespace {

/// The tensor type of `value` (of the future's value for a collective).
RankedTensorType tensorOf(Value value) {
  if (auto future = dyn_cast<FutureType>(value.getType()))
    return future.getValueType();
  return cast<RankedTensorType>(value.getType());
}

int64_t elementsOf(ValueRange values) {
  return llvm::sum_of(llvm::map_range(
      values, [](Value value) { return tensorOf(value).getNumElements(); }));
}

MemRefType memrefOf(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// Where a view's elements are: a buffer that owns memory (an allocation,
/// a state's storage or a function argument) and the offset of the first
/// element in it, static plus (for a rank's slice) dynamic.
struct Place {
  Value base;
  int64_t offset = 0;
  Value dynamicOffset; // index, or null
};

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
  FunctionBufferizer(func::FuncOp func)
      : func(func), builder(func.getContext()) {}

  LogicalResult run(SymbolTable &symbols) {
    auto planned = trainDialect(func).getPlannedAttrHelper();
    if (planned.isAttrPresent(func))
      return func.emitOpError(
          "is already in buffer form (train.planned is set)");
    Block &block = func.getBody().front();
    if (failed(readDestinations(block, symbols)))
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
      buffers[arg] = newBlock->addArgument(memrefOf(type), arg.getLoc());
    }
    builder.setInsertionPointToEnd(newBlock);
    for (Operation &op : block) {
      current = &op;
      if (failed(rewrite(op)))
        return failure();
    }
    func.getBody().push_back(owned.release());
    block.dropAllDefinedValueUses();
    block.erase();
    func.setFunctionType(
        FunctionType::get(func.getContext(), newBlock->getArgumentTypes(),
                          newBlock->getTerminator()->getOperandTypes()));
    planned.setAttr(func, UnitAttr::get(func.getContext()));
    return success();
  }

private:
  Location loc() const { return current->getLoc(); }

  /// A new buffer (its memory category is train-allocate's).
  Value alloc(RankedTensorType type) {
    return memref::AllocOp::create(builder, loc(), memrefOf(type));
  }

  Value storage(StringRef name, RankedTensorType type) {
    return StorageOp::create(builder, loc(), memrefOf(type), name);
  }

  /// The buffer of `value` (a view where it is one).
  Value bufferOf(Value value) const { return buffers.lookup(value); }
  SmallVector<Value> buffersOf(ValueRange values) const {
    return llvm::map_to_vector(values, [&](Value v) { return bufferOf(v); });
  }

  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(builder, loc(), value);
  }
  Value add(Value lhs, Value rhs) {
    return arith::AddIOp::create(builder, loc(), lhs, rhs);
  }

  /// A view of `source`'s elements from `offset` (static plus dynamic), with
  /// the shape of `type`.
  Value view(Value source, RankedTensorType type, int64_t offset,
             Value dynamicOffset = nullptr) {
    Place to = places.lookup(source);
    if (!to.base)
      to.base = source; // a buffer of its own (see Place)
    to.offset += offset;
    if (dynamicOffset)
      to.dynamicOffset = to.dynamicOffset ? add(to.dynamicOffset, dynamicOffset)
                                          : dynamicOffset;
    Value result = to.base;
    if (to.offset || to.dynamicOffset || to.base.getType() != memrefOf(type)) {
      SmallVector<int64_t> strides = computeSuffixProduct(type.getShape());
      // Row-major from the base pointer itself is the identity layout.
      MemRefLayoutAttrInterface layout;
      if (to.offset || to.dynamicOffset)
        layout = StridedLayoutAttr::get(
            builder.getContext(),
            to.dynamicOffset ? ShapedType::kDynamic : to.offset, strides);
      OpFoldResult offsetValue = builder.getIndexAttr(to.offset);
      if (to.dynamicOffset)
        offsetValue = to.offset ? add(to.dynamicOffset, constant(to.offset))
                                : to.dynamicOffset;
      result = memref::ReinterpretCastOp::create(
          builder, loc(),
          MemRefType::get(type.getShape(), type.getElementType(), layout),
          to.base, offsetValue,
          getAsIndexOpFoldResult(builder.getContext(), type.getShape()),
          getAsIndexOpFoldResult(builder.getContext(), strides));
    }
    places[result] = to;
    return result;
  }

  /// This rank's slot of shape `type` in `buffer`, one slot per rank.
  Value rankSlot(Value buffer, RankedTensorType type) {
    if (!rank) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(newBlock);
      rank = RankOp::create(builder, func.getLoc(), "dp");
    }
    Value offset = arith::MulIOp::create(builder, loc(), rank,
                                         constant(type.getNumElements()));
    return view(buffer, type, 0, offset);
  }

  /// The --trace site of `from` (train-trace-sites) on `to`.
  static void copyTrace(Operation *from, Operation *to) {
    TrainDialect &dialect = TrainDialect::get(from->getContext());
    if (DictionaryAttr site = dialect.getTraceAttrHelper().getAttr(from))
      dialect.getTraceAttrHelper().setAttr(to, site);
  }

  /// A train.kernel that computes `op` (cloned into its body) from the
  /// buffers `ins` into the buffers `outs`.
  void kernel(Operation *op, ValueRange ins, ValueRange outs) {
    auto k = KernelOp::create(builder, loc(), ins, outs);
    OpBuilder::InsertionGuard guard(builder);
    SmallVector<Location> locs(ins.size(), op->getLoc());
    Block *body =
        builder.createBlock(&k.getBody(), {}, op->getOperandTypes(), locs);
    IRMapping mapping;
    mapping.map(op->getOperands(), body->getArguments());
    Operation *clone = builder.clone(*op, mapping);
    clone->removeAttr(kEmplaceAttrName);
    YieldOp::create(builder, op->getLoc(), clone->getResults());
  }

  /// The buffer of a bucket's pack (its train.buffer's storage) or of a
  /// segment's (an allocation), made when a value is first computed into it.
  Value packBuffer(Operation *pack) {
    auto [it, inserted] = packBuffers.try_emplace(pack, Value());
    if (inserted) {
      RankedTensorType type = tensorOf(pack->getResult(0));
      StringRef into = intoOf(pack);
      it->second = into.empty() ? alloc(type) : storage(into, type);
    }
    return it->second;
  }

  /// The buffer train-emplace computes `result` into: the slot of operand
  /// `to` in its owner's buffer (a pack's bucket or segment, a write's
  /// storage, the rank's slot of an all-gather's train.into buffer).
  Value destinationBuffer(Value result, OpOperand *to) {
    RankedTensorType type = tensorOf(result);
    Operation *consumer = to->getOwner();
    if (auto write = dyn_cast<WriteOp>(consumer)) {
      Operation *bucket = bucketPacks.lookup(write.getName());
      return bucket ? packBuffer(bucket) : storage(write.getName(), type);
    }
    if (isa<AllGatherStartOp>(consumer))
      return rankSlot(
          storage(intoOf(consumer), tensorOf(consumer->getResult(0))), type);
    ValueRange before =
        consumer->getOperands().take_front(to->getOperandNumber());
    return view(packBuffer(consumer), type, elementsOf(before));
  }

  /// Where train-emplace placed each value (train.emplace, train.into),
  /// checked: the values each marked operand is computed into.
  LogicalResult readDestinations(Block &block, SymbolTable &symbols) {
    for (Operation &op : block) {
      StringRef into = intoOf(&op);
      if (!into.empty()) {
        Type type = tensorOf(op.getResult(0));
        if (!isReplicatedBuffer(symbols, into, type))
          return op.emitOpError("is placed into @")
                 << into << " ('train.into'), which is not a replicated "
                 << "train.buffer of type " << type;
        if (isa<PackOp>(op))
          bucketPacks[into] = &op;
      }
      if (!op.hasAttr(kEmplaceAttrName) || isa<StateUpdateOpInterface>(op))
        continue;
      if (isa<AllGatherStartOp>(op) && into.empty())
        return op.emitOpError(
            "computes its send in place ('train.emplace') but "
            "receives into no buffer ('train.into')");
      for (OpOperand &operand : op.getOpOperands()) {
        if (!isEmplaced(&op, operand.getOperandNumber()))
          continue;
        Value value = throughReshapes(operand.get());
        if (computedByKernel(value.getDefiningOp()))
          destinations[value] = &operand;
        else if (!isa<WriteOp>(op))
          return op.emitOpError("operand #")
                 << operand.getOperandNumber()
                 << " is placed ('train.emplace') but no kernel computes it";
      }
    }
    return success();
  }

  LogicalResult rewriteBucket(PackOp pack) {
    // A gradient bucket's buffer (the train.buffer train-zero declared) or a
    // reduce-scatter's segment: the pack is that buffer; a gradient that is
    // not already in its slice is copied there.
    Value bucket = packBuffer(pack);
    int64_t offset = 0;
    for (Value input : pack.getInputs()) {
      Place place = places.lookup(bufferOf(input));
      if (place.base != bucket || place.offset != offset || place.dynamicOffset)
        memref::CopyOp::create(builder, loc(), bufferOf(input),
                               view(bucket, tensorOf(input), offset));
      offset += elementsOf(input);
    }
    buffers[pack.getResult()] = bucket;
    return success();
  }

  LogicalResult rewriteCollective(Operation &op) {
    RankedTensorType type = tensorOf(op.getResult(0));
    // A bucket's all-reduce runs in place; a reduce-scatter of a bucket or of
    // a segment computed in place leaves the rank's shard at its slot of the
    // buffer; an all-gather into the parameter buffer receives there (its
    // send is the rank's slot).
    auto pack = op.getOperand(0).getDefiningOp<PackOp>();
    bool inPlace = pack && isBuffer(pack);
    Value send = bufferOf(op.getOperand(0));
    Value recv;
    if (inPlace && isa<AllReduceStartOp>(op))
      recv = send;
    else if (inPlace && isa<ReduceScatterStartOp>(op))
      recv = rankSlot(send, type);
    else if (StringRef into = intoOf(&op); !into.empty())
      recv = storage(into, type);
    else
      recv = alloc(type);
    CollectiveKind kind = isa<AllReduceStartOp>(op) ? CollectiveKind::all_reduce
                          : isa<ReduceScatterStartOp>(op)
                              ? CollectiveKind::reduce_scatter
                              : CollectiveKind::all_gather;
    // The payload is the whole buffer: a train.pack's padding is one of its
    // inputs, and the tensors a pack or unpack lists cover its buffer.
    int64_t payload = kind == CollectiveKind::all_gather
                          ? type.getNumElements()
                          : elementsOf(op.getOperand(0));
    StringRef grid = op.getAttrOfType<FlatSymbolRefAttr>("grid").getValue();
    auto start = CollectiveStartOp::create(builder, loc(), kind, send, recv,
                                           grid, payload);
    copyTrace(&op, start);
    starts[op.getResult(0)] = start;
    return success();
  }

  LogicalResult rewrite(Operation &op) {
    if (isa<func::ReturnOp>(op)) {
      func::ReturnOp::create(builder, loc(), buffersOf(op.getOperands()));
      return success();
    }
    // Every value gets a buffer: a scalar (an index, an i64, a float) has
    // none to get, whatever op makes it.
    for (OpResult result : op.getResults())
      if (!isa<RankedTensorType, FutureType>(result.getType()))
        return op.emitOpError("result #")
               << result.getResultNumber() << " of type " << result.getType()
               << " is not a tensor; train-bufferize takes tensors only";
    if (auto read = dyn_cast<ReadOp>(op)) {
      Value state = storage(read.getName(), read.getType());
      Value buffer =
          read->hasAttr(kCopyAttrName) ? alloc(read.getType()) : state;
      if (buffer != state)
        memref::CopyOp::create(builder, loc(), state, buffer);
      buffers[read.getResult()] = buffer;
      return success();
    }
    if (auto write = dyn_cast<WriteOp>(op)) {
      if (!isEmplaced(write, 0))
        memref::CopyOp::create(
            builder, loc(), bufferOf(write.getValue()),
            storage(write.getName(), tensorOf(write.getValue())));
      return success();
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      CollectiveStartOp start = starts.lookup(wait.getFuture());
      copyTrace(&op,
                CollectiveWaitOp::create(builder, loc(), start.getRequest()));
      buffers[wait.getResult()] = start.getRecv();
      return success();
    }
    if (Value source = viewSource(&op)) {
      int64_t offset = 0;
      for (Value result : op.getResults()) {
        RankedTensorType type = tensorOf(result);
        buffers[result] = isa<shard::AllSliceOp>(op)
                              ? rankSlot(bufferOf(source), type)
                              : view(bufferOf(source), type, offset);
        offset += type.getNumElements();
      }
      return success();
    }
    if (auto pack = dyn_cast<PackOp>(op); pack && isBuffer(pack))
      return rewriteBucket(pack);
    if (isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp>(op))
      return rewriteCollective(op);
    if (isa<ReleaseOp>(op))
      return success(); // the end of a buffer's life is train-deallocate's
    if (auto update = dyn_cast<StateUpdateOpInterface>(op)) {
      // Each result is its state (in place) or a copy of the operand.
      SmallVector<Value> ins = buffersOf(op.getOperands());
      for (unsigned i : update.getUpdatedOperands()) {
        if (!isEmplaced(&op, i)) {
          Value copy = alloc(tensorOf(op.getOperand(i)));
          memref::CopyOp::create(builder, loc(), ins[i], copy);
          ins[i] = copy;
        }
        buffers[update.getUpdatedResult(i)] = ins[i];
      }
      kernel(&op, ins, buffersOf(op.getResults()));
      return success();
    }
    // Collectives are train.*_start / train.wait pairs (that each start is
    // waited for once is train-verify-emittable's check).
    if (isa<shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp,
            shard::BroadcastOp, shard::GatherOp, shard::ScatterOp,
            shard::ShiftOp, shard::AllToAllOp, shard::SendOp, shard::RecvOp,
            shard::ReduceOp, shard::UpdateHaloOp>(op))
      return op.emitOpError("is a blocking collective; the back ends take only "
                            "train.*_start / train.wait pairs (run "
                            "train-schedule)");
    if (!isMemoryEffectFree(&op))
      return op.emitOpError("has memory effects that train-bufferize does not "
                            "know how to keep");
    auto outs = llvm::map_to_vector(op.getResults(), [&](Value result) {
      // Computed where train-emplace placed it, or into a new buffer.
      OpOperand *to = destinations.lookup(result);
      buffers[result] =
          to ? destinationBuffer(result, to) : alloc(tensorOf(result));
      return buffers[result];
    });
    kernel(&op, buffersOf(op.getOperands()), outs);
    return success();
  }

  func::FuncOp func;
  OpBuilder builder;
  llvm::StringMap<Operation *> bucketPacks; // train.buffer -> its pack
  llvm::DenseMap<Operation *, Value> packBuffers;
  llvm::DenseMap<Value, OpOperand *> destinations;
  Block *newBlock = nullptr;
  Operation *current = nullptr;
  Value rank;
  llvm::DenseMap<Value, Value> buffers;
  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, CollectiveStartOp> starts; // by future
};

struct TrainBufferizeOpsPass
    : zeroc::impl::TrainBufferizeOpsBase<TrainBufferizeOpsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(FunctionBufferizer(func).run(symbols)))
        return signalPassFailure();
  }
};

} // namespace
