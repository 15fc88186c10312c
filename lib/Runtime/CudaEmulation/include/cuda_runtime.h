/*===- cuda_runtime.h - CUDA's execution model on the CPU ------------------===*
 *
 * Not CUDA: the CPU emulation of CUDA that runs lib/Runtime/Cuda's kernels
 * unchanged (their launches rewritten by ../rewrite.py) with the hardware's
 * semantics, so that the suite checks them without a GPU (docs/cuda.md).
 *
 * A launch runs its grid one block at a time; a block's threads are fibers
 * (Emulation.cpp) that switch only at __syncthreads(), warp collectives
 * (__shfl_*_sync, __ballot_sync, __all_sync, __any_sync, __syncwarp, the
 * wmma *_sync calls) and exit, in forward, reverse and seeded-random
 * orders; the outputs of every order must agree (else a race is reported,
 * naming the kernel). Device memory is its own mapping, accessible only
 * while a kernel, a copy or a cuBLASLt call runs.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_CUDA_EMULATION_CUDA_RUNTIME_H
#define ZEROC_CUDA_EMULATION_CUDA_RUNTIME_H

#include "library_types.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

//===----------------------------------------------------------------------===//
// Qualifiers
//===----------------------------------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
/* One block runs at a time: a function's static is its block's shared
 * memory (a dynamic `extern __shared__` array is rewritten by rewrite.py
 * into zc_emu::dynamicShared()). */
#define __shared__ static
#define __constant__ static

//===----------------------------------------------------------------------===//
// Vector types
//===----------------------------------------------------------------------===//

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return {x, y, z, w};
}
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }

//===----------------------------------------------------------------------===//
// Runtime API types
//===----------------------------------------------------------------------===//

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorInvalidDevice = 101,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719
} cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum {
  cudaStreamDefault = 0,
  cudaStreamNonBlocking = 1,
  cudaEventDefault = 0,
  cudaEventBlockingSync = 1,
  cudaEventDisableTiming = 2
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMemoryPoolsSupported = 115
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major, minor;
  int multiProcessorCount;
};

struct zc_emu_stream;
struct zc_emu_event;
typedef zc_emu_stream *cudaStream_t;
typedef zc_emu_event *cudaEvent_t;
typedef struct zc_emu_pool *cudaMemPool_t;
typedef enum {
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrReservedMemHigh = 6,
  cudaMemPoolAttrUsedMemCurrent = 7,
  cudaMemPoolAttrUsedMemHigh = 8
} cudaMemPoolAttr;

//===----------------------------------------------------------------------===//
// Runtime API (Emulation.cpp)
//===----------------------------------------------------------------------===//

const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);

cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaMallocHost(void **ptr, size_t bytes);
/// The one device's pool: cudaMallocAsync's memory. Its reserved and used
/// bytes are the device bytes allocated (by any call), now and at most.
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemset(void *dst, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream = 0);
cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width,
                              size_t height, cudaStream_t stream = 0);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream = 0);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned flags,
                                         int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned flags = 0);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

namespace zc_emu {
/// Runs `op` on `stream` as the stream reaches it (at once on the default
/// stream), with the device allocations holding `pointers` accessible to
/// the host while it runs: a library call that works on device memory
/// (the emulated NCCL). A pointer that is not device memory is an error
/// naming `call`.
void enqueueDeviceOperation(cudaStream_t stream, const char *call,
                            std::vector<const void *> pointers,
                            std::function<void()> op);
}
namespace zc_emu {
cudaError_t funcSetAttribute(const void *kernel, cudaFuncAttribute attr,
                             int value);
}
template <typename F>
cudaError_t cudaFuncSetAttribute(F *kernel, cudaFuncAttribute attr, int value) {
  return zc_emu::funcSetAttribute(reinterpret_cast<const void *>(kernel), attr,
                                  value);
}

//===----------------------------------------------------------------------===//
// The execution model (Emulation.cpp)
//===----------------------------------------------------------------------===//

