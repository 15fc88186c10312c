//===- CudaStubs.cu - the device context for the CUDA kernel tests --------===//
//
// zeroc-rt-cuda-kernel-tests (the conformance suite, CudaBackend.cu) links
// the kernels (zeroc_rt_cuda_kernels) alone, without the runtime's services
// (Device.cu, Memory.cu, MPI): this file provides what the kernels use from them (Cuda.h and zrt_alloc /
// zrt_free / zrt_fail), simply. zrt_fail prints and exits 1; every launch
// is checked and then waited for (so a fault names its kernel); zrt_alloc
// is stream-ordered on the compute stream, like the runtime's.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

int64_t allocated[ZRT_MEM_CATEGORIES];
int64_t peak[ZRT_MEM_CATEGORIES];

} // namespace

// The runtime's (Timeout.cu) polls under --collective-timeout; the tests
// have no peers to wait for.
void zeroc::rt::cuda::synchronizeStream(cudaStream_t stream, const char *what) {
  ZRT_CUDA(cudaStreamSynchronize(stream));
}

extern "C" void zrt_fail(const char *format, ...) {
  std::fflush(stdout);
  std::fputs("zrt_fail: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::exit(1);
}

extern "C" void *zrt_alloc(size_t bytes, zrt_mem_category category) {
  void *ptr = nullptr;
  size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  ZRT_CUDA(cudaMallocAsync(&ptr, rounded, zeroc::rt::cuda::computeStream()));
  allocated[category] += static_cast<int64_t>(bytes);
  if (allocated[category] > peak[category])
    peak[category] = allocated[category];
  return ptr;
}

extern "C" void zrt_free(void *ptr, size_t bytes, zrt_mem_category category) {
  if (!ptr)
    return;
  ZRT_CUDA(cudaFreeAsync(ptr, zeroc::rt::cuda::computeStream()));
  allocated[category] -= static_cast<int64_t>(bytes);
}

extern "C" int64_t zrt_mem_current(zrt_mem_category category) {
  return allocated[category];
}

extern "C" int64_t zrt_mem_peak(zrt_mem_category category) {
  return peak[category];
}

extern "C" void *zrt_compute_stream(void) {
  return zeroc::rt::cuda::computeStream();
}

extern "C" void zrt_check_launch(const char *kernel) {
  zeroc::rt::cuda::checkLaunch(kernel);
}

namespace zeroc::rt::cuda {

cudaStream_t computeStream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    return s;
  }();
  return stream;
}

cublasLtHandle_t blasLt() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    checkBlas(cublasLtCreate(&h), "cublasLtCreate");
    return h;
  }();
  return handle;
}

void *blasWorkspace() {
  static void *workspace = [] {
    void *p = nullptr;
    check(cudaMalloc(&p, kWorkspaceBytes), "cudaMalloc(workspace)");
    return p;
  }();
  return workspace;
}

size_t blasWorkspaceBytes() { return kWorkspaceBytes; }

int multiprocessors() {
  static int count = [] {
    int device = 0, n = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute");
    return n;
  }();
  return count;
}

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    zrt_fail("%s: %s (%s)", what, cudaGetErrorString(status),
             cudaGetErrorName(status));
}

void checkBlas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    zrt_fail("%s: cuBLAS status %d", what, static_cast<int>(status));
}

void checkLaunch(const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    zrt_fail("launch of %s: %s", kernel, cudaGetErrorString(status));
  // The tests wait after every kernel, so that a fault names its kernel.
  status = cudaStreamSynchronize(computeStream());
  if (status != cudaSuccess)
    zrt_fail("%s faulted: %s", kernel, cudaGetErrorString(status));
}

} // namespace zeroc::rt::cuda
