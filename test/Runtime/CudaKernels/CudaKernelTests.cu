//===- CudaKernelTests.cu - zrt.h's CUDA kernels against double references ===//
//
// zeroc-rt-cuda-kernel-tests runs every CUDA kernel of zrt.h's kernel
// section on small random inputs on the GPU and compares the results with
// straightforward double-precision loops written here, in f32 and bf16
// (inputs are rounded to the dtype first, so both sides see the same
// values). Each check prints one line, "PASS" or "FAIL", what it compared
// and its largest error against the tolerance rtol * |ref| + atol; the last
// line is "cuda kernel tests: N checks, N passed, N failed", and the exit
// status is non-zero when any failed.
//
//   zeroc-rt-cuda-kernel-tests            run every check
//   zeroc-rt-cuda-kernel-tests --fail=X   call a kernel wrongly (X from
//                                         --list-fail); exits 1 through
//                                         zrt_fail with its message
//
// Needs a GPU (any sm_80+); links the kernels alone with TestStubs.cu.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "zeroc/Runtime/zrt.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using Vec = std::vector<double>;
using zeroc::rt::cuda::computeStream;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

void cudaOk(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what,
                 cudaGetErrorString(status));
    std::exit(2);
  }
}
#define CK(call) cudaOk((call), #call)

void sync() { CK(cudaStreamSynchronize(computeStream())); }

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// splitmix64: deterministic inputs.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  double normal() {
    double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % n); }
};

const char *name(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return "f32";
  case ZRT_BF16:
    return "bf16";
  case ZRT_I32:
    return "i32";
  case ZRT_I64:
    return "i64";
  }
  return "?";
}

size_t sizeOf(zrt_dtype dtype) {
  return dtype == ZRT_BF16 ? 2 : dtype == ZRT_I64 ? 8 : 4;
}

/// x as stored in `dtype` and read back.
double roundTo(zrt_dtype dtype, double x) {
  switch (dtype) {
  case ZRT_F32:
    return static_cast<float>(x);
  case ZRT_BF16:
    return zrt_bf16_to_f32(zrt_f32_to_bf16(static_cast<float>(x)));
  case ZRT_I32:
    return static_cast<double>(static_cast<int32_t>(x));
  case ZRT_I64:
    return static_cast<double>(static_cast<int64_t>(x));
  }
  return x;
}

/// A device tensor of n elements of `dtype` (optionally `offset` elements
/// past a 256-byte aligned allocation, to test unaligned paths) and its
/// values on the host as doubles.
struct Tensor {
  zrt_dtype dtype;
  int64_t n;
  Vec v;
  char *base = nullptr;
  void *dev = nullptr;

  Tensor(zrt_dtype dtype, int64_t n, int64_t offset = 0)
      : dtype(dtype), n(n), v(static_cast<size_t>(n), 0.0) {
    size_t bytes = static_cast<size_t>(n + offset) * sizeOf(dtype) + 64;
    CK(cudaMalloc(&base, bytes));
    dev = base + offset * sizeOf(dtype);
  }
  ~Tensor() {
    if (base)
      cudaFree(base);
  }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  Tensor(Tensor &&o) noexcept
      : dtype(o.dtype), n(o.n), v(std::move(o.v)), base(o.base), dev(o.dev) {
    o.base = nullptr;
    o.dev = nullptr;
  }

  size_t bytes() const { return static_cast<size_t>(n) * sizeOf(dtype); }
  void set(int64_t i, double x) { v[i] = roundTo(dtype, x); }
  void fillNormal(Rng &rng, double mean = 0.0, double std = 1.0) {
    for (int64_t i = 0; i < n; ++i)
      set(i, mean + std * rng.normal());
  }
  std::vector<unsigned char> encode(const Vec &values) const {
    std::vector<unsigned char> out(bytes() + 1);
    for (int64_t i = 0; i < n; ++i) {
      unsigned char *p = out.data() + i * sizeOf(dtype);
      switch (dtype) {
      case ZRT_F32: {
        float f = static_cast<float>(values[i]);
        std::memcpy(p, &f, 4);
        break;
      }
      case ZRT_BF16: {
        uint16_t h = zrt_f32_to_bf16(static_cast<float>(values[i]));
        std::memcpy(p, &h, 2);
        break;
      }
      case ZRT_I32: {
        int32_t x = static_cast<int32_t>(values[i]);
        std::memcpy(p, &x, 4);
        break;
      }
      case ZRT_I64: {
        int64_t x = static_cast<int64_t>(values[i]);
        std::memcpy(p, &x, 8);
        break;
      }
      }
    }
    return out;
  }
  void upload() {
    std::vector<unsigned char> bytesOut = encode(v);
    if (n > 0)
      CK(cudaMemcpyAsync(dev, bytesOut.data(), bytes(), cudaMemcpyHostToDevice,
                         computeStream()));
    sync();
  }
  /// NaN everywhere (0xff bytes), to catch elements a kernel does not write.
  void poison() {
    if (n > 0)
      CK(cudaMemsetAsync(dev, 0xff, bytes(), computeStream()));
    sync();
  }
  Vec download() const {
    std::vector<unsigned char> raw(bytes() + 1);
    sync();
    if (n > 0)
      CK(cudaMemcpyAsync(raw.data(), dev, bytes(), cudaMemcpyDeviceToHost,
                         computeStream()));
    sync();
    Vec out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const unsigned char *p = raw.data() + i * sizeOf(dtype);
      switch (dtype) {
      case ZRT_F32: {
        float f;
        std::memcpy(&f, p, 4);
        out[i] = f;
        break;
      }
      case ZRT_BF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        out[i] = zrt_bf16_to_f32(h);
        break;
      }
      case ZRT_I32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        out[i] = x;
        break;
      }
      case ZRT_I64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        out[i] = static_cast<double>(x);
        break;
      }
      }
    }
    return out;
  }
};

/// Random ids in [0, limit) as a tensor of `dtype` (i32 or i64).
Tensor randomIds(zrt_dtype dtype, int64_t n, int64_t limit, Rng &rng) {
  Tensor ids(dtype, n);
  for (int64_t i = 0; i < n; ++i)
    ids.v[i] = static_cast<double>(rng.below(limit));
  ids.upload();
  return ids;
}

/// One f32 scalar in device memory.
struct Scalar {
  float *dev = nullptr;
  Scalar() { CK(cudaMalloc(&dev, sizeof(float))); }
  explicit Scalar(float value) : Scalar() { set(value); }
  ~Scalar() { cudaFree(dev); }
  Scalar(const Scalar &) = delete;
  Scalar &operator=(const Scalar &) = delete;
  void set(float value) {
    CK(cudaMemcpyAsync(dev, &value, sizeof(float), cudaMemcpyHostToDevice,
                       computeStream()));
    sync();
  }
  double get() const {
    float value = 0;
    sync();
    CK(cudaMemcpyAsync(&value, dev, sizeof(float), cudaMemcpyDeviceToHost,
                       computeStream()));
    sync();
    return value;
  }
};

