//===- EntryABI.cpp - a planned function's entry-point signature ----------===//
//
// train-entry-abi (Passes.td, docs/backend.md): the step number to host
// memory, each result a host out-parameter, and a train.step function's
// learning rate (the schedule's buffer, or 0) one more.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINENTRYABI
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// Only the schedule, the updates, the return and (the step) dropout and
/// attention with dropout read the step number or the learning rate: they
/// live in host memory.
LogicalResult checkHostUses(Value value, bool isStep) {
  for (Operation *op : value.getUsers()) {
    if (auto kernel = dyn_cast<KernelOp>(op); kernel && kernel.getSingleOp())
      op = kernel.getSingleOp();
    if (!isa<LRScheduleOp, StateUpdateOpInterface, func::ReturnOp>(op) &&
        !(isStep && isa<DropoutOp, AttentionOp, AttentionGradOp>(op)))
      return op->emitOpError("uses the ")
             << (isStep ? "step number" : "learning rate")
             << " as a tensor; it lives in host memory, where only the "
                "learning-rate schedule, the optimizer updates and dropout "
                "(the step) read it";
  }
  return success();
}

/// A host kernel that writes 0 into `out` (no schedule's learning rate).
void fillZero(OpBuilder &builder, Location loc, Value out) {
  auto type = RankedTensorType::get({}, builder.getF32Type());
  auto kernel = KernelOp::create(builder, loc, ValueRange(), ValueRange{out});
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(&kernel.getBody());
  auto fused = FusedOp::create(builder, loc, type, ValueRange());
  YieldOp::create(builder, loc, fused->getResults());
  builder.createBlock(&fused.getBody());
  YieldOp::create(builder, loc, FillOp::create(builder, loc, type,
                                               builder.getF64FloatAttr(0.0))
                                    .getResult());
}

LogicalResult rewriteSignature(func::FuncOp func) {
  if (!trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
    return func.emitOpError("is not in buffer form (train.planned); run "
                            "train-bufferize-ops first");
  Block &block = func.getBody().front();
  SmallVector<BlockArgument> steps;
  for (BlockArgument arg : block.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (type && isa_and_nonnull<HostMemoryAttr>(type.getMemorySpace()))
      return func.emitOpError("argument #")
             << arg.getArgNumber()
             << " is already in host memory; the entry signature is "
                "rewritten once";
    if (type && type.getRank() == 0 && type.getElementType().isInteger(64))
      steps.push_back(arg);
  }
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  for (auto [index, result] : llvm::enumerate(ret.getOperands()))
    if (!isa<MemRefType>(result.getType()))
      return func.emitOpError("result #")
             << index << " of type " << result.getType()
             << " is not a buffer; run train-bufferize-ops first";
  SmallVector<Value> rates; // what the schedule writes
  for (auto kernel : block.getOps<KernelOp>())
    if (isa_and_nonnull<LRScheduleOp>(kernel.getSingleOp()))
      rates.push_back(kernel.getOuts().front());
  for (Value value : llvm::concat<Value>(steps, rates))
    if (failed(checkHostUses(value, !llvm::is_contained(rates, value))))
      return failure();
  OpBuilder builder(ret);
  Type f32 = builder.getF32Type();
  auto hostType = [&](ArrayRef<int64_t> shape, Type element) {
    return MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                           HostMemoryAttr::get(func.getContext()));
  };
  for (BlockArgument step : steps)
    step.setType(
        hostType({}, cast<MemRefType>(step.getType()).getElementType()));
  auto outputs = llvm::map_to_vector(ret.getOperands(), [&](Value result) {
    auto shape = cast<MemRefType>(result.getType()).getShape();
    return block.addArgument(hostType(shape, f32), func.getLoc());
  });
  if (trainDialect(func).getStepAttrHelper().isAttrPresent(func)) {
    Value lr = block.addArgument(hostType({}, f32), func.getLoc());
    for (Value rate : rates) {
      rate.replaceAllUsesWith(lr);
      if (auto alloc = rate.getDefiningOp<memref::AllocOp>())
        alloc->erase();
    }
    if (rates.empty())
      fillZero(builder, ret.getLoc(), lr);
  }
  for (auto [value, out] : llvm::zip(ret.getOperands(), outputs))
    ReadBackOp::create(builder, ret.getLoc(), value, out);
  ret.getOperandsMutable().clear();
  func.setFunctionType(FunctionType::get(
      func.getContext(), block.getArgumentTypes(), TypeRange()));
  return success();
}

struct TrainEntryABIPass : zeroc::impl::TrainEntryABIBase<TrainEntryABIPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(rewriteSignature(func)))
        return signalPassFailure();
  }
};

} // namespace
