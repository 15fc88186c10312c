//===- emu-semantics.cu - CUDA's documented semantics on the emulation -----===//
//
// For cuda-emulated-faults.test: the intrinsics and APIs the CUDA runtime's
// kernels do not all use, each against a host reference written from the
// CUDA documentation: shuffles (index, up, down, xor, with widths), votes
// with masks, integer and f32 atomics, bf16 rounding (nearest even, found
// here by comparing distances in double), wmma with row- and
// column-major tiles, dynamic shared memory above 48 KiB, 3-D blocks and
// grids, and cublasLtMatmul with transposes, batches, beta and a RELU_BIAS
// epilogue. Prints one PASS / FAIL line per check; exits 1 on a failure.
//
//===----------------------------------------------------------------------===//

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  failures += !ok;
}

template <typename T> T *device(const std::vector<T> &host) {
  void *p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return static_cast<T *>(p);
}

template <typename T> std::vector<T> host(const T *p, size_t n) {
  std::vector<T> v(n);
  cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return v;
}

constexpr int kShuffles = 7;

__global__ void shuffleKernel(int *out) {
  int lane = threadIdx.x % 32, v = 1000 + static_cast<int>(threadIdx.x);
  int *o = out + threadIdx.x * kShuffles;
  o[0] = __shfl_sync(0xffffffffu, v, (lane * 5 + 3) % 32);
  o[1] = __shfl_sync(0xffffffffu, v, lane + 1, 8);
  o[2] = __shfl_up_sync(0xffffffffu, v, 3);
  o[3] = __shfl_down_sync(0xffffffffu, v, 5);
  o[4] = __shfl_up_sync(0xffffffffu, v, 2, 16);
  o[5] = __shfl_down_sync(0xffffffffu, v, 6, 16);
  o[6] = __shfl_xor_sync(0xffffffffu, v, 1, 4);
}

int shuffleRef(int t, int which) {
  int lane = t % 32, warp0 = t - lane;
  auto value = [&](int l) { return 1000 + warp0 + l; };
  auto seg = [&](int w) { return lane & ~(w - 1); };
  switch (which) {
  case 0:
    return value((lane * 5 + 3) % 32);
  case 1:
    return value(seg(8) + (lane + 1) % 8);
  case 2:
    return lane - 3 < 0 ? value(lane) : value(lane - 3);
  case 3:
    return lane + 5 > 31 ? value(lane) : value(lane + 5);
  case 4:
    return lane - 2 < seg(16) ? value(lane) : value(lane - 2);
  case 5:
    return lane + 6 >= seg(16) + 16 ? value(lane) : value(lane + 6);
  default:
    return value(lane ^ 1);
  }
}

__global__ void voteKernel(unsigned *out) {
  int lane = threadIdx.x % 32;
  unsigned *o = out + threadIdx.x * 4;
  o[0] = __ballot_sync(0xffffffffu, lane % 3 == 0);
  o[1] = __all_sync(0xffffffffu, lane < 40);
  o[2] = __any_sync(0xffffffffu, lane == 31);
  o[3] = 7;
  if (lane < 16)
    o[3] = __ballot_sync(0x0000ffffu, lane >= 10) | (__all_sync(0x0000ffffu, lane < 16) << 31);
}

__global__ void atomicKernel(int *counter, float *sum, unsigned *maxValue,
                             int *lock, int *guarded) {
  atomicAdd(counter, 2);
  atomicAdd(sum, 0.5f);
  atomicMax(maxValue, blockIdx.x * 1000u + threadIdx.x);
  if (threadIdx.x == 0) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    *guarded += 1;
    atomicExch(lock, 0);
  }
}

__global__ void bf16Kernel(const float *in, unsigned short *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
}

