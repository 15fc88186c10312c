//===- TraceHook.h - name each op of a step for --trace ---------*- C++ -*-===//
//
// The one place the emitter knows about tracing: a scope around each op's
// emission in FunctionEmitter::emit (its code and the frees after it). When
// the op's code does something (a statement, not just a view or a comment),
// the scope puts a constant zrt_trace_site before it (the op's kind, its
// layer, its phase, its source location; for collectives their number in
// the step, kind, buffer and bytes) and brackets the code with ZRT_TRACE
// calls (include/zeroc/Runtime/zrt.h): zrt_trace_begin/end for an op,
// collective_begin/end around a collective's start, wait_begin/end around a
// wait.
//
// A layer is the parameter an op reads ("transformer.h.0.attn.c_attn" for a
// matmul with transformer.h.0.attn.c_attn.weight, through casts, reshapes
// and stage 3's gathers), else the layer of the op the same source location
// belongs to (an op's derivatives keep its location), else the block of the
// last layer seen before it ("transformer.h.0").
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TARGET_CPP_TRACEHOOK_H
#define ZEROC_LIB_TARGET_CPP_TRACEHOOK_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace zeroc::cpp {

class TraceHook {
public:
  /// Brackets what the emitter appends to `text` for `op` between the
  /// scope's construction and its destruction (nothing unless `enabled`:
  /// the train step is traced, not the forward or logits functions).
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
  struct Site {
    std::string name, kind, phase, location;
    int collective = -1, collectiveKind = -1;
    int64_t elements = 0, bytes = 0;
  };
  /// Names every op of `block` (once, at the first scope in it).
  void plan(mlir::Block &block);

  mlir::Block *planned = nullptr;
  llvm::DenseMap<mlir::Operation *, Site> sites;
  unsigned nextSite = 0;
};

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_TRACEHOOK_H
