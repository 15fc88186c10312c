//===- KernelsCommon.cuh - helpers shared by the CUDA runtime kernels -*- CUDA -*-===//
//
// Internal to lib/Runtime/Cuda/Kernels*.cu: bf16 bit patterns on the device
// (rounded to nearest even exactly as zrt_f32_to_bf16), 16-byte vector
// loads and stores of f32 / bf16 rows, warp and block reductions, the
// online (max, sum) of softmax-like kernels, host-side argument checks and
// dtype dispatch, stream-ordered scratch (zrt_alloc), the device error
// record for ids out of range, and the GEMM entry point shared by
// zrt_matmul and attention (KernelsMatmul.cu).
//
// Every kernel runs on computeStream(); host wrappers never synchronise
// except zrt_read_f32 (KernelsCommon.cu), which is also where ids found out
// of range on the device are reported.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_CUDA_KERNELSCOMMON_CUH
#define ZEROC_LIB_RUNTIME_CUDA_KERNELSCOMMON_CUH

#include "Cuda.h"
#include "../Common/KernelArgs.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace zeroc::rt::cuda {

/// Storage of a bf16 element: its bit pattern.
using bf16 = uint16_t;

// Argument checks and dtype dispatch, as the CPU kernels do them.
using zeroc::rt::checkAttentionMask;
using zeroc::rt::checkMaskFill;
using zeroc::rt::checkMatmulBias;
using zeroc::rt::checkMatmulOutputs;
using zeroc::rt::checkMatmulSizes;
using zeroc::rt::checkNonNegative;
using zeroc::rt::checkRopeArgs;
using zeroc::rt::checkRopePositions;
using zeroc::rt::checkRows;
using zeroc::rt::dispatchFloat;
using zeroc::rt::dispatchSize;
using zeroc::rt::checkTrans;
using zeroc::rt::dtypeName;

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float toF32(float value) { return value; }
__device__ __forceinline__ float toF32(bf16 value) {
  return __uint_as_float(static_cast<uint32_t>(value) << 16);
}

/// zrt_f32_to_bf16 on the device: NaN stays a (quiet) NaN, round to
/// nearest even otherwise.
__device__ __forceinline__ bf16 bf16Bits(float value) {
  uint32_t u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<bf16>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16>(u >> 16);
}

__device__ __forceinline__ void fromF32(float value, float &out) {
  out = value;
}
__device__ __forceinline__ void fromF32(float value, bf16 &out) {
  out = bf16Bits(value);
}

/// Elements of T in 16 bytes: the width of a vectorized row access.
template <typename T> struct VecWidth;
template <> struct VecWidth<float> {
  static constexpr int value = 4;
};
template <> struct VecWidth<bf16> {
  static constexpr int value = 8;
};

/// v[0..N) = f32(p[0..N)). N is 1 (any address) or a multiple of
/// VecWidth<T> (p 16-byte aligned): 16-byte loads.
template <int N>
__device__ __forceinline__ void loadChunk(const float *p, float *v) {
  if constexpr (N == 1) {
    v[0] = *p;
  } else {
    static_assert(N % 4 == 0, "f32 chunks are 1 or 4k elements");
#pragma unroll
    for (int j = 0; j < N; j += 4) {
      float4 q = *reinterpret_cast<const float4 *>(p + j);
      v[j] = q.x;
      v[j + 1] = q.y;
      v[j + 2] = q.z;
      v[j + 3] = q.w;
    }
  }
}
template <int N>
__device__ __forceinline__ void loadChunk(const bf16 *p, float *v) {
  if constexpr (N == 1) {
    v[0] = toF32(*p);
  } else {
    static_assert(N % 8 == 0, "bf16 chunks are 1 or 8k elements");
#pragma unroll
    for (int j = 0; j < N; j += 8) {
      uint4 q = *reinterpret_cast<const uint4 *>(p + j);
      uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) { // little endian: the even element low
        v[j + 2 * i] = __uint_as_float(w[i] << 16);
        v[j + 2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
      }
    }
  }
}