/// bf16 bits of x by distance: the nearer of the two bf16 values around x,
/// the even one on a tie (the bit trick is not used here).
unsigned short bf16Ref(float x) {
  if (std::isnan(x))
    return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isinf(x))
    return static_cast<unsigned short>(u >> 16);
  uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  float flo, fhi;
  std::memcpy(&flo, &lo, 4);
  std::memcpy(&fhi, &hi, 4);
  double dlo = std::fabs(static_cast<double>(x) - flo);
  double dhi = std::isinf(fhi) && !std::isinf(x)
                   ? std::ldexp(1.0, 128) - std::fabs(static_cast<double>(x))
                   : std::fabs(static_cast<double>(fhi) - x);
  if (dlo < dhi || (dlo == dhi && ((lo >> 16) & 1) == 0))
    return static_cast<unsigned short>(lo >> 16);
  return static_cast<unsigned short>(hi >> 16);
}

namespace wmma = nvcuda::wmma;

/// D (16 x 16, f32, column major, ld 24) = A (row major, ld 24) B (column
/// major, ld 32) + C (row major, ld 16), by one warp.
__global__ void wmmaKernel(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                           const float *c, float *d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, a, 24);
  wmma::load_matrix_sync(fb, b, 32);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 24, wmma::mem_col_major);
}

/// Every thread writes its slice of the dynamic shared memory, then sums
/// the whole of it after a barrier.
__global__ void sharedKernel(float *out, int words) {
  extern __shared__ __align__(16) float big[];
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    big[i] = static_cast<float>(i % 7);
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < words; ++i)
      s += big[i];
    *out = s;
  }
}

__global__ void geometryKernel(unsigned *out) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned index = block * blockDim.x * blockDim.y * blockDim.z + thread;
  out[index] = threadIdx.z * 1000000u + threadIdx.y * 10000u + threadIdx.x * 100u +
               blockIdx.z * 20u + blockIdx.y * 5u + blockIdx.x;
}

} // namespace

