//===- KernelTests.cpp - zrt.h's CPU kernels against double references ----===//
//
// zeroc-rt-kernel-tests checks every kernel of zrt.h's kernel section
// against straightforward double-precision loops written here, in f32 and
// bf16 (bf16 inputs are rounded first, so both sides see the same values),
// and the backward kernels also against central finite differences of the
// forward kernels in f32. Each check prints what it compared and its largest
// error; the last lines are a digest of every output (bitwise equal for
// any OMP_NUM_THREADS; ZRT_TEST_TRACE=1 prints it after each check) and the summary "kernel tests: N checks, N passed, N failed".
//
//   zeroc-rt-kernel-tests            run every check
//   zeroc-rt-kernel-tests --fail=X   call a kernel wrongly (X from --list-fail)
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"
#include "zeroc/Runtime/zrt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using Vec = std::vector<double>;
using zeroc::rt::dtypeName;
const double kInf = std::numeric_limits<double>::infinity();

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

/// A tensor stored in `dtype` (f32 or bf16), readable as doubles.
struct Buf {
  zrt_dtype dtype;
  std::vector<uint16_t> half;
  std::vector<float> full;

  Buf(zrt_dtype dtype, int64_t n) : dtype(dtype) {
    if (dtype == ZRT_BF16)
      half.assign(n, 0);
    else
      full.assign(n, 0.0f);
  }
  int64_t size() const {
    return dtype == ZRT_BF16 ? static_cast<int64_t>(half.size())
                             : static_cast<int64_t>(full.size());
  }
  void set(int64_t i, double v) {
    if (dtype == ZRT_BF16)
      half[i] = zrt_f32_to_bf16(static_cast<float>(v));
    else
      full[i] = static_cast<float>(v);
  }
  double get(int64_t i) const {
    return dtype == ZRT_BF16 ? zrt_bf16_to_f32(half[i]) : full[i];
  }
  void *data() {
    return dtype == ZRT_BF16 ? static_cast<void *>(half.data())
                             : static_cast<void *>(full.data());
  }
  const void *data() const {
    return dtype == ZRT_BF16 ? static_cast<const void *>(half.data())
                             : static_cast<const void *>(full.data());
  }
  size_t bytes() const { return size() * (dtype == ZRT_BF16 ? 2 : 4); }
  Vec values() const {
    Vec out(size());
    for (int64_t i = 0; i < size(); ++i)
      out[i] = get(i);
    return out;
  }
  /// Fills with garbage (NaN) to catch elements a kernel does not write.
  void poison() {
    for (int64_t i = 0; i < size(); ++i)
      set(i, std::numeric_limits<double>::quiet_NaN());
  }
};

Buf randomBuf(zrt_dtype dtype, int64_t n, Rng &rng, double mean = 0.0,
              double std = 1.0) {
  Buf b(dtype, n);
  for (int64_t i = 0; i < n; ++i)
    b.set(i, mean + std * rng.normal());
  return b;
}

const char *name(zrt_dtype dtype) {
  return dtype == ZRT_BF16 ? "bf16" : dtype == ZRT_F32 ? "f32" : "int";
}

/// Largest |v|.
double maxAbs(const Vec &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

struct Checker {
  int checks = 0, failed = 0;
  uint64_t digest = 1469598103934665603ull; // FNV-1a over every output

  void absorb(const void *data, size_t bytes) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < bytes; ++i)
      digest = (digest ^ p[i]) * 1099511628211ull;
  }
  void absorb(const Buf &b) { absorb(b.data(), b.bytes()); }

  bool record(bool ok, const std::string &what, const std::string &detail) {
    ++checks;
    if (!ok)
      ++failed;
    std::printf("%s %s: %s\n", ok ? "ok  " : "FAIL", what.c_str(),
                detail.c_str());
    if (std::getenv("ZRT_TEST_TRACE"))
      std::printf("  digest so far %016llx\n",
                  static_cast<unsigned long long>(digest));
    return ok;
  }

  /// |got - ref| <= rtol * |ref| + atol for every element (NaN fails, equal
  /// infinities pass).
  bool close(const std::string &what, const Vec &got, const Vec &ref,
             double rtol, double atol) {
    double worst = 0, worstRatio = 0;
    bool ok = got.size() == ref.size();
    for (size_t i = 0; ok && i < got.size(); ++i) {
      if (std::isinf(ref[i]) && got[i] == ref[i])
        continue;
      double err = std::fabs(got[i] - ref[i]);
      if (!(err == err)) { // NaN
        ok = false;
        worst = err;
        break;
      }
      double tol = rtol * std::fabs(ref[i]) + atol;
      worst = std::max(worst, err);
      worstRatio = std::max(worstRatio, tol > 0 ? err / tol : err > 0 ? 1e9 : 0);
      ok = ok && err <= tol;
    }
    char detail[256];
    std::snprintf(detail, sizeof(detail),
                  "%zu values, max abs err %.3g, max err/tol %.3g (rtol %.3g, "
                  "atol %.3g)",
                  got.size(), worst, worstRatio, rtol, atol);
    return record(ok, what, detail);
  }

  bool exact(const std::string &what, const void *got, const void *ref,
             size_t bytes) {
    bool ok = std::memcmp(got, ref, bytes) == 0;
    char detail[128];
    std::snprintf(detail, sizeof(detail), "%zu bytes, %s", bytes,
                  ok ? "bitwise equal" : "DIFFER");
    return record(ok, what, detail);
  }

  bool truth(const std::string &what, bool ok, const std::string &detail) {
    return record(ok, what, detail);
  }
};

Checker checker;

/// Tolerances by dtype for results that are sums of `terms` products of
/// magnitude about `mag`: bf16 rounds the result (2^-8 relative) on top of
/// the f32 accumulation.
double rtolFor(zrt_dtype dtype) { return dtype == ZRT_BF16 ? 4e-3 : 2e-6; }

/// Central differences dL/dx_i of L over every element of x (f32).
Vec finiteDiff(std::vector<float> x,
               const std::function<double(const std::vector<float> &)> &loss,
               double h) {
  Vec grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float saved = x[i];
    x[i] = static_cast<float>(saved + h);
    double up = loss(x);
    double hUp = static_cast<double>(x[i]) - saved;
    x[i] = static_cast<float>(saved - h);
    double down = loss(x);
    double hDown = saved - static_cast<double>(x[i]);
    x[i] = saved;
    grad[i] = (up - down) / (hUp + hDown);
  }
  return grad;
}

/// sum(w * y) in double.
double weighted(const std::vector<float> &y, const Vec &w) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i)
    s += w[i] * y[i];
  return s;
}

Vec toVec(const std::vector<float> &v) { return Vec(v.begin(), v.end()); }
std::vector<float> toFloats(const Vec &v) {
  return std::vector<float>(v.begin(), v.end());
}

/// Compares an analytic gradient with finite differences: the tolerance is
/// relative to the gradient's largest entry.
void checkFd(const std::string &what, const Vec &analytic, const Vec &fd,
             double rel = 5e-3) {
  double scale = std::max(maxAbs(fd), 1e-3);
  checker.close(what + " vs finite differences", analytic, fd, 0.0,
                rel * scale);
}

//===----------------------------------------------------------------------===//
// exp
//===----------------------------------------------------------------------===//

