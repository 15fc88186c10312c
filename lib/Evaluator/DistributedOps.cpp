//===- DistributedOps.cpp - the train dialect's ZeRO packing and futures --===//
//
// train.pack/unpack lay tensors out end to end in a flat buffer. The
// asynchronous collectives (train.*_start, in Collectives.cpp) complete at
// once in this sequential simulation, so a future already holds the result
// and train.wait just passes it on; train.release only marks a lifetime.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <algorithm>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

/// The tensors end to end in the buffer.
LogicalResult evalPack(PackOp, Operands in, Results &out, RankContext &) {
  int64_t offset = 0;
  for (const Tensor *input : in) {
    std::copy(input->data.begin(), input->data.end(),
              out[0].data.begin() + offset);
    offset += input->numElements();
  }
  return success();
}

LogicalResult evalUnpack(UnpackOp, Operands in, Results &out, RankContext &) {
  int64_t offset = 0;
  for (Tensor &result : out) {
    auto first = in[0]->data.begin() + offset;
    std::copy(first, first + result.numElements(), result.data.begin());
    offset += result.numElements();
  }
  return success();
}

LogicalResult evalWait(WaitOp, Operands in, Results &out, RankContext &) {
  out[0].data = in[0]->data;
  return success();
}

LogicalResult evalRelease(ReleaseOp, Operands, Results &, RankContext &) {
  return success();
}

} // namespace

void registerDistributedOps(OpRegistry &registry) {
  registry.add<PackOp>(evalPack);
  registry.add<UnpackOp>(evalUnpack);
  registry.add<WaitOp>(evalWait);
  registry.add<ReleaseOp>(evalRelease);
}

} // namespace zeroc::eval
