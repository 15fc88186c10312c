//===- KernelsMatmul.cu - zrt_matmul and attention's GEMMs on cuBLASLt ----===//
//
// Every product goes through cublasLtMatmul with f32 accumulation
// (CUBLAS_COMPUTE_32F: exact f32 for f32 operands, TF32 only when
// ZEROC_CUDA_TF32=1 asks for it; tensor cores
// for bf16 operands). zrt.h's row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so cuBLASLt sees (b, a) swapped, and a batch is one
// strided-batched call (stride 0 shares a matrix). The matmul descriptor,
// the three layouts and the heuristic's algorithm are cached per shape,
// strides, types and pointer alignment, so steady-state steps never re-run
// the heuristic. Should the heuristic find nothing, a simple tiled kernel
// computes the product (f32 accumulation as well).
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include <array>
#include <cstdlib>
#include <string>
#include <climits>
#include <unordered_map>

using namespace zeroc::rt::cuda;

namespace {

/// Largest power of two, at most 256, that divides the address and, when
/// the batch walks the matrix, the batch stride in bytes.
int64_t alignmentOf(const void *p, int64_t batch, int64_t strideBytes) {
  uint64_t bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)) | 256u;
  if (batch > 1 && strideBytes != 0)
    bits |= static_cast<uint64_t>(strideBytes);
  return static_cast<int64_t>(bits & (~bits + 1));
}

using PlanKey = std::array<int64_t, 14>;

