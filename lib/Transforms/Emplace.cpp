//===- Emplace.cpp - producers computed into their buffers' slices -------===//
//
// train-emplace (Passes.td, docs/backend.md): which values of a step are
// computed where they end up rather than into a new buffer that is then
// copied, written as train.emplace and train.into (BufferizeFacts.h).
//
//===----------------------------------------------------------------------===//

#include "BufferizeFacts.h"

#include "zeroc/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINEMPLACE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;
using namespace zeroc::bufferize;

namespace {

/// The decisions for a function's block, each written on the ops it
/// concerns (train.emplace, train.into) when made; later ones read it.
struct Emplacer : BlockFacts {
  Emplacer(Block &block, SymbolTable &symbols)
      : BlockFacts(block), symbols(symbols) {
    // The decisions are this run's alone: any the ops already carry (an
    // earlier run, hand-written IR) are replaced, not added to (setEmplaced
    // merges, and the liveness reads the updates' train.emplace).
    for (Operation &op : block) {
      op.removeAttr(kEmplaceAttrName);
      op.removeAttr(kIntoAttrName);
    }
    findPackBuffers(block);
    findInPlaceUpdates(block);
    computeLiveness(block);
    findInPlaceGathers(block);
    findWritesIntoBuffers(block);
  }

  SymbolTable &symbols;

  /// The value to compute directly into a pack's slice for `input`: it, or
  /// what the reshapes leading to it reshape, each used only on the way,
  /// when a kernel (of this block, a step's one) produces it; else null.
  static Value placeable(Value input) {
    Value value = throughReshapes(input);
    if (!input.hasOneUse() || !computedByKernel(value.getDefiningOp()))
      return nullptr;
    return value;
  }

  /// Whether a read of `root` other than `except` is live at `at`.
  bool readLiveAt(StringRef root, unsigned at, Operation *except) {
    return llvm::any_of(accesses[root], [&](Operation *access) {
      auto read = dyn_cast<ReadOp>(access);
      return read && access != except && position.lookup(access) <= at &&
             end.lookup(read.getResult()) >= at;
    });
  }

  /// The write that makes a bucket's pack its gradient buffer: stage 1's
  /// write of the pack itself (also reduce-scattered), stage 0's write of
  /// its all-reduce, averaged in place or not at all; null otherwise.
  static WriteOp bucketWrite(PackOp pack) {
    if (auto start =
            dyn_cast_or_null<AllReduceStartOp>(onlyUser(pack.getResult()))) {
      auto wait = dyn_cast_or_null<WaitOp>(onlyUser(start.getResult()));
      Operation *next = wait ? onlyUser(wait.getResult()) : nullptr;
      if (next && next->getNumResults() == 1 &&
          (isa<FusedOp>(next) || isElementwise(next)) &&
          next->getResult(0).getType() == pack.getType())
        next = onlyUser(next->getResult(0)); // the averaging
      return dyn_cast_or_null<WriteOp>(next);
    }
    auto users = pack.getResult().getUsers();
    if (llvm::count_if(users, llvm::IsaPred<WriteOp>) != 1 ||
        llvm::none_of(users, llvm::IsaPred<ReduceScatterStartOp>) ||
        !llvm::all_of(users, llvm::IsaPred<WriteOp, ReduceScatterStartOp>))
      return {};
    return cast<WriteOp>(*llvm::find_if(users, llvm::IsaPred<WriteOp>));
  }

  /// The packs that are buffers, their inputs computed into their slots: a
  /// bucket train-zero declared (a pack whose bucketWrite names a replicated
  /// train.buffer nothing touches before) and, at stages 2-3, the segment a
  /// rank reduce-scatters (allocated when its first gradient is computed).
  void findPackBuffers(Block &block) {
    for (auto pack : block.getOps<PackOp>()) {
      WriteOp write = bucketWrite(pack);
      bool bucket =
          write &&
          isReplicatedBuffer(symbols, write.getName(), pack.getType()) &&
          accesses[rootOf(write.getName())].front() == write;
      if (bucket) {
        // The pack is the buffer, the all-reduce runs in place, and the
        // averaging is computed into the buffer: the write is a view.
        setEmplaced(write, 0);
        pack->setAttr(kIntoAttrName, write.getNameAttr());
      } else if (!isa_and_nonnull<ReduceScatterStartOp>(
                     onlyUser(pack.getResult()))) {
        continue;
      }
      for (auto [index, input] : llvm::enumerate(pack.getInputs()))
        if (placeable(input))
          setEmplaced(pack, index);
    }
  }

