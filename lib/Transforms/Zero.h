//===- Zero.h - what the passes of train-zero share -------------*- C++ -*-===//
//
// train-zero's passes (Passes.td) write their decisions into the IR for the
// next; the later passes read them back through the helpers below.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_ZERO_H
#define ZEROC_LIB_TRANSFORMS_ZERO_H

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace zeroc {

/// The 1-D grid train-shard-states declares.
constexpr llvm::StringLiteral kGrid = "dp";

/// @train_step as train-optimizer writes it: the parameters of
/// train.gradients, the gradient each one's squared norm reads, and the
/// optimizer section's first op (its train.lr_schedule); and the function
/// marked train.forward, or null.
struct TrainStep {
  mlir::func::FuncOp func, forward;
  train::OptimizerOp optimizer;
  llvm::SmallVector<train::ParamOp> params;
  llvm::SmallVector<mlir::Value> grads;
  mlir::Operation *optimizerStart = nullptr;
};

/// Finds and checks @train_step, reporting what is missing.
mlir::FailureOr<TrainStep> findTrainStep(mlir::ModuleOp module,
                                         mlir::SymbolTable &symbols);

/// A bucket as train-shard-states lays it out: its members end to end in
/// buffers `@zero.flat<k>.<kind>` of `size` elements, `shard` per rank.
struct FlatBucket {
  std::string name; // zero.flat<k>
  llvm::SmallVector<train::ParamOp> members;
  llvm::SmallVector<int64_t> offsets, numels;
  int64_t shard = 0; // the whole buffer at stage 0
  int64_t size = 0;  // N shards, or (stage 0) the members
  mlir::Type element;

  /// Elements after the last member.
  int64_t padding() const { return size - (offsets.back() + numels.back()); }
  /// The bucket's buffer of `kind` (`params`, `grads`, `master`, or a
  /// moment's state kind).
  std::string buffer(llvm::StringRef kind) const {
    return name + "." + kind.str();
  }
};

/// What train-shard-states decided for `step`: `train.zero_stage`,
/// `train.world_size` and the buckets of its parameter buffers.
struct Partition {
  int64_t stage = 0, worldSize = 1;
  llvm::SmallVector<FlatBucket> buckets;
  llvm::StringMap<unsigned> bucketOf; // by parameter name
  TrainStep step;
};

/// Reads train-shard-states' decisions and finds @train_step, naming `pass`
/// in the error when the decisions are missing.
mlir::FailureOr<Partition> readPartition(mlir::ModuleOp module,
                                         mlir::SymbolTable &symbols,
                                         llvm::StringRef pass);

/// Upstream shard collectives of `flat` on the 1-D grid @dp of `ranks`
/// ranks, over dimension 0, built at `tb`.
mlir::Value allReduce(train::TrainBuilder &tb, mlir::Value flat);
mlir::Value reduceScatter(train::TrainBuilder &tb, mlir::Value flat,
                          int64_t ranks);
mlir::Value allGather(train::TrainBuilder &tb, mlir::Value flat, int64_t ranks);
mlir::Value allSlice(train::TrainBuilder &tb, mlir::Value flat, int64_t ranks);
/// zeroc's side-effecting gather, which CSE cannot merge with another.
mlir::Value gatherStart(train::TrainBuilder &tb, mlir::Value flat,
                        int64_t ranks);
/// A scalar summed (averaged: the loss) over ranks, through a 1-element
/// buffer (sumScalar as globalizeTargetCounts' sumOverRanks).
mlir::Value sumScalar(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value scalar);
mlir::Value averageScalar(train::TrainBuilder &tb, mlir::Value scalar,
                          int64_t ranks);

/// The micro-batch contributions of a value that train-accumulate summed
/// (a chain of `train.add` marked `train.accumulate`, the running total on
/// the left), in micro-batch order; just `value` without accumulation.
llvm::SmallVector<mlir::Value> microBatchParts(mlir::Value value);

/// Erases the accumulation adds of `value` that nothing reads any more.
void eraseDeadAccumulation(mlir::Value value);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_ZERO_H
