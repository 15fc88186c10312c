//===- VerifyEmittable.cpp - the back ends' input contract ----------------===//
//
// The last planning pass: every function is in the buffer form the back
// ends print (docs/backend.md), and nothing in it is left for a back end to
// decide. Collectives are started and waited for once each, every buffer
// is allocated in a category and freed once, and each kernel runs one op or
// one fused region.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINVERIFYEMITTABLE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

LogicalResult verifyFunction(func::FuncOp func) {
  if (!trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
    return func.emitOpError("is not in buffer form (train.planned); the back "
                            "ends print planned functions only (run "
                            "train-bufferize)");
  Block &block = func.getBody().front();
  for (Operation &op : block) {
    if (!isa<memref::AllocOp, memref::DeallocOp, memref::ReinterpretCastOp,
             memref::CopyOp, arith::ConstantOp, arith::MulIOp, arith::AddIOp,
             StorageOp, KernelOp, CollectiveStartOp, CollectiveWaitOp, RankOp,
             ReadBackOp, func::ReturnOp>(op))
      return op.emitOpError("is not part of the buffer form the back ends "
                            "print (docs/backend.md)");
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (!trainDialect(alloc).getCategoryAttrHelper().isAttrPresent(alloc))
        return alloc.emitOpError("has no train.category: every allocation "
                                 "is counted in a memory category");
      auto deallocs = llvm::count_if(alloc->getUsers(), [](Operation *user) {
        return isa<memref::DeallocOp>(user);
      });
      if (deallocs != 1)
        return alloc.emitOpError("must be freed exactly once, but has ")
               << deallocs << " memref.dealloc (run train-deallocate)";
    }
    if (auto start = dyn_cast<CollectiveStartOp>(op)) {
      Value request = start.getRequest();
      if (!request.hasOneUse())
        return start.emitOpError("must be waited for exactly once, but its "
                                 "request has ")
               << std::distance(request.use_begin(), request.use_end())
               << " use(s)";
    }
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      Operation *single = kernel.getSingleOp();
      if (!single)
        return kernel.emitOpError("must run one op (a train.fused region "
                                  "for an elementwise chain)");
      if (isElementwise(single))
        return kernel.emitOpError("runs '")
               << single->getName()
               << "' outside a train.fused region (run "
                  "train-fuse-elementwise)";
    }
  }
  return success();
}

struct TrainVerifyEmittablePass
    : zeroc::impl::TrainVerifyEmittableBase<TrainVerifyEmittablePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(verifyFunction(func)))
        return signalPassFailure();
  }
};

} // namespace
