//===- Bufferize.cpp - each function of a step into buffers ---------------===//
//
// train-bufferize-ops (Passes.td, docs/backend.md): every function of a
// scheduled, fused per-rank program into the buffer form the back ends
// print. Reads are their state's buffer (or a copy while the state is
// written), views are reinterpret_casts, updates run in place on their
// state, gradients are computed into their bucket's slice, collectives run
// in place where train-zero's buffers allow, and every other op is a
// train.kernel into a new allocation in its memory category. The entry
// signature is train-entry-abi's, deallocation train-deallocate's.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINBUFFERIZEOPS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

#include <memory>

using namespace mlir;
using namespace zeroc::train;

namespace {

RankedTensorType tensorOf(Type type) {
  if (auto future = dyn_cast<FutureType>(type))
    return future.getValueType();
  return cast<RankedTensorType>(type);
}

MemRefType memrefOf(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

bool isStateUpdate(Operation *op) { return isa<AdamWUpdateOp, SGDUpdateOp>(op); }

/// The operands of an update that are state (the result it becomes is
/// `updateResultOf`); operand 1 is the gradient.
SmallVector<unsigned> updatedOperands(Operation *op) {
  if (isa<AdamWUpdateOp>(op))
    return {0, 2, 3};
  return {0, 2};
}
unsigned updateResultOf(unsigned operand) { return operand == 0 ? 0 : operand - 1; }

/// Where a value's elements are: a buffer that owns memory (an allocation,
/// a state's storage or a function argument) and the offset of the first
/// element in it, static plus (for a rank's slice) dynamic.
struct Place {
  Value base;
  int64_t offset = 0;
  Value dynamicOffset; // index, or null
};

/// A gradient bucket: the storage of the train.buffer `name` that
/// train-zero declared, which a pack (shards = 1) of the gradients is.
struct FlatBucket {
  RankedTensorType type;
  std::string name;
};

/// Where a value is computed: element `offset` of flat bucket `bucket`.
struct Destination { unsigned bucket; int64_t offset; };

/// The tensor-level facts the rewrite needs, computed on the block before
/// anything changes.
struct Analysis {
  llvm::DenseMap<Operation *, unsigned> position;
  /// The last op that reads a value, through the views of it.
  llvm::DenseMap<Value, unsigned> end;
  /// Updates computed in place on the state an operand reads, and the
  /// writes that this makes redundant.
  llvm::DenseSet<OpOperand *> inPlace;
  llvm::DenseSet<Operation *> elidedWrites;
  /// Reads that must copy: their state is written while they are live.
  llvm::DenseSet<Operation *> copyingReads;
  /// Gradient buckets, the packs that start them, and the gradients
  /// computed directly into one.
  SmallVector<FlatBucket> flat;
  llvm::DenseMap<Operation *, unsigned> flatPacks;
  llvm::DenseMap<Value, Destination> destination;
  /// Parts computed into their slot of a reduce-scatter's segment (pack,
  /// offset).
  llvm::DenseMap<Value, std::pair<Operation *, int64_t>> segmentSlot;
  /// An all-gather whose result is written to a replicated train.buffer
  /// receives into it (the start, by the buffer), and the value it sends
  /// is computed into the rank's slot of that buffer (by value) -- the
  /// collective then runs in place.
  llvm::DenseMap<Operation *, StringRef> gatherInto;
  llvm::DenseMap<Value, StringRef> rankSlot;
  /// A value computed straight into the whole storage of the tensor-level
  /// train.buffer, parameter or state its only use writes it to (the write
  /// disappears): stage 2's averaged gradient shard, a bf16 parameter.
  llvm::DenseMap<Value, StringRef> intoBuffer;
  /// Each state's accesses in this function, in block order: its reads and
  /// writes, and the updates whose updated operand reads it.
  llvm::StringMap<SmallVector<Operation *, 2>> accesses;

  /// The memory a symbol's accesses touch: the train.buffer a member
  /// belongs to (the buffer and all its members alias), else the symbol.
  llvm::StringMap<StringRef> aliasRoot;
  StringRef rootOf(StringRef name) const {
    auto it = aliasRoot.find(name);
    return it == aliasRoot.end() ? name : it->second;
  }

  Analysis(Block &block, SymbolTable &symbols) {
    if (auto module = block.getParentOp()->getParentOfType<ModuleOp>())
      for (auto buffer : module.getOps<BufferOp>())
        for (Attribute member : buffer.getMembers())
          aliasRoot[cast<FlatSymbolRefAttr>(member).getValue()] =
              buffer.getSymName();
    unsigned index = 0;
    for (Operation &op : block) {
      position[&op] = index++;
      if (auto read = dyn_cast<ReadOp>(op))
        accesses[rootOf(read.getName())].push_back(&op);
      else if (auto write = dyn_cast<WriteOp>(op))
        accesses[rootOf(write.getName())].push_back(&op);
      else if (isStateUpdate(&op))
        for (unsigned i : updatedOperands(&op))
          if (auto read = op.getOperand(i).getDefiningOp<ReadOp>())
            accesses[rootOf(read.getName())].push_back(&op);
    }
    findFlatLayout(block, symbols);
    findSegments(block);
    findInPlaceUpdates(block);
    computeLiveness(block);
    findInPlaceGathers(block, symbols);
    findWritesIntoBuffers(block, symbols);
    findCopyingReads(block);
  }

  static Value viewSource(Operation *op) {
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return reshape.getInput();
    if (auto unpack = dyn_cast<UnpackOp>(op))
      return unpack.getInput();
    if (auto slice = dyn_cast<shard::AllSliceOp>(op))
      return slice.getInput();
    if (auto wait = dyn_cast<WaitOp>(op))
      return wait.getFuture();
    // Evaluation's dropout (no step) is the identity.
    if (auto dropout = dyn_cast<DropoutOp>(op); dropout && !dropout.getStep())
      return dropout.getInput();
    return nullptr;
  }

private:
  /// The single use of `value`, or null.
  static Operation *onlyUser(Value value) {
    return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
  }

  /// The value to compute directly into a pack's slice for `input`: the
  /// input, or what the reshapes leading to it reshape, when each is used
  /// only on the way to the pack and its producer is a kernel of this
  /// block; null otherwise.
  Value placeable(Value input, Block &block) const {
    Value value = input;
    if (!value.hasOneUse() || destination.count(value) ||
        segmentSlot.count(value))
      return nullptr;
    while (auto reshape = value.getDefiningOp<ReshapeOp>()) {
      if (!reshape.getInput().hasOneUse())
        break;
      value = reshape.getInput();
    }
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getBlock() != &block || viewSource(producer) ||
        isa<ReadOp, PackOp, UnpackOp, LRScheduleOp, AllReduceStartOp,
            ReduceScatterStartOp, AllGatherStartOp>(producer) ||
        isStateUpdate(producer))
      return nullptr;
    return value;
  }

  /// The replicated tensor-level train.buffer `name` names, whose storage
  /// has `type`, or null.
  static BufferOp replicatedBuffer(SymbolTable &symbols, StringRef name,
                                   Type type) {
    auto buffer = symbols.lookup<BufferOp>(name);
    if (!buffer || buffer.getStorageType() != buffer.getTensorType() ||
        buffer.getTensorType() != type)
      return nullptr;
    return buffer;
  }

  /// Whether a read of `root` other than `except` is live at `at`.
  bool readLiveAt(StringRef root, unsigned at, Operation *except) const {
    auto it = accesses.find(root);
    if (it == accesses.end())
      return false;
    for (Operation *access : it->second) {
      auto read = dyn_cast<ReadOp>(access);
      if (!read || access == except || position.lookup(access) > at)
        continue;
      auto last = end.find(read.getResult());
      if (last != end.end() && last->second >= at)
        return true;
    }
    return false;
  }

  /// The write that makes a bucket's pack its gradient buffer: stage 1's
  /// write of the pack itself (also reduce-scattered), stage 0's write of
  /// its all-reduce, averaged in place or not at all; null otherwise.
  static WriteOp bucketWrite(PackOp pack) {
    if (auto start =
            dyn_cast_or_null<AllReduceStartOp>(onlyUser(pack.getResult()))) {
      auto wait = dyn_cast_or_null<WaitOp>(onlyUser(start.getResult()));
      Operation *next = wait ? onlyUser(wait.getResult()) : nullptr;
      if (next && !isa<WriteOp>(next) && next->getNumResults() == 1 &&
          (isa<FusedOp>(next) || isElementwise(next)) &&
          next->getResult(0).getType() == pack.getType())
        next = onlyUser(next->getResult(0)); // the averaging
      return dyn_cast_or_null<WriteOp>(next);
    }
    WriteOp write;
    bool scatters = false, other = false;
    for (Operation *user : pack.getResult().getUsers()) {
      if (auto w = dyn_cast<WriteOp>(user); w && !write)
        write = w;
      else if (isa<ReduceScatterStartOp>(user))
        scatters = true;
      else
        other = true;
    }
    return scatters && !other ? write : WriteOp();
  }

  /// The buckets train-zero declared: each pack whose
  /// bucketWrite names a replicated train.buffer that nothing touches
  /// before is that buffer, its gradients computed into their slices.
  void findFlatLayout(Block &block, SymbolTable &symbols) {
    for (Operation &op : block) {
      auto pack = dyn_cast<PackOp>(op);
      WriteOp write = pack ? bucketWrite(pack) : WriteOp();
      if (!write || !replicatedBuffer(symbols, write.getName(), pack.getType()))
        continue;
      auto &list = accesses[rootOf(write.getName())];
      if (list.empty() || list.front() != write.getOperation())
        continue;
      // The pack is the buffer, the all-reduce runs in place, and the
      // averaging is computed into the buffer: the write is a view.
      unsigned id = flat.size();
      elidedWrites.insert(write);
      if (Value value = write.getValue();
          value != pack.getResult() && !value.getDefiningOp<WaitOp>())
        destination[value] = {id, 0};
      int64_t offset = 0;
      for (Value input : pack.getInputs()) {
        if (Value value = placeable(input, block))
          destination[value] = {id, offset};
        offset += cast<RankedTensorType>(input.getType()).getNumElements();
      }
      flatPacks[pack] = id;
      flat.push_back({pack.getType(), write.getName().str()});
    }
  }

  /// The storage type of a tensor-level buffer, or of a parameter or state
  /// in no buffer; null otherwise.
  Type wholeStorageType(SymbolTable &symbols, StringRef name) const {
    if (auto buffer = symbols.lookup<BufferOp>(name))
      return buffer.getStorageType();
    if (rootOf(name) != name)
      return {};
    if (auto param = symbols.lookup<ParamOp>(name))
      return param.getStorageType();
    if (auto state = symbols.lookup<StateOp>(name))
      return state.getStorageType();
    return {};
  }

  /// A kernel's result whose only use is a write of the whole storage of a
  /// tensor-level buffer, or of a parameter or state in no buffer (the
  /// cast of an updated fp32 master into its bf16 parameter), when nothing
  /// reads that storage from the kernel on and nothing else accesses it in
  /// between.
  void findWritesIntoBuffers(Block &block, SymbolTable &symbols) {
    for (Operation &op : block) {
      auto write = dyn_cast<WriteOp>(op);
      if (!write || elidedWrites.contains(write))
        continue;
      Type storageType = wholeStorageType(symbols, write.getName());
      Value value = write.getValue();
      if (!storageType || storageType != value.getType() ||
          !value.hasOneUse() || placeable(value, block) != value ||
          rankSlot.count(value))
        continue;
      unsigned from = position.lookup(value.getDefiningOp());
      unsigned at = position.lookup(write);
      StringRef root = rootOf(write.getName());
      // An elementwise producer may read the buffer's whole storage as an
      // operand of its result's type, read by it alone: element i is read
      // before it is written (stage 2's sum of micro-batches).
      Operation *producer = value.getDefiningOp();
      Operation *own = nullptr;
      if (isa<FusedOp>(producer) || isElementwise(producer))
        for (Value operand : producer->getOperands())
          if (auto read = operand.getDefiningOp<ReadOp>();
              read && read.getName() == write.getName() &&
              operand.getType() == value.getType() && operand.hasOneUse())
            own = read;
      bool touched = readLiveAt(root, from, own);
      for (Operation *access : accesses[root]) {
        unsigned p = position.lookup(access);
        touched |= access != write.getOperation() && access != own &&
                   p >= from && p <= at;
      }
      if (touched)
        continue;
      intoBuffer[value] = write.getName();
      elidedWrites.insert(write);
    }
  }

  /// All-gather -> wait -> write to the parameter buffer (after liveness).
  void findInPlaceGathers(Block &block, SymbolTable &symbols) {
    for (Operation &op : block) {
      auto start = dyn_cast<AllGatherStartOp>(op);
      if (!start)
        continue;
      auto wait = dyn_cast_or_null<WaitOp>(onlyUser(start.getResult()));
      auto write = wait ? dyn_cast_or_null<WriteOp>(onlyUser(wait.getResult()))
                        : WriteOp();
      if (!write ||
          !replicatedBuffer(symbols, write.getName(), wait.getResult().getType()))
        continue;
      StringRef root = rootOf(write.getName());
      Value send = start.getOperand();
      // The send computed into the rank's slot: a kernel's result, or an
      // update in place on the rank's slice of the buffer it goes back to.
      Operation *producer = send.getDefiningOp();
      Operation *sliceRead = nullptr;
      bool placed = false;
      if (producer && isStateUpdate(producer) && send == producer->getResult(0)) {
        auto slice = producer->getOperand(0).getDefiningOp<shard::AllSliceOp>();
        auto read = slice ? slice.getInput().getDefiningOp<ReadOp>() : ReadOp();
        if (read && read.getName() == write.getName() &&
            producer->getOperand(0).hasOneUse() && slice.getInput().hasOneUse() &&
            send.hasOneUse()) {
          inPlace.insert(&producer->getOpOperand(0));
          sliceRead = read;
          placed = true;
        }
      } else if (send.hasOneUse() && placeable(send, block) == send) {
        rankSlot[send] = write.getName();
        placed = true;
      }
      if (!placed || readLiveAt(root, position.lookup(start), sliceRead)) {
        if (placed && !sliceRead)
          rankSlot.erase(send);
        if (placed && sliceRead)
          inPlace.erase(&producer->getOpOperand(0));
        continue;
      }
      gatherInto[start] = write.getName();
      elidedWrites.insert(write);
    }
  }

  /// Stages 2-3: the bucket a rank reduce-scatters (a pack in no buffer) is
  /// allocated when its first gradient is computed, and each gradient that
  /// is only packed is computed into its slot (no pack copy).
  void findSegments(Block &block) {
    for (Operation &op : block) {
      auto pack = dyn_cast<PackOp>(op);
      if (!pack || flatPacks.count(pack) ||
          !isa_and_nonnull<ReduceScatterStartOp>(onlyUser(pack.getResult())))
        continue;
      int64_t offset = 0;
      for (Value input : pack.getInputs()) {
        if (Value value = placeable(input, block))
          segmentSlot[value] = {pack, offset};
        offset += cast<RankedTensorType>(input.getType()).getNumElements();
      }
    }
  }

  void use(Value value, unsigned at) {
    auto [it, inserted] = end.try_emplace(value, at);
    if (!inserted)
      it->second = std::max(it->second, at);
  }

  void findInPlaceUpdates(Block &block) {
    for (Operation &op : block) {
      if (!isStateUpdate(&op))
        continue;
      for (unsigned i : updatedOperands(&op)) {
        auto read = op.getOperand(i).getDefiningOp<ReadOp>();
        if (!read || !op.getOperand(i).hasOneUse())
          continue;
        for (Operation *user : op.getResult(updateResultOf(i)).getUsers())
          if (auto write = dyn_cast<WriteOp>(user);
              write && write.getName() == read.getName()) {
            inPlace.insert(&op.getOpOperand(i));
            elidedWrites.insert(write);
          }
      }
    }
  }

  void computeLiveness(Block &block) {
    for (Operation &op : block) {
      unsigned at = position.lookup(&op);
      for (Value operand : op.getOperands())
        use(operand, at);
      // The input of a collective is read until its wait.
      if (auto wait = dyn_cast<WaitOp>(op))
        use(wait.getFuture().getDefiningOp()->getOperand(0), at);
    }
    // A view keeps its source alive; an update in place keeps the state
    // buffer it writes (the read) alive as long as its result.
    for (Operation &op : llvm::reverse(block)) {
      if (Value source = viewSource(&op)) {
        if (end.count(op.getResult(0)))
          use(source, end.lookup(op.getResult(0)));
        continue;
      }
      if (isStateUpdate(&op))
        for (unsigned i : updatedOperands(&op))
          if (inPlace.contains(&op.getOpOperand(i)) &&
              end.count(op.getResult(updateResultOf(i))))
            use(op.getOperand(i), end.lookup(op.getResult(updateResultOf(i))));
    }
  }

  /// Through the state's accesses only (a scan of the block from each
  /// read to its last use was quadratic in a large model's parameters).
  void findCopyingReads(Block &block) {
    for (Operation &op : block) {
      auto read = dyn_cast<ReadOp>(op);
      if (!read)
        continue;
      unsigned at = position.lookup(read);
      unsigned last = end.count(read.getResult()) ? end.lookup(read.getResult())
                                                  : at;
      for (Operation *next : accesses[rootOf(read.getName())]) {
        unsigned p = position.lookup(next);
        if (p <= at)
          continue;
        if (p >= last)
          break;
        // A write of the state, or an update in place of it through another
        // read.
        if (auto write = dyn_cast<WriteOp>(next);
            write && !elidedWrites.contains(write))
          copyingReads.insert(read);
        if (isStateUpdate(next))
          for (unsigned i : updatedOperands(next))
            if (inPlace.contains(&next->getOpOperand(i)))
              if (auto other = next->getOperand(i).getDefiningOp<ReadOp>();
                  other && other != read &&
                  rootOf(other.getName()) == rootOf(read.getName()))
                copyingReads.insert(read);
      }
    }
  }
};

/// The category a collective's buffers are counted in.
MemoryCategory collectiveCategory(Operation *start) {
  return isa<AllGatherStartOp>(start) ? MemoryCategory::gathered_parameters
                                      : MemoryCategory::gradient_buckets;
}

/// Elements of a collective's full buffer that are not padding: the real
/// elements of the tensors packed into its input (reduce), or unpacked from
/// its result (gather), else all of them.
int64_t payloadOf(Operation *start, int64_t full) {
  if (auto pack = start->getOperand(0).getDefiningOp<PackOp>();
      pack && !isa<AllGatherStartOp>(start)) {
    int64_t real = 0;
    for (Value input : pack.getInputs())
      real += tensorOf(input.getType()).getNumElements();
    return real;
  }
  if (isa<AllGatherStartOp>(start))
    for (Operation *wait : start->getResult(0).getUsers())
      for (Operation *user : wait->getResult(0).getUsers())
        if (auto unpack = dyn_cast<UnpackOp>(user)) {
          int64_t real = 0;
          for (Value part : unpack.getResults())
            real += tensorOf(part.getType()).getNumElements();
          return real;
        }
  return full;
}

class FunctionBufferizer {
public:
  FunctionBufferizer(func::FuncOp func, SymbolTable &symbols)
      : func(func), symbols(symbols), builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult rewrite(Operation &op);
  void rewriteBucket(PackOp pack);
  void rewriteCollective(Operation &op);

