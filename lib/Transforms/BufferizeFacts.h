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

/// Whether train-emplace placed operand `operand` of `op` (train.emplace,
/// TrainDialect.h).
inline bool isEmplaced(mlir::Operation *op, unsigned operand) {
  auto list =
      op->getAttrOfType<mlir::DenseI64ArrayAttr>(train::kEmplaceAttrName);
  return list && llvm::is_contained(list.asArrayRef(), operand);
}

/// Records that train-emplace places operand `operand` of `op`, the list
/// kept in operand order.
inline void setEmplaced(mlir::Operation *op, int64_t operand) {
  llvm::SmallVector<int64_t> list = {operand};
  if (auto old =
          op->getAttrOfType<mlir::DenseI64ArrayAttr>(train::kEmplaceAttrName))
    llvm::append_range(list, old.asArrayRef());
  llvm::sort(list);
  list.erase(llvm::unique(list), list.end());
  op->setAttr(train::kEmplaceAttrName,
              mlir::DenseI64ArrayAttr::get(op->getContext(), list));
}

/// The value whose buffer `op`'s result is a view of (the train ops say,
/// BufferViewOpInterface; an all-slice is the rank's slice), or null.
inline mlir::Value viewSource(mlir::Operation *op) {
  if (auto view = mlir::dyn_cast<train::BufferViewOpInterface>(op))
    return view.getViewSource();
  if (auto slice = mlir::dyn_cast<mlir::shard::AllSliceOp>(op))
    return slice.getInput();
  return nullptr;
}

/// The single use of `value`, or null.
inline mlir::Operation *onlyUser(mlir::Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// Whether `op`, the producer of a tensor (a collective's result is a
/// future), becomes a train.kernel that could compute its results into any
/// buffer: no view (an unpack is one), read, pack, schedule or update.
inline bool computedByKernel(mlir::Operation *op) {
  using namespace train;
  return op && !viewSource(op) &&
         !mlir::isa<StateUpdateOpInterface, ReadOp, PackOp, LRScheduleOp>(op);
}

/// The value computed into a slot for operand `value`: it, or what the
/// reshapes leading to it reshape, each used only on the way.
inline mlir::Value throughReshapes(mlir::Value value) {
  while (auto reshape = value.getDefiningOp<train::ReshapeOp>()) {
    if (!reshape.getInput().hasOneUse())
      break;
    value = reshape.getInput();
  }
  return value;
}

/// Whether `name` names a replicated tensor-level train.buffer whose
/// storage has `type`.
inline bool isReplicatedBuffer(mlir::SymbolTable &symbols, llvm::StringRef name,
                               mlir::Type type) {
  auto buffer = symbols.lookup<train::BufferOp>(name);
  return buffer && buffer.getStorageType() == type &&
         buffer.getTensorType() == type;
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
  llvm::DenseMap<llvm::StringRef, llvm::StringRef> aliasRoot;

  llvm::StringRef rootOf(llvm::StringRef name) const {
    return aliasRoot.lookup_or(name, name);
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
      else if (auto update = mlir::dyn_cast<StateUpdateOpInterface>(op))
        for (unsigned i : update.getUpdatedOperands())
          if (auto read = op.getOperand(i).getDefiningOp<ReadOp>())
            accesses[rootOf(read.getName())].push_back(&op);
    }
  }

  void use(mlir::Value value, unsigned at) {
    end[value] = std::max(end.lookup(value), at);
  }

  /// `end`, where an update in place (train.emplace) keeps the state
  /// buffer it writes alive as long as its result.
  void computeLiveness(mlir::Block &block) {
    for (mlir::Operation &op : block) {
      unsigned at = position.lookup(&op);
      for (mlir::Value operand : op.getOperands())
        use(operand, at);
      // The input of a collective is read until its wait.
      if (auto wait = mlir::dyn_cast<train::WaitOp>(op))
        use(wait.getFuture().getDefiningOp()->getOperand(0), at);
    }
    // A view's source lives as long as any of its results (an unpack has
    // one per member); an unused result's end, 0, changes nothing.
    for (mlir::Operation &op : llvm::reverse(block)) {
      if (mlir::Value source = viewSource(&op))
        for (mlir::Value result : op.getResults())
          use(source, end.lookup(result));
      else if (auto update = mlir::dyn_cast<train::StateUpdateOpInterface>(op))
        for (unsigned i : update.getUpdatedOperands())
          if (isEmplaced(&op, i))
            use(op.getOperand(i), end.lookup(update.getUpdatedResult(i)));
    }
  }
};

} // namespace zeroc::bufferize

#endif // ZEROC_LIB_TRANSFORMS_BUFFERIZEFACTS_H
