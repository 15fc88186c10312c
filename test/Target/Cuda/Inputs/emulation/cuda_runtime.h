/*===- cuda_runtime.h - CUDA on the CPU, for testing the generated CUDA ----===*
 *
 * Not CUDA: a stand-in that lets g++ compile the CUDA C++ that zeroc writes
 * (--target=cuda) against the CPU runtime, so that the suite can run the
 * generated kernels, launches and collectives without a GPU and compare the
 * losses with the CPU backend's (test/Target/Cuda/emulated.test). Kernels
 * run serially, one emulated thread after another; streams and events are
 * no-ops (everything is already in order); launches are written
 * ZC_EMU_LAUNCH(kernel, blocks, threads, args...) by the test's sed, since
 * g++ cannot parse <<<...>>>.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_TEST_EMULATED_CUDA_RUNTIME_H
#define ZEROC_TEST_EMULATED_CUDA_RUNTIME_H

#include <stdint.h>
#include <string.h>

typedef int cudaError_t;
enum { cudaSuccess = 0 };
typedef struct zc_emu_stream *cudaStream_t;
typedef struct zc_emu_event *cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
enum { cudaEventDisableTiming = 2 };

#define __global__ static
#define __device__
#define __forceinline__ inline

static inline const char *cudaGetErrorString(cudaError_t) { return "emulated"; }

static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  static char events;
  *event = (cudaEvent_t)&events;
  return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) {
  return cudaSuccess;
}
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                          cudaMemcpyKind, cudaStream_t) {
  memmove(dst, src, bytes);
  return cudaSuccess;
}

static inline float __uint_as_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, 4);
  return value;
}
static inline uint32_t __float_as_uint(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

/* The launch geometry a kernel reads. */
struct zc_emu_dim {
  unsigned x, y, z;
};
static zc_emu_dim blockIdx, blockDim, gridDim, threadIdx;

#define ZC_EMU_LAUNCH(kernel, blocks, threads, ...)                            \
  do {                                                                         \
    gridDim.x = (blocks);                                                      \
    blockDim.x = (threads);                                                    \
    for (unsigned b = 0; b < (unsigned)(blocks); ++b)                          \
      for (unsigned t = 0; t < (unsigned)(threads); ++t) {                     \
        blockIdx.x = b;                                                        \
        threadIdx.x = t;                                                       \
        kernel(__VA_ARGS__);                                                   \
      }                                                                        \
  } while (0)

/* The CUDA runtime's launch hooks, as the CPU runtime has none. */
extern "C" void *zrt_compute_stream(void) { return NULL; }
extern "C" void zrt_check_launch(const char *) {}

#endif