  Location loc() const { return current->getLoc(); }

  Value alloc(RankedTensorType type, MemoryCategory category) {
    auto op = memref::AllocOp::create(builder, loc(), memrefOf(type));
    trainDialect(op).getCategoryAttrHelper().setAttr(
        op, MemoryCategoryAttr::get(builder.getContext(), category));
    places[op.getResult()] = {op.getResult(), 0, nullptr};
    return op.getResult();
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
      SmallVector<int64_t> strides = rowMajorStrides(type.getShape());
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
      SmallVector<OpFoldResult> sizes, strideValues;
      for (int64_t size : type.getShape())
        sizes.push_back(builder.getIndexAttr(size));
      for (int64_t stride : strides)
        strideValues.push_back(builder.getIndexAttr(stride));
      result = memref::ReinterpretCastOp::create(builder, loc(), resultType,
                                                 to.base, offsetValue, sizes,
                                                 strideValues);
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
    YieldOp::create(builder, op->getLoc(), clone->getResults());
  }

  Value storage(StringRef name, RankedTensorType type) {
    auto op = StorageOp::create(builder, loc(), memrefOf(type), name);
    places[op.getResult()] = {op.getResult(), 0, nullptr};
    return op.getResult();
  }

  /// The storage of flat bucket `id` (its train.buffer, declared before
  /// the function by run()).
  Value bucketStorage(unsigned id) {
    auto [it, inserted] = bucketValues.try_emplace(id, Value());
    if (inserted)
      it->second = storage(analysis->flat[id].name, analysis->flat[id].type);
    return it->second;
  }

