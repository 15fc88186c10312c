//===- OptimizerEmitter.h - the optimizer step, full or sharded -*- C++ -*-===//
//
// Both train-optimizer (one rank, full tensors) and train-zero (a rank's
// shards) write the same update math; they differ only in where each
// parameter's fp32 value comes from and where its update goes, which an
// UpdateLayout decides.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_OPTIMIZEREMITTER_H
#define ZEROC_LIB_TRANSFORMS_OPTIMIZEREMITTER_H

#include "mlir/IR/SymbolTable.h"
#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

namespace zeroc {

/// Where the optimizer finds and leaves each parameter's values.
class UpdateLayout {
public:
  virtual ~UpdateLayout() = default;
  /// The global squared gradient norm from this rank's partial sum.
  virtual mlir::Value combineSquaredNorm(train::TrainBuilder &tb,
                                         mlir::Value partial) {
    return partial;
  }
  /// The f32 value the update starts from: the master copy `master` (a
  /// train.state, or the parameter itself when it is f32).
  virtual mlir::Value loadMaster(train::TrainBuilder &tb, train::ParamOp param,
                                 mlir::Operation *master) = 0;
  /// Stores the updated f32 value.
  virtual void storeUpdated(train::TrainBuilder &tb, train::ParamOp param,
                            mlir::Operation *master, mlir::Value updated) = 0;
  /// Runs once after every parameter is updated.
  virtual void finish(train::TrainBuilder &tb) {}
};

/// One rank with full tensors: read and write the master (and the rounded
/// parameter when it is not f32).
class FullLayout : public UpdateLayout {
public:
  mlir::Value loadMaster(train::TrainBuilder &tb, train::ParamOp param,
                         mlir::Operation *master) override;
  void storeUpdated(train::TrainBuilder &tb, train::ParamOp param,
                    mlir::Operation *master, mlir::Value updated) override;
};

/// The gradient the optimizer applies to `param`: the full gradient, or this
/// rank's shard of it.
struct ParamGradient {
  train::ParamOp param;
  mlir::Value grad;
};

/// Symbol of `param`'s state of `kind`: `@<param>.<kind>`.
std::string stateName(train::ParamOp param, train::StateKind kind);

/// The train.state of `kind` for `param`, declared after the parameter's
/// other state if it does not exist yet (f32, the parameter's shape; `grad`
/// takes the parameter's element type). `symbols` is the module's symbol
/// table: the look-up is constant time, and a new state is entered in it.
train::StateOp getOrDeclareState(mlir::OpBuilder &builder,
                                 mlir::SymbolTable &symbols,
                                 train::ParamOp param, train::StateKind kind);

/// The op holding `param`'s fp32 master value: its `master` state when the
/// parameter is not f32 (declared if needed), else the parameter itself.
mlir::Operation *getOrDeclareMaster(mlir::OpBuilder &builder,
                                    mlir::SymbolTable &symbols,
                                    train::ParamOp param);

/// The scalars every update of a step reads: the learning rate, the global
/// gradient norm (before clipping) and the clip coefficient (null without
/// clipping).
struct StepScalars {
  mlir::Value lr, gradNorm, clip;
};

/// Emits, at the builder's insertion point, the step's learning rate, the
/// squared norm of `grads` (this rank's part of every gradient, combined
/// over ranks by `layout`), its root and the clip coefficient.
StepScalars emitStepScalars(mlir::OpBuilder &builder,
                            train::OptimizerOp optimizer, mlir::Value step,
                            llvm::ArrayRef<mlir::Value> grads,
                            UpdateLayout &layout);

/// One optimizer update of `p` (f32, a whole master or a shard of it) by
/// `g` (f32) under `optimizer`: reads the states that `stateOf` names for
/// each kind (of p's type), writes them back updated, and returns the new
/// value. `decayRanges` (or null) is the update's `decay_ranges`, and
/// `replicated` its `replicated` (the whole buffer on every rank).
mlir::Value emitUpdate(train::TrainBuilder &tb, train::OptimizerOp optimizer,
                       mlir::Value p, mlir::Value g, mlir::Value lr,
                       mlir::Value step, mlir::FloatAttr decay,
                       mlir::DenseI64ArrayAttr decayRanges, bool replicated,
                       llvm::function_ref<llvm::StringRef(train::StateKind)>
                           stateOf);

/// Emits, at the builder's insertion point, the learning rate, the global
/// gradient norm, clipping and one update per parameter (declaring missing
/// optimizer state in `symbols`, the module's symbol table), and returns
/// the gradient norm (before clipping).
mlir::Value emitOptimizerStep(mlir::OpBuilder &builder,
                              mlir::SymbolTable &symbols,
                              train::OptimizerOp optimizer, mlir::Value step,
                              llvm::ArrayRef<ParamGradient> grads,
                              UpdateLayout &layout);

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_OPTIMIZEREMITTER_H