std::string fmt(const char *format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

struct Checker {
  int checks = 0, failed = 0;

  bool record(bool ok, const std::string &what, const std::string &detail) {
    ++checks;
    if (!ok)
      ++failed;
    std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", what.c_str(),
                detail.c_str());
    std::fflush(stdout);
    return ok;
  }

  /// |got - ref| <= rtol * |ref| + atol[i] for every element (a NaN
  /// passes only against a NaN, an infinity only against itself).
  bool close(const std::string &what, const Vec &got, const Vec &ref,
             double rtol, const Vec &atol) {
    double worst = 0, worstRatio = 0;
    bool ok = got.size() == ref.size();
    size_t bad = 0;
    for (size_t i = 0; ok && i < got.size(); ++i) {
      if (std::isnan(ref[i])) {
        if (!std::isnan(got[i])) {
          ok = false;
          bad = i;
        }
        continue;
      }
      if (std::isinf(ref[i])) {
        if (got[i] != ref[i]) {
          ok = false;
          bad = i;
        }
        continue;
      }
      double err = std::fabs(got[i] - ref[i]);
      if (!(err == err)) {
        ok = false;
        bad = i;
        worst = err;
        break;
      }
      double tol = rtol * std::fabs(ref[i]) + atol[i];
      if (err > worst)
        worst = err;
      double ratio = tol > 0 ? err / tol : err > 0 ? 1e9 : 0;
      if (ratio > worstRatio) {
        worstRatio = ratio;
        if (err > tol)
          bad = i;
      }
      if (err > tol)
        ok = false;
    }
    std::string detail;
    if (got.size() != ref.size())
      detail = fmt("size %zu, expected %zu", got.size(), ref.size());
    else
      detail = fmt("%zu values, max abs err %.3g, max err/tol %.3g (rtol %.3g)",
                   got.size(), worst, worstRatio, rtol);
    if (!ok && got.size() == ref.size() && !got.empty())
      detail += fmt("; e.g. [%zu] = %.9g, expected %.9g", bad, got[bad],
                    ref[bad]);
    return record(ok, what, detail);
  }
  bool close(const std::string &what, const Vec &got, const Vec &ref,
             double rtol, double atol) {
    return close(what, got, ref, rtol, Vec(ref.size(), atol));
  }

  bool exact(const std::string &what, const Vec &got, const Vec &ref) {
    bool ok = got.size() == ref.size();
    size_t bad = 0;
    for (size_t i = 0; ok && i < got.size(); ++i)
      if (!(got[i] == ref[i] || (std::isnan(got[i]) && std::isnan(ref[i])))) {
        ok = false;
        bad = i;
      }
    std::string detail =
        ok ? fmt("%zu values, equal", got.size())
           : got.size() != ref.size()
                 ? fmt("size %zu, expected %zu", got.size(), ref.size())
                 : fmt("[%zu] = %.9g, expected %.9g", bad, got[bad], ref[bad]);
    return record(ok, what, detail);
  }

  bool truth(const std::string &what, bool ok, const std::string &detail) {
    return record(ok, what, detail);
  }
};

Checker checker;

const zrt_dtype kFloatTypes[] = {ZRT_F32, ZRT_BF16};

/// Relative tolerance of a result rounded to `dtype` (half an ulp is at
/// most 2^-8 relative for bf16) on top of f32 arithmetic.
double rtolOf(zrt_dtype dtype, double f32) {
  return dtype == ZRT_BF16 ? 8e-3 : f32;
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

void testMatmul(zrt_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool ta, bool tb, int64_t sa, int64_t sb, int64_t sc,
                int64_t offset = 0) {
  Rng rng(1000 + m * 7 + n * 13 + k * 17 + ta * 2 + tb + batch * 31 + offset);
  auto extent = [&](int64_t stride, int64_t size) {
    return batch == 0 ? 0 : (batch - 1) * stride + size;
  };
  Tensor a(dt, extent(sa, m * k), offset), b(dt, extent(sb, k * n), offset);
  Tensor c(dt, extent(sc, m * n), offset);
  a.fillNormal(rng);
  b.fillNormal(rng);
  a.upload();
  b.upload();
  c.poison();
  zrt_matmul(dt, a.dev, b.dev, c.dev, batch, m, n, k, ta ? ZRT_TRANS : ZRT_NO_TRANS,
             tb ? ZRT_TRANS : ZRT_NO_TRANS, sa, sb, sc);
  Vec all = c.download(), got, ref, atol;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, abs = 0;
        for (int64_t p = 0; p < k; ++p) {
          double av = a.v[bi * sa + (ta ? p * m + i : i * k + p)];
          double bv = b.v[bi * sb + (tb ? j * k + p : p * n + j)];
          sum += av * bv;
          abs += std::fabs(av * bv);
        }
        ref.push_back(sum);
        atol.push_back((dt == ZRT_BF16 ? 1e-4 : 1e-5) * abs + 1e-30);
        got.push_back(all[bi * sc + i * n + j]);
      }
  checker.close(fmt("zrt_matmul %s batch %lld %lldx%lldx%lld %c%c strides "
                    "%lld/%lld/%lld offset %lld",
                    name(dt), (long long)batch, (long long)m, (long long)n,
                    (long long)k, ta ? 'T' : 'N', tb ? 'T' : 'N',
                    (long long)sa, (long long)sb, (long long)sc,
                    (long long)offset),
                got, ref, rtolOf(dt, 1e-5), atol);
}

void testMatmuls() {
  for (zrt_dtype dt : kFloatTypes) {
    for (int t = 0; t < 4; ++t) {
      bool ta = t & 2, tb = t & 1;
      testMatmul(dt, 1, 7, 13, 5, ta, tb, 0, 0, 0);
      testMatmul(dt, 1, 67, 95, 81, ta, tb, 0, 0, 0);
      testMatmul(dt, 3, 33, 20, 17, ta, tb, 33 * 17, 17 * 20, 33 * 20);
      testMatmul(dt, 2, 64, 48, 96, ta, tb, 64 * 96, 96 * 48, 64 * 48, 1);
    }
    testMatmul(dt, 1, 300, 257, 129, false, true, 0, 0, 0);
    testMatmul(dt, 1, 512, 768, 768, false, true, 0, 0, 0);
    testMatmul(dt, 1, 768, 768, 512, true, false, 0, 0, 0);
    testMatmul(dt, 4, 128, 96, 64, false, true, 128 * 64, 0, 128 * 96); // merged
    testMatmul(dt, 5, 16, 24, 32, false, false, 0, 32 * 24, 16 * 24); // shared A
    testMatmul(dt, 3, 16, 24, 32, true, false, 32 * 16, 0, 16 * 24);  // shared B
    testMatmul(dt, 3, 9, 11, 7, false, false, 9 * 7 + 3, 7 * 11 + 5,
               9 * 11 + 4); // padded strides
    testMatmul(dt, 40, 8, 8, 8, false, true, 64, 64, 64);
    testMatmul(dt, 2, 5, 6, 0, false, false, 0, 0, 31); // k = 0: zeros
    testMatmul(dt, 0, 5, 6, 7, false, false, 35, 42, 30);
  }
}