  /// The buffer of a reduce-scatter's segment (the pack `pack`), allocated when
  /// its first part is computed into it.
  Value segmentBuffer(Operation *pack) {
    auto [it, inserted] = segments.try_emplace(pack, Value());
    if (inserted)
      it->second = alloc(tensorOf(pack->getResult(0).getType()),
                         collectiveCategory(*pack->getUsers().begin()));
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
  llvm::DenseMap<unsigned, Value> bucketValues;
  llvm::DenseMap<Operation *, Value> segments;
  std::unique_ptr<Analysis> analysis;
  Block *newBlock = nullptr;
  Operation *current = nullptr;
  Value rankValue;
  llvm::DenseMap<Value, Value> buffers;
  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, Value> requests; // future -> request
  llvm::DenseMap<Value, Value> received; // future -> recv buffer
};

LogicalResult FunctionBufferizer::run() {
  Block &block = func.getBody().front();
  analysis = std::make_unique<Analysis>(block, symbols);

  // The new body, owned here until it replaces the old: a failure frees it.
  auto owned = std::make_unique<Block>();
  newBlock = owned.get();
  for (BlockArgument arg : block.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitOpError("argument #")
             << arg.getArgNumber() << " of type " << arg.getType()
             << " is not a tensor; train-bufferize takes tensor arguments";
    Value buffer = newBlock->addArgument(memrefOf(type), arg.getLoc());
    buffers[arg] = buffer;
    places[buffer] = {buffer, 0, nullptr};
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
  auto id = analysis->flatPacks.find(pack);
  Value bucket = id != analysis->flatPacks.end() ? bucketStorage(id->second)
                                                 : segments.lookup(pack);
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
  const Analysis &facts = *analysis;
  RankedTensorType type = tensorOf(op.getResult(0).getType());
  // A bucket's all-reduce runs in place; a reduce-scatter of a bucket or of
  // a segment computed in place leaves the rank's shard at its slot of the
  // buffer; an all-gather into the parameter buffer receives there (its
  // send is the rank's slot).
  auto pack = op.getOperand(0).getDefiningOp<PackOp>();
  bool inPlace = pack && (facts.flatPacks.count(pack) || segments.count(pack));
  Value recv;
  if (inPlace && isa<AllReduceStartOp>(op))
    recv = bufferOf(op.getOperand(0));
  else if (inPlace && isa<ReduceScatterStartOp>(op))
    recv = view(bufferOf(op.getOperand(0)), type, 0,
                rankOffset(type.getNumElements()));
  else if (auto into = facts.gatherInto.find(&op);
           into != facts.gatherInto.end())
    recv = storage(into->second, type);
  else
    recv = alloc(type, collectiveCategory(&op));
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
  const Analysis &facts = *analysis;
  auto category = [&](Operation *producer) {
    if (auto pack = dyn_cast<PackOp>(producer))
      for (Operation *user : pack.getResult().getUsers())
        if (isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp>(user))
          return collectiveCategory(user);
    return MemoryCategory::activations;
  };

  if (isa<func::ReturnOp>(op)) {
    func::ReturnOp::create(builder, loc(), buffersOf(op.getOperands()));
    return success();
  }
  if (auto read = dyn_cast<ReadOp>(op)) {
    Value buffer = storage(read.getName(), read.getType());
    if (facts.copyingReads.contains(read)) {
      Value state = buffer;
      buffer = alloc(read.getType(), MemoryCategory::activations);
      memref::CopyOp::create(builder, loc(), state, buffer);
    }
    buffers[read.getResult()] = buffer;
    return success();
  }
  if (auto write = dyn_cast<WriteOp>(op)) {
    if (!facts.elidedWrites.contains(write))
      memref::CopyOp::create(
          builder, loc(), bufferOf(write.getValue()),
          storage(write.getName(), tensorOf(write.getValue().getType())));
    return success();
  }
  if (Value source = Analysis::viewSource(&op)) {
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
      pack && (facts.flatPacks.count(pack) || segments.count(pack))) {
    rewriteBucket(pack);
    return success();
  }
  if (isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp>(op)) {
    rewriteCollective(op);
    return success();
  }
  if (isa<ReleaseOp>(op))
    return success(); // the end of a buffer's life is train-deallocate's
  if (isStateUpdate(&op)) {
    // Each state result is its state (in place) or a copy of the operand.
    SmallVector<Value> ins = buffersOf(op.getOperands()), outs;
    for (unsigned i : updatedOperands(&op)) {
      Value target = ins[i];
      if (!facts.inPlace.contains(&op.getOpOperand(i))) {
        target = alloc(tensorOf(op.getOperand(i).getType()),
                       MemoryCategory::activations);
        memref::CopyOp::create(builder, loc(), ins[i], target);
        ins[i] = target;
      }
      outs.push_back(target);
      buffers[op.getResult(updateResultOf(i))] = target;
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
    // Computed into its flat bucket, into its slot of a reduce-scatter's
    // segment, or into a new buffer.
    auto dest = facts.destination.find(result);
    auto slot = facts.segmentSlot.find(result);
    auto mine = facts.rankSlot.find(result);
    auto whole = facts.intoBuffer.find(result);
    if (whole != facts.intoBuffer.end()) {
      outs.push_back(storage(whole->second, tensorOf(result.getType())));
    } else if (mine != facts.rankSlot.end()) {
      RankedTensorType type = tensorOf(result.getType());
      Value buffer = storage(
          mine->second,
          symbols.lookup<BufferOp>(mine->second).getTensorType());
      outs.push_back(view(buffer, type, 0, rankOffset(type.getNumElements())));
    } else if (dest != facts.destination.end())
      outs.push_back(view(bucketStorage(dest->second.bucket),
                          tensorOf(result.getType()), dest->second.offset,
                          nullptr));
    else if (slot != facts.segmentSlot.end())
      outs.push_back(view(segmentBuffer(slot->second.first),
                          tensorOf(result.getType()), slot->second.second,
                          nullptr));
    else
      outs.push_back(alloc(tensorOf(result.getType()), category(&op)));
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