int main() {
  // Shuffles, two warps.
  {
    int *out = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&out), 64 * kShuffles * sizeof(int));
    shuffleKernel<<<1, 64>>>(out);
    std::vector<int> got = host(out, 64 * kShuffles);
    const char *names[kShuffles] = {"__shfl_sync", "__shfl_sync width 8",
                                    "__shfl_up_sync 3", "__shfl_down_sync 5",
                                    "__shfl_up_sync 2 width 16",
                                    "__shfl_down_sync 6 width 16",
                                    "__shfl_xor_sync 1 width 4"};
    for (int w = 0; w < kShuffles; ++w) {
      bool ok = true;
      for (int t = 0; t < 64; ++t)
        ok &= got[t * kShuffles + w] == shuffleRef(t, w);
      check(ok, names[w]);
    }
    cudaFree(out);
  }
  // Votes.
  {
    unsigned *out = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&out), 64 * 4 * sizeof(unsigned));
    voteKernel<<<1, 64>>>(out);
    std::vector<unsigned> got = host(out, 64 * 4);
    unsigned third = 0;
    for (int l = 0; l < 32; l += 3)
      third |= 1u << l;
    bool ballot = true, all = true, any = true, masked = true;
    for (int t = 0; t < 64; ++t) {
      int lane = t % 32;
      ballot &= got[t * 4] == third;
      all &= got[t * 4 + 1] == 1;
      any &= got[t * 4 + 2] == 1;
      masked &= got[t * 4 + 3] == (lane < 16 ? (0xfc00u | 0x80000000u) : 7u);
    }
    check(ballot, "__ballot_sync");
    check(all, "__all_sync");
    check(any, "__any_sync");
    check(masked, "__ballot_sync and __all_sync with the mask of lanes 0-15");
    cudaFree(out);
  }
  // Atomics: 6 blocks of 96 threads.
  {
    int *counter = device(std::vector<int>{5}), *lock = device(std::vector<int>{0}),
        *guarded = device(std::vector<int>{0});
    float *sum = device(std::vector<float>{0.0f});
    unsigned *maxValue = device(std::vector<unsigned>{0});
    atomicKernel<<<6, 96>>>(counter, sum, maxValue, lock, guarded);
    check(host(counter, 1)[0] == 5 + 2 * 576, "atomicAdd int");
    check(host(sum, 1)[0] == 288.0f, "atomicAdd f32");
    check(host(maxValue, 1)[0] == 5095u, "atomicMax unsigned");
    check(host(guarded, 1)[0] == 6 && host(lock, 1)[0] == 0,
          "atomicCAS / atomicExch spin lock");
    cudaFree(counter);
    cudaFree(lock);
    cudaFree(guarded);
    cudaFree(sum);
    cudaFree(maxValue);
  }
  // bf16 rounding.
  {
    std::vector<float> in = {1.0f, 1.00390625f, 1.01171875f, 1.005859375f,
                             -2.5f, 3.14159265f, 1e-40f, -1e-39f, 65504.0f,
                             3.3895313e38f, 3.4028235e38f, INFINITY, -INFINITY,
                             NAN, 0.0f, -0.0f, 1.0f / 3.0f, 100.125f, 7.0e-3f};
    for (int i = 0; i < 2000; ++i)
      in.push_back(std::ldexp(static_cast<float>(std::sin(i * 1.7)), i % 60 - 30));
    int n = static_cast<int>(in.size());
    float *dIn = device(in);
    unsigned short *dOut = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&dOut), n * 2);
    bf16Kernel<<<(n + 255) / 256, 256>>>(dIn, dOut, n);
    std::vector<unsigned short> got = host(dOut, n);
    bool ok = true;
    for (int i = 0; i < n; ++i)
      if (got[i] != bf16Ref(in[i])) {
        std::printf("  %.9g: 0x%04x, expected 0x%04x\n", in[i], got[i], bf16Ref(in[i]));
        ok = false;
      }
    check(ok, "__float2bfloat16_rn: round to nearest even, NaN quiet");
    cudaFree(dIn);
    cudaFree(dOut);
  }
  // wmma.
  {
    std::vector<__nv_bfloat16> a(16 * 24), b(16 * 32);
    std::vector<float> c(256), ref(256);
    for (int i = 0; i < 16 * 24; ++i)
      a[i] = __float2bfloat16_rn(static_cast<float>(std::cos(i * 0.3)));
    for (int i = 0; i < 16 * 32; ++i)
      b[i] = __float2bfloat16_rn(static_cast<float>(std::sin(i * 0.7)));
    for (int i = 0; i < 256; ++i)
      c[i] = 0.25f * (i % 9);
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 16; ++col) {
        double s = c[r * 16 + col];
        for (int k = 0; k < 16; ++k)
          s += static_cast<double>(float(a[r * 24 + k])) * float(b[col * 32 + k]);
        ref[r * 16 + col] = static_cast<float>(s);
      }
    __nv_bfloat16 *dA = device(a), *dB = device(b);
    float *dC = device(c), *dD = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&dD), 16 * 24 * sizeof(float));
    wmmaKernel<<<1, 32>>>(dA, dB, dC, dD);
    std::vector<float> d = host(dD, 16 * 24);
    double err = 0;
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 16; ++col)
        err = std::fmax(err, std::fabs(d[col * 24 + r] - ref[r * 16 + col]));
    check(err < 1e-5, "wmma 16x16x16 bf16 -> f32, row/column-major loads, column-major store");
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cudaFree(dD);
  }
  // Dynamic shared memory: 100 KiB after cudaFuncSetAttribute.
  {
    int words = 100 * 1024 / 4;
    float *out = device(std::vector<float>{0.0f});
    cudaFuncSetAttribute(sharedKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         100 * 1024);
    sharedKernel<<<3, 128, 100 * 1024>>>(out, words);
    double ref = 0;
    for (int i = 0; i < words; ++i)
      ref += i % 7;
    check(cudaGetLastError() == cudaSuccess && host(out, 1)[0] == ref,
          "100 KiB of dynamic shared memory after cudaFuncSetAttribute");
    cudaFree(out);
  }
  // 3-D geometry.
  {
    dim3 grid(3, 2, 2), block(4, 3, 2);
    unsigned *out = nullptr;
    size_t n = 12 * 24;
    cudaMalloc(reinterpret_cast<void **>(&out), n * sizeof(unsigned));
    geometryKernel<<<grid, block>>>(out);
    std::vector<unsigned> got = host(out, n);
    bool ok = true;
    for (unsigned bz = 0; bz < 2; ++bz)
      for (unsigned by = 0; by < 2; ++by)
        for (unsigned bx = 0; bx < 3; ++bx)
          for (unsigned tz = 0; tz < 2; ++tz)
            for (unsigned ty = 0; ty < 3; ++ty)
              for (unsigned tx = 0; tx < 4; ++tx) {
                unsigned blockId = bx + 3 * (by + 2 * bz);
                unsigned index = blockId * 24 + tx + 4 * (ty + 3 * tz);
                ok &= got[index] == tz * 1000000u + ty * 10000u + tx * 100u +
                                        bz * 20u + by * 5u + bx;
              }
    check(ok, "threadIdx, blockIdx, blockDim, gridDim in 3 dimensions");
    cudaFree(out);
  }
  // cuBLASLt: D = alpha op(A) op(B) + beta C, then relu(. + bias), batch 2.
  {
    const int m = 5, n = 4, k = 3, batch = 2;
    // A is stored k x m (ld 4) and transposed; B is k x n (ld 3).
    const int lda = 4, ldb = 3, ldc = 6, sa = 20, sb = 13, sc = 30;
    std::vector<float> a(sa * batch), b(sb * batch), c(sc * batch), bias(m);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<float>(std::sin(i * 0.9));
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<float>(std::cos(i * 0.4));
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = 0.1f * static_cast<float>(i % 11) - 0.5f;
    for (int i = 0; i < m; ++i)
      bias[i] = 0.3f * i - 0.6f;
    float alpha = 1.5f, beta = -0.5f;
    std::vector<float> ref = c;
    for (int p = 0; p < batch; ++p)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double s = 0;
          for (int q = 0; q < k; ++q)
            s += static_cast<double>(a[p * sa + q + i * lda]) * b[p * sb + q + j * ldb];
          double v = alpha * s + beta * c[p * sc + i + j * ldc] + bias[i];
          ref[p * sc + i + j * ldc] = static_cast<float>(v < 0 ? 0 : v);
        }
    float *dA = device(a), *dB = device(b), *dC = device(c), *dBias = device(bias);
    cublasLtHandle_t handle;
    cublasLtCreate(&handle);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasOperation_t t = CUBLAS_OP_T;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    const float *biasPtr = dBias;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                   sizeof(epilogue));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasPtr,
                                   sizeof(biasPtr));
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, m, lda);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, ldb);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, ldc);
    int32_t count = batch;
    int64_t strides[3] = {sa, sb, sc};
    cublasLtMatrixLayout_t layouts[3] = {la, lb, lc};
    for (int i = 0; i < 3; ++i) {
      cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                       &count, sizeof(count));
      cublasLtMatrixLayoutSetAttribute(layouts[i],
                                       CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                       &strides[i], sizeof(strides[i]));
    }
    cublasStatus_t status = cublasLtMatmul(handle, desc, &alpha, dA, la, dB, lb, &beta,
                                           dC, lc, dC, lc, nullptr, nullptr, 0, 0);
    std::vector<float> got = host(dC, c.size());
    double err = 0;
    for (size_t i = 0; i < got.size(); ++i)
      err = std::fmax(err, std::fabs(got[i] - ref[i]));
    check(status == CUBLAS_STATUS_SUCCESS && err < 1e-5,
          "cublasLtMatmul TRANSA, batch 2 with strides, ld > rows, beta, RELU_BIAS");
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cudaFree(dBias);
  }
  std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