void testExp() {
  // Units in the last place of expNonPositive, as the kernels run it (the
  // vectorized clone for this CPU), against the correctly rounded f32 exp,
  // over every 97th f32 in [-87.3, 0].
  std::vector<float> xs;
  uint32_t lo = 0x80000000u, hi;
  float loValue = -87.3f;
  std::memcpy(&hi, &loValue, 4);
  for (uint32_t bits = lo; bits <= hi; bits += 97) {
    float x;
    std::memcpy(&x, &bits, 4);
    xs.push_back(x);
  }
  std::vector<float> ys(xs.size());
  zeroc::rt::expRowForTesting(xs.data(), ys.data(),
                              static_cast<int64_t>(xs.size()));
  double worstUlp = 0;
  float at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double exact = std::exp(static_cast<double>(xs[i]));
    float rounded = static_cast<float>(exact);
    if (rounded < std::numeric_limits<float>::min())
      continue; // subnormal results: flushed to 0 below -87.34 only
    float ulp = std::nextafter(rounded, 2 * rounded + 1) - rounded;
    double err = std::fabs(ys[i] - exact) / ulp;
    if (err > worstUlp) {
      worstUlp = err;
      at = xs[i];
    }
  }
  char detail[160];
  std::snprintf(detail, sizeof(detail),
                "%zu arguments, max error %.3f ulp (at %.9g) over [-87.3, 0]",
                xs.size(), worstUlp, at);
  checker.truth("expNonPositive accuracy", worstUlp <= 2.0, detail);
  float special[4] = {-INFINITY, 0.0f, -200.0f, NAN}, out[4];
  zeroc::rt::expRowForTesting(special, out, 4);
  bool ok = out[0] == 0.0f && out[1] == 1.0f && out[2] == 0.0f &&
            std::isnan(out[3]) && zeroc::rt::expNonPositive(-INFINITY) == 0 &&
            zeroc::rt::expNonPositive(0.0f) == 1.0f;
  checker.truth("expNonPositive special values", ok,
                "exp(-inf) = 0, exp(0) = 1, exp(-200) = 0, exp(NaN) = NaN");
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulCase {
  int64_t batch, m, n, k;
  bool ta, tb;
  // Strides: -1 = dense (m*k, k*n, m*n), 0 = shared, else as given.
  int64_t sa, sb, sc;
};

void testMatmul(zrt_dtype dtype, MatmulCase c, Rng &rng,
                const char *note = "") {
  int64_t sa = c.sa < 0 ? c.m * c.k : c.sa;
  int64_t sb = c.sb < 0 ? c.k * c.n : c.sb;
  int64_t sc = c.sc < 0 ? c.m * c.n : c.sc;
  auto extent = [&](int64_t stride, int64_t one) {
    return c.batch == 0 ? 0 : (c.batch - 1) * stride + one;
  };
  Buf a = randomBuf(dtype, extent(sa, c.m * c.k), rng);
  Buf b = randomBuf(dtype, extent(sb, c.k * c.n), rng);
  Buf out(dtype, extent(sc, c.m * c.n));
  out.poison();
  zrt_matmul(dtype, a.data(), b.data(), out.data(), c.batch, c.m, c.n, c.k,
             c.ta ? ZRT_TRANS : ZRT_NO_TRANS, c.tb ? ZRT_TRANS : ZRT_NO_TRANS,
             sa, sb, sc);
  checker.absorb(out);
  Vec got, ref;
  double mag = 0;
  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, abs = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = a.get(bi * sa + (c.ta ? p * c.m + i : i * c.k + p));
          double y = b.get(bi * sb + (c.tb ? j * c.k + p : p * c.n + j));
          sum += x * y;
          abs += std::fabs(x * y);
        }
        ref.push_back(sum);
        mag = std::max(mag, abs);
        got.push_back(out.get(bi * sc + i * c.n + j));
      }
  char what[200];
  std::snprintf(what, sizeof(what),
                "matmul %s batch=%lld %lldx%lldx%lld ta=%d tb=%d strides "
                "a=%lld b=%lld c=%lld%s",
                name(dtype), (long long)c.batch, (long long)c.m,
                (long long)c.n, (long long)c.k, c.ta, c.tb, (long long)sa,
                (long long)sb, (long long)sc, note);
  checker.close(what, got, ref, rtolFor(dtype),
                (dtype == ZRT_BF16 ? 1e-4 : 2e-6) * std::max(mag, 1.0));
}

void testMatmuls() {
  Rng rng(1);
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        bool a = ta, b = tb;
        testMatmul(dtype, {1, 7, 13, 5, a, b, -1, -1, -1}, rng);
        testMatmul(dtype, {3, 7, 13, 5, a, b, -1, -1, -1}, rng);
        testMatmul(dtype, {3, 7, 13, 5, a, b, -1, 0, -1}, rng, " (shared b)");
        testMatmul(dtype, {3, 7, 13, 5, a, b, 0, -1, -1}, rng, " (shared a)");
        testMatmul(dtype, {3, 7, 13, 5, a, b, 7 * 5 + 3, 13 * 5 + 1,
                           7 * 13 + 2},
                   rng, " (padded strides)");
        testMatmul(dtype, {40, 7, 13, 5, a, b, -1, -1, -1}, rng,
                   " (many small)");
        testMatmul(dtype, {2, 67, 95, 81, a, b, -1, -1, -1}, rng);
      }
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    testMatmul(dtype, {1, 300, 257, 129, false, true, -1, -1, -1}, rng,
               " (many tiles)");
    testMatmul(dtype, {4, 7, 13, 0, false, false, -1, -1, -1}, rng, " (k=0)");
    testMatmul(dtype, {0, 7, 13, 5, false, false, -1, -1, -1}, rng,
               " (batch=0)");
  }
  // bf16 products run in output tiles with k in chunks: make them small
  // (5 x 7 outputs, k chunks of 4) to cut every odd size unevenly.
  zeroc::rt::setMatmulTilesForTesting(5, 7, 4);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      testMatmul(ZRT_BF16, {2, 23, 13, 21, ta != 0, tb != 0, -1, -1, -1},
                 rng, " (5x7 tiles, k chunks of 4)");
      testMatmul(ZRT_BF16, {3, 7, 13, 5, ta != 0, tb != 0, 0, 13 * 5 + 1,
                            7 * 13 + 2},
                 rng, " (5x7 tiles, k chunks of 4, shared a)");
    }
  zeroc::rt::setMatmulTilesForTesting(0, 0, 0);
}

//===----------------------------------------------------------------------===//
// LayerNorm and softmax
//===----------------------------------------------------------------------===//

void refLayernorm(const Vec &x, const Vec &w, const Vec &b, int64_t rows,
                  int64_t cols, double eps, Vec &y) {
  y.assign(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= cols;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = (x[r * cols + c] - mean) * rstd * w[c] + b[c];
  }
}

void refLayernormGrad(const Vec &dy, const Vec &x, const Vec &w, int64_t rows,
                      int64_t cols, double eps, Vec &dx, Vec &dw, Vec &db) {
  dx.assign(rows * cols, 0);
  dw.assign(cols, 0);
  db.assign(cols, 0);
  Vec xhat(cols), g(cols);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= cols;
    double rstd = 1.0 / std::sqrt(var + eps), mg = 0, mgx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      xhat[c] = (x[r * cols + c] - mean) * rstd;
      g[c] = dy[r * cols + c] * w[c];
      mg += g[c];
      mgx += g[c] * xhat[c];
      dw[c] += dy[r * cols + c] * xhat[c];
      db[c] += dy[r * cols + c];
    }
    mg /= cols;
    mgx /= cols;
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] = rstd * (g[c] - mg - xhat[c] * mgx);
  }
}