//===----------------------------------------------------------------------===//
// layernorm, softmax
//===----------------------------------------------------------------------===//

struct LnRef {
  Vec y, dx, dw, db;
};

LnRef layernormRef(const Vec &x, const Vec &w, const Vec &b, const Vec &dy,
                   int64_t rows, int64_t cols, double eps) {
  LnRef r;
  r.y.assign(rows * cols, 0);
  r.dx.assign(rows * cols, 0);
  r.dw.assign(cols, 0);
  r.db.assign(cols, 0);
  for (int64_t i = 0; i < rows; ++i) {
    const double *xr = &x[i * cols];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += xr[c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (xr[c] - mean) * (xr[c] - mean);
    var /= cols;
    double rstd = 1.0 / std::sqrt(var + eps);
    double mg = 0, mgx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      double xhat = (xr[c] - mean) * rstd;
      r.y[i * cols + c] = xhat * w[c] + b[c];
      double g = dy[i * cols + c] * w[c];
      mg += g;
      mgx += g * xhat;
      r.dw[c] += dy[i * cols + c] * xhat;
      r.db[c] += dy[i * cols + c];
    }
    mg /= cols;
    mgx /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      double xhat = (xr[c] - mean) * rstd;
      r.dx[i * cols + c] = rstd * (dy[i * cols + c] * w[c] - mg - xhat * mgx);
    }
  }
  return r;
}

void testLayernorm(zrt_dtype dt, int64_t rows, int64_t cols, double mean,
                   bool inPlace, int64_t offset = 0) {
  Rng rng(77 + rows * 3 + cols + inPlace + offset);
  double eps = 1e-5;
  Tensor x(dt, rows * cols, offset), w(dt, cols), b(dt, cols),
      dy(dt, rows * cols, offset);
  x.fillNormal(rng, mean, 1.0);
  w.fillNormal(rng, 1.0, 0.2);
  b.fillNormal(rng, 0.0, 0.2);
  dy.fillNormal(rng);
  LnRef ref = layernormRef(x.v, w.v, b.v, dy.v, rows, cols, eps);
  std::string tag = fmt("%s %lldx%lld mean %g%s%s", name(dt), (long long)rows,
                        (long long)cols, mean, inPlace ? " in place" : "",
                        offset ? " unaligned" : "");
  double rt = rtolOf(dt, 1e-5), at = dt == ZRT_BF16 ? 2e-2 : 2e-5;

  // Forward.
  x.upload();
  w.upload();
  b.upload();
  Tensor y(dt, rows * cols, offset);
  y.poison();
  void *out = inPlace ? x.dev : y.dev;
  zrt_layernorm(dt, x.dev, w.dev, b.dev, out, rows, cols, eps);
  checker.close("zrt_layernorm " + tag, (inPlace ? x : y).download(), ref.y,
                rt, at);

  // Backward (dx over dy when in place).
  x.upload();
  dy.upload();
  Tensor dx(dt, rows * cols, offset), dw(dt, cols), db(dt, cols);
  dx.poison();
  dw.poison();
  db.poison();
  void *dxOut = inPlace ? dy.dev : dx.dev;
  zrt_layernorm_grad(dt, dy.dev, x.dev, w.dev, dxOut, dw.dev, db.dev, rows,
                     cols, eps);
  checker.close("zrt_layernorm_grad dx " + tag, (inPlace ? dy : dx).download(),
                ref.dx, rt, at);
  double sumAt = at * std::sqrt(static_cast<double>(rows));
  checker.close("zrt_layernorm_grad dweight " + tag, dw.download(), ref.dw, rt,
                sumAt);
  checker.close("zrt_layernorm_grad dbias " + tag, db.download(), ref.db, rt,
                sumAt);
}

void testSoftmax(zrt_dtype dt, int64_t rows, int64_t cols, bool special,
                 bool inPlace, int64_t offset = 0) {
  Rng rng(91 + rows + cols * 5 + special + inPlace);
  Tensor x(dt, rows * cols, offset), dy(dt, rows * cols, offset);
  x.fillNormal(rng, 0.0, 3.0);
  dy.fillNormal(rng);
  if (special && rows >= 3 && cols >= 4) {
    x.set(0 * cols + 1, -kInf);
    x.set(1 * cols + 2, 1000.0);
    x.set(2 * cols + 0, -kInf);
    x.set(2 * cols + 3, -kInf);
  }
  Vec y(rows * cols), dx(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -kInf, s = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, x.v[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      s += std::exp(x.v[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = std::exp(x.v[r * cols + c] - m) / s;
  }
  std::string tag = fmt("%s %lldx%lld%s%s%s", name(dt), (long long)rows,
                        (long long)cols, special ? " with -inf/+1000" : "",
                        inPlace ? " in place" : "", offset ? " unaligned" : "");
  double rt = rtolOf(dt, 1e-5), at = dt == ZRT_BF16 ? 1e-4 : 1e-7;
  x.upload();
  Tensor out(dt, rows * cols, offset);
  out.poison();
  zrt_softmax(dt, x.dev, inPlace ? x.dev : out.dev, rows, cols);
  Vec got = (inPlace ? x : out).download();
  checker.close("zrt_softmax " + tag, got, y, rt, at);

  // The gradient from the y the kernel produced (as stored).
  Tensor yt(dt, rows * cols, offset);
  for (int64_t i = 0; i < rows * cols; ++i)
    yt.set(i, got[i]);
  yt.upload();
  dy.upload();
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c)
      dot += dy.v[r * cols + c] * yt.v[r * cols + c];
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] = yt.v[r * cols + c] * (dy.v[r * cols + c] - dot);
  }
  Tensor g(dt, rows * cols, offset);
  g.poison();
  zrt_softmax_grad(dt, dy.dev, yt.dev, inPlace ? dy.dev : g.dev, rows, cols);
  checker.close("zrt_softmax_grad " + tag, (inPlace ? dy : g).download(), dx,
                rt, dt == ZRT_BF16 ? 1e-3 : 1e-6);
}

