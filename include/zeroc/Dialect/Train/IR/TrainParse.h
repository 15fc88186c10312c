//===- TrainParse.h - parse a module, guarding upstream verifiers -*- C++ -*-===//
//
// zeroc's tools read their input through parseModule instead of
// parseSourceFile. It refuses brackets nested more than 1,000 deep (MLIR's
// recursive parser overflows the stack past about ten thousand), parses
// without verifying, rejects a shard.grid with
// an axis of size 0 or more devices than 64 bits count, then verifies:
// MLIR 22's verifiers of the shard collectives (shard.all_slice's
// symbol-use check, for one) divide by the product of the grid axes they
// use, so such a grid (0, or 2^32 x 2^32, which wraps to 0) kills mlir-opt
// itself with SIGFPE while the module is verified. zeroc-fuzz found the
// first (docs/reliability.md).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINPARSE_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINPARSE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace zeroc::train {

/// The module in `sourceMgr`'s main buffer, verified; null after a
/// diagnostic (nesting too deep, a parse error, a degenerate grid, a
/// verifier's error).
mlir::OwningOpRef<mlir::ModuleOp> parseModule(llvm::SourceMgr &sourceMgr,
                                              mlir::MLIRContext *context);

/// The same for MLIR text (`text` need not be NUL-terminated).
mlir::OwningOpRef<mlir::ModuleOp> parseModule(llvm::StringRef text,
                                              mlir::MLIRContext *context);

} // namespace zeroc::train

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINPARSE_H