  /// The storage type of a tensor-level buffer, or of a parameter or state
  /// in no buffer; null otherwise.
  Type wholeStorageType(StringRef name) const {
    Operation *symbol = symbols.lookup(name);
    if (!symbol || (!isa<BufferOp>(symbol) && rootOf(name) != name))
      return {};
    return TypeSwitch<Operation *, Type>(symbol)
        .Case<BufferOp, ParamOp, StateOp>(
            [](auto op) -> Type { return op.getStorageType(); })
        .Default(Type());
  }

  /// A kernel's result whose one use writes the whole storage of a
  /// train.buffer, or of a parameter or state in none (an updated fp32
  /// master cast to its bf16 parameter), when nothing reads that storage
  /// from the kernel on and nothing else accesses it in between.
  void findWritesIntoBuffers(Block &block) {
    for (auto write : block.getOps<WriteOp>()) {
      if (isEmplaced(write, 0))
        continue;
      Value value = write.getValue();
      if (wholeStorageType(write.getName()) != value.getType() ||
          placeable(value) != value)
        continue;
      Operation *producer = value.getDefiningOp();
      unsigned from = position.lookup(producer);
      unsigned at = position.lookup(write);
      StringRef root = rootOf(write.getName());
      // An elementwise producer may read the buffer's whole storage as an
      // operand of its result's type, read by it alone: element i is read
      // before it is written (stage 2's sum of micro-batches).
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
      if (!touched)
        setEmplaced(write, 0);
    }
  }

  /// All-gather -> wait -> write to the parameter buffer (after liveness).
  void findInPlaceGathers(Block &block) {
    for (auto start : block.getOps<AllGatherStartOp>()) {
      auto wait = dyn_cast_or_null<WaitOp>(onlyUser(start.getResult()));
      auto write = wait ? dyn_cast_or_null<WriteOp>(onlyUser(wait.getResult()))
                        : WriteOp();
      if (!write || !isReplicatedBuffer(symbols, write.getName(),
                                        wait.getResult().getType()))
        continue;
      Value send = start.getOperand();
      // The send computed into the rank's slot: a kernel's result, or an
      // update in place on the rank's slice of the buffer it goes back to.
      Operation *producer = send.getDefiningOp();
      ReadOp sliceRead;
      if (isa_and_nonnull<StateUpdateOpInterface>(producer) &&
          send == producer->getResult(0)) {
        auto slice = producer->getOperand(0).getDefiningOp<shard::AllSliceOp>();
        sliceRead = slice ? slice.getInput().getDefiningOp<ReadOp>() : ReadOp();
        if (!sliceRead || sliceRead.getName() != write.getName() ||
            !producer->getOperand(0).hasOneUse() ||
            !slice.getInput().hasOneUse() || !send.hasOneUse())
          continue;
      } else if (placeable(send) != send) {
        continue;
      }
      if (readLiveAt(rootOf(write.getName()), position.lookup(start),
                     sliceRead))
        continue;
      setEmplaced(sliceRead ? producer : start.getOperation(), 0);
      start->setAttr(kIntoAttrName, write.getNameAttr());
      setEmplaced(write, 0);
    }
  }

  void findInPlaceUpdates(Block &block) {
    for (auto update : block.getOps<StateUpdateOpInterface>())
      for (unsigned i : update.getUpdatedOperands()) {
        Value state = update->getOperand(i);
        auto read = state.getDefiningOp<ReadOp>();
        if (!read || !state.hasOneUse())
          continue;
        for (Operation *user : update.getUpdatedResult(i).getUsers())
          if (auto write = dyn_cast<WriteOp>(user);
              write && write.getName() == read.getName()) {
            setEmplaced(update, i);
            setEmplaced(write, 0);
          }
      }
  }
};

struct TrainEmplacePass : zeroc::impl::TrainEmplaceBase<TrainEmplacePass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          !trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
        Emplacer(func.getBody().front(), symbols);
  }
};

} // namespace
