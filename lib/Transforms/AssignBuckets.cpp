//===- AssignBuckets.cpp - which parameters share a gradient bucket -------===//

#include "Zero.h"

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
    SymbolTable symbols(module);
    FailureOr<TrainStep> step = failure();
    if (bucketBytes < 1)
      module.emitError("bucket-bytes must be positive, got ")
          << static_cast<int64_t>(bucketBytes);
    else if (trainDialect(module).getZeroStageAttrHelper().isAttrPresent(module))
      module.emitError("the module is already partitioned "
                       "(train.zero_stage is set)");
    else if (module->hasAttr(kBucketsAttrName))
      module.emitError("the module already has its buckets (")
          << kBucketsAttrName << " is set)";
    else
      step = findTrainStep(module, symbols);
    if (failed(step))
      return signalPassFailure();
    module->setAttr(kBucketsAttrName, assign(*step));
  }

  /// The parameters in the order backward produces their gradients (one
  /// that is an argument first), in groups that close once they hold
  /// bucketBytes, each cut again where the element type changes.
  ArrayAttr assign(const TrainStep &step) {
    auto order = llvm::to_vector(llvm::seq<unsigned>(0, step.params.size()));
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      Operation *x = step.grads[a].getDefiningOp();
      Operation *y = step.grads[b].getDefiningOp();
      return !x || !y ? !x && y : x != y && x->isBeforeInBlock(y);
    });
    Builder b(&getContext());
    SmallVector<Attribute> buckets, current;
    Type element;
    int64_t bytes = 0;
    for (unsigned i : order) {
      ParamOp param = step.params[i];
      RankedTensorType type = param.getTensorType();
      bool full = current.empty() || bytes >= bucketBytes;
      if (full)
        bytes = 0;
      if (!current.empty() && (full || type.getElementType() != element)) {
        buckets.push_back(b.getArrayAttr(current));
        current.clear();
      }
      element = type.getElementType();
      current.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
      bytes += type.getNumElements() * (type.getElementTypeBitWidth() / 8);
    }
    buckets.push_back(b.getArrayAttr(current));
    return b.getArrayAttr(buckets);
  }
};

} // namespace
