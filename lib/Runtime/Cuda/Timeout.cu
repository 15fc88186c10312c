//===- Timeout.cu - --collective-timeout on GPUs: NCCL that never hangs ---===//
//
// The run's NCCL communicator is non-blocking (ncclConfig_t.blocking = 0,
// Comm.cu), so no NCCL call blocks the host: a call that returns
// ncclInProgress is settled here by polling ncclCommGetAsyncError. The host
// waits for a step only in zrt_read_f32 (the one synchronisation of a step),
// through synchronizeStream(): cudaStreamQuery in a loop that also polls
// the communicator's asynchronous error. An NCCL error ends the job at once;
// a stream that makes no progress for --collective-timeout seconds (default
// 600, 0: wait forever) while collectives are in flight aborts the
// communicator (ncclCommAbort, which also releases the GPU kernels blocked
// on it) and ends the job with a message naming the phase (the step) and
// the last collective the step enqueued. NCCL does not say which peers it
// waits for; the ranks that print no such message are the silent ones.
//
// The services' host reductions (sumOverRanks) are plain MPI through the
// facade.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include "Services.h"

#include <mpi.h> // the facade (MpiFacade/mpi.h)
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace zeroc::rt {

namespace {

double seconds = 600;
const char *phase = "start-up";
int64_t phaseStep = -1;
int64_t collectivesInPhase = 0;
int lastKind = -1;

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char *kindName(int kind) {
  switch (kind) {
  case 0:
    return "all-reduce";
  case 1:
    return "reduce-scatter";
  case 2:
    return "all-gather";
  }
  return "collective";
}

std::string whereText() {
  if (phaseStep < 0)
    return phase;
  return std::string(phase) + " " + std::to_string(phaseStep);
}

/// Aborts the communicator and ends the job naming what was in flight.
[[noreturn]] void stalled(const char *what, double waited) {
  if (ncclComm_t comm = cuda::ncclCommunicator())
    (void)ncclCommAbort(comm);
  std::string last =
      collectivesInPhase > 0
          ? std::string("; the last collective enqueued: ") +
                kindName(lastKind) + " #" + std::to_string(collectivesInPhase)
          : std::string("");
  zrt_fail("%s: %s: the GPU work of this phase (its NCCL collectives) made "
           "no progress for %.0f s (--collective-timeout %g)%s; the NCCL "
           "communicator was aborted (NCCL does not say which ranks it waits "
           "for: those that print no such message); ending the job",
           whereText().c_str(), what, waited, seconds, last.c_str());
}

/// Fails on an asynchronous NCCL error of the communicator.
void checkAsync(const char *what) {
  ncclComm_t comm = cuda::ncclCommunicator();
  if (!comm)
    return;
  ncclResult_t state = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
    return;
  if (state != ncclSuccess && state != ncclInProgress) {
    (void)ncclCommAbort(comm);
    zrt_fail("%s: %s: NCCL error: %s", whereText().c_str(), what,
             ncclGetErrorString(state));
  }
}

} // namespace

std::string configureCollectiveTimeout(double limit) {
  if (!(limit >= 0) || !std::isfinite(limit))
    return "--collective-timeout: " + std::to_string(limit) +
           " is not a non-negative number of seconds";
  seconds = limit;
  return "";
}

void setRunPhase(const char *what, int64_t step) {
  phase = what;
  phaseStep = step;
  collectivesInPhase = 0;
  lastKind = -1;
}

int minOverRanks(int value) {
  if (worldSize() == 1)
    return value;
  int least = value;
  MPI_Allreduce(&value, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return least;
}

void sumOverRanks(double *values, int count) {
  if (worldSize() == 1)
    return;
  std::vector<double> sums(values, values + count);
  MPI_Allreduce(values, sums.data(), count, MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  for (int i = 0; i < count; ++i)
    values[i] = sums[i];
}

} // namespace zeroc::rt

namespace zeroc::rt::cuda {

void noteCollective(int kind) {
  ++collectivesInPhase;
  lastKind = kind;
}

ncclResult_t settle(ncclComm_t comm, const char *what) {
  double start = now();
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      return ncclInternalError;
    if (state != ncclInProgress)
      break;
    double waited = now() - start;
    if (seconds > 0 && waited > seconds)
      stalled(what, waited);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return state;
}

void synchronizeStream(cudaStream_t stream, const char *what) {
  // Without a communicator (one rank) nothing can stall on a peer.
  if (!ncclCommunicator() || seconds <= 0) {
    check(cudaStreamSynchronize(stream), what);
    return;
  }
  double start = now();
  for (unsigned polls = 0;; ++polls) {
    cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess)
      return;
    if (status != cudaErrorNotReady)
      check(status, what);
    checkAsync(what);
    double waited = now() - start;
    if (waited > seconds)
      stalled(what, waited);
    // Spin briefly (a step's tail is short), then poll gently.
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

} // namespace zeroc::rt::cuda