namespace zc_emu {

/// The running thread (a fiber) of the running block.
struct Thread {
  uint3 idx;
  unsigned linear;
};
extern Thread *current;
extern uint3 blockIdxValue;
extern dim3 blockDimValue, gridDimValue;

void syncthreads();
/// A warp collective: every lane of `mask` must call the same one with the
/// same mask; returns this lane's result. Kinds below.
enum Collective : int {
  kSyncwarp,
  kShflIdx,
  kShflUp,
  kShflDown,
  kShflXor,
  kBallot,
  kAll,
  kAny,
  kWmmaLoad,
  kWmmaStore,
  kWmmaMma
};
uint64_t warpCollective(Collective kind, unsigned mask, uint64_t value,
                        int param, int width, const char *what);
/// Marks the running launch as using floating-point atomics (its outputs
/// compare across schedules within reassociation error, not bitwise).
void noteFloatAtomic();
/// This block's dynamic shared memory.
void *dynamicShared();
/// A static __shared__ variable, reached by a thread of the running block:
/// filled with 0xff bytes the first time in each block (rewrite.py).
void sharedStatic(void *p, size_t bytes);
/// Aborts naming the running kernel (and block and thread).
[[noreturn]] void kernelError(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// A pointer found in a kernel argument, for the checks and snapshots.
void scanArgument(const void *data, size_t bytes, int index, bool isPointer);

struct LaunchConfig {
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
  const char *name;
  const void *fn;
};
void launch(const LaunchConfig &config, std::function<void()> body);
void beginLaunchArguments(const char *name);

template <typename... P> struct Launcher {
  void (*fn)(P...);
  LaunchConfig config;

  template <typename... A> void operator()(A &&...args) {
    static_assert(sizeof...(A) == sizeof...(P), "kernel argument count");
    std::tuple<std::decay_t<P>...> values(
        static_cast<std::decay_t<P>>(std::forward<A>(args))...);
    beginLaunchArguments(config.name);
    scanAll(values, std::index_sequence_for<P...>{});
    auto kernel = fn;
    launch(config, [kernel, values]() { std::apply(kernel, values); });
  }

private:
  template <typename Tuple, size_t... I>
  static void scanAll(const Tuple &values, std::index_sequence<I...>) {
    (scanArgument(&std::get<I>(values), sizeof(std::get<I>(values)),
                  static_cast<int>(I),
                  std::is_pointer_v<std::tuple_element_t<I, Tuple>>),
     ...);
  }
};

template <typename... P>
Launcher<P...> makeLauncher(void (*fn)(P...), const char *name, dim3 grid,
                            dim3 block, size_t shared = 0,
                            cudaStream_t stream = 0) {
  return Launcher<P...>{
      fn, {grid, block, shared, stream, name, reinterpret_cast<const void *>(fn)}};
}

} // namespace zc_emu

#define threadIdx (::zc_emu::current->idx)
#define blockIdx (::zc_emu::blockIdxValue)
#define blockDim (::zc_emu::blockDimValue)
#define gridDim (::zc_emu::gridDimValue)
constexpr int warpSize = 32;

//===----------------------------------------------------------------------===//
// Barriers, warp intrinsics, atomics
//===----------------------------------------------------------------------===//

inline void __syncthreads() { zc_emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  zc_emu::warpCollective(zc_emu::kSyncwarp, mask, 0, 0, 32, "__syncwarp");
}
inline void __threadfence() {}
inline void __threadfence_block() {}

namespace zc_emu {
template <typename T> uint64_t toBits(T value) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "a shuffled value is at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <typename T> T fromBits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
} // namespace zc_emu

template <typename T>
T __shfl_sync(unsigned mask, T value, int src, int width = 32) {
  return zc_emu::fromBits<T>(zc_emu::warpCollective(
      zc_emu::kShflIdx, mask, zc_emu::toBits(value), src, width, "__shfl_sync"));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return zc_emu::fromBits<T>(
      zc_emu::warpCollective(zc_emu::kShflUp, mask, zc_emu::toBits(value),
                             static_cast<int>(delta), width, "__shfl_up_sync"));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return zc_emu::fromBits<T>(zc_emu::warpCollective(
      zc_emu::kShflDown, mask, zc_emu::toBits(value), static_cast<int>(delta),
      width, "__shfl_down_sync"));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = 32) {
  return zc_emu::fromBits<T>(
      zc_emu::warpCollective(zc_emu::kShflXor, mask, zc_emu::toBits(value),
                             laneMask, width, "__shfl_xor_sync"));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(zc_emu::warpCollective(
      zc_emu::kBallot, mask, predicate != 0, 0, 32, "__ballot_sync"));
}
inline int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(zc_emu::warpCollective(
      zc_emu::kAll, mask, predicate != 0, 0, 32, "__all_sync"));
}
inline int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(zc_emu::warpCollective(
      zc_emu::kAny, mask, predicate != 0, 0, 32, "__any_sync"));
}
inline unsigned __activemask() { return 0xffffffffu; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }

/* Fibers switch only at barriers and collectives: every atomic is atomic. */
inline float atomicAdd(float *p, float v) {
  zc_emu::noteFloatAtomic();
  float old = *p;
  *p = old + v;
  return old;
}
inline double atomicAdd(double *p, double v) {
  zc_emu::noteFloatAtomic();
  double old = *p;
  *p = old + v;
  return old;
}
template <typename I,
          typename = std::enable_if_t<std::is_integral_v<I> && sizeof(I) >= 4>>
inline I atomicAdd(I *p, I v) {
  I old = *p;
  *p = static_cast<I>(old + v);
  return old;
}
template <typename I,
          typename = std::enable_if_t<std::is_integral_v<I> && sizeof(I) >= 4>>
inline I atomicCAS(I *p, I compare, I v) {
  I old = *p;
  if (old == compare)
    *p = v;
  return old;
}
template <typename T> inline T atomicExch(T *p, T v) {
  T old = *p;
  *p = v;
  return old;
}
template <typename T> inline T atomicMax(T *p, T v) {
  T old = *p;
  if (v > old)
    *p = v;
  return old;
}
template <typename T> inline T atomicMin(T *p, T v) {
  T old = *p;
  if (v < old)
    *p = v;
  return old;
}
template <typename T> inline T __ldg(const T *p) { return *p; }

//===----------------------------------------------------------------------===//
// Bit casts and math
//===----------------------------------------------------------------------===//

inline float __uint_as_float(uint32_t bits) {
  return zc_emu::fromBits<float>(bits);
}
inline uint32_t __float_as_uint(float value) {
  return static_cast<uint32_t>(zc_emu::toBits(value));
}
inline float __int_as_float(int bits) {
  return zc_emu::fromBits<float>(static_cast<uint32_t>(bits));
}
inline int __float_as_int(float value) {
  return static_cast<int>(static_cast<uint32_t>(zc_emu::toBits(value)));
}
inline double __longlong_as_double(long long bits) {
  return zc_emu::fromBits<double>(static_cast<uint64_t>(bits));
}
inline long long __double_as_longlong(double value) {
  return static_cast<long long>(zc_emu::toBits(value));
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
using std::exp;
using std::log;
using std::sqrt;

#endif