void testLayernorm(zrt_dtype dtype, int64_t rows, int64_t cols, double offset,
                   Rng &rng) {
  double eps = 1e-5;
  Buf x = randomBuf(dtype, rows * cols, rng, offset, 1.0);
  Buf w = randomBuf(dtype, cols, rng, 1.0, 0.5);
  Buf b = randomBuf(dtype, cols, rng, 0.0, 0.5);
  Buf dy = randomBuf(dtype, rows * cols, rng);
  Buf y(dtype, rows * cols), dx(dtype, rows * cols), dw(dtype, cols),
      db(dtype, cols);
  y.poison();
  dx.poison();
  dw.poison();
  db.poison();
  zrt_layernorm(dtype, x.data(), w.data(), b.data(), y.data(), rows, cols,
                eps);
  zrt_layernorm_grad(dtype, dy.data(), x.data(), w.data(), dx.data(),
                     dw.data(), db.data(), rows, cols, eps);
  for (Buf *out : {&y, &dx, &dw, &db})
    checker.absorb(*out);
  Vec ry, rdx, rdw, rdb;
  refLayernorm(x.values(), w.values(), b.values(), rows, cols, eps, ry);
  refLayernormGrad(dy.values(), x.values(), w.values(), rows, cols, eps, rdx,
                   rdw, rdb);
  char what[128];
  std::snprintf(what, sizeof(what), "layernorm %s %lldx%lld mean %g",
                name(dtype), (long long)rows, (long long)cols, offset);
  double rtol = rtolFor(dtype), unit = dtype == ZRT_BF16 ? 1e-2 : 1e-5;
  checker.close(std::string(what) + " y", y.values(), ry, rtol, unit);
  checker.close(std::string(what) + " grad dx", dx.values(), rdx, rtol,
                unit * maxAbs(rdx));
  checker.close(std::string(what) + " grad dweight", dw.values(), rdw, rtol,
                unit * std::sqrt(rows));
  checker.close(std::string(what) + " grad dbias", db.values(), rdb, rtol,
                unit * std::sqrt(rows));
}

void testLayernormFd(Rng &rng) {
  int64_t rows = 3, cols = 7;
  double eps = 1e-5;
  Vec x = randomBuf(ZRT_F32, rows * cols, rng).values();
  Vec w = randomBuf(ZRT_F32, cols, rng, 1.0, 0.5).values();
  Vec b = randomBuf(ZRT_F32, cols, rng).values();
  Vec dy = randomBuf(ZRT_F32, rows * cols, rng).values();
  auto forward = [&](const std::vector<float> &xf, const std::vector<float> &wf,
                     const std::vector<float> &bf) {
    std::vector<float> y(rows * cols);
    zrt_layernorm(ZRT_F32, xf.data(), wf.data(), bf.data(), y.data(), rows,
                  cols, eps);
    return weighted(y, dy);
  };
  std::vector<float> xf = toFloats(x), wf = toFloats(w), bf = toFloats(b),
                     dyf = toFloats(dy);
  std::vector<float> dx(rows * cols), dw(cols), db(cols);
  zrt_layernorm_grad(ZRT_F32, dyf.data(), xf.data(), wf.data(), dx.data(),
                     dw.data(), db.data(), rows, cols, eps);
  double h = 1e-2;
  checkFd("layernorm_grad f32 3x7 dx", toVec(dx),
          finiteDiff(xf, [&](auto &v) { return forward(v, wf, bf); }, h));
  checkFd("layernorm_grad f32 3x7 dweight", toVec(dw),
          finiteDiff(wf, [&](auto &v) { return forward(xf, v, bf); }, h));
  checkFd("layernorm_grad f32 3x7 dbias", toVec(db),
          finiteDiff(bf, [&](auto &v) { return forward(xf, wf, v); }, h));
}

void refSoftmax(const Vec &x, int64_t rows, int64_t cols, Vec &y) {
  y.assign(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double max = -kInf, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      max = std::max(max, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(x[r * cols + c] - max);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = std::exp(x[r * cols + c] - max) / sum;
  }
}

void testSoftmax(zrt_dtype dtype, int64_t rows, int64_t cols, Rng &rng) {
  Buf x = randomBuf(dtype, rows * cols, rng, 0.0, 3.0);
  // Row 0 has masked (-inf) entries, row 1 huge values.
  for (int64_t c = 0; c < cols; c += 3)
    x.set(c, -kInf);
  if (rows > 1)
    for (int64_t c = 0; c < cols; ++c)
      x.set(cols + c, 1000.0 + c % 5);
  Buf y(dtype, rows * cols), dy = randomBuf(dtype, rows * cols, rng),
      dx(dtype, rows * cols);
  y.poison();
  dx.poison();
  zrt_softmax(dtype, x.data(), y.data(), rows, cols);
  zrt_softmax_grad(dtype, dy.data(), y.data(), dx.data(), rows, cols);
  checker.absorb(y);
  checker.absorb(dx);
  Vec ry;
  refSoftmax(x.values(), rows, cols, ry);
  // The gradient's reference takes the kernel's own y (as the op does).
  Vec yv = y.values(), dyv = dy.values(), rdx(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c)
      dot += dyv[r * cols + c] * yv[r * cols + c];
    for (int64_t c = 0; c < cols; ++c)
      rdx[r * cols + c] = yv[r * cols + c] * (dyv[r * cols + c] - dot);
  }
  char what[128];
  std::snprintf(what, sizeof(what), "softmax %s %lldx%lld", name(dtype),
                (long long)rows, (long long)cols);
  double unit = dtype == ZRT_BF16 ? 1e-4 : 1e-7;
  checker.close(std::string(what) + " y", y.values(), ry, rtolFor(dtype) * 2,
                unit);
  checker.close(std::string(what) + " grad dx", dx.values(), rdx,
                rtolFor(dtype) * 2, unit * 10);
}

void testSoftmaxFd(Rng &rng) {
  int64_t rows = 3, cols = 9;
  std::vector<float> x = toFloats(randomBuf(ZRT_F32, rows * cols, rng).values());
  Vec dy = randomBuf(ZRT_F32, rows * cols, rng).values();
  std::vector<float> dyf = toFloats(dy), y(rows * cols), dx(rows * cols);
  zrt_softmax(ZRT_F32, x.data(), y.data(), rows, cols);
  zrt_softmax_grad(ZRT_F32, dyf.data(), y.data(), dx.data(), rows, cols);
  checkFd("softmax_grad f32 3x9 dx", toVec(dx),
          finiteDiff(x,
                     [&](const std::vector<float> &v) {
                       std::vector<float> out(rows * cols);
                       zrt_softmax(ZRT_F32, v.data(), out.data(), rows, cols);
                       return weighted(out, dy);
                     },
                     1e-2));
}

