//===- Device.h - what Device.cu, Comm.cu and Memory.cu share ----*- C++ -*-===//
//
// Internal to the CUDA runtime's services (the kernels see Cuda.h only).
// Device.cu owns the context: the GPU of this process (the launcher's local
// rank), the compute stream, the communication stream, the device's memory
// pool; Comm.cu owns NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_CUDA_DEVICE_H
#define ZEROC_LIB_RUNTIME_CUDA_DEVICE_H

#include <cuda_runtime.h>

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
/// openDevice on every rank; and its teardown (commFinalize).
void ncclInitialize();

} // namespace zeroc::rt::cuda

#endif // ZEROC_LIB_RUNTIME_CUDA_DEVICE_H
