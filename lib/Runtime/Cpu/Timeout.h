//===- Timeout.h - the CPU runtime's waits with a deadline -------*- C++ -*-===//
//
// Internal to the CPU runtime (Comm.cpp, Timeout.cpp); the services see
// Services.h's configureCollectiveTimeout, setRunPhase and sumOverRanks.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RUNTIME_CPU_TIMEOUT_H
#define ZEROC_RUNTIME_CPU_TIMEOUT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include <mpi.h>

namespace zeroc::rt {

/// A collective in flight, as the timeout's message names it.
struct CollectiveInfo {
  const char *kind;  ///< "all-reduce", "reduce-scatter", "all-gather", ...
  int64_t sequence;  ///< its number among the collectives of the phase
  size_t count;      ///< elements (of the full buffer)
  const char *dtype; ///< "f32", "bf16", ...
};

/// After MPI_Init on every rank (collective): the communicator the
/// timeout's questions travel on. timeoutFinalize before MPI_Finalize.
void timeoutInitialize();
void timeoutFinalize();

/// Around MPI_Init, which waits for every rank: past --collective-timeout
/// seconds a watchdog thread prints what happened and exits the process
/// (mpirun then ends the job). disarm() when MPI_Init returned.
void armStartupWatchdog();
void disarmStartupWatchdog();

/// The number the next collective of the current phase gets (1, 2, ...).
int64_t nextCollectiveNumber();

/// MPI_Waitall on `requests`, under --collective-timeout: past the deadline
/// the job ends with a message naming the phase, `what` and the ranks not
/// heard from.
void waitWithDeadline(std::vector<MPI_Request> &requests,
                      const CollectiveInfo &what);

} // namespace zeroc::rt

#endif // ZEROC_RUNTIME_CPU_TIMEOUT_H