struct PlanKeyHash {
  size_t operator()(const PlanKey &key) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : key) {
      h ^= static_cast<uint64_t>(v);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

/// A cached product. cuBLASLt's A is our b and its B our a (see above).
struct Plan {
  bool blas = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr,
                         layoutC = nullptr;
  cublasLtMatmulAlgo_t algo = {};
};

std::unordered_map<PlanKey, Plan, PlanKeyHash> &plans() {
  static std::unordered_map<PlanKey, Plan, PlanKeyHash> cache;
  return cache;
}

size_t typeBytes(cudaDataType_t type) { return type == CUDA_R_32F ? 4 : 2; }

/// A column-major layout of rows x cols with leading dimension ld, batched.
cublasLtMatrixLayout_t makeLayout(cudaDataType_t type, int64_t rows,
                                  int64_t cols, int64_t ld, int64_t batch,
                                  int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  ZRT_CUBLAS(cublasLtMatrixLayoutCreate(&layout, type,
                                        static_cast<uint64_t>(rows),
                                        static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    ZRT_CUBLAS(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    ZRT_CUBLAS(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof(stride)));
  }
  return layout;
}

/// f32 products use TF32 tensor cores only when ZEROC_CUDA_TF32=1: off by
/// default so that fp32 runs compare with the CPU backend at 1e-4.
bool tf32Allowed() {
  static const bool allowed = [] {
    const char *value = std::getenv("ZEROC_CUDA_TF32");
    return value && std::string(value) == "1";
  }();
  return allowed;
}

Plan makePlan(const GemmOp &op, int64_t alignA, int64_t alignB,
              int64_t alignC) {
  Plan plan;
  cublasComputeType_t compute =
      op.abType == CUDA_R_32F && tf32Allowed() ? CUBLAS_COMPUTE_32F_FAST_TF32
                                               : CUBLAS_COMPUTE_32F;
  ZRT_CUBLAS(cublasLtMatmulDescCreate(&plan.desc, compute, CUDA_R_32F));
  cublasOperation_t transLtA = op.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t transLtB = op.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  ZRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transLtA, sizeof(transLtA)));
  ZRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transLtB, sizeof(transLtB)));
  // cuBLASLt's A = our b: n x k after op; stored column-major as k x n
  // (ld k) when our b is [n, k] (transB), else n x k (ld n).
  plan.layoutA = op.transB ? makeLayout(op.abType, op.k, op.n, op.k, op.batch,
                                        op.strideB)
                           : makeLayout(op.abType, op.n, op.k, op.n, op.batch,
                                        op.strideB);
  // cuBLASLt's B = our a: k x m after op; stored as m x k (ld m) when our a
  // is [k, m] (transA), else k x m (ld k).
  plan.layoutB = op.transA ? makeLayout(op.abType, op.m, op.k, op.m, op.batch,
                                        op.strideA)
                           : makeLayout(op.abType, op.k, op.m, op.k, op.batch,
                                        op.strideA);
  // C^T: n x m, ld n (row-major [m, n]).
  plan.layoutC =
      makeLayout(op.cType, op.n, op.m, op.n, op.batch, op.strideC);

  cublasLtMatmulPreference_t pref = nullptr;
  ZRT_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t workspace = blasWorkspaceBytes();
  ZRT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace)));
  uint32_t ltA = static_cast<uint32_t>(alignB), ltB = static_cast<uint32_t>(alignA),
           ltC = static_cast<uint32_t>(alignC);
  ZRT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &ltA, sizeof(ltA)));
  ZRT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ltB, sizeof(ltB)));
  ZRT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ltC, sizeof(ltC)));
  ZRT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ltC, sizeof(ltC)));

  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      blasLt(), plan.desc, plan.layoutA, plan.layoutB, plan.layoutC,
      plan.layoutC, pref, 1, &result, &returned);
  ZRT_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
  if (status == CUBLAS_STATUS_SUCCESS && returned > 0 &&
      result.state == CUBLAS_STATUS_SUCCESS) {
    plan.blas = true;
    plan.algo = result.algo;
  } else if (status != CUBLAS_STATUS_NOT_SUPPORTED &&
             status != CUBLAS_STATUS_SUCCESS) {
    ZRT_CUBLAS(status);
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Fallback: 16 x 16 tiles through shared memory, f32 accumulation.
//===----------------------------------------------------------------------===//

constexpr int kTile = 16;

template <typename TA, typename TC>
__global__ void gemmFallbackKernel(const TA *__restrict__ a,
                                   const TA *__restrict__ b,
                                   TC *__restrict__ c, int64_t batch,
                                   int64_t m, int64_t n, int64_t k, bool transA,
                                   bool transB, int64_t strideA,
                                   int64_t strideB, int64_t strideC,
                                   float alpha, float beta) {
  __shared__ float as[kTile][kTile + 1], bs[kTile][kTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t tilesM = (m + kTile - 1) / kTile, tilesN = (n + kTile - 1) / kTile;
  int64_t perBatch = tilesM * tilesN;
  for (int64_t t = blockIdx.x; t < batch * perBatch; t += gridDim.x) {
    int64_t bi = t / perBatch, rest = t % perBatch;
    int64_t i = (rest / tilesN) * kTile + ty, j = (rest % tilesN) * kTile + tx;
    const TA *ab = a + bi * strideA;
    const TA *bb = b + bi * strideB;
    float acc = 0.0f;
    for (int64_t p0 = 0; p0 < k; p0 += kTile) {
      int64_t pa = p0 + tx, pb = p0 + ty;
      as[ty][tx] = i < m && pa < k
                       ? toF32(transA ? ab[pa * m + i] : ab[i * k + pa])
                       : 0.0f;
      bs[ty][tx] = pb < k && j < n
                       ? toF32(transB ? bb[j * k + pb] : bb[pb * n + j])
                       : 0.0f;
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kTile; ++q)
        acc += as[ty][q] * bs[q][tx];
      __syncthreads();
    }
    if (i < m && j < n) {
      TC &out = c[bi * strideC + i * n + j];
      fromF32(beta == 0.0f ? alpha * acc : alpha * acc + beta * toF32(out),
              out);
    }
  }
}

template <typename TA, typename TC>
void gemmFallback(const GemmOp &op, const void *a, const void *b, void *c) {
  int64_t tiles = op.batch * ((op.m + kTile - 1) / kTile) *
                  ((op.n + kTile - 1) / kTile);
  int64_t cap = static_cast<int64_t>(multiprocessors()) * 64;
  unsigned blocks = static_cast<unsigned>(tiles < cap ? tiles : cap);
  gemmFallbackKernel<TA, TC><<<blocks, dim3(kTile, kTile), 0,
                               computeStream()>>>(
      static_cast<const TA *>(a), static_cast<const TA *>(b),
      static_cast<TC *>(c), op.batch, op.m, op.n, op.k, op.transA, op.transB,
      op.strideA, op.strideB, op.strideC, op.alpha, op.beta);
  checkLaunch("gemmFallbackKernel");
}

} // namespace

namespace zeroc::rt::cuda {

void gemm(const char *kernel, const GemmOp &given, const void *a,
          const void *b, void *c) {
  GemmOp op = given;
  if (op.batch > INT_MAX)
    zrt_fail("%s: batch %lld is above cuBLASLt's limit", kernel,
             static_cast<long long>(op.batch));
  if (op.batch == 1)
    op.strideA = op.strideB = op.strideC = 0;
  size_t abBytes = typeBytes(op.abType), cBytes = typeBytes(op.cType);
  int64_t alignA = alignmentOf(a, op.batch, op.strideA * abBytes);
  int64_t alignB = alignmentOf(b, op.batch, op.strideB * abBytes);
  int64_t alignC = alignmentOf(c, op.batch, op.strideC * cBytes);
  PlanKey key = {op.abType, op.cType,  op.batch,   op.m,       op.n,
                 op.k,      op.transA, op.transB,  op.strideA, op.strideB,
                 op.strideC, alignA,   alignB,     alignC};
  auto &cache = plans();
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, makePlan(op, alignA, alignB, alignC)).first;
  const Plan &plan = it->second;
  if (plan.blas) {
    float alpha = op.alpha, beta = op.beta;
    ZRT_CUBLAS(cublasLtMatmul(blasLt(), plan.desc, &alpha, b, plan.layoutA,
                              a, plan.layoutB, &beta, c, plan.layoutC, c,
                              plan.layoutC, &plan.algo, blasWorkspace(),
                              blasWorkspaceBytes(), computeStream()));
    return;
  }
  bool abF32 = op.abType == CUDA_R_32F, cF32 = op.cType == CUDA_R_32F;
  if (abF32 && cF32)
    gemmFallback<float, float>(op, a, b, c);
  else if (abF32)
    gemmFallback<float, bf16>(op, a, b, c);
  else if (cF32)
    gemmFallback<bf16, float>(op, a, b, c);
  else
    gemmFallback<bf16, bf16>(op, a, b, c);
}

} // namespace zeroc::rt::cuda

