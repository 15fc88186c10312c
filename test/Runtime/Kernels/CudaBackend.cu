//===- CudaBackend.cu - the conformance suite on the CUDA runtime's kernels ===//
//
// zeroc-rt-cuda-kernel-tests: Conformance.cpp's cases over device memory,
// linked with the CUDA kernels alone (zeroc_rt_cuda_kernels) and
// CudaStubs.cu's device context; every copy is ordered on the compute
// stream and waited for. Also what only the CUDA kernels have: the fused
// (FlashAttention-2 style) bf16 attention, opt-in with
// ZEROC_FLASH_ATTENTION=1. Needs a GPU (any sm_80+); it compiles anywhere
// the CUDA toolkit is.
//
//===----------------------------------------------------------------------===//

#include "Conformance.h"

#include "Cuda.h"

#include <cstdio>
#include <cstdlib>

using zeroc::rt::cuda::computeStream;

namespace conformance {

namespace {

void cudaOk(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what,
                 cudaGetErrorString(status));
    std::exit(2);
  }
}
#define CK(call) cudaOk((call), #call)

void sync() { CK(cudaStreamSynchronize(computeStream())); }

} // namespace

const char *runtimeName() { return "cuda"; }

std::string describeDevice() {
  int device = 0;
  cudaDeviceProp prop;
  CK(cudaGetDevice(&device));
  CK(cudaGetDeviceProperties(&prop, device));
  return fmt("%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
             prop.multiProcessorCount);
}

void *deviceAlloc(size_t bytes) {
  void *ptr = nullptr;
  CK(cudaMalloc(&ptr, bytes ? bytes : 1));
  return ptr;
}

void deviceFree(void *ptr) {
  sync();
  cudaFree(ptr);
}

void toDevice(void *dst, const void *src, size_t bytes) {
  CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                     computeStream()));
  sync();
}

void toHost(void *dst, const void *src, size_t bytes) {
  sync();
  CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                     computeStream()));
  sync();
}

void deviceFill(void *dst, int value, size_t bytes) {
  CK(cudaMemsetAsync(dst, value, bytes, computeStream()));
  sync();
}

void runtimeSpecificTests() {
  // The fused bf16 path (KernelsFlashAttention.cu): d in {32, 64, 128};
  // other cases fall back to the cuBLASLt path.
  setenv("ZEROC_FLASH_ATTENTION", "1", 1);
  const char *note = " (ZEROC_FLASH_ATTENTION=1)";
  testAttention(ZRT_BF16, 2, 16, 16, 32, true, note);
  testAttention(ZRT_BF16, 3, 130, 130, 64, true, note);
  testAttention(ZRT_BF16, 3, 130, 130, 64, false, note);
  testAttention(ZRT_BF16, 4, 256, 256, 64, true, note);
  testAttention(ZRT_BF16, 2, 100, 70, 64, false, note);
  testAttention(ZRT_BF16, 2, 100, 70, 64, true, note);
  testAttention(ZRT_BF16, 2, 70, 100, 64, true, note);
  testAttention(ZRT_BF16, 2, 64, 64, 128, true, note);
  testAttention(ZRT_BF16, 1, 1, 1, 64, true, note);
  testAttention(ZRT_BF16, 4, 1024, 1024, 64, true, note);
  testAttention(ZRT_F32, 2, 16, 16, 32, true, " (f32: not fused)");
  // Grouped-query attention is not fused: it falls back whatever the flag.
  testAttention(ZRT_BF16, 8, 130, 130, 64, true, " (grouped: not fused)", 4);
  unsetenv("ZEROC_FLASH_ATTENTION");
  // Larger matmuls than the shared cases, at GPT-2 small sizes.
  for (zrt_dtype dt : kFloatTypes) {
    testMatmul(dt, 1, 512, 768, 768, false, true);
    testMatmul(dt, 1, 768, 768, 512, true, false);
  }
}

} // namespace conformance
