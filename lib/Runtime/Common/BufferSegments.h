//===- BufferSegments.h - weight-decay runs of a flat buffer's shard -*- C++ -*-===//
//
// zrt_adamw_buffer and zrt_sgd_buffer (both runtimes) update a shard of a
// flat buffer whose members may or may not take weight decay. decayRuns()
// checks the segments the same way for both and cuts the shard into runs
// of elements with the same decay flag, in shard-local indices, so each
// runtime applies the per-tensor update to each run.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_BUFFERSEGMENTS_H
#define ZEROC_LIB_RUNTIME_COMMON_BUFFERSEGMENTS_H

#include "KernelArgs.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace zeroc::rt {

/// Elements [begin, end) of the shard, all with (or all without) decay.
struct DecayRun {
  int64_t begin, end;
  bool decay;
};

/// The runs of the shard of n elements starting at logical index `first`:
/// every element in exactly one run, adjacent runs with different flags.
/// Fails naming `kernel` when the segments are malformed.
inline std::vector<DecayRun>
decayRuns(const char *kernel, int64_t n, int64_t first, int segments,
          const int64_t *begin, const int64_t *end, const uint8_t *decay) {
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "first", first);
  checkNonNegative(kernel, "segments", segments);
  if (segments > 0 && (!begin || !end || !decay))
    zrt_fail("%s: NULL segment arrays for %d segments", kernel, segments);
  std::vector<DecayRun> runs;
  auto add = [&](int64_t lo, int64_t hi, bool flag) {
    lo = std::max(lo, first) - first;
    hi = std::min(hi, first + n) - first;
    if (lo >= hi)
      return;
    if (!runs.empty() && runs.back().decay == flag && runs.back().end == lo)
      runs.back().end = hi;
    else
      runs.push_back({lo, hi, flag});
  };
  int64_t at = 0; // the logical index the previous segment ended at
  for (int s = 0; s < segments; ++s) {
    if (begin[s] < 0 || end[s] < begin[s] || begin[s] < at)
      zrt_fail("%s: segment %d is [%lld, %lld): segments must be sorted "
               "ranges [begin, end) of logical indices that do not overlap",
               kernel, s, static_cast<long long>(begin[s]),
               static_cast<long long>(end[s]));
    add(at, begin[s], false);
    add(begin[s], end[s], decay[s] != 0);
    at = end[s];
  }
  add(at, first + n, false);
  return runs;
}

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_BUFFERSEGMENTS_H
