//===- Trace.h - the executable's --trace ------------------------*- C++
//-*-===//
//
// Internal to lib/Runtime. Trace.cpp (both runtimes) keeps the window of
// traced steps, the events of this rank, and writes the Chrome / Perfetto
// trace-event JSON; the recorders behind zrt.h's zrt_trace_* (TraceHost.cpp
// for the CPU: the host clock; Cuda/Trace.cu: CUDA events on the compute
// and communication streams, resolved at the end of each traced step) add
// events through traceEvent().
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RUNTIME_CPU_TRACE_H
#define ZEROC_RUNTIME_CPU_TRACE_H

#include "zeroc/Runtime/zrt.h"

#include <cstdint>
#include <string>

namespace zeroc::rt {

struct Options;

/// Before the first step, on every rank: checks the window against the
/// steps this run trains ([first, end)) and makes rank 0's output file
/// (under a temporary name). Returns "" or an error naming the flag (to be
/// agreed on).
std::string traceOpen(const Options &options, const zrt_program &program,
                      int64_t first, int64_t end);

/// Around program->train_step of `step`: inside the window, tracing is on
/// (zrt_trace_enabled) between the two; the end resolves device events.
/// Every rank calls both at every step (the first traced step synchronizes
/// the ranks' clocks).
void traceStepBegin(int64_t step);
void traceStepEnd(int64_t step);

/// After the last step, on every rank (collective): rank 0 gathers every
/// rank's events and writes the trace to --trace PATH. Nothing when
/// --trace was not given.
void traceClose();

/// Where an event goes: one track per kind and rank.
enum class TraceTrack { Step = 0, Compute = 1, Communication = 2, Waits = 3 };

/// Microseconds since the trace's epoch, on the host clock.
double traceClockMicros();

/// One event of this rank, on the trace's clock. A communication event is
/// an asynchronous span (several may be in flight); the others nest.
void traceEvent(TraceTrack track, const zrt_trace_site *site, double begin,
                double end);

/// The recorder's part (TraceHost.cpp, Cuda/Trace.cu): the start and end
/// of a traced step on the device.
void traceDeviceStepBegin();
void traceDeviceStepEnd();
/// "host" or "cuda-events": what the timestamps come from.
const char *traceClockName();

} // namespace zeroc::rt

#endif // ZEROC_RUNTIME_CPU_TRACE_H
