//===- Layout.cpp - which logical elements of a state a rank holds --------===//
//
// The one place that knows how a sharded state is laid out across ranks.
// Initialization (--seed, --init) and checkpoints (--save, --resume) read
// and write state storage only through localRange(), so a change of the
// layout (say, to flat buckets where each rank holds an arbitrary
// contiguous range of each state, uneven or empty) changes this function
// alone.
//
// Today (zrt.h, train.pack): a state with shards = N holds on rank r the
// flat elements [r*storage_numel, (r+1)*storage_numel) of its zero-padded
// logical tensor, at the start of its storage; the elements past numel are
// padding. A state with shards = 1 holds the whole tensor on every rank.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <algorithm>

namespace zeroc::rt {

StateRange localRange(const zrt_state &state, int rank, int worldSize) {
  (void)worldSize; // today's layout needs only storage_numel
  StateRange range;
  if (state.shards <= 1) {
    range.offset = 0;
    range.count = state.numel;
    range.storageOffset = 0;
    return range;
  }
  int64_t begin = static_cast<int64_t>(rank) * state.storage_numel;
  int64_t end = begin + state.storage_numel;
  range.offset = std::min(begin, state.numel);
  range.count = std::max<int64_t>(0, std::min(end, state.numel) - begin);
  range.storageOffset = 0;
  return range;
}

} // namespace zeroc::rt
