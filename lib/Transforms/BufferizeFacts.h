//===- BufferizeFacts.h - what the bufferization passes share --*- C++ -*-===//
//
// The decisions train-emplace and train-elide-copies write into the tensor
// IR, which train-bufferize-ops executes (Passes.td, docs/backend.md), and
// the facts about a step's block the two deciding passes both compute.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_BUFFERIZEFACTS_H
#define ZEROC_LIB_TRANSFORMS_BUFFERIZEFACTS_H

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc::bufferize {

/// train-emplace: the operands computed in place (array<i64: ...>). On a
/// train.pack, the inputs computed into their slots; on a train.write, the
/// value already in the storage (the write disappears); on an all-gather,
/// the send computed into the rank's slot of its train.into buffer; on an
/// optimizer update, the states updated in place.
inline constexpr llvm::StringLiteral kEmplaceAttrName = "train.emplace";
/// train-emplace: a train.pack that is the storage of a gradient bucket's
/// train.buffer, or an all-gather that receives into its buffer (@name).
inline constexpr llvm::StringLiteral kIntoAttrName = "train.into";
/// train-elide-copies: a train.read that copies its state (written while
/// the read is live); any other read is the state's storage.
inline constexpr llvm::StringLiteral kCopyAttrName = "train.copy";

/// Whether train-emplace placed operand `operand` of `op`.
inline bool isEmplaced(mlir::Operation *op, unsigned operand) {
  auto list = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kEmplaceAttrName);
  return list && llvm::is_contained(list.asArrayRef(), operand);
}

inline bool isStateUpdate(mlir::Operation *op) {
  return mlir::isa<train::AdamWUpdateOp, train::SGDUpdateOp>(op);
}

/// The operands of an update that are state (the result it becomes is
/// `updateResultOf`); operand 1 is the gradient.
inline llvm::SmallVector<unsigned> updatedOperands(mlir::Operation *op) {
  if (mlir::isa<train::AdamWUpdateOp>(op))
    return {0, 2, 3};
  return {0, 2};
}
inline unsigned updateResultOf(unsigned operand) {
  return operand == 0 ? 0 : operand - 1;
}

/// The value whose buffer `op`'s result is a view of, or null.
inline mlir::Value viewSource(mlir::Operation *op) {
  using namespace train;
  if (auto reshape = mlir::dyn_cast<ReshapeOp>(op))
    return reshape.getInput();
  if (auto unpack = mlir::dyn_cast<UnpackOp>(op))
    return unpack.getInput();
  if (auto slice = mlir::dyn_cast<mlir::shard::AllSliceOp>(op))
    return slice.getInput();
  if (auto wait = mlir::dyn_cast<WaitOp>(op))
    return wait.getFuture();
  // Evaluation's dropout (no step) is the identity.
  if (auto dropout = mlir::dyn_cast<DropoutOp>(op); dropout && !dropout.getStep())
    return dropout.getInput();
  return nullptr;
}

/// The single use of `value`, or null.
inline mlir::Operation *onlyUser(mlir::Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// Whether `op` becomes a train.kernel that could compute its results into
/// any buffer: no view, read, pack, unpack, schedule, collective or update.
inline bool computedByKernel(mlir::Operation *op) {
  using namespace train;
  return op && !viewSource(op) && !isStateUpdate(op) &&
         !mlir::isa<ReadOp, PackOp, UnpackOp, LRScheduleOp, AllReduceStartOp,
                    ReduceScatterStartOp, AllGatherStartOp>(op);
}

/// The value computed into a slot for operand `input`: it, or what the
/// reshapes leading to it reshape, each used only on the way.
inline mlir::Value throughReshapes(mlir::Value input) {
  mlir::Value value = input;
  while (auto reshape = value.getDefiningOp<train::ReshapeOp>()) {
    if (!reshape.getInput().hasOneUse())
      break;
    value = reshape.getInput();
  }
  return value;
}

/// The replicated tensor-level train.buffer `name` names, whose storage
/// has `type`, or null.
inline train::BufferOp replicatedBuffer(mlir::SymbolTable &symbols,
                                        llvm::StringRef name, mlir::Type type) {
  auto buffer = symbols.lookup<train::BufferOp>(name);
  if (!buffer || buffer.getStorageType() != buffer.getTensorType() ||
      buffer.getTensorType() != type)
    return nullptr;
  return buffer;
}

/// A function's block: each op's position, the accesses of each memory
/// (the train.buffer a member belongs to, else the symbol), and liveness.
struct BlockFacts {
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  /// The last op that reads a value, through the views of it.
  llvm::DenseMap<mlir::Value, unsigned> end;
  /// Each memory's reads and writes and the updates whose updated operand
  /// reads it, in block order.
  llvm::StringMap<llvm::SmallVector<mlir::Operation *, 2>> accesses;
  llvm::StringMap<llvm::StringRef> aliasRoot;

  llvm::StringRef rootOf(llvm::StringRef name) const {
    auto it = aliasRoot.find(name);
    return it == aliasRoot.end() ? name : it->second;
  }

  explicit BlockFacts(mlir::Block &block) {
    using namespace train;
    if (auto module = block.getParentOp()->getParentOfType<mlir::ModuleOp>())
      for (auto buffer : module.getOps<BufferOp>())
        for (mlir::Attribute member : buffer.getMembers())
          aliasRoot[mlir::cast<mlir::FlatSymbolRefAttr>(member).getValue()] =
              buffer.getSymName();
    unsigned index = 0;
    for (mlir::Operation &op : block) {
      position[&op] = index++;
      if (auto read = mlir::dyn_cast<ReadOp>(op))
        accesses[rootOf(read.getName())].push_back(&op);
      else if (auto write = mlir::dyn_cast<WriteOp>(op))
        accesses[rootOf(write.getName())].push_back(&op);
      else if (isStateUpdate(&op))
        for (unsigned i : updatedOperands(&op))
          if (auto read = op.getOperand(i).getDefiningOp<ReadOp>())
            accesses[rootOf(read.getName())].push_back(&op);
    }
  }

  void use(mlir::Value value, unsigned at) {
    auto [it, inserted] = end.try_emplace(value, at);
    if (!inserted)
      it->second = std::max(it->second, at);
  }

  /// `end`, where an update in place (`inPlace` of its operand) keeps the
  /// state buffer it writes alive as long as its result.
  void computeLiveness(mlir::Block &block,
                       llvm::function_ref<bool(mlir::OpOperand &)> inPlace) {
    for (mlir::Operation &op : block) {
      unsigned at = position.lookup(&op);
      for (mlir::Value operand : op.getOperands())
        use(operand, at);
      // The input of a collective is read until its wait.
      if (auto wait = mlir::dyn_cast<train::WaitOp>(op))
        use(wait.getFuture().getDefiningOp()->getOperand(0), at);
    }
    for (mlir::Operation &op : llvm::reverse(block)) {
      if (mlir::Value source = viewSource(&op)) {
        if (end.count(op.getResult(0)))
          use(source, end.lookup(op.getResult(0)));
        continue;
      }
      if (isStateUpdate(&op))
        for (unsigned i : updatedOperands(&op))
          if (inPlace(op.getOpOperand(i)) &&
              end.count(op.getResult(updateResultOf(i))))
            use(op.getOperand(i), end.lookup(op.getResult(updateResultOf(i))));
    }
  }
};

} // namespace zeroc::bufferize

#endif // ZEROC_LIB_TRANSFORMS_BUFFERIZEFACTS_H
