//===- FuseMatmulBias.cpp - a linear layer's bias add into its GEMM -------===//
//
// A linear layer is a `train.matmul` followed by a `train.add` of a bias
// vector. Computed apart, the GEMM zeroes its output and writes it, and
// the add reads it back and writes it again. Where the product's only use
// is such an add, both become one `train.matmul_bias`, which the back ends
// compute as one GEMM into an output preset to the bias (sgemm's
// beta = 1 on the CPU): one pass over the output fewer.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "Fusion.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINFUSEMATMULBIAS
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;
using zeroc::writesBetween;

namespace {

/// The add's product and bias operands, when it is `product + bias` (either
/// order): a train.matmul used only here, in the add's block, and a vector
/// of the product's last dimension, the add's result the product's type.
std::optional<std::pair<MatmulOp, Value>> linearOf(AddOp add) {
  for (auto [product, bias] : {std::make_pair(add.getLhs(), add.getRhs()),
                               std::make_pair(add.getRhs(), add.getLhs())}) {
    auto matmul = product.getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() ||
        matmul->getBlock() != add->getBlock())
      continue;
    auto type = cast<RankedTensorType>(product.getType());
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (add.getResult().getType() != type || biasType.getRank() != 1 ||
        biasType.getDimSize(0) != type.getShape().back())
      continue;
    return std::make_pair(matmul, bias);
  }
  return std::nullopt;
}

struct TrainFuseMatmulBiasPass
    : zeroc::impl::TrainFuseMatmulBiasBase<TrainFuseMatmulBiasPass> {
  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds) {
      std::optional<std::pair<MatmulOp, Value>> linear = linearOf(add);
      if (!linear || writesBetween(linear->first, add))
        continue;
      MatmulOp matmul = linear->first;
      OpBuilder b(add);
      auto fused = MatmulBiasOp::create(
          b, matmul.getLoc(), matmul.getLhs(), matmul.getRhs(), linear->second,
          matmul.getTransposeLhs(), matmul.getTransposeRhs());
      // The product's attributes (its trace site: the kernel stays a
      // matmul in --trace; train.micro_batch), not the add's.
      for (NamedAttribute attr : matmul->getDiscardableAttrs())
        fused->setAttr(attr.getName(), attr.getValue());
      add.getResult().replaceAllUsesWith(fused.getResult());
      add->erase();
      matmul->erase();
    }
  }
};

} // namespace
