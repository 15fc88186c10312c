//===- AssignBuckets.cpp - which parameters share a gradient bucket -------===//
//
// The first decision of ZeRO's partition, written into the IR for the passes
// after it: the module attribute `train.buckets` lists each bucket's
// parameters, end to end in the order backward produces their gradients,
// cut at about bucket-bytes and wherever the element type changes.
//
//===----------------------------------------------------------------------===//

#include "Zero.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINASSIGNBUCKETS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

namespace {

struct TrainAssignBucketsPass
    : zeroc::impl::TrainAssignBucketsBase<TrainAssignBucketsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (bucketBytes < 1) {
      module.emitError("bucket-bytes must be positive, got ")
          << static_cast<int64_t>(bucketBytes);
      return signalPassFailure();
    }
    if (trainDialect(module).getZeroStageAttrHelper().isAttrPresent(module)) {
      module.emitError("the module is already partitioned "
                       "(train.zero_stage is set)");
      return signalPassFailure();
    }
    if (module->hasAttr(kBucketsAttr)) {
      module.emitError("the module already has its buckets (")
          << kBucketsAttr << " is set)";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    FailureOr<TrainStep> step = findTrainStep(module, symbols);
    if (failed(step))
      return signalPassFailure();
    module->setAttr(kBucketsAttr, assign(*step));
  }

  /// The parameters in the order backward produces their gradients (a
  /// gradient that is an argument first), cut into buckets of about
  /// `bucketBytes` and where the element type changes.
  ArrayAttr assign(const TrainStep &step) {
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, step.params.size()));
    auto before = [&](unsigned a, unsigned b) {
      Operation *x = step.grads[a].getDefiningOp();
      Operation *y = step.grads[b].getDefiningOp();
      if (!x || !y)
        return !x && y;
      return x != y && x->isBeforeInBlock(y);
    };
    llvm::stable_sort(order, before);
    Builder b(&getContext());
    SmallVector<Attribute> buckets;
    SmallVector<Attribute> current;
    Type element;
    int64_t bytes = 0;
    for (unsigned i : order) {
      ParamOp param = step.params[i];
      RankedTensorType type = param.getTensorType();
      // A new group of about bucketBytes starts when the last is full; a
      // change of element type cuts a bucket within its group.
      bool full = current.empty() || bytes >= bucketBytes;
      if (full)
        bytes = 0;
      if (!current.empty() && (full || type.getElementType() != element)) {
        buckets.push_back(b.getArrayAttr(current));
        current.clear();
      }
      element = type.getElementType();
      current.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
      bytes += type.getNumElements() *
               static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
    }
    buckets.push_back(b.getArrayAttr(current));
    return b.getArrayAttr(buckets);
  }
};

} // namespace
