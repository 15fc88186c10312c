//===- Fusion.h - what the fusing planning passes share ---------*- C++ -*-===//
//
// train-fuse-optimizer, train-fuse-matmul-bias and train-fuse-elementwise
// each compute an op at a later op's place (a multiply inside the update that
// reads it, a product inside its bias add, a producer inside its user's
// loop); that is only the same computation when nothing in between writes
// memory the moved op reads.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_FUSION_H
#define ZEROC_LIB_TRANSFORMS_FUSION_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace zeroc {

/// Whether an op after `from` and before `to` (in `from`'s block) writes
/// memory: `from` computed at `to` would then read its operands later than
/// it did.
inline bool writesBetween(mlir::Operation *from, mlir::Operation *to) {
  for (mlir::Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (mlir::hasEffect<mlir::MemoryEffects::Write>(op))
      return true;
  return false;
}

} // namespace zeroc

#endif // ZEROC_LIB_TRANSFORMS_FUSION_H