void testNorms() {
  for (zrt_dtype dt : kFloatTypes) {
    testLayernorm(dt, 21, 13, 0.0, false);
    testLayernorm(dt, 5, 1500, 100.0, false);
    testLayernorm(dt, 512, 768, 0.0, false);
    testLayernorm(dt, 64, 768, 3.0, true);
    testLayernorm(dt, 33, 768, 0.0, false, 1);
    testLayernorm(dt, 3, 4096, 0.0, false);
    testSoftmax(dt, 21, 13, false, false);
    testSoftmax(dt, 5, 1500, true, false);
    testSoftmax(dt, 64, 1024, true, true);
    testSoftmax(dt, 7, 1024, false, false, 1);
    testSoftmax(dt, 3, 50304, false, false);
    // A row of -inf is NaN (as PyTorch).
    Tensor x(dt, 8), y(dt, 8);
    for (int i = 0; i < 8; ++i)
      x.set(i, -kInf);
    x.upload();
    zrt_softmax(dt, x.dev, y.dev, 1, 8);
    Vec got = y.download();
    bool allNaN = true;
    for (double v : got)
      allNaN = allNaN && std::isnan(v);
    checker.truth(fmt("zrt_softmax %s row of -inf", name(dt)), allNaN,
                  allNaN ? "NaN" : "not NaN");
  }
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

void testCausalMask(zrt_dtype dt, int64_t batch, int64_t t, int64_t s,
                    bool zero, bool inPlace) {
  Rng rng(5 + batch + t * 3 + s * 7 + zero);
  Tensor x(dt, batch * t * s), y(dt, batch * t * s);
  x.fillNormal(rng);
  x.upload();
  y.poison();
  Vec ref = x.v;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = i + 1; j < s; ++j)
        ref[(b * t + i) * s + j] = zero ? 0.0 : -kInf;
  zrt_causal_mask(dt, x.dev, inPlace ? x.dev : y.dev, batch, t, s,
                  zero ? ZRT_MASK_ZERO : ZRT_MASK_NEG_INF);
  checker.exact(fmt("zrt_causal_mask %s %lldx%lldx%lld %s%s", name(dt),
                    (long long)batch, (long long)t, (long long)s,
                    zero ? "zero" : "-inf", inPlace ? " in place" : ""),
                (inPlace ? x : y).download(), ref);
}

