//===- TraceHost.cpp - zrt_trace_* on the host clock (the CPU runtime) ----===//
//
// Every kernel of the CPU runtime has returned when its call returns, so an
// op's span is the host time between its begin and end. A collective starts
// when its MPI non-blocking call is made and ends when a poll between
// kernels saw it complete (Progress.h: Open MPI progresses it only inside
// MPI calls) or, if none did, when its zrt_wait returns: its span on the
// communication track runs from its start call to that point.
// The compute track shows the start call itself, the waits track the time
// blocked in zrt_wait.
//
//===----------------------------------------------------------------------===//

#include "Progress.h"
#include "Trace.h"

#include <algorithm>
#include <vector>

using namespace zeroc::rt;

namespace {

/// Begin times, by nesting (ops do not nest, but a site may be opened twice
/// in a row by hand-written callers: a stack keeps pairs matched).
std::vector<double> openOps;
/// The start time of each collective of the current step, by number.
std::vector<double> collectiveStarts;
double waitBegin = 0;

} // namespace

namespace zeroc::rt {

void traceDeviceStepBegin() {
  openOps.clear();
  collectiveStarts.clear();
}

void traceDeviceStepEnd() {}

const char *traceClockName() { return "host"; }

} // namespace zeroc::rt

extern "C" void zrt_trace_begin(const zrt_trace_site *site) {
  (void)site;
  openOps.push_back(traceClockMicros());
}

extern "C" void zrt_trace_end(const zrt_trace_site *site) {
  if (openOps.empty())
    return;
  double begin = openOps.back();
  openOps.pop_back();
  traceEvent(TraceTrack::Compute, site, begin, traceClockMicros());
}

extern "C" void zrt_trace_collective_begin(const zrt_trace_site *site) {
  double now = traceClockMicros();
  if (site->collective >= 0) {
    size_t index = static_cast<size_t>(site->collective);
    if (collectiveStarts.size() <= index)
      collectiveStarts.resize(index + 1, -1);
    collectiveStarts[index] = now;
  }
  openOps.push_back(now);
}

extern "C" void zrt_trace_collective_end(const zrt_trace_site *site) {
  zrt_trace_end(site);
}

extern "C" void zrt_trace_wait_begin(const zrt_trace_site *site) {
  (void)site;
  waitBegin = traceClockMicros();
}

extern "C" void zrt_trace_wait_end(const zrt_trace_site *site) {
  double now = traceClockMicros();
  traceEvent(TraceTrack::Waits, site, waitBegin, now);
  double completed = takeLastCompletionMicros();
  if (site->collective >= 0 &&
      static_cast<size_t>(site->collective) < collectiveStarts.size() &&
      collectiveStarts[site->collective] >= 0) {
    traceEvent(TraceTrack::Communication, site,
               collectiveStarts[site->collective],
               completed >= 0 ? std::min(completed, now) : now);
    collectiveStarts[site->collective] = -1;
  }
}
