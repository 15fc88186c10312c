//===- Trace.cu - zrt_trace_* with CUDA events (the CUDA runtime) ---------===//
//
// The host only enqueues work, so host time says nothing about when a
// kernel ran. Each zrt_trace_* call records a CUDA event instead: on the
// compute stream for an op's begin and end, a collective's start (its input
// is ready there) and a wait's begin and end (the compute stream stalls
// between them), on the communication stream after a collective's NCCL
// call (it is done when that event completes). At the end of a traced step
// the device is synchronized and every event is turned into microseconds
// from an event recorded when the step began, itself placed on the host
// clock. A collective runs on its stream from the later of its input being
// ready and the previous collective being done.
//
// Events come from a pool that grows to the largest step and is reused.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"
#include "Trace.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

using namespace zeroc::rt;
using namespace zeroc::rt::cuda;

namespace {

enum class Mark {
  Begin,
  End,
  CollectiveReady,
  CollectiveDone,
  WaitBegin,
  WaitEnd
};

struct Recorded {
  Mark mark;
  const zrt_trace_site *site;
  cudaEvent_t event;
};

std::vector<cudaEvent_t> pool;
size_t used = 0;
std::vector<Recorded> marks;
cudaEvent_t stepStart = nullptr;
double stepStartMicros = 0;

cudaEvent_t nextEvent() {
  if (used == pool.size()) {
    cudaEvent_t event;
    check(cudaEventCreate(&event), "cudaEventCreate (--trace)");
    pool.push_back(event);
  }
  return pool[used++];
}

void mark(Mark kind, const zrt_trace_site *site, cudaStream_t stream) {
  cudaEvent_t event = nextEvent();
  check(cudaEventRecord(event, stream), "cudaEventRecord (--trace)");
  marks.push_back({kind, site, event});
}

double micros(cudaEvent_t event) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, stepStart, event),
        "cudaEventElapsedTime (--trace)");
  return stepStartMicros + 1e3 * static_cast<double>(ms);
}

} // namespace

namespace zeroc::rt {

void traceDeviceStepBegin() {
  used = 0;
  marks.clear();
  if (!stepStart)
    check(cudaEventCreate(&stepStart), "cudaEventCreate (--trace)");
  // The previous step ended with a synchronization (the loss read back):
  // the device is idle, so the event completes about now.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (--trace)");
  stepStartMicros = traceClockMicros();
  check(cudaEventRecord(stepStart, computeStream()),
        "cudaEventRecord (--trace)");
}

void traceDeviceStepEnd() {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (--trace)");
  std::vector<double> opBegins;
  std::vector<double> ready; // by collective number
  double waitBegin = 0, streamFree = 0;
  for (const Recorded &r : marks) {
    double at = micros(r.event);
    int collective = r.site ? r.site->collective : -1;
    switch (r.mark) {
    case Mark::Begin:
      opBegins.push_back(at);
      break;
    case Mark::End:
      if (!opBegins.empty()) {
        traceEvent(TraceTrack::Compute, r.site, opBegins.back(), at);
        opBegins.pop_back();
      }
      break;
    case Mark::CollectiveReady:
      if (collective >= 0) {
        if (ready.size() <= static_cast<size_t>(collective))
          ready.resize(collective + 1, 0);
        ready[collective] = at;
      }
      opBegins.push_back(at);
      break;
    case Mark::CollectiveDone: {
      double begin =
          collective >= 0 && static_cast<size_t>(collective) < ready.size()
              ? ready[collective]
              : at;
      begin = std::max(begin, streamFree);
      traceEvent(TraceTrack::Communication, r.site, begin, std::max(begin, at));
      streamFree = std::max(begin, at);
      break;
    }
    case Mark::WaitBegin:
      waitBegin = at;
      break;
    case Mark::WaitEnd:
      traceEvent(TraceTrack::Waits, r.site, waitBegin, at);
      break;
    }
  }
}

const char *traceClockName() { return "cuda-events"; }

} // namespace zeroc::rt

extern "C" void zrt_trace_begin(const zrt_trace_site *site) {
  mark(Mark::Begin, site, computeStream());
}

extern "C" void zrt_trace_end(const zrt_trace_site *site) {
  mark(Mark::End, site, computeStream());
}

extern "C" void zrt_trace_collective_begin(const zrt_trace_site *site) {
  mark(Mark::CollectiveReady, site, computeStream());
}

extern "C" void zrt_trace_collective_end(const zrt_trace_site *site) {
  // The start call's enqueueing, on the compute track ...
  mark(Mark::End, site, computeStream());
  // ... and the collective itself, done when the communication stream
  // reaches this event.
  mark(Mark::CollectiveDone, site, commStream());
}

extern "C" void zrt_trace_wait_begin(const zrt_trace_site *site) {
  mark(Mark::WaitBegin, site, computeStream());
}

extern "C" void zrt_trace_wait_end(const zrt_trace_site *site) {
  mark(Mark::WaitEnd, site, computeStream());
}