void testCausalMask() {
  Rng rng(5);
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16})
    for (auto [t, s] : {std::pair<int64_t, int64_t>{5, 7}, {7, 5}, {6, 6}})
      for (int zero = 0; zero < 2; ++zero)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          int64_t batch = 3;
          Buf x = randomBuf(dtype, batch * t * s, rng);
          Vec orig = x.values();
          Buf y(dtype, batch * t * s);
          y.poison();
          zrt_causal_mask(dtype, x.data(), inPlace ? x.data() : y.data(),
                          batch, t, s, zero ? ZRT_MASK_ZERO : ZRT_MASK_NEG_INF);
          const Buf &out = inPlace ? x : y;
          checker.absorb(out);
          Vec got = out.values(), ref(orig.size());
          for (int64_t i = 0; i < batch * t * s; ++i) {
            int64_t row = (i / s) % t, col = i % s;
            ref[i] = col > row ? (zero ? 0.0 : -kInf) : orig[i];
          }
          char what[128];
          std::snprintf(what, sizeof(what),
                        "causal_mask %s [%lld, %lld, %lld] %s%s", name(dtype),
                        (long long)batch, (long long)t, (long long)s,
                        zero ? "zero" : "-inf", inPlace ? " in place" : "");
          checker.close(what, got, ref, 0.0, 0.0);
        }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttnShape {
  int64_t bh, t, s, d;
  bool causal;
};

void refAttentionProbs(const Vec &q, const Vec &k, const AttnShape &a,
                       int64_t h, double scale, Vec &p) {
  p.assign(a.t * a.s, 0);
  Vec scores(a.t * a.s);
  for (int64_t i = 0; i < a.t; ++i)
    for (int64_t j = 0; j < a.s; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < a.d; ++c)
        dot += q[(h * a.t + i) * a.d + c] * k[(h * a.s + j) * a.d + c];
      scores[i * a.s + j] = a.causal && j > i ? -kInf : scale * dot;
    }
  refSoftmax(scores, a.t, a.s, p);
}

void refAttention(const Vec &q, const Vec &k, const Vec &v, const AttnShape &a,
                  double scale, Vec &out) {
  out.assign(a.bh * a.t * a.d, 0);
  Vec p;
  for (int64_t h = 0; h < a.bh; ++h) {
    refAttentionProbs(q, k, a, h, scale, p);
    for (int64_t i = 0; i < a.t; ++i)
      for (int64_t c = 0; c < a.d; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < a.s; ++j)
          sum += p[i * a.s + j] * v[(h * a.s + j) * a.d + c];
        out[(h * a.t + i) * a.d + c] = sum;
      }
  }
}

void refAttentionGrad(const Vec &dout, const Vec &q, const Vec &k,
                      const Vec &v, const AttnShape &a, double scale, Vec &dq,
                      Vec &dk, Vec &dv) {
  dq.assign(a.bh * a.t * a.d, 0);
  dk.assign(a.bh * a.s * a.d, 0);
  dv.assign(a.bh * a.s * a.d, 0);
  Vec p, dp(a.t * a.s);
  for (int64_t h = 0; h < a.bh; ++h) {
    refAttentionProbs(q, k, a, h, scale, p);
    auto Q = [&](int64_t i, int64_t c) { return q[(h * a.t + i) * a.d + c]; };
    auto K = [&](int64_t j, int64_t c) { return k[(h * a.s + j) * a.d + c]; };
    auto V = [&](int64_t j, int64_t c) { return v[(h * a.s + j) * a.d + c]; };
    auto DO = [&](int64_t i, int64_t c) {
      return dout[(h * a.t + i) * a.d + c];
    };
    for (int64_t j = 0; j < a.s; ++j)
      for (int64_t c = 0; c < a.d; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < a.t; ++i)
          sum += p[i * a.s + j] * DO(i, c);
        dv[(h * a.s + j) * a.d + c] = sum;
      }
    for (int64_t i = 0; i < a.t; ++i) {
      double dot = 0;
      for (int64_t j = 0; j < a.s; ++j) {
        double sum = 0;
        for (int64_t c = 0; c < a.d; ++c)
          sum += DO(i, c) * V(j, c);
        dp[i * a.s + j] = sum;
        dot += sum * p[i * a.s + j];
      }
      for (int64_t j = 0; j < a.s; ++j)
        dp[i * a.s + j] = p[i * a.s + j] * (dp[i * a.s + j] - dot);
    }
    for (int64_t i = 0; i < a.t; ++i)
      for (int64_t c = 0; c < a.d; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < a.s; ++j)
          sum += dp[i * a.s + j] * K(j, c);
        dq[(h * a.t + i) * a.d + c] = scale * sum;
      }
    for (int64_t j = 0; j < a.s; ++j)
      for (int64_t c = 0; c < a.d; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < a.t; ++i)
          sum += dp[i * a.s + j] * Q(i, c);
        dk[(h * a.s + j) * a.d + c] = scale * sum;
      }
  }
}

std::string attnName(const char *what, zrt_dtype dtype, const AttnShape &a) {
  char text[160];
  std::snprintf(text, sizeof(text), "%s %s bh=%lld t=%lld s=%lld d=%lld%s",
                what, name(dtype), (long long)a.bh, (long long)a.t,
                (long long)a.s, (long long)a.d, a.causal ? " causal" : "");
  return text;
}

