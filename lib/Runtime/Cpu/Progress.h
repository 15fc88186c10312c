//===- Progress.h - collectives progress while the kernels compute -*- C++ -*-===//
//
// Internal to the CPU runtime. Open MPI progresses its non-blocking
// collectives (MPI_Iallreduce, MPI_Ireduce_scatter_block, MPI_Iallgather)
// only inside MPI calls, so a collective started before a stretch of
// compute would move no byte until its zrt_wait. The kernels that dominate
// a step (zrt_matmul, between its output tiles; the attention kernels)
// call pollCollectives(): nothing but one relaxed load while no collective
// is in flight; otherwise Comm.cpp's hook, which on the thread that
// initialized MPI (MPI_THREAD_FUNNELED), at most once per
// kPollIntervalSeconds, runs MPI_Testall on each collective in flight and
// records the ones that completed (and when: the trace's communication
// span ends there). zrt_wait still waits.
//
// The kernels library (KernelsCommon.cpp) defines the two variables, so
// that it links alone (kernel tests and benchmarks have no MPI): the hook
// stays null there, and under ZEROC_COMM_PROGRESS=0 (polling off).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RUNTIME_CPU_PROGRESS_H
#define ZEROC_RUNTIME_CPU_PROGRESS_H

#include <atomic>

struct zrt_request;

namespace zeroc::rt {

/// Collectives started and neither completed by a poll nor waited.
extern std::atomic<int> collectivesInFlight;
/// Comm.cpp's poll, installed when MPI starts; null without MPI or under
/// ZEROC_COMM_PROGRESS=0.
extern void (*collectiveProgressHook)();

/// Between kernels or tiles of one: lets collectives in flight progress.
/// Safe from any thread (only the MPI thread polls).
inline void pollCollectives() {
  if (collectivesInFlight.load(std::memory_order_relaxed) > 0) {
    if (void (*hook)() = collectiveProgressHook)
      hook();
  }
}

/// Whether a poll saw `request` complete (no MPI call: for tests).
bool collectiveCompletedByPoll(const zrt_request *request);

/// For TraceHost.cpp's zrt_trace_wait_end: when the request the last
/// zrt_wait waited completed, on the trace's clock (microseconds), if a poll
/// saw it complete while the trace was on; otherwise -1 (it completed in
/// its wait).
double takeLastCompletionMicros();

} // namespace zeroc::rt

#endif // ZEROC_RUNTIME_CPU_PROGRESS_H
