//===- DistributedOps.cpp - the train dialect's ZeRO packing and futures --===//
//
// train.pack/unpack lay tensors out rank-major in a flat buffer. The
// asynchronous collectives (train.*_start, in Collectives.cpp) complete at
// once in this sequential simulation, so a future already holds the result
// and train.wait just passes it on; train.release only marks a lifetime.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

/// ceil(n / shards): the chunk of one tensor in each rank's segment.
int64_t chunkSize(int64_t n, int64_t shards) {
  return (n + shards - 1) / shards;
}

/// Where element `e` of tensor `i` of `sizes` lives in the packed buffer:
/// chunk c = e / K_i of the tensor sits in segment c, after the chunks of
/// tensors 0..i-1.
struct PackedLayout {
  std::vector<int64_t> chunks, offsets; // per tensor: K_i, sum_{j<i} K_j
  int64_t segment = 0;                  // sum K_i

  PackedLayout(const std::vector<int64_t> &sizes, int64_t shards) {
    for (int64_t n : sizes) {
      chunks.push_back(chunkSize(n, shards));
      offsets.push_back(segment);
      segment += chunks.back();
    }
  }
  int64_t index(size_t i, int64_t e) const {
    return (e / chunks[i]) * segment + offsets[i] + e % chunks[i];
  }
};

LogicalResult evalPack(PackOp op, Operands in, Results &out, RankContext &) {
  std::vector<int64_t> sizes;
  for (const Tensor *input : in)
    sizes.push_back(input->numElements());
  PackedLayout layout(sizes, op.getShards());
  // Padding stays zero: the result arrives zeroed.
  for (size_t i = 0; i < in.size(); ++i)
    for (int64_t e = 0; e < in[i]->numElements(); ++e)
      out[0].data[layout.index(i, e)] = in[i]->data[e];
  return success();
}

LogicalResult evalUnpack(UnpackOp op, Operands in, Results &out,
                         RankContext &) {
  std::vector<int64_t> sizes;
  for (const Tensor &result : out)
    sizes.push_back(result.numElements());
  PackedLayout layout(sizes, op.getShards());
  for (size_t i = 0; i < out.size(); ++i)
    for (int64_t e = 0; e < out[i].numElements(); ++e)
      out[i].data[e] = in[0]->data[layout.index(i, e)];
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