void testAttention(zrt_dtype dtype, AttnShape a, Rng &rng) {
  double scale = 1.0 / std::sqrt(static_cast<double>(a.d));
  Buf q = randomBuf(dtype, a.bh * a.t * a.d, rng);
  Buf k = randomBuf(dtype, a.bh * a.s * a.d, rng);
  Buf v = randomBuf(dtype, a.bh * a.s * a.d, rng);
  Buf dout = randomBuf(dtype, a.bh * a.t * a.d, rng);
  Buf out(dtype, a.bh * a.t * a.d), dq(dtype, a.bh * a.t * a.d),
      dk(dtype, a.bh * a.s * a.d), dv(dtype, a.bh * a.s * a.d);
  for (Buf *b : {&out, &dq, &dk, &dv})
    b->poison();
  zrt_attention(dtype, q.data(), k.data(), v.data(), out.data(), a.bh, a.t,
                a.s, a.d, scale, a.causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
  zrt_attention_grad(dtype, dout.data(), q.data(), k.data(), v.data(),
                     dq.data(), dk.data(), dv.data(), a.bh, a.t, a.s, a.d,
                     scale, a.causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
  for (Buf *b : {&out, &dq, &dk, &dv})
    checker.absorb(*b);
  Vec rout, rdq, rdk, rdv;
  refAttention(q.values(), k.values(), v.values(), a, scale, rout);
  refAttentionGrad(dout.values(), q.values(), k.values(), v.values(), a, scale,
                   rdq, rdk, rdv);
  double rtol = rtolFor(dtype), unit = dtype == ZRT_BF16 ? 2e-3 : 2e-6;
  checker.close(attnName("attention", dtype, a) + " out", out.values(), rout,
                rtol, unit);
  double t = std::sqrt(static_cast<double>(std::max(a.t, a.s)));
  checker.close(attnName("attention_grad", dtype, a) + " dq", dq.values(), rdq,
                rtol, unit * t);
  checker.close(attnName("attention_grad", dtype, a) + " dk", dk.values(), rdk,
                rtol, unit * t);
  checker.close(attnName("attention_grad", dtype, a) + " dv", dv.values(), rdv,
                rtol, unit * t);
}

void testAttentionFd(AttnShape a, Rng &rng) {
  double scale = 1.0 / std::sqrt(static_cast<double>(a.d));
  std::vector<float> q = toFloats(randomBuf(ZRT_F32, a.bh * a.t * a.d, rng).values());
  std::vector<float> k = toFloats(randomBuf(ZRT_F32, a.bh * a.s * a.d, rng).values());
  std::vector<float> v = toFloats(randomBuf(ZRT_F32, a.bh * a.s * a.d, rng).values());
  Vec dout = randomBuf(ZRT_F32, a.bh * a.t * a.d, rng).values();
  std::vector<float> doutf = toFloats(dout), dq(q.size()), dk(k.size()),
                     dv(v.size());
  zrt_attention_grad(ZRT_F32, doutf.data(), q.data(), k.data(), v.data(),
                     dq.data(), dk.data(), dv.data(), a.bh, a.t, a.s, a.d,
                     scale, a.causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
  auto loss = [&](const std::vector<float> &qq, const std::vector<float> &kk,
                  const std::vector<float> &vv) {
    std::vector<float> out(a.bh * a.t * a.d);
    zrt_attention(ZRT_F32, qq.data(), kk.data(), vv.data(), out.data(), a.bh,
                  a.t, a.s, a.d, scale, a.causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
    return weighted(out, dout);
  };
  double h = 1e-2;
  std::string base = attnName("attention_grad", ZRT_F32, a);
  checkFd(base + " dq", toVec(dq),
          finiteDiff(q, [&](auto &x) { return loss(x, k, v); }, h));
  checkFd(base + " dk", toVec(dk),
          finiteDiff(k, [&](auto &x) { return loss(q, x, v); }, h));
  checkFd(base + " dv", toVec(dv),
          finiteDiff(v, [&](auto &x) { return loss(q, k, x); }, h));
}

void testAttentions() {
  Rng rng(7);
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    testAttention(dtype, {3, 7, 7, 5, true}, rng);
    testAttention(dtype, {3, 7, 7, 5, false}, rng);
    testAttention(dtype, {2, 5, 9, 4, false}, rng);  // t < s
    testAttention(dtype, {2, 9, 5, 4, false}, rng);  // t > s
    testAttention(dtype, {2, 9, 5, 4, true}, rng);   // causal, t > s
    testAttention(dtype, {2, 130, 130, 16, true}, rng); // row blocks, groups
    testAttention(dtype, {2, 130, 71, 16, false}, rng);
    testAttention(dtype, {33, 10, 12, 4, true}, rng); // one task per head
  }
  testAttentionFd({2, 5, 7, 4, false}, rng);
  testAttentionFd({2, 6, 6, 4, true}, rng);
}

//===----------------------------------------------------------------------===//
// Cross-entropy and embedding
//===----------------------------------------------------------------------===//

std::vector<int64_t> randomIds(int64_t n, int64_t limit, Rng &rng) {
  std::vector<int64_t> ids(n);
  for (int64_t &id : ids)
    id = rng.below(limit);
  return ids;
}

/// The ids as an i32 or i64 array.
struct Ids {
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  zrt_dtype dtype;
  Ids(const std::vector<int64_t> &ids, zrt_dtype dtype)
      : i32(ids.begin(), ids.end()), i64(ids), dtype(dtype) {}
  const void *data() const {
    return dtype == ZRT_I32 ? static_cast<const void *>(i32.data())
                            : static_cast<const void *>(i64.data());
  }
};

void testCrossEntropy(zrt_dtype dtype, zrt_dtype idDtype, int64_t rows,
                      int64_t cols, Rng &rng) {
  Buf logits = randomBuf(dtype, rows * cols, rng, 0.0, 2.0);
  std::vector<int64_t> targets = randomIds(rows, cols, rng);
  Ids ids(targets, idDtype);
  float dloss = 0.7f;
  float loss = 0;
  zrt_cross_entropy(dtype, logits.data(), ids.data(), idDtype, rows, cols,
                    &loss);
  Buf dlogits(dtype, rows * cols);
  dlogits.poison();
  zrt_cross_entropy_grad(dtype, &dloss, logits.data(), ids.data(), idDtype,
                         dlogits.data(), rows, cols);
  checker.absorb(&loss, sizeof(loss));
  checker.absorb(dlogits);
  Vec x = logits.values(), p, rgrad(rows * cols);
  refSoftmax(x, rows, cols, p);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double max = -kInf, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      max = std::max(max, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(x[r * cols + c] - max);
    total += max + std::log(sum) - x[r * cols + targets[r]];
    for (int64_t c = 0; c < cols; ++c)
      rgrad[r * cols + c] =
          dloss * (p[r * cols + c] - (c == targets[r] ? 1.0 : 0.0)) / rows;
  }
  char what[128];
  std::snprintf(what, sizeof(what), "cross_entropy %s targets %s %lldx%lld",
                name(dtype), idDtype == ZRT_I32 ? "i32" : "i64",
                (long long)rows, (long long)cols);
  checker.close(std::string(what) + " loss", Vec{loss}, Vec{total / rows},
                2e-6, 1e-6);
  checker.close(std::string(what) + " grad", dlogits.values(), rgrad,
                rtolFor(dtype) * 2, (dtype == ZRT_BF16 ? 1e-5 : 1e-8) / rows);
}

void testCrossEntropyFd(Rng &rng) {
  int64_t rows = 3, cols = 11;
  std::vector<float> x =
      toFloats(randomBuf(ZRT_F32, rows * cols, rng, 0.0, 2.0).values());
  Ids ids(randomIds(rows, cols, rng), ZRT_I64);
  float dloss = 1.3f;
  std::vector<float> grad(rows * cols);
  zrt_cross_entropy_grad(ZRT_F32, &dloss, x.data(), ids.data(), ZRT_I64,
                         grad.data(), rows, cols);
  checkFd("cross_entropy_grad f32 3x11", toVec(grad),
          finiteDiff(x,
                     [&](const std::vector<float> &v) {
                       float loss = 0;
                       zrt_cross_entropy(ZRT_F32, v.data(), ids.data(),
                                         ZRT_I64, rows, cols, &loss);
                       return dloss * static_cast<double>(loss);
                     },
                     1e-2));
}

void testEmbedding(zrt_dtype dtype, zrt_dtype idDtype, int64_t n,
                   int64_t vocab, int64_t cols, Rng &rng) {
  Buf table = randomBuf(dtype, vocab * cols, rng);
  std::vector<int64_t> raw = randomIds(n, vocab / 2 + 1, rng); // repeats,
  Ids ids(raw, idDtype);                                       // unused rows
  Buf out(dtype, n * cols), dy = randomBuf(dtype, n * cols, rng),
      dtable(dtype, vocab * cols);
  out.poison();
  dtable.poison();
  zrt_embedding(dtype, table.data(), ids.data(), idDtype, out.data(), n, vocab,
                cols);
  zrt_embedding_grad(dtype, dy.data(), ids.data(), idDtype, dtable.data(), n,
                     vocab, cols);
  checker.absorb(out);
  checker.absorb(dtable);
  Vec ref(n * cols), rgrad(vocab * cols, 0.0), t = table.values(),
      g = dy.values();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < cols; ++c) {
      ref[i * cols + c] = t[raw[i] * cols + c];
      rgrad[raw[i] * cols + c] += g[i * cols + c];
    }
  char what[128];
  std::snprintf(what, sizeof(what), "embedding %s ids %s n=%lld vocab=%lld "
                "cols=%lld", name(dtype), idDtype == ZRT_I32 ? "i32" : "i64",
                (long long)n, (long long)vocab, (long long)cols);
  checker.close(what, out.values(), ref, 0.0, 0.0);
  // Sums in double, rounded once: within half an ulp of the exact sum.
  checker.close(std::string(what) + " grad", dtable.values(), rgrad,
                dtype == ZRT_BF16 ? 1.0 / 256 : 1.2e-7, 0.0);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t> &index,
              const std::vector<int64_t> &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Elements of 1, 2, 4 or 8 bytes as raw integers, filled with a pattern.
template <typename E>
std::vector<E> pattern(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<E> v(n);
  for (E &e : v)
    e = static_cast<E>(rng.next());
  return v;
}

template <typename E>
void testTransposeOf(zrt_dtype dtype, const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &perm) {
  int64_t n = numel(shape);
  std::vector<E> x = pattern<E>(n, 11), y(n, E(0x5a)), ref(n);
  std::vector<int64_t> outShape(shape.size());
  for (size_t i = 0; i < perm.size(); ++i)
    outShape[i] = shape[perm[i]];
  for (int64_t o = 0; o < n; ++o) {
    std::vector<int64_t> oi = unravel(o, outShape), ii(shape.size());
    for (size_t i = 0; i < perm.size(); ++i)
      ii[perm[i]] = oi[i];
    ref[o] = x[ravel(ii, shape)];
  }
  zrt_transpose(dtype, x.data(), y.data(), static_cast<int>(shape.size()),
                shape.data(), perm.data());
  checker.absorb(y.data(), y.size() * sizeof(E));
  checker.exact("transpose " + std::string(dtypeName(dtype)) + " " +
                    shapeText(shape) + " perm " + shapeText(perm),
                y.data(), ref.data(), n * sizeof(E));
}

void testTransposes() {
  struct Case {
    std::vector<int64_t> shape, perm;
  };
  std::vector<Case> cases = {
      {{}, {}},
      {{37, 45}, {1, 0}},
      {{3, 5, 4, 7}, {0, 2, 1, 3}},
      {{3, 5, 4, 7}, {3, 2, 1, 0}},
      {{3, 5, 4, 7}, {2, 0, 3, 1}},
      {{3, 5, 4, 7}, {0, 1, 2, 3}},
      {{1, 5, 1, 3}, {3, 0, 2, 1}},
      {{2, 3, 1, 4, 5}, {4, 3, 2, 1, 0}},
      {{64, 130, 70}, {2, 0, 1}},
      {{8, 96, 12, 16}, {0, 2, 1, 3}},
      {{4, 0, 3}, {2, 1, 0}},
  };
  for (const Case &c : cases) {
    testTransposeOf<uint32_t>(ZRT_F32, c.shape, c.perm);
    testTransposeOf<uint16_t>(ZRT_BF16, c.shape, c.perm);
  }
  testTransposeOf<uint64_t>(ZRT_I64, {3, 5, 4}, {2, 0, 1});
  testTransposeOf<uint32_t>(ZRT_I32, {3, 5, 4}, {1, 2, 0});
}

void testReduce(zrt_dtype dtype, const std::vector<int64_t> &shape,
                const std::vector<uint8_t> &flags, bool mean, Rng &rng) {
  int64_t n = numel(shape);
  Buf x = randomBuf(dtype, n, rng, 0.5, 1.0);
  std::vector<int64_t> outShape;
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (flags[d])
      count *= shape[d];
    else
      outShape.push_back(shape[d]);
  double scale = mean ? 1.0 / count : 1.0;
  Buf y(dtype, numel(outShape));
  y.poison();
  zrt_reduce_sum(dtype, x.data(), y.data(), static_cast<int>(shape.size()),
                 shape.data(), flags.data(), scale);
  checker.absorb(y);
  Vec ref(numel(outShape), 0.0), mag(numel(outShape), 0.0), xv = x.values();
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unravel(i, shape);
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!flags[d])
        o = o * shape[d] + idx[d];
    ref[o] += xv[i] * scale;
    mag[o] += std::fabs(xv[i] * scale);
  }
  std::string mask;
  for (uint8_t f : flags)
    mask += f ? 'R' : 'k';
  checker.close("reduce_sum " + std::string(name(dtype)) + " " +
                    shapeText(shape) + " dims " + mask +
                    (mean ? " (mean)" : ""),
                y.values(), ref, dtype == ZRT_BF16 ? 1.0 / 256 : 1.2e-7,
                1e-12 * maxAbs(mag));
}

void testReduces() {
  Rng rng(13);
  std::vector<int64_t> shape = {3, 5, 4, 7};
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    for (int mask = 0; mask < 16; ++mask) {
      std::vector<uint8_t> flags(4);
      for (int d = 0; d < 4; ++d)
        flags[d] = (mask >> (3 - d)) & 1;
      testReduce(dtype, shape, flags, mask == 5, rng);
    }
    testReduce(dtype, {1, 6, 1}, {1, 0, 1}, false, rng);
    testReduce(dtype, {2, 0, 3}, {0, 1, 0}, false, rng); // sums of nothing
    testReduce(dtype, {}, {}, false, rng);
    testReduce(dtype, {4000, 300}, {1, 0}, true, rng); // bias gradient
    testReduce(dtype, {300, 4000}, {0, 1}, false, rng);
    testReduce(dtype, {200003}, {1}, false, rng); // long run, split
    testReduce(dtype, {6, 5000, 3}, {1, 0, 1}, false, rng);
  }
}