void testAttention(zrt_dtype dt, int64_t bh, int64_t t, int64_t s, int64_t d,
                   bool causal) {
  Rng rng(313 + bh * 5 + t * 7 + s * 11 + d * 13 + causal);
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Tensor q(dt, bh * t * d), k(dt, bh * s * d), v(dt, bh * s * d),
      dout(dt, bh * t * d);
  q.fillNormal(rng);
  k.fillNormal(rng);
  v.fillNormal(rng);
  dout.fillNormal(rng);
  Vec out(bh * t * d, 0), dq(bh * t * d, 0), dk(bh * s * d, 0),
      dv(bh * s * d, 0);
  Vec p(t * s), dp(t * s);
  for (int64_t h = 0; h < bh; ++h) {
    const double *qh = &q.v[h * t * d], *kh = &k.v[h * s * d],
                 *vh = &v.v[h * s * d], *doh = &dout.v[h * t * d];
    for (int64_t i = 0; i < t; ++i) {
      int64_t valid = causal ? std::min(i + 1, s) : s;
      double m = -kInf;
      for (int64_t j = 0; j < s; ++j) {
        double sc = 0;
        for (int64_t c = 0; c < d; ++c)
          sc += qh[i * d + c] * kh[j * d + c];
        p[i * s + j] = j < valid ? sc * scale : -kInf;
        m = std::max(m, p[i * s + j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j)
        sum += j < valid ? std::exp(p[i * s + j] - m) : 0.0;
      for (int64_t j = 0; j < s; ++j)
        p[i * s + j] = j < valid ? std::exp(p[i * s + j] - m) / sum : 0.0;
      for (int64_t c = 0; c < d; ++c) {
        double o = 0;
        for (int64_t j = 0; j < s; ++j)
          o += p[i * s + j] * vh[j * d + c];
        out[(h * t + i) * d + c] = o;
      }
      // dP = dO V^T, dS = P (dP - rowsum(P dP)).
      double dot = 0;
      for (int64_t j = 0; j < s; ++j) {
        double g = 0;
        for (int64_t c = 0; c < d; ++c)
          g += doh[i * d + c] * vh[j * d + c];
        dp[i * s + j] = g;
        dot += g * p[i * s + j];
      }
      for (int64_t j = 0; j < s; ++j)
        dp[i * s + j] = p[i * s + j] * (dp[i * s + j] - dot);
    }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < d; ++c) {
          dv[(h * s + j) * d + c] += p[i * s + j] * doh[i * d + c];
          dq[(h * t + i) * d + c] += scale * dp[i * s + j] * kh[j * d + c];
          dk[(h * s + j) * d + c] += scale * dp[i * s + j] * qh[i * d + c];
        }
  }
  const char *flash = std::getenv("ZEROC_FLASH_ATTENTION");
  std::string tag =
      fmt("%s bh %lld t %lld s %lld d %lld%s%s", name(dt), (long long)bh,
          (long long)t, (long long)s, (long long)d, causal ? " causal" : "",
          flash && flash[0] == '1' ? " (ZEROC_FLASH_ATTENTION=1)" : "");
  double rt = rtolOf(dt, 1e-5);
  double at = (dt == ZRT_BF16 ? 4e-3 : 1e-5) * std::sqrt(static_cast<double>(s));
  q.upload();
  k.upload();
  v.upload();
  dout.upload();
  Tensor o(dt, bh * t * d), gq(dt, bh * t * d), gk(dt, bh * s * d),
      gv(dt, bh * s * d);
  o.poison();
  gq.poison();
  gk.poison();
  gv.poison();
  zrt_attention(dt, q.dev, k.dev, v.dev, o.dev, bh, t, s, d, scale,
                causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
  checker.close("zrt_attention out " + tag, o.download(), out, rt, at);
  zrt_attention_grad(dt, dout.dev, q.dev, k.dev, v.dev, gq.dev, gk.dev,
                     gv.dev, bh, t, s, d, scale,
                     causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
  double gat = 2 * at;
  checker.close("zrt_attention_grad dq " + tag, gq.download(), dq, rt, gat);
  checker.close("zrt_attention_grad dk " + tag, gk.download(), dk, rt, gat);
  checker.close("zrt_attention_grad dv " + tag, gv.download(), dv, rt, gat);
}

void testAttentions() {
  for (zrt_dtype dt : kFloatTypes) {
    testCausalMask(dt, 2, 5, 9, false, false);
    testCausalMask(dt, 3, 9, 5, true, false);
    testCausalMask(dt, 2, 16, 16, false, true);
    testAttention(dt, 2, 16, 16, 8, true);
    testAttention(dt, 3, 5, 9, 4, false);
    testAttention(dt, 2, 9, 5, 4, true);
    testAttention(dt, 2, 9, 5, 4, false);
    testAttention(dt, 3, 130, 130, 64, true);
    testAttention(dt, 33, 24, 24, 16, true);
    testAttention(dt, 4, 256, 256, 64, true);
    testAttention(dt, 1, 7, 13, 3, true);
  }
  // The fused bf16 path (KernelsFlashAttention.cu): d in {32, 64, 128};
  // other cases fall back to the cuBLASLt path.
  setenv("ZEROC_FLASH_ATTENTION", "1", 1);
  testAttention(ZRT_BF16, 2, 16, 16, 32, true);
  testAttention(ZRT_BF16, 3, 130, 130, 64, true);
  testAttention(ZRT_BF16, 3, 130, 130, 64, false);
  testAttention(ZRT_BF16, 4, 256, 256, 64, true);
  testAttention(ZRT_BF16, 2, 100, 70, 64, false);
  testAttention(ZRT_BF16, 2, 100, 70, 64, true);
  testAttention(ZRT_BF16, 2, 70, 100, 64, true);
  testAttention(ZRT_BF16, 2, 64, 64, 128, true);
  testAttention(ZRT_BF16, 1, 1, 1, 64, true);
  testAttention(ZRT_BF16, 4, 1024, 1024, 64, true);
  testAttention(ZRT_F32, 2, 16, 16, 32, true); // f32: not fused
  unsetenv("ZEROC_FLASH_ATTENTION");
}

//===----------------------------------------------------------------------===//
// cross-entropy
//===----------------------------------------------------------------------===//

void testCrossEntropy(zrt_dtype dt, zrt_dtype idt, int64_t rows,
                      int64_t cols, int64_t offset = 0) {
  Rng rng(17 + rows * 3 + cols + (idt == ZRT_I64));
  Tensor logits(dt, rows * cols, offset);
  logits.fillNormal(rng, 0.0, 2.0);
  logits.upload();
  Tensor targets = randomIds(idt, rows, cols, rng);
  double total = 0;
  Vec grad(rows * cols);
  double dloss = 1.7;
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = &logits.v[r * cols];
    double m = -kInf, s = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, x[c]);
    for (int64_t c = 0; c < cols; ++c)
      s += std::exp(x[c] - m);
    int64_t t = static_cast<int64_t>(targets.v[r]);
    total += m + std::log(s) - x[t];
    for (int64_t c = 0; c < cols; ++c)
      grad[r * cols + c] =
          dloss / rows * (std::exp(x[c] - m) / s - (c == t ? 1.0 : 0.0));
  }
  std::string tag = fmt("%s %s targets %lldx%lld%s", name(dt), name(idt),
                        (long long)rows, (long long)cols,
                        offset ? " unaligned" : "");
  Scalar loss(kNaN);
  zrt_cross_entropy(dt, logits.dev, targets.dev, idt, rows, cols, loss.dev);
  checker.close("zrt_cross_entropy " + tag, {loss.get()}, {total / rows},
                1e-5, 0.0);
  Scalar dl(static_cast<float>(dloss));
  Tensor g(dt, rows * cols, offset);
  g.poison();
  zrt_cross_entropy_grad(dt, dl.dev, logits.dev, targets.dev, idt, g.dev, rows,
                         cols);
  checker.close("zrt_cross_entropy_grad " + tag, g.download(), grad,
                rtolOf(dt, 1e-5), dloss / rows * 1e-6);
  // In place over the logits.
  zrt_cross_entropy_grad(dt, dl.dev, logits.dev, targets.dev, idt, logits.dev,
                         rows, cols);
  checker.close("zrt_cross_entropy_grad in place " + tag, logits.download(),
                grad, rtolOf(dt, 1e-5), dloss / rows * 1e-6);
}

void testLosses() {
  for (zrt_dtype dt : kFloatTypes) {
    testCrossEntropy(dt, ZRT_I32, 7, 13);
    testCrossEntropy(dt, ZRT_I64, 64, 5001);
    testCrossEntropy(dt, ZRT_I32, 32, 50304);
    testCrossEntropy(dt, ZRT_I64, 16, 1024, 1);
  }
  Scalar loss(0.0f);
  Tensor none(ZRT_F32, 1);
  Tensor ids(ZRT_I32, 1);
  zrt_cross_entropy(ZRT_F32, none.dev, ids.dev, ZRT_I32, 0, 5, loss.dev);
  double l = loss.get();
  checker.truth("zrt_cross_entropy of zero rows", std::isnan(l),
                fmt("%g (NaN expected)", l));
}

//===----------------------------------------------------------------------===//
// embedding, shapes
//===----------------------------------------------------------------------===//

void testEmbedding(zrt_dtype dt, zrt_dtype idt, int64_t n, int64_t vocab,
                   int64_t cols) {
  Rng rng(23 + n + vocab * 3 + cols * 5 + (idt == ZRT_I64));
  Tensor table(dt, vocab * cols), dy(dt, n * cols);
  table.fillNormal(rng);
  dy.fillNormal(rng);
  table.upload();
  dy.upload();
  Tensor ids = randomIds(idt, n, std::max<int64_t>(1, vocab / 2), rng);
  Vec out(n * cols), grad(vocab * cols, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t id = static_cast<int64_t>(ids.v[i]);
    for (int64_t c = 0; c < cols; ++c) {
      out[i * cols + c] = table.v[id * cols + c];
      grad[id * cols + c] += dy.v[i * cols + c];
    }
  }
  std::string tag = fmt("%s %s ids n %lld vocab %lld cols %lld", name(dt),
                        name(idt), (long long)n, (long long)vocab,
                        (long long)cols);
  Tensor o(dt, n * cols), g(dt, vocab * cols);
  o.poison();
  g.poison();
  zrt_embedding(dt, table.dev, ids.dev, idt, o.dev, n, vocab, cols);
  checker.exact("zrt_embedding " + tag, o.download(), out);
  zrt_embedding_grad(dt, dy.dev, ids.dev, idt, g.dev, n, vocab, cols);
  checker.close("zrt_embedding_grad " + tag, g.download(), grad,
                rtolOf(dt, 1e-6), 1e-6);
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}

int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

void testTranspose(zrt_dtype dt, const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &perm) {
  Rng rng(29 + numelOf(shape) + perm.size());
  int64_t n = numelOf(shape);
  Tensor x(dt, n), y(dt, n);
  for (int64_t i = 0; i < n; ++i)
    x.set(i, dt == ZRT_I32 || dt == ZRT_I64
                 ? static_cast<double>(rng.below(1 << 30))
                 : rng.normal());
  x.upload();
  y.poison();
  int rank = static_cast<int>(shape.size());
  std::vector<int64_t> outShape(rank);
  for (int i = 0; i < rank; ++i)
    outShape[i] = shape[perm[i]];
  std::vector<int64_t> inStride = stridesOf(shape);
  Vec ref(n);
  for (int64_t o = 0; o < n; ++o) {
    int64_t rest = o, off = 0;
    for (int i = rank - 1; i >= 0; --i) {
      off += (rest % outShape[i]) * inStride[perm[i]];
      rest /= outShape[i];
    }
    ref[o] = x.v[off];
  }
  zrt_transpose(dt, x.dev, y.dev, rank, shape.data(), perm.data());
  checker.exact(fmt("zrt_transpose %s %s perm %s", name(dt),
                    shapeText(shape).c_str(), shapeText(perm).c_str()),
                y.download(), ref);
}

void testReduce(zrt_dtype dt, const std::vector<int64_t> &shape,
                const std::vector<uint8_t> &reduced, double scale) {
  Rng rng(31 + numelOf(shape) + reduced.size());
  int64_t n = numelOf(shape);
  int rank = static_cast<int>(shape.size());
  Tensor x(dt, n);
  x.fillNormal(rng, 0.5, 1.0);
  x.upload();
  std::vector<int64_t> outShape;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i])
      outShape.push_back(shape[i]);
  int64_t outN = numelOf(outShape);
  std::vector<int64_t> outStride = stridesOf(outShape);
  Vec ref(outN, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0, od = static_cast<int64_t>(outShape.size());
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d])
        o += idx * outStride[--od];
    }
    ref[o] += x.v[i];
  }
  for (double &r : ref)
    r = roundTo(dt, r * scale);
  Tensor y(dt, outN);
  y.poison();
  zrt_reduce_sum(dt, x.dev, y.dev, rank, shape.data(), reduced.data(), scale);
  std::string mask;
  for (uint8_t r : reduced)
    mask += r ? '1' : '0';
  // Sums in double rounded once: within an ulp of the exactly rounded sum.
  checker.close(fmt("zrt_reduce_sum %s %s mask %s scale %g", name(dt),
                    shapeText(shape).c_str(), mask.c_str(), scale),
                y.download(), ref, dt == ZRT_BF16 ? 8e-3 : 2.5e-7, 1e-9);
}

