//===- FuzzCommon.h - what zeroc's libFuzzer targets share ------*- C++ -*-===//
//
// Each target (docs/reliability.md) feeds one input to one layer of zeroc
// and returns; libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer
// reports any crash, assertion, out-of-bounds access, overflow or leak. A
// clean rejection (a parse error, a verifier or pass diagnostic, an error
// message) is the expected outcome for most inputs; diagnostics are
// swallowed.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_TOOLS_FUZZ_FUZZCOMMON_H
#define ZEROC_TOOLS_FUZZ_FUZZCOMMON_H

#include "zeroc/Dialect/Train/IR/TrainParse.h"
#include "zeroc/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zeroc::fuzz {

/// An MLIRContext with zeroc's dialects and passes, diagnostics swallowed,
/// one thread. Renewed every few thousand inputs, so that what the context
/// interns (attributes, types, identifiers) does not grow without bound.
///
/// With `loadAllDialects` false the dialects are only registered, and load
/// as zeroc-opt's do: when the parser meets them, or when a pass that
/// declares them as dependent dialects runs. A pass that creates ops of a
/// dialect it does not declare then fails as it does in zeroc-opt (the
/// crash class of train-emplace's missing TrainDialect), which a context
/// with every dialect loaded up front hides.
class Context {
public:
  explicit Context(bool loadAllDialects = true)
      : loadAllDialects(loadAllDialects) {}

  mlir::MLIRContext &get() {
    if (!context || ++uses > 2000) {
      handler.reset();
      context.reset();
      mlir::DialectRegistry registry;
      registerAllDialects(registry);
      context = std::make_unique<mlir::MLIRContext>(
          registry, mlir::MLIRContext::Threading::DISABLED);
      if (loadAllDialects)
        context->loadAllAvailableDialects();
      context->printOpOnDiagnostic(false);
      handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
          context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
      uses = 0;
    }
    return *context;
  }

private:
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  unsigned uses = 0;
  bool loadAllDialects;
};

/// Parses and verifies `text` as a module, as zeroc's tools read their
/// input (zeroc/Dialect/Train/IR/TrainParse.h: a copy of the text, since
/// MLIR's lexer reads the byte after the end of its buffer, which
/// libFuzzer's exactly-sized input lacks; a grid axis of size 0 rejected
/// before upstream verifiers divide by it).
inline mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context,
                                               llvm::StringRef text) {
  return zeroc::train::parseModule(text, &context);
}

/// The module after an input's leading configuration byte (`size` >= 1).
inline mlir::OwningOpRef<mlir::ModuleOp>
parseAfterConfigByte(mlir::MLIRContext &context, const uint8_t *data,
                     size_t size) {
  return parse(
      context,
      llvm::StringRef(reinterpret_cast<const char *>(data + 1), size - 1));
}

/// Registers zeroc's passes once (the pipeline builder looks some up).
inline void registerPassesOnce() {
  static bool done = [] {
    registerAllPasses();
    return true;
  }();
  (void)done;
}

} // namespace zeroc::fuzz

#endif // ZEROC_TOOLS_FUZZ_FUZZCOMMON_H