template <typename E>
void testBroadcastOf(zrt_dtype dtype, const std::vector<int64_t> &xs,
                     const std::vector<int64_t> &ys) {
  std::vector<E> x = pattern<E>(numel(xs), 17), y(numel(ys), E(0x5a)),
                 ref(numel(ys));
  size_t lead = ys.size() - xs.size();
  for (int64_t o = 0; o < numel(ys); ++o) {
    std::vector<int64_t> oi = unravel(o, ys), ii(xs.size());
    for (size_t d = 0; d < xs.size(); ++d)
      ii[d] = xs[d] == 1 ? 0 : oi[lead + d];
    ref[o] = x[ravel(ii, xs)];
  }
  zrt_broadcast(dtype, x.data(), static_cast<int>(xs.size()), xs.data(),
                y.data(), static_cast<int>(ys.size()), ys.data());
  checker.absorb(y.data(), y.size() * sizeof(E));
  checker.exact("broadcast " + std::string(dtypeName(dtype)) + " " +
                    shapeText(xs) + " -> " + shapeText(ys),
                y.data(), ref.data(), y.size() * sizeof(E));
}

void testBroadcasts() {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{5}, {3, 4, 5}},       {{4, 1}, {3, 4, 5}}, {{1}, {2, 3}},
      {{}, {2, 3}},           {{3, 1, 5}, {2, 3, 4, 5}},
      {{1, 1}, {1, 1}},       {{3, 4}, {3, 4}},    {{2, 1, 1}, {2, 3, 4}},
      {{768}, {64, 96, 768}}, {{64, 96, 1}, {64, 96, 50}},
      {{3}, {0, 3}},
  };
  for (auto &[xs, ys] : cases) {
    testBroadcastOf<uint32_t>(ZRT_F32, xs, ys);
    testBroadcastOf<uint16_t>(ZRT_BF16, xs, ys);
  }
  testBroadcastOf<uint64_t>(ZRT_I64, {3, 1}, {2, 3, 4});
}

