//===- runtime.cpp - the CUDA runtime's device context, emulated ----------===//
//
// What lib/Runtime/Cuda/Collectives.cu takes from the CUDA runtime's device
// and communicator (Cuda.h, Device.h), over the CPU runtime: the compute
// stream runs at once, the communication stream is deferred
// (cuda_runtime.h); the NCCL communicator exists only for more than one
// rank, as in the real runtime; bytes are counted by the CPU runtime's
// collectives that the emulated NCCL calls. Also the launch hooks of zrt.h
// that the generated CUDA calls.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include <cstdio>
#include <cstdlib>

namespace zeroc::rt::cuda {

cudaStream_t computeStream() { return &zc_emu_compute; }

cudaStream_t commStream() { return &zc_emu_comm; }

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    zrt_fail("%s: emulated CUDA error %d", what, status);
}

int commRank() { return zrt_rank(nullptr); }

int commSize() { return zrt_world_size(nullptr); }

ncclComm_t ncclCommunicator() {
  static zc_emu_nccl comm;
  if (commSize() <= 1)
    return nullptr; // as the real runtime: no communicator for one rank
  comm.rank = commRank();
  comm.ranks = commSize();
  return &comm;
}

void checkNccl(ncclResult_t result, const char *what) {
  if (result != ncclSuccess)
    zrt_fail("%s: NCCL error: %s", what, ncclGetErrorString(result));
}

void countCollective(zrt_collective, size_t, zrt_dtype) {}

} // namespace zeroc::rt::cuda

extern "C" void *zrt_compute_stream(void) { return &zc_emu_compute; }

extern "C" void zrt_check_launch(const char *) {}

namespace {

struct Stats {
  Stats() {
    const char *value = std::getenv("ZC_EMU_STATS");
    if (value && *value == '1')
      std::atexit([] {
        std::fprintf(stderr,
                     "emulated CUDA: %ld events created, %ld NCCL calls, %zu "
                     "operations left\n",
                     zc_emu_stats.events, zc_emu_stats.nccl,
                     zc_emu_comm.queue.size());
      });
  }
} stats;

} // namespace