/// p[0..N) = T(v[0..N)), rounded to nearest even for bf16; N as for
/// loadChunk.
template <int N>
__device__ __forceinline__ void storeChunk(float *p, const float *v) {
  if constexpr (N == 1) {
    *p = v[0];
  } else {
    static_assert(N % 4 == 0, "f32 chunks are 1 or 4k elements");
#pragma unroll
    for (int j = 0; j < N; j += 4)
      *reinterpret_cast<float4 *>(p + j) =
          make_float4(v[j], v[j + 1], v[j + 2], v[j + 3]);
  }
}
template <int N>
__device__ __forceinline__ void storeChunk(bf16 *p, const float *v) {
  if constexpr (N == 1) {
    *p = bf16Bits(v[0]);
  } else {
    static_assert(N % 8 == 0, "bf16 chunks are 1 or 8k elements");
#pragma unroll
    for (int j = 0; j < N; j += 8) {
      uint32_t w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        w[i] = static_cast<uint32_t>(bf16Bits(v[j + 2 * i])) |
               (static_cast<uint32_t>(bf16Bits(v[j + 2 * i + 1])) << 16);
      *reinterpret_cast<uint4 *>(p + j) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

inline bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

/// Whether rows of `cols` elements of T starting at every pointer given can
/// be read with 16-byte vectors (nullptr counts as aligned).
template <typename T>
inline bool rowsVectorizable(int64_t cols,
                             std::initializer_list<const void *> ptrs) {
  if (cols % VecWidth<T>::value != 0)
    return false;
  for (const void *p : ptrs)
    if (p && !aligned16(p))
      return false;
  return true;
}

/// Calls fn(std::integral_constant<int, N>{}) with N = VecWidth<T> when
/// `vectorized`, else 1: the chunk width of a row kernel's instantiation.
template <typename T, typename Fn> inline void withChunk(bool vectorized, Fn &&fn) {
  if (vectorized)
    fn(std::integral_constant<int, VecWidth<T>::value>{});
  else
    fn(std::integral_constant<int, 1>{});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename V> __device__ __forceinline__ V warpSum(V v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024); the
/// result is valid in thread 0. `shared` holds 32 values. Called once per
/// kernel (no barrier protects `shared` for a second use).
template <typename V> __device__ V blockSum(V v, V *shared) {
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warpSum(v);
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  int warps = blockDim.x / kWarp;
  v = threadIdx.x < warps ? shared[threadIdx.x] : V(0);
  if (warp == 0)
    v = warpSum(v);
  return v;
}

/// A softmax row's running statistics: the largest value m seen (NaNs are
/// skipped, as a max) and s = sum of exp(x - m). A row of -inf only keeps
/// m = -inf, s = 0 (its softmax is NaN, as in PyTorch); a NaN makes s NaN.
struct MaxSum {
  float m = -INFINITY, s = 0.0f;

  __device__ __forceinline__ void add(float x) {
    if (x > m) {
      s = s * expf(m - x) + 1.0f;
      m = x;
    } else if (!(x == -INFINITY && m == -INFINITY)) {
      s += expf(x - m);
    }
  }
  __device__ __forceinline__ void merge(float om, float os) {
    float nm = fmaxf(m, om);
    if (nm == -INFINITY) {
      s += os; // 0, or NaN
      return;
    }
    s = s * expf(m - nm) + os * expf(om - nm);
    m = nm;
  }
  /// Combines the lanes of a warp: every lane ends with the row's values.
  __device__ __forceinline__ void warpReduce() {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      float om = __shfl_xor_sync(kFullMask, m, offset);
      float os = __shfl_xor_sync(kFullMask, s, offset);
      merge(om, os);
    }
  }
};

//===----------------------------------------------------------------------===//
// Launch shapes
//===----------------------------------------------------------------------===//

/// Row kernels: one warp per row, kRowWarps warps per block, grid-stride.
constexpr int kRowWarps = 8;
constexpr int kRowThreads = kRowWarps * kWarp;

inline unsigned rowBlocks(int64_t rows) {
  return blocksFor(rows * kWarp, kRowThreads);
}

/// The row a warp starts at and the stride to its next row.
__device__ __forceinline__ int64_t firstRow() {
  return static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) +
         threadIdx.x / kWarp;
}
__device__ __forceinline__ int64_t rowStride() {
  return static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
}

/// Elementwise kernels: a grid-stride loop from here.
__device__ __forceinline__ int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t indexStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

//===----------------------------------------------------------------------===//
// Host-side checks and dispatch
//===----------------------------------------------------------------------===//

/// Fails unless `dtype` is i32 or i64 and `ids` is not NULL when n > 0.
inline void checkIdDtype(const char *kernel, const char *what,
                         const void *ids, zrt_dtype dtype, int64_t n) {
  if (dtype != ZRT_I32 && dtype != ZRT_I64)
    zrt_fail("%s: %s dtype must be i32 or i64, got %s (%d)", kernel, what,
             dtypeName(dtype), static_cast<int>(dtype));
  if (n > 0 && !ids)
    zrt_fail("%s: %s pointer is NULL", kernel, what);
}

__device__ __forceinline__ int64_t loadId(const void *ids, bool i64,
                                          int64_t i) {
  return i64 ? static_cast<const int64_t *>(ids)[i]
             : static_cast<int64_t>(static_cast<const int32_t *>(ids)[i]);
}

/// Stream-ordered scratch in ZRT_MEM_ACTIVATIONS, freed (stream-ordered)
/// when it goes out of scope: after the kernels that use it are enqueued.
class Scratch {
public:
  explicit Scratch(size_t bytes)
      : ptr(bytes ? zrt_alloc(bytes, ZRT_MEM_ACTIVATIONS) : nullptr),
        size(bytes) {}
  ~Scratch() {
    if (ptr)
      zrt_free(ptr, size, ZRT_MEM_ACTIVATIONS);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

private:
  void *ptr;
  size_t size;
};

/// *out = value on the stream (a one-thread kernel).
void fillScalar(float *out, float value);

/// dst[i] = T(src[i]) (f32 -> bf16 or bf16 -> f32, or a copy), n elements.
void convertF32ToBf16(const float *src, bf16 *dst, int64_t n);
void convertBf16ToF32(const bf16 *src, float *dst, int64_t n);

//===----------------------------------------------------------------------===//
// Ids out of range, found on the device
//===----------------------------------------------------------------------===//

/// Kernels whose ids are checked on the device.
enum IdKernel : int {
  kIdEmbedding = 1,
  kIdEmbeddingGrad = 2,
  kIdCrossEntropy = 3,
  kIdCrossEntropyGrad = 4,
  kIdGather = 5,
  kIdGatherGrad = 6,
};

/// The first id out of range a kernel met since the program started
/// (`kernel` 0: none). Kernels never read out of bounds for it; zrt_read_f32,
/// which synchronises anyway, reports it through zrt_fail.
struct DeviceError {
  int kernel;
  int pad;
  long long value, position, limit;
};

/// The record in device memory (allocated and zeroed, stream-ordered, on
/// first use).
DeviceError *deviceErrors();

__device__ __forceinline__ void recordIdError(DeviceError *record, int kernel,
                                              int64_t value, int64_t position,
                                              int64_t limit) {
  if (atomicCAS(&record->kernel, 0, -1) == 0) {
    record->value = value;
    record->position = position;
    record->limit = limit;
    __threadfence();
    atomicExch(&record->kernel, kernel);
  }
}

//===----------------------------------------------------------------------===//
// GEMM (KernelsMatmul.cu)
//===----------------------------------------------------------------------===//

/// c[i] = alpha * op(a[i]) @ op(b[i]) for i < batch, row-major, dense rows
/// (lda = transA ? m : k, ldb = transB ? k : n, ldc = n), strides in
/// elements (0 shares a matrix). a and b are `abType`, c is `cType`
/// (CUDA_R_32F or CUDA_R_16BF); accumulation in f32 (CUBLAS_COMPUTE_32F,
/// never TF32). m, n, k, batch > 0. Through cuBLASLt with a plan cached per
/// shape, alignment and types.
struct GemmOp {
  cudaDataType_t abType, cType;
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t strideA, strideB, strideC;
  float alpha;
  /// c = alpha op(a) op(b) + beta c: 0 (c not read) or 1 (accumulate into
  /// c as it is, zrt_matmul_bias's output preset to the bias).
  float beta = 0.0f;
};
void gemm(const char *kernel, const GemmOp &op, const void *a, const void *b,
          void *c);

inline cudaDataType_t cudaType(float) { return CUDA_R_32F; }
inline cudaDataType_t cudaType(bf16) { return CUDA_R_16BF; }

//===----------------------------------------------------------------------===//
// Fused attention (KernelsFlashAttention.cu)
//===----------------------------------------------------------------------===//

/// zrt_attention / zrt_attention_grad for bf16 through the fused kernels,
/// when ZEROC_FLASH_ATTENTION=1, d is 32, 64 or 128, bh <= 65535 and the
/// tensors are 16-byte aligned; false (nothing done) otherwise. t, s > 0.
bool flashAttentionForward(const bf16 *q, const bf16 *k, const bf16 *v,
                           bf16 *out, int64_t bh, int64_t t, int64_t s,
                           int64_t d, float scale, bool causal);
bool flashAttentionBackward(const bf16 *dout, const bf16 *q, const bf16 *k,
                            const bf16 *v, bf16 *dq, bf16 *dk, bf16 *dv,
                            int64_t bh, int64_t t, int64_t s, int64_t d,
                            float scale, bool causal);

} // namespace zeroc::rt::cuda

#endif // ZEROC_LIB_RUNTIME_CUDA_KERNELSCOMMON_CUH