void testBroadcast(zrt_dtype dt, const std::vector<int64_t> &xShape,
                   const std::vector<int64_t> &yShape, int64_t offset = 0) {
  Rng rng(37 + numelOf(yShape));
  int64_t xn = numelOf(xShape), yn = numelOf(yShape);
  Tensor x(dt, xn, offset), y(dt, yn, offset);
  x.fillNormal(rng);
  x.upload();
  y.poison();
  int xr = static_cast<int>(xShape.size()), yr = static_cast<int>(yShape.size());
  std::vector<int64_t> xStride = stridesOf(xShape);
  Vec ref(yn);
  for (int64_t o = 0; o < yn; ++o) {
    int64_t rest = o, off = 0;
    for (int d = yr - 1; d >= 0; --d) {
      int64_t idx = rest % yShape[d];
      rest /= yShape[d];
      int xd = d - (yr - xr);
      if (xd >= 0 && xShape[xd] != 1)
        off += idx * xStride[xd];
    }
    ref[o] = x.v[off];
  }
  zrt_broadcast(dt, x.dev, xr, xShape.data(), y.dev, yr, yShape.data());
  checker.exact(fmt("zrt_broadcast %s %s -> %s%s", name(dt),
                    shapeText(xShape).c_str(), shapeText(yShape).c_str(),
                    offset ? " unaligned" : ""),
                y.download(), ref);
}

void testConcatSplit(zrt_dtype dt, const std::vector<int64_t> &sizes,
                     int64_t outer, int64_t inner) {
  Rng rng(41 + sizes.size() + outer + inner);
  int count = static_cast<int>(sizes.size());
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  std::vector<Tensor> parts;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  for (int i = 0; i < count; ++i) {
    parts.emplace_back(dt, outer * sizes[i] * inner);
    parts.back().fillNormal(rng);
    parts.back().upload();
    inputs.push_back(parts.back().dev);
  }
  Tensor whole(dt, outer * total * inner);
  whole.poison();
  Vec ref(outer * total * inner);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = 0;
    for (int i = 0; i < count; ++i) {
      int64_t w = sizes[i] * inner;
      for (int64_t j = 0; j < w; ++j)
        ref[o * total * inner + off + j] = parts[i].v[o * w + j];
      off += w;
    }
  }
  std::string tag = fmt("%s %d pieces outer %lld inner %lld", name(dt), count,
                        (long long)outer, (long long)inner);
  zrt_concat(dt, count, inputs.data(), sizes.data(), whole.dev, outer, inner);
  checker.exact("zrt_concat " + tag, whole.download(), ref);
  std::vector<Tensor> back;
  for (int i = 0; i < count; ++i) {
    back.emplace_back(dt, outer * sizes[i] * inner);
    back.back().poison();
  }
  for (int i = 0; i < count; ++i)
    outputs.push_back(back[i].dev);
  whole.v = ref;
  whole.upload();
  zrt_split(dt, whole.dev, count, outputs.data(), sizes.data(), outer, inner);
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    Vec got = back[i].download();
    for (size_t j = 0; j < got.size() && ok; ++j)
      ok = got[j] == parts[i].v[j];
  }
  checker.truth("zrt_split " + tag, ok, ok ? "equal" : "DIFFER");
}

void testPack(zrt_dtype dt, const std::vector<int64_t> &numels,
              int64_t shards) {
  Rng rng(43 + numels.size() + shards);
  int count = static_cast<int>(numels.size());
  std::vector<int64_t> chunk, offset;
  int64_t segment = 0;
  for (int64_t n : numels) {
    chunk.push_back((n + shards - 1) / shards);
    offset.push_back(segment);
    segment += chunk.back();
  }
  std::vector<Tensor> parts;
  std::vector<const void *> inputs;
  for (int i = 0; i < count; ++i) {
    parts.emplace_back(dt, numels[i]);
    parts.back().fillNormal(rng);
    parts.back().upload();
    inputs.push_back(parts.back().dev);
  }
  Tensor packed(dt, shards * segment);
  packed.poison();
  Vec ref(shards * segment, 0.0);
  for (int64_t c = 0; c < shards; ++c)
    for (int i = 0; i < count; ++i)
      for (int64_t j = 0; j < chunk[i]; ++j) {
        int64_t e = c * chunk[i] + j;
        ref[c * segment + offset[i] + j] = e < numels[i] ? parts[i].v[e] : 0.0;
      }
  std::string tag =
      fmt("%s %d tensors shards %lld", name(dt), count, (long long)shards);
  zrt_pack(dt, count, inputs.data(), numels.data(), packed.dev, shards);
  checker.exact("zrt_pack " + tag, packed.download(), ref);
  std::vector<Tensor> back;
  std::vector<void *> outputs;
  for (int i = 0; i < count; ++i) {
    back.emplace_back(dt, numels[i]);
    back.back().poison();
  }
  for (int i = 0; i < count; ++i)
    outputs.push_back(back[i].dev);
  zrt_unpack(dt, packed.dev, count, outputs.data(), numels.data(), shards);
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    Vec got = back[i].download();
    for (size_t j = 0; j < got.size() && ok; ++j)
      ok = got[j] == parts[i].v[j];
  }
  checker.truth("zrt_unpack " + tag, ok, ok ? "equal" : "DIFFER");
}

