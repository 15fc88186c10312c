//===- Device.h - what Device.cu, Comm.cu, Memory.cu share ------*- C++ -*-===//
//
// Internal to the CUDA runtime's services (the kernels see Cuda.h only).
// Device.cu owns the context: the GPU of this process (the launcher's local
// rank), the compute stream, the communication stream, the device's memory
// pool; Comm.cu owns MPI and the NCCL communicator, which Collectives.cu
// uses.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_CUDA_DEVICE_H
#define ZEROC_LIB_RUNTIME_CUDA_DEVICE_H

#include "zeroc/Runtime/zrt.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace zeroc::rt::cuda {

/// Opens this process's GPU once: device = the launcher's local rank, its
/// streams, cuBLASLt and workspace, the memory pool (release threshold
/// UINT64_MAX: a caching allocator). Returns "" or what went wrong (no
/// device, fewer devices than ranks on the node, a CUDA error).
std::string openDevice();
/// openDevice(), failing (zrt_fail) on an error: for the accessors, which
/// kernels and tests may call before the runtime's main opens the device.
void ensureDevice();

/// The CUDA ordinal of this process's GPU.
int deviceOrdinal();
/// The stream every collective runs on (high priority, non-blocking).
cudaStream_t commStream();
/// The device's default memory pool, which zrt_alloc allocates from.
cudaMemPool_t memoryPool();

/// "what: CUDA's message (cudaErrorName)".
std::string cudaFailure(cudaError_t status, const std::string &what);

/// Comm.cu: the NCCL communicator of the run (world size > 1), after
/// openDevice on every rank (torn down by commFinalize).
void ncclInitialize();
/// This rank and the world size (after commInitialize; 0 and 1 before).
int commRank();
int commSize();
/// The run's NCCL communicator, or null (one rank: none is ever made).
ncclComm_t ncclCommunicator();
/// Fails (zrt_fail) naming `what`, with ncclGetErrorString and
/// ncclGetLastError, unless `result` is ncclSuccess.
void checkNccl(ncclResult_t result, const char *what);
/// Timeout.cu: after a call on the (non-blocking) communicator returned
/// ncclInProgress, polls until it settles, under --collective-timeout;
/// returns the final state.
ncclResult_t settle(ncclComm_t comm, const char *what);
/// Timeout.cu: a collective of `kind` (zrt_collective's value) was
/// enqueued, for the timeout's message.
void noteCollective(int kind);
/// Counts a collective over the whole buffer of `n` elements in
/// zrt_comm_bytes_sent (Common/RingBytes.h).
void countCollective(zrt_collective kind, size_t n, zrt_dtype dtype);

} // namespace zeroc::rt::cuda

#endif // ZEROC_LIB_RUNTIME_CUDA_DEVICE_H
