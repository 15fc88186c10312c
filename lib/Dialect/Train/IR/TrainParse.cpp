//===- TrainParse.cpp - parse a module, guarding upstream verifiers -------===//

#include "zeroc/Dialect/Train/IR/TrainParse.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace zeroc::train {

namespace {

/// `module` (parsed, not verified yet) once its grids have no axis of size
/// 0, a device count that fits 64 bits, and it verifies; null otherwise,
/// after the diagnostics.
OwningOpRef<ModuleOp> checkAndVerify(OwningOpRef<ModuleOp> module) {
  if (!module)
    return nullptr;
  bool degenerate = false;
  module->walk([&](shard::GridOp grid) {
    // Unverified: the shape may be missing (the generic form); the grid's
    // own verifier reports that below.
    DenseI64ArrayAttr shape = grid.getShapeAttr();
    if (!shape)
      return;
    int64_t devices = 1;
    bool overflow = false;
    for (auto [axis, size] : llvm::enumerate(shape.asArrayRef())) {
      if (size == 0) {
        grid.emitOpError() << "axis " << axis
                           << " has size 0: a grid axis needs at least one "
                              "device";
        degenerate = true;
      }
      // The collectives' verifiers multiply the sizes of the axes they
      // use: a product past 2^63 wraps, to 0 for 2^32 x 2^32.
      if (size > 0 && llvm::MulOverflow(devices, size, devices))
        overflow = true;
    }
    if (overflow) {
      grid.emitOpError()
          << "has more devices than a 64-bit count holds (the product of "
             "its axis sizes overflows)";
      degenerate = true;
    }
  });
  if (degenerate || failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> parseModule(llvm::SourceMgr &sourceMgr,
                                  MLIRContext *context) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  return checkAndVerify(parseSourceFile<ModuleOp>(sourceMgr, config));
}

OwningOpRef<ModuleOp> parseModule(llvm::StringRef text, MLIRContext *context) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  // A copy: MLIR's lexer reads the byte after the buffer's end.
  std::string terminated = text.str();
  return checkAndVerify(parseSourceString<ModuleOp>(terminated, config));
}

} // namespace zeroc::train
