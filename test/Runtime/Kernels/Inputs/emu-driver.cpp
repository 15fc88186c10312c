//===- emu-driver.cpp - one CUDA runtime kernel on the emulation, checked --===//
//
// Linked against the emulated CUDA kernels (libzeroc_rt_cuda_emu_kernels.a)
// after a deliberately broken copy of one kernel file, by
// cuda-emulated-faults.test: runs one kernel on small inputs and compares
// it with a double-precision reference. Prints "OK ..." or "WRONG ..."
// (exit 1); the emulation itself exits 1 first when it sees a race or a
// bad access.
//
//   emu-driver cross-entropy | matmul
//
//===----------------------------------------------------------------------===//

#include "zeroc/Runtime/zrt.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

template <typename T> T *upload(const std::vector<T> &host) {
  void *p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return static_cast<T *>(p);
}

template <typename T> std::vector<T> download(const T *p, size_t n) {
  std::vector<T> host(n);
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

int report(const char *what, double got, double ref) {
  bool ok = std::fabs(got - ref) <= 1e-5 * std::fabs(ref) + 1e-6;
  std::printf("%s %s: %.9g (reference %.9g)\n", ok ? "OK" : "WRONG", what, got,
              ref);
  return ok ? 0 : 1;
}

int crossEntropy() {
  const int rows = 70, cols = 45;
  std::vector<float> logits(rows * cols);
  std::vector<int32_t> targets(rows);
  for (int i = 0; i < rows * cols; ++i)
    logits[i] = static_cast<float>(std::sin(0.37 * i) * 3.0);
  for (int r = 0; r < rows; ++r)
    targets[r] = (r * 7) % cols;
  double ref = 0;
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c)
      m = std::fmax(m, logits[r * cols + c]);
    for (int c = 0; c < cols; ++c)
      s += std::exp(logits[r * cols + c] - m);
    ref += m + std::log(s) - logits[r * cols + targets[r]];
  }
  ref /= rows;
  float *dLogits = upload(logits);
  int32_t *dTargets = upload(targets);
  float *dLoss = upload(std::vector<float>(1, 0.0f));
  zrt_cross_entropy(ZRT_F32, dLogits, dTargets, ZRT_I32, rows, cols, dLoss);
  double got = download(dLoss, 1)[0];
  cudaFree(dLogits);
  cudaFree(dTargets);
  cudaFree(dLoss);
  return report("zrt_cross_entropy f32 70x45", got, ref);
}

int matmul() {
  const int m = 5, n = 7, k = 3;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = static_cast<float>(i % 5) - 1.5f;
  for (int i = 0; i < k * n; ++i)
    b[i] = static_cast<float>(i % 7) * 0.25f;
  float *dA = upload(a), *dB = upload(b);
  float *dC = upload(std::vector<float>(m * n, 0.0f));
  zrt_matmul(ZRT_F32, dA, dB, dC, 1, m, n, k, ZRT_NO_TRANS, ZRT_NO_TRANS, 0, 0,
             0);
  std::vector<float> c = download(dC, m * n);
  int wrong = 0;
  for (int i = 0; i < m && !wrong; ++i)
    for (int j = 0; j < n && !wrong; ++j) {
      double ref = 0;
      for (int p = 0; p < k; ++p)
        ref += static_cast<double>(a[i * k + p]) * b[p * n + j];
      if (std::fabs(c[i * n + j] - ref) > 1e-5)
        wrong = report("zrt_matmul f32 5x7x3", c[i * n + j], ref);
    }
  if (!wrong)
    std::printf("OK zrt_matmul f32 5x7x3\n");
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  return wrong;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "cross-entropy") == 0)
    return crossEntropy();
  if (argc == 2 && std::strcmp(argv[1], "matmul") == 0)
    return matmul();
  std::fprintf(stderr, "usage: emu-driver cross-entropy | matmul\n");
  return 2;
}
