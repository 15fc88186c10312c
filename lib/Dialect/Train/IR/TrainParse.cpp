//===- TrainParse.cpp - parse a module, guarding upstream verifiers -------===//

#include "zeroc/Dialect/Train/IR/TrainParse.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace zeroc::train {

namespace {

/// Brackets nested deeper than this are an error before parsing: MLIR's
/// parser recurses once per level (a function type's parentheses, nested
/// arrays, regions, type parameters) and overflows the stack somewhere
/// past ten thousand levels, with no diagnostic. Real modules nest a few
/// dozen levels.
constexpr unsigned kMaxNesting = 1000;

/// The offset in `text` where its brackets ((, [, {, <) first nest deeper
/// than kMaxNesting, outside string literals and // comments; npos if they
/// never do. The '>' of "->" closes nothing, and a stray closer counts as
/// nothing (the parser reports those).
size_t tooDeep(llvm::StringRef text) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') { // a string literal, with its backslash escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i < e && text[i] != '\n')
        ++i;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxNesting)
        return i;
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      depth = depth ? depth - 1 : 0;
    }
  }
  return llvm::StringRef::npos;
}

/// An error at `offset` of `text` (named `name`) if its brackets nest too
/// deep for the parser.
LogicalResult checkNesting(llvm::StringRef text, llvm::StringRef name,
                           MLIRContext *context) {
  size_t offset = tooDeep(text);
  if (offset == llvm::StringRef::npos)
    return success();
  llvm::StringRef before = text.take_front(offset);
  unsigned line = 1 + before.count('\n');
  unsigned column = 1 + offset - (before.rfind('\n') + 1);
  return emitError(FileLineColLoc::get(context, name, line, column))
         << "brackets nested more than " << kMaxNesting
         << " levels deep (the parser would run out of stack)";
}

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
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  if (failed(checkNesting(buffer->getBuffer(), buffer->getBufferIdentifier(),
                          context)))
    return nullptr;
  ParserConfig config(context, /*verifyAfterParse=*/false);
  return checkAndVerify(parseSourceFile<ModuleOp>(sourceMgr, config));
}

OwningOpRef<ModuleOp> parseModule(llvm::StringRef text, MLIRContext *context) {
  if (failed(checkNesting(text, "-", context)))
    return nullptr;
  ParserConfig config(context, /*verifyAfterParse=*/false);
  // A copy: MLIR's lexer reads the byte after the buffer's end.
  std::string terminated = text.str();
  return checkAndVerify(parseSourceString<ModuleOp>(terminated, config));
}

} // namespace zeroc::train
