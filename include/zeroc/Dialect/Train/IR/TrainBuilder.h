//===- TrainBuilder.h - typed construction of train ops ---------*- C++ -*-===//
//
// Passes that write train IR (autodiff, optimizer expansion, partitioning)
// build ops through this helper, which derives every result type from the
// dialect's shape rules, so that what they write verifies by construction.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINBUILDER_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINBUILDER_H

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "mlir/IR/Builders.h"

namespace zeroc::train {

class TrainBuilder {
public:
  TrainBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location getLoc() const { return loc; }
  void setLoc(mlir::Location newLoc) { loc = newLoc; }

  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value scale(mlir::Value input, double factor);
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs, bool transposeLhs,
                     bool transposeRhs);
  mlir::Value reshape(mlir::Value input, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value input, llvm::ArrayRef<int64_t> permutation);
  /// Swaps the last two dimensions.
  mlir::Value transposeLastTwo(mlir::Value input);
  mlir::Value sum(mlir::Value input, llvm::ArrayRef<int64_t> dims);
  mlir::Value broadcast(mlir::Value input, llvm::ArrayRef<int64_t> shape);
  mlir::Value fill(mlir::RankedTensorType type, double value);
  mlir::Value cast(mlir::Value input, mlir::Type elementType);
  mlir::Value sqrt(mlir::Value input);
  mlir::Value read(mlir::RankedTensorType type, llvm::StringRef symbol);
  void write(mlir::Value value, llvm::StringRef symbol);

  /// Sums `input` over the dimensions that NumPy broadcasting added or
  /// expanded to reach its shape from `shape`: the adjoint of broadcasting.
  mlir::Value sumToShape(mlir::Value input, llvm::ArrayRef<int64_t> shape);

private:
  template <typename OpTy>
  mlir::Value broadcastBinary(mlir::Value lhs, mlir::Value rhs);

  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINBUILDER_H
