//===- KernelsCommon.cu - dtype size, copies, reads back, id errors -------===//
//
// zrt_dtype_size, zrt_copy (a stream-ordered device copy), zrt_read_f32 (the
// one host synchronisation of a step, which also reports ids that kernels
// found out of range on the device), and the conversion kernels the other
// files share.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"

#include <type_traits>

using namespace zeroc::rt::cuda;

namespace {

__global__ void fillScalarKernel(float *out, float value) { *out = value; }

__global__ void bf16ToF32Kernel(const bf16 *__restrict__ src,
                                float *__restrict__ dst, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += indexStride())
    dst[i] = toF32(src[i]);
}

__global__ void f32ToBf16Kernel(const float *__restrict__ src,
                                bf16 *__restrict__ dst, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += indexStride())
    dst[i] = bf16Bits(src[i]);
}

DeviceError *errorRecord = nullptr;

const char *idKernelName(int kernel) {
  switch (kernel) {
  case kIdEmbedding:
    return "zrt_embedding: id";
  case kIdEmbeddingGrad:
    return "zrt_embedding_grad: id";
  case kIdCrossEntropy:
    return "zrt_cross_entropy: target";
  case kIdCrossEntropyGrad:
    return "zrt_cross_entropy_grad: target";
  case kIdGather:
    return "zrt_gather: index";
  case kIdGatherGrad:
    return "zrt_gather_grad: index";
  }
  return "a kernel: id";
}

} // namespace

namespace zeroc::rt::cuda {

void fillScalar(float *out, float value) {
  fillScalarKernel<<<1, 1, 0, computeStream()>>>(out, value);
  checkLaunch("fillScalarKernel");
}

void convertBf16ToF32(const bf16 *src, float *dst, int64_t n) {
  if (n <= 0)
    return;
  bf16ToF32Kernel<<<blocksFor(n), 256, 0, computeStream()>>>(src, dst, n);
  checkLaunch("bf16ToF32Kernel");
}

void convertF32ToBf16(const float *src, bf16 *dst, int64_t n) {
  if (n <= 0)
    return;
  f32ToBf16Kernel<<<blocksFor(n), 256, 0, computeStream()>>>(src, dst, n);
  checkLaunch("f32ToBf16Kernel");
}

DeviceError *deviceErrors() {
  if (!errorRecord) {
    // Never freed: one record for the whole run.
    void *p = nullptr;
    ZRT_CUDA(cudaMallocAsync(&p, sizeof(DeviceError), computeStream()));
    ZRT_CUDA(cudaMemsetAsync(p, 0, sizeof(DeviceError), computeStream()));
    errorRecord = static_cast<DeviceError *>(p);
  }
  return errorRecord;
}

} // namespace zeroc::rt::cuda

extern "C" void zrt_copy(void *dst, const void *src, size_t bytes) {
  if (bytes == 0 || dst == src)
    return;
  if (!dst || !src)
    zrt_fail("zrt_copy: NULL pointer for %zu bytes", bytes);
  ZRT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                           computeStream()));
}

extern "C" void zrt_read_f32(float *host, const void *src, zrt_dtype dtype,
                             int64_t n) {
  const char *kernel = "zrt_read_f32";
  checkNonNegative(kernel, "n", n);
  cudaStream_t stream = computeStream();
  if (n > 0 && (!host || !src))
    zrt_fail("%s: NULL pointer for %lld values", kernel,
             static_cast<long long>(n));
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n == 0)
      return;
    size_t bytes = static_cast<size_t>(n) * sizeof(float);
    if constexpr (std::is_same_v<T, float>) {
      ZRT_CUDA(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost,
                               stream));
    } else {
      Scratch widened(bytes);
      convertBf16ToF32(static_cast<const bf16 *>(src), widened.as<float>(), n);
      ZRT_CUDA(cudaMemcpyAsync(host, widened.as<float>(), bytes,
                               cudaMemcpyDeviceToHost, stream));
    }
  });
  DeviceError error = {};
  if (errorRecord)
    ZRT_CUDA(cudaMemcpyAsync(&error, errorRecord, sizeof(error),
                             cudaMemcpyDeviceToHost, stream));
  synchronizeStream(stream, "zrt_read_f32"); // under --collective-timeout
  if (error.kernel != 0)
    zrt_fail("%s %lld at position %lld is outside [0, %lld) (found on the "
             "device)",
             idKernelName(error.kernel), error.value, error.position,
             error.limit);
}