void testShapes() {
  for (zrt_dtype dt : kFloatTypes) {
    testEmbedding(dt, ZRT_I32, 40, 50, 24);
    testEmbedding(dt, ZRT_I64, 64, 17, 768);
    testEmbedding(dt, ZRT_I32, 33, 9, 13);
  }
  for (zrt_dtype dt : {ZRT_BF16, ZRT_F32, ZRT_I64}) {
    testTranspose(dt, {}, {});
    testTranspose(dt, {3, 1, 4}, {2, 1, 0});
    testTranspose(dt, {2, 3, 4, 5}, {0, 2, 1, 3});
    testTranspose(dt, {2, 3, 4, 5}, {3, 2, 1, 0});
    testTranspose(dt, {64, 130, 70}, {2, 0, 1});
    testTranspose(dt, {4, 64, 12, 64}, {0, 2, 1, 3});
    testTranspose(dt, {4, 0, 3}, {2, 1, 0});
    testTranspose(dt, {33, 65}, {1, 0});
    testTranspose(dt, {2, 3, 5, 7, 11}, {4, 0, 3, 1, 2});
  }
  testTranspose(ZRT_I32, {5, 6, 7}, {1, 2, 0});
  for (zrt_dtype dt : kFloatTypes) {
    std::vector<int64_t> shape = {3, 5, 4, 7};
    for (int mask = 0; mask < 16; ++mask) {
      std::vector<uint8_t> reduced = {uint8_t(mask & 8 ? 1 : 0),
                                      uint8_t(mask & 4 ? 1 : 0),
                                      uint8_t(mask & 2 ? 1 : 0),
                                      uint8_t(mask & 1 ? 1 : 0)};
      testReduce(dt, shape, reduced, mask == 5 ? 0.25 : 1.0);
    }
    testReduce(dt, {512, 768}, {1, 0}, 1.0);
    testReduce(dt, {4, 128, 768}, {1, 1, 0}, 1.0 / 512);
    testReduce(dt, {300, 3000}, {0, 1}, 1.0);
    testReduce(dt, {1000003}, {1}, 1.0);
    testReduce(dt, {7, 2000, 3}, {0, 1, 0}, 1.0);
    testReduce(dt, {2, 3, 4, 5, 6, 7}, {1, 0, 1, 0, 1, 0}, 1.0);
    testReduce(dt, {6, 0, 4}, {0, 1, 0}, 1.0);
    testBroadcast(dt, {768}, {512, 768});
    testBroadcast(dt, {768}, {5, 768}, 1);
    testBroadcast(dt, {37, 1}, {37, 13});
    testBroadcast(dt, {1}, {5, 7});
    testBroadcast(dt, {}, {3, 4});
    testBroadcast(dt, {2, 1, 3}, {4, 2, 5, 3});
    testBroadcast(dt, {5, 1, 1}, {5, 6, 7});
    testConcatSplit(dt, {2, 0, 3, 1}, 3, 5);
    testConcatSplit(dt, {768, 768, 768}, 64, 1);
    std::vector<int64_t> many;
    for (int i = 0; i < 21; ++i)
      many.push_back(1 + i % 4);
    testConcatSplit(dt, many, 4, 3);
    for (int64_t shards : {1, 3, 4}) {
      testPack(dt, {10, 0, 7, 33}, shards);
      std::vector<int64_t> numels;
      for (int i = 0; i < 20; ++i)
        numels.push_back(i * 37 % 101);
      testPack(dt, numels, shards);
    }
    testPack(dt, {768 * 768, 768, 3 * 768 * 768}, 4);
  }
}

//===----------------------------------------------------------------------===//
// Optimizer, copies
//===----------------------------------------------------------------------===//

void testSquaredNorm(zrt_dtype dt, int64_t n, int64_t offset) {
  Rng rng(47 + n + offset);
  Tensor x(dt, n, offset);
  x.fillNormal(rng);
  x.upload();
  double ref = 0;
  for (double v : x.v)
    ref += v * v;
  Scalar out(kNaN);
  zrt_squared_norm(dt, x.dev, n, out.dev);
  checker.close(fmt("zrt_squared_norm %s n %lld%s", name(dt), (long long)n,
                    offset ? " unaligned" : ""),
                {out.get()}, {ref}, 1e-6, 1e-30);
}

