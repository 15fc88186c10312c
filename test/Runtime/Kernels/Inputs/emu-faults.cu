//===- emu-faults.cu - what the CUDA emulation must refuse -----------------===//
//
// Small kernels and host code with one bug each, for
// cuda-emulated-faults.test: compiled as C++ for the CPU emulation of CUDA
// after rewrite.py (as lib/Runtime/Cuda's files are), run with the case's
// name; the emulation must exit 1 with a message naming the kernel or the
// call. "correct" runs the same kernels without a bug and must pass.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

/// Block sum through shared memory, with or without the barrier between
/// the writes and the reads.
__global__ void sumKernel(const float *in, float *out, bool barrier) {
  __shared__ float partial[256];
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (barrier)
    __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i)
      s += partial[i];
    out[blockIdx.x] = s;
  }
}

/// Threads past `live` return before the barrier the others wait at.
__global__ void earlyExitKernel(float *out, unsigned live) {
  if (threadIdx.x >= live)
    return;
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}

/// A warp sum by shuffles; `half` shuffles with a mask of half the warp.
__global__ void warpKernel(float *out, bool half) {
  float v = static_cast<float>(threadIdx.x);
  unsigned mask = half ? 0x0000ffffu : 0xffffffffu;
  if (!half || threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset >>= 1)
      v += __shfl_xor_sync(mask, v, offset);
  out[threadIdx.x] = v;
}

/// A non-atomic increment: blocks race on one counter.
__global__ void counterKernel(unsigned *counter, bool atomic) {
  if (threadIdx.x != 0)
    return;
  if (atomic) {
    atomicAdd(counter, 1u);
  } else {
    unsigned seen = *counter;
    counter[1 + blockIdx.x] = seen; // the order the blocks ran in shows
    *counter = seen + 1;
  }
}

/// Reads past the end of its input.
__global__ void overrunKernel(const float *in, float *out, int n) {
  out[0] = in[n + 16];
}

__global__ void copyKernel(const float *in, float *out) {
  out[threadIdx.x] = in[threadIdx.x];
}

int check(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorName(status));
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: emu-faults CASE\n");
    return 2;
  }
  const char *c = argv[1];
  float host[1024];
  for (int i = 0; i < 1024; ++i)
    host[i] = 0.5f * i;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(reinterpret_cast<void **>(&in), sizeof(host));
  cudaMalloc(reinterpret_cast<void **>(&out), sizeof(host));
  cudaMemcpy(in, host, sizeof(host), cudaMemcpyHostToDevice);
  float result[1024];
  int rc = 0;
  if (!std::strcmp(c, "correct")) {
    sumKernel<<<4, 256>>>(in, out, true);
    earlyExitKernel<<<1, 64>>>(out, 64);
    warpKernel<<<1, 64>>>(out, false);
    unsigned *counter = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&counter), 64 * sizeof(unsigned));
    cudaMemset(counter, 0, 64 * sizeof(unsigned));
    counterKernel<<<8, 32>>>(counter, true);
    unsigned count = 0;
    cudaMemcpy(&count, counter, sizeof(count), cudaMemcpyDeviceToHost);
    cudaFree(counter);
    sumKernel<<<4, 256>>>(in, out, true);
    cudaMemcpy(result, out, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    double ref = 0;
    for (int i = 0; i < 256; ++i)
      ref += host[i];
    std::printf("correct: block sum %g (reference %g), %u increments\n",
                result[0], ref, count);
    rc = result[0] == ref && count == 8 ? 0 : 1;
  } else if (!std::strcmp(c, "missing-barrier")) {
    sumKernel<<<4, 256>>>(in, out, false);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "early-exit")) {
    earlyExitKernel<<<1, 64>>>(out, 40);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "half-mask")) {
    warpKernel<<<1, 64>>>(out, true);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "block-race")) {
    unsigned *counter = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&counter), 64 * sizeof(unsigned));
    cudaMemset(counter, 0, 64 * sizeof(unsigned));
    counterKernel<<<8, 32>>>(counter, false);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "overrun")) {
    overrunKernel<<<1, 1>>>(in, out, 1024);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "host-pointer")) {
    copyKernel<<<1, 32>>>(host, out);
    cudaDeviceSynchronize();
  } else if (!std::strcmp(c, "host-read")) {
    std::printf("%g\n", in[3]); // device memory read on the host
  } else if (!std::strcmp(c, "double-free")) {
    cudaFree(out);
    cudaFree(out);
  } else if (!std::strcmp(c, "use-after-free-async")) {
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaFreeAsync(out, s);
    copyKernel<<<1, 32, 0, s>>>(in, out); // freed earlier in stream order
  } else if (!std::strcmp(c, "free-other-stream")) {
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    copyKernel<<<1, 32, 0, a>>>(in, out);
    cudaFreeAsync(out, b); // not ordered after the kernel on stream a
    cudaStreamSynchronize(b);
    cudaStreamSynchronize(a);
  } else if (!std::strcmp(c, "too-many-threads")) {
    copyKernel<<<1, 1025>>>(in, out);
    rc = check(cudaGetLastError(), "launch of copyKernel");
  } else if (!std::strcmp(c, "shared-limit")) {
    copyKernel<<<1, 32, 64 * 1024>>>(in, out);
    rc = check(cudaGetLastError(), "launch of copyKernel");
    cudaFuncSetAttribute(copyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         64 * 1024);
    copyKernel<<<1, 32, 64 * 1024>>>(in, out);
    rc += check(cudaGetLastError(), "launch of copyKernel after cudaFuncSetAttribute");
  } else if (!std::strcmp(c, "copy-kind")) {
    cudaMemcpy(result, host, sizeof(host), cudaMemcpyDeviceToHost);
  } else if (!std::strcmp(c, "leak")) {
    void *p = nullptr;
    cudaMalloc(&p, 100);
  } else {
    std::fprintf(stderr, "emu-faults: unknown case %s\n", c);
    return 2;
  }
  if (std::strcmp(c, "double-free") != 0 &&
      std::strcmp(c, "use-after-free-async") != 0 &&
      std::strcmp(c, "free-other-stream") != 0)
    cudaFree(out);
  cudaFree(in);
  return rc;
}
