//===- TraceHook.h - print the --trace sites of a step ----------*- C++ -*-===//
//
// Generated code brackets each op of the training step that runs something
// with zrt.h's ZRT_TRACE calls. Which op gets which site (its name, kind,
// phase, location; a collective's number, kind, elements and bytes) is
// decided by the train-trace-sites pass on the tensor program and carried
// to the planned ops as their `train.trace` attribute; this file only
// prints it.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TARGET_CPP_TRACEHOOK_H
#define ZEROC_LIB_TARGET_CPP_TRACEHOOK_H

#include "mlir/IR/Operation.h"

#include <string>

namespace zeroc::cpp {

class TraceHook {
public:
  /// Brackets what the emitter appends to `text` for `op` between the
  /// scope's construction and its destruction with the op's site (nothing
  /// unless `enabled`, the train step, and the op carries a site and emits
  /// a statement).
  class Scope {
  public:
    Scope(TraceHook &hook, std::string &text, mlir::Operation *op,
          bool enabled);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    TraceHook &hook;
    std::string &text;
    mlir::Operation *op;
    bool enabled;
    size_t start;
  };

private:
  unsigned nextSite = 0;
};

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_TRACEHOOK_H
