//===- Comm.cu - MPI through the facade, the NCCL communicator ------------===//
//
// MPI (through MpiFacade/mpi.h) only starts the processes and carries the
// services' small host collectives; the training step's collectives are
// NCCL's (Collectives.cu), on one communicator for the run
// (ncclCommInitRank, rank 0's ncclUniqueId broadcast with MPI). A world of
// one rank needs no MPI (the facade is its single-rank stand-in) and makes
// no NCCL communicator: its collectives are device copies.
//
// The host never blocks on a collective, so zrt_comm_seconds_waited() is 0
// on a GPU: exposed communication shows as GPU time in the step.
//
// Bytes sent are counted as the CPU runtime counts them (Common/RingBytes.h).
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include "RingBytes.h"
#include "Services.h"

#include <mpi.h> // the facade (MpiFacade/mpi.h)
#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifndef ZEROC_MPI_FACADE
#error "the CUDA runtime compiles against its MPI facade (MpiFacade/mpi.h)"
#endif

using namespace zeroc::rt;
using namespace zeroc::rt::cuda;

struct zrt_comm {
  int world;
};

namespace {

zrt_comm worldComm{0};
int worldRankCache = 0, worldSizeCache = 1;
ncclComm_t nccl = nullptr;
std::atomic<int64_t> bytesSent{0};

} // namespace

namespace zeroc::rt::cuda {

int commRank() { return worldRankCache; }

int commSize() { return worldSizeCache; }

ncclComm_t ncclCommunicator() { return nccl; }

void checkNccl(ncclResult_t result, const char *what) {
  // The communicator is non-blocking (Timeout.cu): a call may return while
  // NCCL still works on it.
  if (result == ncclInProgress && nccl)
    result = settle(nccl, what);
  if (result == ncclSuccess)
    return;
  const char *last = ncclGetLastError(nccl);
  zrt_fail("%s: NCCL error: %s%s%s%s", what, ncclGetErrorString(result),
           last && *last ? " (" : "", last && *last ? last : "",
           last && *last ? ")" : "");
}

void countCollective(zrt_collective kind, size_t n, zrt_dtype dtype) {
  bytesSent += ringBytes(kind, static_cast<int64_t>(n), worldSizeCache, dtype);
  noteCollective(static_cast<int>(kind)); // for --collective-timeout's message
}

} // namespace zeroc::rt::cuda

//===----------------------------------------------------------------------===//
// Setup (Services.h, Device.h)
//===----------------------------------------------------------------------===//

namespace zeroc::rt {

void commInitialize(int &argc, char **&argv, const zrt_program &program) {
  int launched = launcherSize();
  if ((program.world_size > 1 || launched > 1) && !zeroc_mpi_facade_loaded()) {
    char error[2048] = "";
    if (zeroc_mpi_facade_load(error, sizeof error) != 0) {
      std::string who =
          program.world_size > 1
              ? "this executable was compiled for " +
                    std::to_string(program.world_size) + " ranks and"
              : "the launcher started " + std::to_string(launched) +
                    " processes (this executable was compiled for 1 rank); "
                    "that";
      std::fflush(stdout);
      std::fprintf(stderr,
                   "zeroc: error: %s needs MPI, which the CUDA runtime loads "
                   "only then, through libzeroc_mpi.so (built with the "
                   "runtime, in its build's lib/; ZEROC_MPI_SHIM=PATH names "
                   "another): %s\n",
                   who.c_str(), error);
      std::fflush(stderr);
      std::exit(1);
    }
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRankCache);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSizeCache);
}

void commFinalize() {
  if (!nccl)
    return;
  // Every collective was waited for; errors no longer matter on the way out.
  (void)cudaStreamSynchronize(commStream());
  (void)ncclCommDestroy(nccl);
  nccl = nullptr;
}

zrt_comm *defaultComm() { return &worldComm; }

} // namespace zeroc::rt

namespace zeroc::rt::cuda {

void ncclInitialize() {
  if (nccl || worldSizeCache <= 1)
    return;
  ensureDevice();
  ncclUniqueId id = {};
  if (worldRankCache == 0)
    checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);
  // Non-blocking, so that a stalled peer never blocks the host in NCCL and
  // --collective-timeout can abort the communicator (Timeout.cu).
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t result = ncclCommInitRankConfig(&nccl, worldSizeCache, id,
                                               worldRankCache, &config);
  checkNccl(result, "ncclCommInitRankConfig");
}

} // namespace zeroc::rt::cuda

//===----------------------------------------------------------------------===//
// The ABI
//===----------------------------------------------------------------------===//

extern "C" int zrt_rank(const zrt_comm *) { return worldRankCache; }

extern "C" int zrt_world_size(const zrt_comm *) { return worldSizeCache; }

extern "C" int64_t zrt_comm_bytes_sent(void) { return bytesSent.load(); }

// The host never blocks in zrt_wait on a GPU (see the top of this file).
extern "C" double zrt_comm_seconds_waited(void) { return 0.0; }
