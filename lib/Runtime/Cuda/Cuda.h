//===- Cuda.h - what the CUDA runtime's files share --------------*- C++ -*-===//
//
// Internal to lib/Runtime/Cuda: the device context (one GPU per process, a
// compute stream, a cuBLASLt handle and its workspace) and error checks that
// name the call and, for kernels, the kernel. Generated code sees only
// include/zeroc/Runtime/zrt.h.
//
// Device.cu defines the context; Kernels*.cu use it. Every kernel of a step
// runs on computeStream(), so that the step is one ordered stream of work
// and the host never waits inside it; Comm.cu's collectives run on their
// own stream, ordered with events.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_CUDA_CUDA_H
#define ZEROC_LIB_RUNTIME_CUDA_CUDA_H

#include "zeroc/Runtime/zrt.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace zeroc::rt::cuda {

/// The stream of every kernel of a step (zrt_compute_stream()).
cudaStream_t computeStream();

/// The process's cuBLASLt handle, and a workspace for its matmuls that
/// stays allocated for the whole run.
cublasLtHandle_t blasLt();
void *blasWorkspace();
size_t blasWorkspaceBytes();

/// Multiprocessors of the current device (for grid sizes).
int multiprocessors();

/// Fails (zrt_fail) with `what` and CUDA's message when `status` is an error.
void check(cudaError_t status, const char *what);
/// The same for cuBLASLt.
void checkBlas(cublasStatus_t status, const char *what);
/// After a kernel launch: fails naming `kernel` when the launch failed, and
/// also waits and checks for a fault when ZEROC_CUDA_SYNC=1.
void checkLaunch(const char *kernel);

/// Waits until `stream` is idle, as cudaStreamSynchronize, under
/// --collective-timeout (Timeout.cu): an asynchronous NCCL error, or no
/// progress for that long while collectives are in flight, ends the job.
void synchronizeStream(cudaStream_t stream, const char *what);

/// Blocks for a grid-stride loop over n elements with `threads` threads.
inline unsigned blocksFor(int64_t n, int threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  int64_t cap = static_cast<int64_t>(multiprocessors()) * 32;
  if (blocks > cap)
    blocks = cap;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

} // namespace zeroc::rt::cuda

/// `ZRT_CUDA(cudaMemcpyAsync(...))`: fails naming the call on error.
#define ZRT_CUDA(call) ::zeroc::rt::cuda::check((call), #call)
#define ZRT_CUBLAS(call) ::zeroc::rt::cuda::checkBlas((call), #call)

#endif // ZEROC_LIB_RUNTIME_CUDA_CUDA_H