void testOptimizer() {
  for (zrt_dtype dt : kFloatTypes) {
    testSquaredNorm(dt, 1000003, 0);
    testSquaredNorm(dt, 1000003, 1);
    testSquaredNorm(dt, 5, 0);
    testSquaredNorm(dt, 0, 0);
  }
  for (double sq : {0.0, 0.25, 1.0, 4.0, 1e6}) {
    Scalar in(static_cast<float>(sq)), out(kNaN);
    double maxNorm = 1.0;
    zrt_clip_coef(in.dev, maxNorm, out.dev);
    double norm = std::sqrt(static_cast<double>(static_cast<float>(sq)));
    double ref = std::min(1.0, maxNorm / (norm + 1e-6));
    checker.close(fmt("zrt_clip_coef %g", sq), {out.get()}, {ref}, 1e-7, 0.0);
  }
  {
    Vec got, ref;
    for (int64_t s : {0, 5, 9, 10, 11, 50, 99, 100, 101, 500}) {
      got.push_back(zrt_lr_schedule(s, 6e-4, ZRT_LR_COSINE, 10, 6e-5, 100));
      double r;
      if (s < 10)
        r = 6e-4 * (s + 1) / 11.0;
      else if (s > 100)
        r = 6e-5;
      else
        r = 6e-5 + 0.5 * (1 + std::cos(3.14159265358979323846 * (s - 10) / 90.0)) *
                       (6e-4 - 6e-5);
      ref.push_back(r);
    }
    checker.close("zrt_lr_schedule cosine", got, ref, 1e-7, 0.0);
  }
  for (int64_t n : {int64_t{1003}, int64_t{4096}}) {
    for (int64_t offset : {int64_t{0}, int64_t{1}}) {
      Rng rng(53 + n + offset);
      Tensor p(ZRT_F32, n, offset), g(ZRT_F32, n, offset), m(ZRT_F32, n, offset),
          v(ZRT_F32, n, offset);
      p.fillNormal(rng);
      m.upload();
      v.upload();
      p.upload();
      Vec rp = p.v, rm(n, 0.0), rv(n, 0.0);
      double lr = 1e-3, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
      for (int64_t step = 0; step < 3; ++step) {
        g.fillNormal(rng);
        g.upload();
        zrt_adamw(static_cast<float *>(p.dev), static_cast<float *>(g.dev),
                  static_cast<float *>(m.dev), static_cast<float *>(v.dev), n,
                  static_cast<float>(lr), step, b1, b2, eps, wd);
        double t = step + 1.0;
        for (int64_t i = 0; i < n; ++i) {
          rp[i] *= 1 - lr * wd;
          rm[i] = b1 * rm[i] + (1 - b1) * g.v[i];
          rv[i] = b2 * rv[i] + (1 - b2) * g.v[i] * g.v[i];
          rp[i] -= lr / (1 - std::pow(b1, t)) *
                   (rm[i] / (std::sqrt(rv[i]) / std::sqrt(1 - std::pow(b2, t)) +
                             eps));
        }
      }
      checker.close(fmt("zrt_adamw 3 steps n %lld%s param", (long long)n,
                        offset ? " unaligned" : ""),
                    p.download(), rp, 1e-5, 1e-7);
      checker.close(fmt("zrt_adamw 3 steps n %lld%s exp_avg_sq", (long long)n,
                        offset ? " unaligned" : ""),
                    v.download(), rv, 1e-5, 1e-12);
    }
  }
  for (double momentum : {0.0, 0.9}) {
    int64_t n = 1001;
    Rng rng(59 + static_cast<int>(momentum * 10));
    Tensor p(ZRT_F32, n), g(ZRT_F32, n), buf(ZRT_F32, n);
    p.fillNormal(rng);
    p.upload();
    buf.upload();
    Vec rp = p.v, rb(n, 0.0);
    double lr = 0.01, wd = 0.01;
    for (int step = 0; step < 3; ++step) {
      g.fillNormal(rng);
      g.upload();
      zrt_sgd(static_cast<float *>(p.dev), static_cast<float *>(g.dev),
              momentum != 0 ? static_cast<float *>(buf.dev) : nullptr, n,
              static_cast<float>(lr), momentum, wd);
      for (int64_t i = 0; i < n; ++i) {
        double d = g.v[i] + wd * rp[i];
        rb[i] = momentum != 0 ? momentum * rb[i] + d : d;
        rp[i] -= lr * rb[i];
      }
    }
    checker.close(fmt("zrt_sgd 3 steps momentum %g", momentum), p.download(),
                  rp, 1e-5, 1e-7);
  }
  for (zrt_dtype dt : kFloatTypes) {
    Rng rng(61);
    Tensor x(dt, 1001), y(dt, 1001);
    x.fillNormal(rng);
    x.upload();
    y.poison();
    zrt_copy(y.dev, x.dev, x.bytes());
    checker.exact(fmt("zrt_copy %s", name(dt)), y.download(), x.v);
    std::vector<float> host(1001, -1.0f);
    zrt_read_f32(host.data(), x.dev, dt, 1001);
    Vec got(host.begin(), host.end());
    checker.exact(fmt("zrt_read_f32 %s", name(dt)), got, x.v);
  }
}

//===----------------------------------------------------------------------===//
// Failure modes
//===----------------------------------------------------------------------===//

struct FailCase {
  const char *name, *expect;
  std::function<void()> run;
};

std::vector<FailCase> failCases() {
  return {
      {"embedding-id", "zrt_embedding: id 9 at position 2 is outside [0, 5)",
       [] {
         Tensor table(ZRT_F32, 5 * 4), out(ZRT_F32, 3 * 4), ids(ZRT_I32, 3);
         ids.v = {1, 4, 9};
         ids.upload();
         zrt_embedding(ZRT_F32, table.dev, ids.dev, ZRT_I32, out.dev, 3, 5, 4);
         float host[12];
         zrt_read_f32(host, out.dev, ZRT_F32, 12);
       }},
      {"cross-entropy-target",
       "zrt_cross_entropy: target -1 at position 1 is outside [0, 6)",
       [] {
         Tensor logits(ZRT_BF16, 2 * 6), ids(ZRT_I64, 2);
         ids.v = {3, -1};
         ids.upload();
         Scalar loss;
         zrt_cross_entropy(ZRT_BF16, logits.dev, ids.dev, ZRT_I64, 2, 6,
                           loss.dev);
         float host;
         zrt_read_f32(&host, loss.dev, ZRT_F32, 1);
       }},
      {"dtype", "zrt_softmax: unsupported dtype i32 (2)",
       [] {
         Tensor x(ZRT_I32, 4);
         zrt_softmax(ZRT_I32, x.dev, x.dev, 1, 4);
       }},
      {"negative", "zrt_matmul: m must be >= 0, got -1",
       [] { zrt_matmul(ZRT_F32, nullptr, nullptr, nullptr, 1, -1, 2, 3,
                       ZRT_NO_TRANS, ZRT_NO_TRANS, 0, 0, 0); }},
  };
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--list-fail") {
      for (const FailCase &c : failCases())
        std::printf("%s: %s\n", c.name, c.expect);
      return 0;
    }
    if (arg.rfind("--fail=", 0) == 0) {
      std::string which = arg.substr(7);
      for (const FailCase &c : failCases())
        if (which == c.name) {
          c.run();
          std::printf("no failure for %s\n", c.name);
          return 3;
        }
      std::fprintf(stderr, "unknown failure case %s\n", which.c_str());
      return 2;
    }
    std::fprintf(stderr, "usage: %s [--list-fail | --fail=CASE]\n", argv[0]);
    return 2;
  }
  int device = 0;
  cudaDeviceProp prop;
  CK(cudaGetDevice(&device));
  CK(cudaGetDeviceProperties(&prop, device));
  std::printf("zeroc-rt-cuda-kernel-tests on %s (sm_%d%d, %d SMs)\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount);
  testMatmuls();
  testNorms();
  testAttentions();
  testLosses();
  testShapes();
  testOptimizer();
  std::printf("cuda kernel tests: %d checks, %d passed, %d failed\n",
              checker.checks, checker.checks - checker.failed, checker.failed);
  return checker.failed == 0 ? 0 : 1;
}
