/*===- cuda_runtime.h - CUDA on the CPU, for testing the generated CUDA ----===*
 *
 * Not CUDA: a stand-in that lets g++ compile the CUDA C++ that zeroc writes
 * (--target=cuda) and the CUDA runtime's collectives
 * (lib/Runtime/Cuda/Collectives.cu) against the CPU runtime, so that the
 * suite can run the generated kernels, launches and collectives without a
 * GPU and compare the losses with the CPU backend's
 * (test/Target/Cuda/emulated.test).
 *
 * Kernels run serially, one emulated thread after another, when launched:
 * the compute stream (the one zrt_compute_stream() returns) runs every
 * operation at once. Every other stream -- the CUDA runtime's communication
 * stream -- is deferred: its operations (copies, frees, NCCL calls) queue up
 * and run only when some other stream waits on an event recorded after
 * them, or on cudaStreamSynchronize. So a collective whose result is read
 * before the compute stream waited for it reads stale data, and the losses
 * show it. Launches are written ZC_EMU_LAUNCH(kernel, blocks, threads,
 * args...) by the test's sed, since g++ cannot parse <<<...>>>.
 *
 * With ZC_EMU_STATS=1 in the environment, the executable prints at exit
 * "emulated CUDA: E events created, N NCCL calls, Q operations left".
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_TEST_EMULATED_CUDA_RUNTIME_H
#define ZEROC_TEST_EMULATED_CUDA_RUNTIME_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <deque>
#include <functional>

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum { cudaEventDisableTiming = 2 };

/* A stream: immediate (the compute stream) or deferred (a queue). */
struct zc_emu_stream {
  explicit zc_emu_stream(bool deferred) : deferred(deferred) {}
  bool deferred;
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0, executed = 0;
};
typedef zc_emu_stream *cudaStream_t;

/* An event: the position in its stream's queue it was recorded at. */
struct zc_emu_event {
  zc_emu_stream *stream = nullptr;
  uint64_t position = 0;
};
typedef zc_emu_event *cudaEvent_t;
/* Named by the runtime's Device.h; never used here. */
typedef struct zc_emu_pool *cudaMemPool_t;

struct zc_emu_counts {
  long events = 0, nccl = 0;
};
inline zc_emu_stream zc_emu_compute(false), zc_emu_comm(true);
inline zc_emu_counts zc_emu_stats;

#define __global__ static
#define __device__
#define __forceinline__ inline

/* Runs `stream`'s queued operations until `position` of them have run. */
inline void zc_emu_run(zc_emu_stream *stream, uint64_t position) {
  while (stream->executed < position && !stream->queue.empty()) {
    std::function<void()> operation = std::move(stream->queue.front());
    stream->queue.pop_front();
    ++stream->executed;
    operation();
  }
}

/* Runs `operation` now (an immediate stream) or queues it. */
inline void zc_emu_enqueue(cudaStream_t stream, std::function<void()> operation) {
  if (!stream)
    stream = &zc_emu_compute;
  if (!stream->deferred) {
    operation();
    return;
  }
  stream->queue.push_back(std::move(operation));
  ++stream->enqueued;
}

inline const char *cudaGetErrorString(cudaError_t) { return "emulated"; }
inline const char *cudaGetErrorName(cudaError_t) { return "cudaErrorEmulated"; }
inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }

inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  *event = new zc_emu_event;
  ++zc_emu_stats.events;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event)
    return cudaErrorInvalidValue;
  event->stream = stream ? stream : &zc_emu_compute;
  event->position = event->stream->enqueued;
  return cudaSuccess;
}
/* `stream` waits for what `event` marks: an immediate stream runs the
 * event's stream up to it; a deferred stream waiting on an immediate one
 * has nothing to wait for (that work is done). */
inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                       unsigned) {
  if (!event)
    return cudaErrorInvalidValue;
  if (!stream)
    stream = &zc_emu_compute;
  if (event->stream && event->stream != stream && event->stream->deferred)
    zc_emu_run(event->stream, event->position);
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!stream)
    stream = &zc_emu_compute;
  zc_emu_run(stream, stream->enqueued);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   cudaMemcpyKind, cudaStream_t stream) {
  zc_emu_enqueue(stream, [=] { memmove(dst, src, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t) {
  *ptr = malloc(bytes ? bytes : 1);
  return *ptr ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream) {
  zc_emu_enqueue(stream, [=] { free(ptr); });
  return cudaSuccess;
}

inline float __uint_as_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, 4);
  return value;
}
inline uint32_t __float_as_uint(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

/* The launch geometry a kernel reads. */
struct zc_emu_dim {
  unsigned x, y, z;
};
inline zc_emu_dim blockIdx, blockDim, gridDim, threadIdx;

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

#endif