namespace {

/// c[b][i][j] = bias[j] for every product b of the batch (m x n each,
/// strideC apart): zrt_matmul_bias's output before the product.
template <typename T>
__global__ void presetBiasKernel(T *__restrict__ c, const T *__restrict__ bias,
                                 int64_t total, int64_t perProduct, int64_t n,
                                 int64_t strideC) {
  for (int64_t i = firstIndex(); i < total; i += indexStride()) {
    int64_t product = i / perProduct, e = i % perProduct;
    c[product * strideC + e] = bias[e % n];
  }
}

/// zrt_matmul (bias NULL) and zrt_matmul_bias: with a bias, the output is
/// preset to it and the product accumulated into it (beta = 1), in f32 and
/// rounded once.
void matmul(const char *kernel, zrt_dtype dtype, const void *a, const void *b,
            const void *bias, void *c, int64_t batch, int64_t m, int64_t n,
            int64_t k, const zrt_trans &trans_a, const zrt_trans &trans_b,
            int64_t stride_a, int64_t stride_b, int64_t stride_c) {
  // trans_a/trans_b by reference: checkTrans reads their bits before
  // anything loads them as a zrt_trans (an invalid value is UB to load).
  checkTrans(kernel, "trans_a", trans_a);
  checkTrans(kernel, "trans_b", trans_b);
  checkMatmulSizes(kernel, batch, m, n, k, stride_a, stride_b, stride_c);
  checkMatmulOutputs(kernel, batch, m, n, stride_c);
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (batch == 0 || m == 0 || n == 0)
      return;
    if (!c || (k > 0 && (!a || !b)))
      zrt_fail("%s: NULL operand", kernel);
    if (bias) {
      constexpr int threads = 256;
      int64_t total = batch * m * n;
      presetBiasKernel<T><<<blocksFor(total, threads), threads, 0,
                            computeStream()>>>(static_cast<T *>(c),
                                               static_cast<const T *>(bias),
                                               total, m * n, n, stride_c);
      checkLaunch("presetBiasKernel");
    }
    if (k == 0) { // empty sums: zeros, or the bias
      if (bias)
        return;
      size_t rowBytes = static_cast<size_t>(m * n) * sizeof(T);
      if (batch == 1 || stride_c == m * n)
        ZRT_CUDA(cudaMemsetAsync(c, 0, rowBytes * batch, computeStream()));
      else
        ZRT_CUDA(cudaMemset2DAsync(c, static_cast<size_t>(stride_c) * sizeof(T),
                                   0, rowBytes, static_cast<size_t>(batch),
                                   computeStream()));
      return;
    }
    GemmOp op{cudaType(T{}), cudaType(T{}), batch,    m,        n,
              k,             trans_a == ZRT_TRANS, trans_b == ZRT_TRANS, stride_a, stride_b,
              stride_c,      1.0f, bias ? 1.0f : 0.0f};
    // A batch of row blocks sharing B with contiguous A and C is one product
    // with batch * m rows (a linear layer's [B, T, C] x [N, C]^T).
    if (batch > 1 && stride_b == 0 && !op.transA && stride_a == m * k &&
        stride_c == m * n) {
      op.m = m * batch;
      op.batch = 1;
    }
    gemm(kernel, op, a, b, c);
  });
}

} // namespace

extern "C" void zrt_matmul(zrt_dtype dtype, const void *a, const void *b,
                           void *c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, zrt_trans trans_a, zrt_trans trans_b,
                           int64_t stride_a, int64_t stride_b,
                           int64_t stride_c) {
  matmul("zrt_matmul", dtype, a, b, nullptr, c, batch, m, n, k, trans_a,
         trans_b, stride_a, stride_b, stride_c);
}

extern "C" void zrt_matmul_bias(zrt_dtype dtype, const void *a, const void *b,
                                const void *bias, void *c, int64_t batch,
                                int64_t m, int64_t n, int64_t k,
                                zrt_trans trans_a, zrt_trans trans_b,
                                int64_t stride_a, int64_t stride_b,
                                int64_t stride_c) {
  checkMatmulBias("zrt_matmul_bias", bias, batch, m, n);
  matmul("zrt_matmul_bias", dtype, a, b, bias, c, batch, m, n, k, trans_a,
         trans_b, stride_a, stride_b, stride_c);
}