template <typename E>
void testConcatSplit(zrt_dtype dtype, int64_t outer, int64_t inner,
                     const std::vector<int64_t> &sizes) {
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  std::vector<std::vector<E>> parts;
  std::vector<const void *> inputs;
  for (size_t i = 0; i < sizes.size(); ++i)
    parts.push_back(pattern<E>(outer * sizes[i] * inner, 23 + i));
  for (auto &p : parts)
    inputs.push_back(p.data());
  std::vector<E> out(outer * total * inner, E(0x5a)), ref(out.size());
  for (int64_t o = 0, offset = 0; o < outer; ++o, offset = 0)
    for (size_t i = 0; i < sizes.size(); ++i)
      for (int64_t p = 0; p < sizes[i]; ++p, ++offset)
        for (int64_t e = 0; e < inner; ++e)
          ref[(o * total + offset) * inner + e] =
              parts[i][(o * sizes[i] + p) * inner + e];
  zrt_concat(dtype, static_cast<int>(sizes.size()), inputs.data(),
             sizes.data(), out.data(), outer, inner);
  checker.absorb(out.data(), out.size() * sizeof(E));
  std::string what = std::string(dtypeName(dtype)) + " outer=" +
                     std::to_string(outer) + " inner=" +
                     std::to_string(inner) + " sizes " + shapeText(sizes);
  checker.exact("concat " + what, out.data(), ref.data(),
                out.size() * sizeof(E));
  std::vector<std::vector<E>> back;
  std::vector<void *> outputs;
  for (size_t i = 0; i < sizes.size(); ++i)
    back.emplace_back(outer * sizes[i] * inner, E(0x5a));
  for (auto &b : back)
    outputs.push_back(b.data());
  zrt_split(dtype, ref.data(), static_cast<int>(sizes.size()), outputs.data(),
            sizes.data(), outer, inner);
  bool same = back == parts;
  checker.truth("split " + what, same,
                same ? "every part bitwise equal" : "DIFFER");
}

template <typename E>
void testPack(zrt_dtype dtype, const std::vector<int64_t> &numels,
              int64_t shards) {
  std::vector<std::vector<E>> tensors;
  std::vector<const void *> inputs;
  for (size_t i = 0; i < numels.size(); ++i)
    tensors.push_back(pattern<E>(numels[i], 31 + i));
  for (auto &t : tensors)
    inputs.push_back(t.data());
  std::vector<int64_t> chunk, offset;
  int64_t segment = 0;
  for (int64_t n : numels) {
    chunk.push_back((n + shards - 1) / shards);
    offset.push_back(segment);
    segment += chunk.back();
  }
  std::vector<E> out(shards * segment, E(0x5a)), ref(shards * segment, E(0));
  for (size_t i = 0; i < numels.size(); ++i)
    for (int64_t e = 0; e < numels[i]; ++e)
      ref[(e / chunk[i]) * segment + offset[i] + e % chunk[i]] = tensors[i][e];
  zrt_pack(dtype, static_cast<int>(numels.size()), inputs.data(),
           numels.data(), out.data(), shards);
  checker.absorb(out.data(), out.size() * sizeof(E));
  std::string what = std::string(dtypeName(dtype)) + " numels " +
                     shapeText(numels) + " shards=" + std::to_string(shards);
  checker.exact("pack " + what, out.data(), ref.data(),
                out.size() * sizeof(E));
  std::vector<std::vector<E>> back;
  std::vector<void *> outputs;
  for (int64_t n : numels)
    back.emplace_back(n, E(0x5a));
  for (auto &b : back)
    outputs.push_back(b.data());
  zrt_unpack(dtype, ref.data(), static_cast<int>(numels.size()),
             outputs.data(), numels.data(), shards);
  bool same = back == tensors;
  checker.truth("unpack " + what, same,
                same ? "every tensor bitwise equal" : "DIFFER");
}

/// zrt_copy and zrt_read_f32: what generated code uses to copy state and
/// to hand the step's values back to the host.
void testCopies(Rng &rng) {
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    for (int64_t n : {1, 1000, 3000001}) {
      Buf x = randomBuf(dtype, n, rng), y(dtype, n);
      y.poison();
      zrt_copy(y.data(), x.data(), n * zrt_dtype_size(dtype));
      std::vector<float> host(n, -1.0f);
      zrt_read_f32(host.data(), y.data(), dtype, n);
      checker.absorb(host.data(), n * sizeof(float));
      checker.close("copy + read_f32 " + std::string(name(dtype)) + " n=" +
                        std::to_string(n),
                    toVec(host), x.values(), 0.0, 0.0);
    }
  }
}

void testDataMovement() {
  Rng rng(43);
  testCopies(rng);
  testTransposes();
  testBroadcasts();
  testConcatSplit<uint32_t>(ZRT_F32, 3, 4, {2, 5, 1});
  testConcatSplit<uint16_t>(ZRT_BF16, 5, 1, {3, 0, 2});
  testConcatSplit<uint16_t>(ZRT_BF16, 1, 7, {300000, 11});
  testConcatSplit<uint32_t>(ZRT_F32, 96, 64, {12, 12, 12});
  testConcatSplit<uint64_t>(ZRT_I64, 2, 3, {1, 2});
  for (int64_t shards : {1, 3, 4}) {
    testPack<uint32_t>(ZRT_F32, {13, 5, 1, 0, 8}, shards);
    testPack<uint16_t>(ZRT_BF16, {13, 5, 1, 0, 8}, shards);
  }
  testPack<uint32_t>(ZRT_F32, {700001, 3}, 2);
  std::vector<int64_t> many(40, 1001);
  testPack<uint16_t>(ZRT_BF16, many, 8);
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

void testOptimizer() {
  Rng rng(41);
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    for (int64_t n : {0, 7, 100003}) {
      Buf x = randomBuf(dtype, n, rng);
      float got = -1;
      zrt_squared_norm(dtype, x.data(), n, &got);
      checker.absorb(&got, sizeof(got));
      double ref = 0;
      for (double v : x.values())
        ref += v * v;
      checker.close("squared_norm " + std::string(name(dtype)) + " n=" +
                        std::to_string(n),
                    Vec{got}, Vec{ref}, 1e-6, 0.0);
    }
  }
  for (double sq : {0.0, 0.25, 1.0, 4.0, 1e6}) {
    float squared = static_cast<float>(sq), got = -1;
    zrt_clip_coef(&squared, 1.0, &got);
    double ref = std::min(1.0, 1.0 / (std::sqrt(static_cast<float>(sq)) + 1e-6));
    checker.close("clip_coef squared_norm=" + std::to_string(sq) +
                      " max_norm=1",
                  Vec{got}, Vec{ref}, 1e-7, 0.0);
  }
  // lr schedules: constant; cosine with warmup 10, max_steps 100.
  {
    Vec got, ref;
    const double pi = 3.14159265358979323846;
    double lr = 6e-4, minLr = 6e-5;
    for (int64_t s : {0, 1, 9, 10, 11, 50, 99, 100, 101, 500}) {
      got.push_back(zrt_lr_schedule(s, lr, ZRT_LR_COSINE, 10, minLr, 100));
      double r;
      if (s < 10)
        r = lr * (s + 1) / 11.0;
      else if (s > 100)
        r = minLr;
      else
        r = minLr + 0.5 * (1 + std::cos(pi * (s - 10) / 90.0)) * (lr - minLr);
      ref.push_back(r);
      got.push_back(zrt_lr_schedule(s, lr, ZRT_LR_CONSTANT, 10, minLr, 100));
      ref.push_back(lr);
    }
    checker.close("lr_schedule constant and cosine (warmup 10, max_steps "
                  "100) at 10 steps",
                  got, ref, 1e-7, 0.0);
  }
  // AdamW: three steps against torch.optim.AdamW's formulas in double.
  {
    int64_t n = 1001;
    Vec p = randomBuf(ZRT_F32, n, rng).values(), m(n, 0.0), v(n, 0.0);
    std::vector<float> pf = toFloats(p), mf(n, 0.0f), vf(n, 0.0f);
    double b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
    float lr = 1e-3f;
    for (int64_t step = 0; step < 3; ++step) {
      Vec g = randomBuf(ZRT_F32, n, rng).values();
      std::vector<float> gf = toFloats(g);
      zrt_adamw(pf.data(), gf.data(), mf.data(), vf.data(), n, lr, step, b1,
                b2, eps, wd);
      double t = step + 1;
      for (int64_t i = 0; i < n; ++i) {
        p[i] -= lr * wd * p[i];
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        p[i] -= lr * (m[i] / (1 - std::pow(b1, t))) /
                (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
      }
    }
    checker.absorb(pf.data(), n * 4);
    checker.close("adamw f32 n=1001 3 steps param", toVec(pf), p, 1e-6, 1e-8);
    checker.close("adamw f32 n=1001 3 steps exp_avg", toVec(mf), m, 1e-6,
                  1e-7);
    checker.close("adamw f32 n=1001 3 steps exp_avg_sq", toVec(vf), v, 1e-6,
                  1e-8);
  }
  // SGD with momentum and weight decay, and plain SGD without a buffer.
  for (double momentum : {0.9, 0.0}) {
    int64_t n = 50001;
    Vec p = randomBuf(ZRT_F32, n, rng).values(), buf(n, 0.0);
    std::vector<float> pf = toFloats(p), bf(n, 0.0f);
    double wd = 0.01;
    float lr = 0.1f;
    for (int step = 0; step < 3; ++step) {
      Vec g = randomBuf(ZRT_F32, n, rng).values();
      std::vector<float> gf = toFloats(g);
      zrt_sgd(pf.data(), gf.data(), momentum != 0 ? bf.data() : nullptr, n, lr,
              momentum, wd);
      for (int64_t i = 0; i < n; ++i) {
        double d = g[i] + wd * p[i];
        buf[i] = momentum * buf[i] + d;
        p[i] -= lr * buf[i];
      }
    }
    checker.absorb(pf.data(), n * 4);
    checker.close(std::string("sgd f32 n=50001 3 steps momentum ") +
                      (momentum != 0 ? "0.9" : "0 (no buffer)") + " param",
                  toVec(pf), p, 1e-6, 1e-7);
  }
  checker.truth("dtype_size f32/bf16/i32/i64",
                zrt_dtype_size(ZRT_F32) == 4 && zrt_dtype_size(ZRT_BF16) == 2 &&
                    zrt_dtype_size(ZRT_I32) == 4 &&
                    zrt_dtype_size(ZRT_I64) == 8,
                "4, 2, 4, 8 bytes");
}

//===----------------------------------------------------------------------===//
// Deliberate errors (--fail=NAME), for the lit tests of zrt_fail messages
//===----------------------------------------------------------------------===//

int runFailure(const std::string &which) {
  float buf[64] = {};
  int32_t ids[3] = {0, 3, 9};
  int64_t ids64[2] = {-1, 0};
  if (which == "embedding-id") {
    zrt_embedding(ZRT_F32, buf, ids, ZRT_I32, buf + 32, 3, 5, 2);
  } else if (which == "embedding-grad-id") {
    zrt_embedding_grad(ZRT_F32, buf, ids64, ZRT_I64, buf + 32, 2, 5, 2);
  } else if (which == "embedding-id-dtype") {
    zrt_embedding(ZRT_F32, buf, ids, ZRT_F32, buf + 32, 3, 5, 2);
  } else if (which == "cross-entropy-target") {
    int32_t targets[2] = {1, 7};
    float loss = 0;
    zrt_cross_entropy(ZRT_F32, buf, targets, ZRT_I32, 2, 7, &loss);
  } else if (which == "cross-entropy-grad-target") {
    const float dloss = 1.0f;
    zrt_cross_entropy_grad(ZRT_BF16, &dloss, buf, ids64, ZRT_I64, buf + 32, 2,
                           4);
  } else if (which == "matmul-dtype") {
    zrt_matmul(ZRT_I32, buf, buf, buf, 1, 2, 2, 2, ZRT_NO_TRANS, ZRT_NO_TRANS, 4, 4, 4);
  } else if (which == "matmul-overlap") {
    zrt_matmul(ZRT_F32, buf, buf, buf + 32, 2, 2, 3, 2, ZRT_NO_TRANS, ZRT_NO_TRANS, 4, 6, 5);
  } else if (which == "broadcast-shape") {
    int64_t xs[1] = {3}, ys[1] = {4};
    zrt_broadcast(ZRT_F32, buf, 1, xs, buf + 32, 1, ys);
  } else if (which == "transpose-perm") {
    int64_t shape[2] = {2, 3}, perm[2] = {0, 0};
    zrt_transpose(ZRT_F32, buf, buf + 32, 2, shape, perm);
  } else if (which == "lr-schedule") {
    zrt_lr_schedule(10, 1e-3, ZRT_LR_COSINE, 10, 0.0, 10);
  } else if (which == "pack-shards") {
    int64_t numels[1] = {4};
    const void *in[1] = {buf};
    zrt_pack(ZRT_F32, 1, in, numels, buf + 32, 0);
  } else if (which == "dtype-size") {
    zrt_dtype_size(static_cast<zrt_dtype>(7));
  } else {
    std::fprintf(stderr, "unknown --fail case '%s'\n", which.c_str());
    return 2;
  }
  std::printf("no failure\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--fail=", 0) == 0)
      return runFailure(arg.substr(7));
    if (arg == "--list-fail") {
      std::puts("embedding-id embedding-grad-id embedding-id-dtype "
                "cross-entropy-target cross-entropy-grad-target matmul-dtype "
                "matmul-overlap broadcast-shape transpose-perm lr-schedule "
                "pack-shards dtype-size");
      return 0;
    }
    std::fprintf(stderr, "usage: %s [--fail=CASE | --list-fail]\n", argv[0]);
    return 2;
  }

  Rng rng(3);
  testExp();
  testMatmuls();
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    testLayernorm(dtype, 21, 13, 0.0, rng);
    testLayernorm(dtype, 5, 1500, 100.0, rng); // large mean: two-pass var
    testLayernorm(dtype, 512, 768, 0.3, rng);  // parallel rows and blocks
    testSoftmax(dtype, 7, 13, rng);
    testSoftmax(dtype, 9, 1500, rng);
    testSoftmax(dtype, 300, 257, rng);
  }
  testLayernormFd(rng);
  testSoftmaxFd(rng);
  testCausalMask();
  testAttentions();
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16})
    for (zrt_dtype idDtype : {ZRT_I32, ZRT_I64}) {
      testCrossEntropy(dtype, idDtype, 7, 13, rng);
      testCrossEntropy(dtype, idDtype, 64, 5001, rng);
      testEmbedding(dtype, idDtype, 23, 11, 5, rng);
      testEmbedding(dtype, idDtype, 2000, 300, 64, rng);
    }
  testCrossEntropyFd(rng);
  testDataMovement();
  testReduces();
  testOptimizer();

  std::printf("output digest: %016llx\n",
              static_cast<unsigned long long>(checker.digest));
  std::printf("kernel tests: %d checks, %d passed, %d failed\n",
              checker.checks, checker.checks - checker.failed, checker.failed);
  return checker.failed == 0 ? 0 : 1;
}
