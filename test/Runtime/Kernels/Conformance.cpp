//===- Conformance.cpp - zrt.h's kernels against double references --------===//
//
// The kernel conformance suite: one set of cases for every runtime that
// implements zrt.h's kernel section. Each kernel runs on small random
// inputs (f32 and bf16; inputs rounded to the dtype first, so both sides
// see the same values; odd sizes, unaligned pointers, in place, empty
// sizes) and is compared with a straightforward double-precision loop
// written here; the backward kernels also with central finite differences
// of the forward ones. Conformance.h describes the output; the backend
// (CpuBackend.cpp, CudaBackend.cu) says where the memory lives.
//
//   zeroc-rt-kernel-tests             the CPU runtime's kernels
//   zeroc-rt-cuda-kernel-tests        the CUDA runtime's (on a GPU)
//   ... --fail=CASE                   call a kernel wrongly (--list-fail);
//                                     exits 1 through zrt_fail
//
//===----------------------------------------------------------------------===//

#include "Conformance.h"

#include "zeroc/Support/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace conformance {

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
} // namespace

Checker checker;
const zrt_dtype kFloatTypes[2] = {ZRT_F32, ZRT_BF16};

//===----------------------------------------------------------------------===//
// The framework
//===----------------------------------------------------------------------===//

double Rng::uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }

double Rng::normal() {
  double u = std::max(uniform(), 1e-300), v = uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

std::string fmt(const char *format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

const char *name(zrt_dtype dtype) { return zrt_dtype_name(dtype); }

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

namespace {

/// `values` stored as `dtype`, element by element.
std::vector<unsigned char> encode(zrt_dtype dtype, const Vec &values) {
  size_t size = zrt_dtype_size(dtype);
  std::vector<unsigned char> out(values.size() * size + 1);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char *p = out.data() + i * size;
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

double decode(zrt_dtype dtype, const unsigned char *p) {
  switch (dtype) {
  case ZRT_F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case ZRT_BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return zrt_bf16_to_f32(h);
  }
  case ZRT_I32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    return x;
  }
  case ZRT_I64: {
    int64_t x;
    std::memcpy(&x, p, 8);
    return static_cast<double>(x);
  }
  }
  return 0;
}

} // namespace

Tensor::Tensor(zrt_dtype dtype, int64_t n, int64_t offset)
    : dtype(dtype), n(n), v(static_cast<size_t>(n), 0.0) {
  size_t size = zrt_dtype_size(dtype);
  base = static_cast<char *>(
      deviceAlloc(static_cast<size_t>(n + offset) * size + 64));
  dev = base + offset * size;
}

Tensor::~Tensor() {
  if (base)
    deviceFree(base);
}

Tensor::Tensor(Tensor &&o) noexcept
    : dtype(o.dtype), n(o.n), v(std::move(o.v)), base(o.base), dev(o.dev) {
  o.base = nullptr;
  o.dev = nullptr;
}

void Tensor::fillNormal(Rng &rng, double mean, double std) {
  for (int64_t i = 0; i < n; ++i)
    set(i, mean + std * rng.normal());
}

void Tensor::upload() {
  std::vector<unsigned char> raw = encode(dtype, v);
  if (n > 0)
    toDevice(dev, raw.data(), bytes());
}

void Tensor::poison() {
  if (n > 0)
    deviceFill(dev, 0xff, bytes());
}

Vec Tensor::download() const {
  std::vector<unsigned char> raw(bytes() + 1);
  if (n > 0)
    toHost(raw.data(), dev, bytes());
  checker.absorb(raw.data(), bytes());
  Vec out(static_cast<size_t>(n));
  size_t size = zrt_dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i)
    out[i] = decode(dtype, raw.data() + i * size);
  return out;
}

Tensor randomIds(zrt_dtype dtype, int64_t n, int64_t limit, Rng &rng) {
  Tensor ids(dtype, n);
  for (int64_t i = 0; i < n; ++i)
    ids.v[i] = static_cast<double>(rng.below(limit));
  ids.upload();
  return ids;
}

Scalar::Scalar() : dev(static_cast<float *>(deviceAlloc(sizeof(float)))) {}
Scalar::Scalar(float value) : Scalar() { set(value); }
Scalar::~Scalar() { deviceFree(dev); }
void Scalar::set(float value) { toDevice(dev, &value, sizeof value); }
double Scalar::get() const {
  float value = 0;
  toHost(&value, dev, sizeof value);
  checker.absorb(&value, sizeof value);
  return value;
}

void Checker::absorb(const void *data, size_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i)
    digest = (digest ^ p[i]) * 1099511628211ull;
}

bool Checker::record(bool ok, const std::string &what,
                     const std::string &detail) {
  ++checks;
  if (!ok)
    ++failed;
  std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", what.c_str(),
              detail.c_str());
  if (std::getenv("ZRT_TEST_TRACE"))
    std::printf("  digest so far %016llx\n",
                static_cast<unsigned long long>(digest));
  std::fflush(stdout);
  return ok;
}

bool Checker::close(const std::string &what, const Vec &got, const Vec &ref,
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
    detail +=
        fmt("; e.g. [%zu] = %.9g, expected %.9g", bad, got[bad], ref[bad]);
  return record(ok, what, detail);
}

bool Checker::close(const std::string &what, const Vec &got, const Vec &ref,
                    double rtol, double atol) {
  return close(what, got, ref, rtol, Vec(ref.size(), atol));
}

bool Checker::exact(const std::string &what, const Vec &got, const Vec &ref) {
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

bool Checker::truth(const std::string &what, bool ok,
                    const std::string &detail) {
  return record(ok, what, detail);
}

double rtolOf(zrt_dtype dtype, double f32) {
  return dtype == ZRT_BF16 ? 8e-3 : f32;
}

Vec finiteDiff(Vec x, const std::function<double(const Vec &)> &loss,
               double h) {
  Vec grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i];
    // The steps as f32 stores them, so that the difference is exact.
    double up = static_cast<float>(saved + h),
           down = static_cast<float>(saved - h);
    x[i] = up;
    double lossUp = loss(x);
    x[i] = down;
    double lossDown = loss(x);
    x[i] = saved;
    grad[i] = (lossUp - lossDown) / (up - down);
  }
  return grad;
}

namespace {

double maxAbs(const Vec &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

/// sum(w * y) in double.
double weighted(const Vec &y, const Vec &w) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i)
    s += w[i] * y[i];
  return s;
}

/// A tensor of f32 with the given values, uploaded.
Tensor f32Tensor(const Vec &values) {
  Tensor t(ZRT_F32, static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    t.set(static_cast<int64_t>(i), values[i]);
  t.upload();
  return t;
}

zrt_trans transOf(bool t) { return t ? ZRT_TRANS : ZRT_NO_TRANS; }
zrt_attention_mask maskOf(bool causal) {
  return causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL;
}

} // namespace

void checkFd(const std::string &what, const Vec &analytic, const Vec &fd,
             double rel) {
  double scale = std::max(maxAbs(fd), 1e-3);
  checker.close(what + " vs finite differences", analytic, fd, 0.0,
                rel * scale);
}

//===----------------------------------------------------------------------===//
// zrt_matmul
//===----------------------------------------------------------------------===//

void testMatmul(zrt_dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k,
                bool ta, bool tb, int64_t sa, int64_t sb, int64_t sc,
                int64_t offset, const char *note, bool bias) {
  sa = sa < 0 ? m * k : sa;
  sb = sb < 0 ? k * n : sb;
  sc = sc < 0 ? m * n : sc;
  Rng rng(1000 + m * 7 + n * 13 + k * 17 + ta * 2 + tb + batch * 31 + offset +
          sa + sb * 3);
  auto extent = [&](int64_t stride, int64_t size) {
    return batch == 0 ? 0 : (batch - 1) * stride + size;
  };
  Tensor a(dt, extent(sa, m * k), offset), b(dt, extent(sb, k * n), offset);
  Tensor c(dt, extent(sc, m * n), offset), d(dt, n, offset);
  a.fillNormal(rng);
  b.fillNormal(rng);
  d.fillNormal(rng);
  a.upload();
  b.upload();
  d.upload();
  c.poison();
  if (bias)
    zrt_matmul_bias(dt, a.dev, b.dev, d.dev, c.dev, batch, m, n, k,
                    transOf(ta), transOf(tb), sa, sb, sc);
  else
    zrt_matmul(dt, a.dev, b.dev, c.dev, batch, m, n, k, transOf(ta),
               transOf(tb), sa, sb, sc);
  Vec all = c.download(), got, ref, atol;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = bias ? d.v[j] : 0, abs = std::fabs(sum);
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
  checker.close(fmt("%s %s batch %lld %lldx%lldx%lld %c%c strides "
                    "%lld/%lld/%lld%s%s",
                    bias ? "zrt_matmul_bias" : "zrt_matmul", name(dt),
                    (long long)batch, (long long)m, (long long)n,
                    (long long)k, ta ? 'T' : 'N', tb ? 'T' : 'N',
                    (long long)sa, (long long)sb, (long long)sc,
                    offset ? " unaligned" : "", note),
                got, ref, rtolOf(dt, 1e-5), atol);
}

namespace {

void testMatmuls() {
  for (zrt_dtype dt : kFloatTypes) {
    for (int t = 0; t < 4; ++t) {
      bool ta = t & 2, tb = t & 1;
      testMatmul(dt, 1, 7, 13, 5, ta, tb);
      testMatmul(dt, 3, 7, 13, 5, ta, tb);
      testMatmul(dt, 3, 7, 13, 5, ta, tb, -1, 0, -1, 0, " (shared b)");
      testMatmul(dt, 3, 7, 13, 5, ta, tb, 0, -1, -1, 0, " (shared a)");
      testMatmul(dt, 3, 7, 13, 5, ta, tb, 7 * 5 + 3, 13 * 5 + 1, 7 * 13 + 2,
                 0, " (padded strides)");
      testMatmul(dt, 40, 7, 13, 5, ta, tb, -1, -1, -1, 0, " (many small)");
      testMatmul(dt, 2, 67, 95, 81, ta, tb);
      testMatmul(dt, 2, 64, 48, 96, ta, tb, -1, -1, -1, 1);
    }
    testMatmul(dt, 1, 300, 257, 129, false, true, -1, -1, -1, 0,
               " (many tiles)");
    testMatmul(dt, 1, 256, 384, 384, false, true);
    testMatmul(dt, 1, 384, 384, 256, true, false);
    // Several tiles on 3 threads, one on 1 (f32): kernels.test compares
    // the two runs' outputs bitwise.
    for (int t = 0; t < 4; ++t)
      testMatmul(dt, 1, 520, 600, 300, t & 2, t & 1, -1, -1, -1, 0,
                 " (tiled by the thread count)");
    testMatmul(dt, 4, 128, 96, 64, false, true, -1, 0, -1, 0,
               " (a linear layer: rows merged)");
    testMatmul(dt, 4, 7, 13, 0, false, false, -1, -1, -1, 0, " (k = 0)");
    testMatmul(dt, 0, 7, 13, 5, false, false, -1, -1, -1, 0, " (batch = 0)");
    // zrt_matmul_bias: the bias in every row of every product, whatever
    // the transposes, strides, tiles and k (0: the bias alone).
    for (int t = 0; t < 4; ++t) {
      bool ta = t & 2, tb = t & 1;
      testMatmul(dt, 1, 7, 13, 5, ta, tb, -1, -1, -1, 0, "", true);
      testMatmul(dt, 3, 7, 13, 5, ta, tb, 7 * 5 + 3, 13 * 5 + 1, 7 * 13 + 2,
                 0, " (padded strides)", true);
      testMatmul(dt, 2, 64, 48, 96, ta, tb, -1, -1, -1, 1, "", true);
    }
    testMatmul(dt, 1, 300, 257, 129, false, true, -1, -1, -1, 0,
               " (many tiles)", true);
    testMatmul(dt, 4, 128, 96, 64, false, true, -1, 0, -1, 0,
               " (a linear layer: rows merged)", true);
    testMatmul(dt, 1, 600, 1100, 40, false, true, -1, -1, -1, 0,
               " (several tiles, uneven edges)", true);
    testMatmul(dt, 4, 7, 13, 0, false, false, -1, -1, -1, 0, " (k = 0)",
               true);
    testMatmul(dt, 0, 7, 13, 5, false, false, -1, -1, -1, 0, " (batch = 0)",
               true);
  }
}

//===----------------------------------------------------------------------===//
// zrt_layernorm, zrt_softmax
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
                ref.dx, rt, at * std::max(1.0, maxAbs(ref.dx)));
  double sumAt = at * std::sqrt(static_cast<double>(rows));
  checker.close("zrt_layernorm_grad dweight " + tag, dw.download(), ref.dw, rt,
                sumAt);
  checker.close("zrt_layernorm_grad dbias " + tag, db.download(), ref.db, rt,
                sumAt);
}

void testLayernormFd() {
  Rng rng(19);
  int64_t rows = 3, cols = 7;
  double eps = 1e-5;
  Tensor x(ZRT_F32, rows * cols), w(ZRT_F32, cols), b(ZRT_F32, cols),
      dy(ZRT_F32, rows * cols);
  x.fillNormal(rng);
  w.fillNormal(rng, 1.0, 0.5);
  b.fillNormal(rng);
  dy.fillNormal(rng);
  for (Tensor *t : {&x, &w, &b, &dy})
    t->upload();
  Tensor dx(ZRT_F32, rows * cols), dw(ZRT_F32, cols), db(ZRT_F32, cols);
  zrt_layernorm_grad(ZRT_F32, dy.dev, x.dev, w.dev, dx.dev, dw.dev, db.dev,
                     rows, cols, eps);
  auto forward = [&](const Vec &xv, const Vec &wv, const Vec &bv) {
    Tensor xt = f32Tensor(xv), wt = f32Tensor(wv), bt = f32Tensor(bv),
           y(ZRT_F32, rows * cols);
    zrt_layernorm(ZRT_F32, xt.dev, wt.dev, bt.dev, y.dev, rows, cols, eps);
    return weighted(y.download(), dy.v);
  };
  double h = 1e-2;
  std::string what = "zrt_layernorm_grad f32 3x7";
  checkFd(what + " dx", dx.download(),
          finiteDiff(x.v, [&](const Vec &v) { return forward(v, w.v, b.v); },
                     h));
  checkFd(what + " dweight", dw.download(),
          finiteDiff(w.v, [&](const Vec &v) { return forward(x.v, v, b.v); },
                     h));
  checkFd(what + " dbias", db.download(),
          finiteDiff(b.v, [&](const Vec &v) { return forward(x.v, w.v, v); },
                     h));
}

void testSoftmax(zrt_dtype dt, int64_t rows, int64_t cols, bool special,
                 bool inPlace, int64_t offset = 0) {
  Rng rng(91 + rows + cols * 5 + special + inPlace);
  Tensor x(dt, rows * cols, offset), dy(dt, rows * cols, offset);
  x.fillNormal(rng, 0.0, 3.0);
  dy.fillNormal(rng);
  if (special && rows >= 3 && cols >= 4) {
    for (int64_t c = 0; c < cols; c += 3)
      x.set(c, -kInf); // masked entries
    for (int64_t c = 0; c < cols; ++c)
      x.set(cols + c, 1000.0 + c % 5); // huge values
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

void testSoftmaxFd() {
  Rng rng(23);
  int64_t rows = 3, cols = 9;
  Tensor x(ZRT_F32, rows * cols), dy(ZRT_F32, rows * cols),
      y(ZRT_F32, rows * cols), dx(ZRT_F32, rows * cols);
  x.fillNormal(rng);
  dy.fillNormal(rng);
  x.upload();
  dy.upload();
  zrt_softmax(ZRT_F32, x.dev, y.dev, rows, cols);
  zrt_softmax_grad(ZRT_F32, dy.dev, y.dev, dx.dev, rows, cols);
  checkFd("zrt_softmax_grad f32 3x9 dx", dx.download(),
          finiteDiff(x.v,
                     [&](const Vec &v) {
                       Tensor in = f32Tensor(v), out(ZRT_F32, rows * cols);
                       zrt_softmax(ZRT_F32, in.dev, out.dev, rows, cols);
                       return weighted(out.download(), dy.v);
                     },
                     1e-2));
}

void testNorms() {
  for (zrt_dtype dt : kFloatTypes) {
    testLayernorm(dt, 21, 13, 0.0, false);
    testLayernorm(dt, 5, 1500, 100.0, false); // large mean: two-pass var
    testLayernorm(dt, 512, 768, 0.3, false);  // parallel rows and blocks
    testLayernorm(dt, 64, 768, 3.0, true);
    testLayernorm(dt, 33, 768, 0.0, false, 1);
    testLayernorm(dt, 3, 4096, 0.0, false);
    testSoftmax(dt, 21, 13, false, false);
    testSoftmax(dt, 7, 13, true, false);
    testSoftmax(dt, 9, 1500, true, false);
    testSoftmax(dt, 300, 257, true, false);
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
  testLayernormFd();
  testSoftmaxFd();
}

//===----------------------------------------------------------------------===//
// zrt_causal_mask, zrt_attention
//===----------------------------------------------------------------------===//

void testCausalMasks() {
  Rng rng(5);
  for (zrt_dtype dt : kFloatTypes)
    for (auto [t, s] : {std::pair<int64_t, int64_t>{5, 7}, {7, 5}, {6, 6},
                        {16, 16}})
      for (int zero = 0; zero < 2; ++zero)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          int64_t batch = 3;
          Tensor x(dt, batch * t * s), y(dt, batch * t * s);
          x.fillNormal(rng);
          x.upload();
          y.poison();
          Vec ref = x.v;
          for (int64_t i = 0; i < batch * t * s; ++i) {
            int64_t row = (i / s) % t, col = i % s;
            if (col > row)
              ref[i] = zero ? 0.0 : -kInf;
          }
          zrt_causal_mask(dt, x.dev, inPlace ? x.dev : y.dev, batch, t, s,
                          zero ? ZRT_MASK_ZERO : ZRT_MASK_NEG_INF);
          checker.exact(fmt("zrt_causal_mask %s [%lld, %lld, %lld] %s%s",
                            name(dt), (long long)batch, (long long)t,
                            (long long)s, zero ? "zero" : "-inf",
                            inPlace ? " in place" : ""),
                        (inPlace ? x : y).download(), ref);
        }
}

} // namespace

void testAttention(zrt_dtype dt, int64_t bh, int64_t t, int64_t s, int64_t d,
                   bool causal, const char *note, int64_t group) {
  Rng rng(313 + bh * 5 + t * 7 + s * 11 + d * 13 + causal +
          (group > 1 ? group * 17 : 0));
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t kvh = bh / group; // grouped-query attention: kv head h / group
  Tensor q(dt, bh * t * d), k(dt, kvh * s * d), v(dt, kvh * s * d),
      dout(dt, bh * t * d);
  q.fillNormal(rng);
  k.fillNormal(rng);
  v.fillNormal(rng);
  dout.fillNormal(rng);
  Vec out(bh * t * d, 0), dq(bh * t * d, 0), dk(kvh * s * d, 0),
      dv(kvh * s * d, 0);
  Vec p(t * s), dp(t * s);
  for (int64_t h = 0; h < bh; ++h) {
    int64_t kv = h / group;
    const double *qh = &q.v[h * t * d], *kh = &k.v[kv * s * d],
                 *vh = &v.v[kv * s * d], *doh = &dout.v[h * t * d];
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
    // dK and dV of a key/value head sum over its group's query heads.
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < d; ++c) {
          dv[(kv * s + j) * d + c] += p[i * s + j] * doh[i * d + c];
          dq[(h * t + i) * d + c] += scale * dp[i * s + j] * kh[j * d + c];
          dk[(kv * s + j) * d + c] += scale * dp[i * s + j] * qh[i * d + c];
        }
  }
  std::string tag =
      fmt("%s bh %lld t %lld s %lld d %lld%s%s%s", name(dt), (long long)bh,
          (long long)t, (long long)s, (long long)d, causal ? " causal" : "",
          group > 1 ? fmt(" group %lld", (long long)group).c_str() : "",
          note);
  double rt = rtolOf(dt, 1e-5);
  double at = (dt == ZRT_BF16 ? 4e-3 : 1e-5) *
              std::sqrt(static_cast<double>(std::max(s, t)));
  q.upload();
  k.upload();
  v.upload();
  dout.upload();
  Tensor o(dt, bh * t * d), gq(dt, bh * t * d), gk(dt, kvh * s * d),
      gv(dt, kvh * s * d);
  o.poison();
  gq.poison();
  gk.poison();
  gv.poison();
  zrt_attention(dt, q.dev, k.dev, v.dev, o.dev, bh, group, t, s, d, scale,
                maskOf(causal));
  checker.close("zrt_attention out " + tag, o.download(), out, rt, at);
  zrt_attention_grad(dt, dout.dev, q.dev, k.dev, v.dev, gq.dev, gk.dev,
                     gv.dev, bh, group, t, s, d, scale, maskOf(causal));
  // dk, dv: sums over group times more query rows.
  double gat = 2 * at * std::sqrt(static_cast<double>(group));
  checker.close("zrt_attention_grad dq " + tag, gq.download(), dq, rt, gat);
  checker.close("zrt_attention_grad dk " + tag, gk.download(), dk, rt, gat);
  checker.close("zrt_attention_grad dv " + tag, gv.download(), dv, rt, gat);
}

namespace {

/// Grouped-query attention is multi-head attention on key/value heads
/// repeated `group` times: the same out and dq, and dk / dv the sums of the
/// repeated heads' gradients over each group.
void testAttentionRepeatedKv(zrt_dtype dt, int64_t bh, int64_t group,
                             int64_t t, int64_t s, int64_t d, bool causal) {
  Rng rng(337 + bh * 5 + group * 3 + t * 7 + s * 11 + d * 13 + causal);
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t kvh = bh / group;
  Tensor q(dt, bh * t * d), k(dt, kvh * s * d), v(dt, kvh * s * d),
      dout(dt, bh * t * d), kr(dt, bh * s * d), vr(dt, bh * s * d);
  for (Tensor *x : {&q, &k, &v, &dout})
    x->fillNormal(rng);
  for (int64_t h = 0; h < bh; ++h)
    for (int64_t i = 0; i < s * d; ++i) {
      kr.v[h * s * d + i] = k.v[(h / group) * s * d + i];
      vr.v[h * s * d + i] = v.v[(h / group) * s * d + i];
    }
  for (Tensor *x : {&q, &k, &v, &dout, &kr, &vr})
    x->upload();
  Tensor o(dt, bh * t * d), gq(dt, bh * t * d), gk(dt, kvh * s * d),
      gv(dt, kvh * s * d);
  Tensor o1(dt, bh * t * d), gq1(dt, bh * t * d), gk1(dt, bh * s * d),
      gv1(dt, bh * s * d);
  for (Tensor *x : {&o, &gq, &gk, &gv, &o1, &gq1, &gk1, &gv1})
    x->poison();
  zrt_attention(dt, q.dev, k.dev, v.dev, o.dev, bh, group, t, s, d, scale,
                maskOf(causal));
  zrt_attention_grad(dt, dout.dev, q.dev, k.dev, v.dev, gq.dev, gk.dev,
                     gv.dev, bh, group, t, s, d, scale, maskOf(causal));
  zrt_attention(dt, q.dev, kr.dev, vr.dev, o1.dev, bh, 1, t, s, d, scale,
                maskOf(causal));
  zrt_attention_grad(dt, dout.dev, q.dev, kr.dev, vr.dev, gq1.dev, gk1.dev,
                     gv1.dev, bh, 1, t, s, d, scale, maskOf(causal));
  Vec rk = gk1.download(), rv = gv1.download(), sk(kvh * s * d, 0.0),
      sv(kvh * s * d, 0.0);
  for (int64_t h = 0; h < bh; ++h)
    for (int64_t i = 0; i < s * d; ++i) {
      sk[(h / group) * s * d + i] += rk[h * s * d + i];
      sv[(h / group) * s * d + i] += rv[h * s * d + i];
    }
  std::string tag = fmt("%s bh %lld group %lld t %lld s %lld d %lld%s vs "
                        "group 1 on repeated k, v",
                        name(dt), (long long)bh, (long long)group,
                        (long long)t, (long long)s, (long long)d,
                        causal ? " causal" : "");
  // Both sides are kernel results rounded to dt: twice the tolerance of
  // one against the exact reference.
  double rt = 2 * rtolOf(dt, 1e-5);
  double at = 2 * (dt == ZRT_BF16 ? 4e-3 : 1e-5) *
              std::sqrt(static_cast<double>(std::max(s, t)));
  double gat = 2 * at * std::sqrt(static_cast<double>(group));
  checker.close("zrt_attention out " + tag, o.download(), o1.download(), rt,
                at);
  checker.close("zrt_attention_grad dq " + tag, gq.download(), gq1.download(),
                rt, gat);
  checker.close("zrt_attention_grad dk " + tag, gk.download(), sk, rt, gat);
  checker.close("zrt_attention_grad dv " + tag, gv.download(), sv, rt, gat);
}

void testAttentionFd(int64_t bh, int64_t t, int64_t s, int64_t d,
                     bool causal, int64_t group = 1) {
  Rng rng(29 + t * s + causal + (group > 1 ? bh * group : 0));
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t kvh = bh / group;
  Tensor q(ZRT_F32, bh * t * d), k(ZRT_F32, kvh * s * d),
      v(ZRT_F32, kvh * s * d), dout(ZRT_F32, bh * t * d);
  for (Tensor *x : {&q, &k, &v, &dout}) {
    x->fillNormal(rng);
    x->upload();
  }
  Tensor dq(ZRT_F32, bh * t * d), dk(ZRT_F32, kvh * s * d),
      dv(ZRT_F32, kvh * s * d);
  zrt_attention_grad(ZRT_F32, dout.dev, q.dev, k.dev, v.dev, dq.dev, dk.dev,
                     dv.dev, bh, group, t, s, d, scale, maskOf(causal));
  auto loss = [&](const Vec &qq, const Vec &kk, const Vec &vv) {
    Tensor qt = f32Tensor(qq), kt = f32Tensor(kk), vt = f32Tensor(vv),
           out(ZRT_F32, bh * t * d);
    zrt_attention(ZRT_F32, qt.dev, kt.dev, vt.dev, out.dev, bh, group, t, s, d,
                  scale, maskOf(causal));
    return weighted(out.download(), dout.v);
  };
  double h = 1e-2;
  std::string base =
      fmt("zrt_attention_grad f32 bh %lld t %lld s %lld d %lld%s%s",
          (long long)bh, (long long)t, (long long)s, (long long)d,
          causal ? " causal" : "",
          group > 1 ? fmt(" group %lld", (long long)group).c_str() : "");
  checkFd(base + " dq", dq.download(),
          finiteDiff(q.v, [&](const Vec &x) { return loss(x, k.v, v.v); }, h));
  checkFd(base + " dk", dk.download(),
          finiteDiff(k.v, [&](const Vec &x) { return loss(q.v, x, v.v); }, h));
  checkFd(base + " dv", dv.download(),
          finiteDiff(v.v, [&](const Vec &x) { return loss(q.v, k.v, x); }, h));
}

/// zrt_attention_dropout(_grad) against a double reference: the
/// probabilities P of every query head multiplied by the factors M that
/// zrt_dropout draws for them at their place in the [bh, t, s] tensor
/// (viewed as `rows` local rows of `inner`, global rows [offset, offset +
/// rows) of `globalRows`): out = (P * M) V, dV = (P * M)^T dO, dS =
/// softmax'(P, M * dO V^T).
void testAttentionDropout(zrt_dtype dt, int64_t bh, int64_t t, int64_t s,
                          int64_t d, bool causal, int64_t group, double pdrop,
                          int64_t rows, int64_t offset, int64_t globalRows) {
  Rng rng(71 + bh * 3 + t * 5 + s * 7 + d + causal + group * 11 + offset);
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t kvh = bh / group, inner = bh * t * s / rows;
  uint64_t seed = 1234567;
  int64_t step = 9;
  uint32_t threshold = zeroc::random::dropoutThreshold(pdrop);
  auto factor = [&](int64_t index) {
    uint64_t position = zeroc::random::dropoutPosition(
        static_cast<uint64_t>(index), static_cast<uint64_t>(inner),
        static_cast<uint64_t>(rows), static_cast<uint64_t>(offset),
        static_cast<uint64_t>(globalRows));
    return zeroc::random::dropoutKeeps(seed, static_cast<uint64_t>(step),
                                       position, threshold)
               ? static_cast<double>(static_cast<float>(1.0 / (1.0 - pdrop)))
               : 0.0;
  };
  Tensor q(dt, bh * t * d), k(dt, kvh * s * d), v(dt, kvh * s * d),
      dout(dt, bh * t * d);
  q.fillNormal(rng);
  k.fillNormal(rng);
  v.fillNormal(rng);
  dout.fillNormal(rng);
  Vec out(bh * t * d, 0), dq(bh * t * d, 0), dk(kvh * s * d, 0),
      dv(kvh * s * d, 0);
  Vec p(t * s), m(t * s), dp(t * s);
  int64_t dropped = 0;
  for (int64_t h = 0; h < bh; ++h) {
    int64_t kv = h / group;
    const double *qh = &q.v[h * t * d], *kh = &k.v[kv * s * d],
                 *vh = &v.v[kv * s * d], *doh = &dout.v[h * t * d];
    for (int64_t i = 0; i < t; ++i) {
      int64_t valid = causal ? std::min(i + 1, s) : s;
      double mx = -kInf;
      for (int64_t j = 0; j < s; ++j) {
        double sc = 0;
        for (int64_t c = 0; c < d; ++c)
          sc += qh[i * d + c] * kh[j * d + c];
        p[i * s + j] = j < valid ? sc * scale : -kInf;
        mx = std::max(mx, p[i * s + j]);
        m[i * s + j] = factor((h * t + i) * s + j);
        dropped += m[i * s + j] == 0.0;
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j)
        sum += j < valid ? std::exp(p[i * s + j] - mx) : 0.0;
      for (int64_t j = 0; j < s; ++j)
        p[i * s + j] = j < valid ? std::exp(p[i * s + j] - mx) / sum : 0.0;
      for (int64_t c = 0; c < d; ++c) {
        double o = 0;
        for (int64_t j = 0; j < s; ++j)
          o += p[i * s + j] * m[i * s + j] * vh[j * d + c];
        out[(h * t + i) * d + c] = o;
      }
      double dot = 0;
      for (int64_t j = 0; j < s; ++j) {
        double g = 0;
        for (int64_t c = 0; c < d; ++c)
          g += doh[i * d + c] * vh[j * d + c];
        dp[i * s + j] = g * m[i * s + j];
        dot += dp[i * s + j] * p[i * s + j];
      }
      for (int64_t j = 0; j < s; ++j)
        dp[i * s + j] = p[i * s + j] * (dp[i * s + j] - dot);
    }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < d; ++c) {
          dv[(kv * s + j) * d + c] +=
              p[i * s + j] * m[i * s + j] * doh[i * d + c];
          dq[(h * t + i) * d + c] += scale * dp[i * s + j] * kh[j * d + c];
          dk[(kv * s + j) * d + c] += scale * dp[i * s + j] * qh[i * d + c];
        }
  }
  std::string tag = fmt(
      "%s bh %lld t %lld s %lld d %lld%s group %lld p %g rows %lld at %lld "
      "of %lld",
      name(dt), (long long)bh, (long long)t, (long long)s, (long long)d,
      causal ? " causal" : "", (long long)group, pdrop, (long long)rows,
      (long long)offset, (long long)globalRows);
  // The mask drops some and keeps some (else the case tests nothing).
  checker.truth("zrt_attention_dropout mask drops some " + tag,
                dropped > 0 && dropped < bh * t * s,
                fmt("%lld of %lld dropped", (long long)dropped,
                    (long long)(bh * t * s)));
  double rt = rtolOf(dt, 1e-5);
  double at = (dt == ZRT_BF16 ? 4e-3 : 1e-5) *
              std::sqrt(static_cast<double>(std::max(s, t))) * 2;
  for (Tensor *x : {&q, &k, &v, &dout})
    x->upload();
  Tensor o(dt, bh * t * d), gq(dt, bh * t * d), gk(dt, kvh * s * d),
      gv(dt, kvh * s * d);
  o.poison();
  gq.poison();
  gk.poison();
  gv.poison();
  zrt_attention_dropout(dt, q.dev, k.dev, v.dev, o.dev, bh, group, t, s, d,
                        scale, maskOf(causal), inner, rows, offset,
                        globalRows, pdrop, seed, step);
  checker.close("zrt_attention_dropout out " + tag, o.download(), out, rt, at);
  zrt_attention_dropout_grad(dt, dout.dev, q.dev, k.dev, v.dev, gq.dev,
                             gk.dev, gv.dev, bh, group, t, s, d, scale,
                             maskOf(causal), inner, rows, offset, globalRows,
                             pdrop, seed, step);
  double gat = 2 * at * std::sqrt(static_cast<double>(group));
  checker.close("zrt_attention_dropout_grad dq " + tag, gq.download(), dq, rt,
                gat);
  checker.close("zrt_attention_dropout_grad dk " + tag, gk.download(), dk, rt,
                gat);
  checker.close("zrt_attention_dropout_grad dv " + tag, gv.download(), dv, rt,
                gat);
}

void testAttentions() {
  testCausalMasks();
  for (zrt_dtype dt : kFloatTypes) {
    // Dropout of the probabilities: the whole tensor, the batch rows of
    // rank 1 of 3, a non-causal GQA case, row blocks.
    testAttentionDropout(dt, 4, 7, 7, 5, true, 1, 0.25, 1, 0, 1);
    testAttentionDropout(dt, 6, 9, 9, 4, true, 1, 0.1, 2, 2, 6);
    testAttentionDropout(dt, 8, 5, 9, 4, false, 2, 0.5, 2, 0, 4);
    testAttentionDropout(dt, 2, 130, 130, 16, true, 1, 0.1, 2, 0, 2);
  }
  for (zrt_dtype dt : kFloatTypes) {
    testAttention(dt, 3, 7, 7, 5, true);
    testAttention(dt, 3, 7, 7, 5, false);
    testAttention(dt, 2, 16, 16, 8, true);
    testAttention(dt, 3, 5, 9, 4, false);  // t < s
    testAttention(dt, 2, 9, 5, 4, true);   // causal, t > s
    testAttention(dt, 2, 9, 5, 4, false);  // t > s
    testAttention(dt, 2, 130, 130, 16, true); // row blocks, groups
    testAttention(dt, 2, 130, 71, 16, false);
    testAttention(dt, 3, 130, 130, 64, true);
    testAttention(dt, 33, 24, 24, 16, true); // many heads
    testAttention(dt, 33, 10, 12, 4, true);
    testAttention(dt, 2, 256, 256, 64, true);
    testAttention(dt, 1, 7, 13, 3, true);
    // Grouped-query attention: 2, 3 or 4 query heads per key/value head.
    testAttention(dt, 8, 7, 7, 5, true, "", 2);
    testAttention(dt, 8, 130, 130, 16, true, "", 4); // row blocks, groups
    testAttention(dt, 8, 130, 130, 64, true, "", 4);
    testAttention(dt, 6, 9, 5, 4, false, "", 3);   // t > s
    testAttention(dt, 6, 5, 9, 4, true, "", 2);    // causal, t < s
    testAttention(dt, 68, 9, 5, 4, false, "", 2);  // many heads
    testAttention(dt, 4, 6, 6, 8, true, "", 4);    // one key/value head
    testAttentionRepeatedKv(dt, 8, 4, 33, 33, 16, true);
    testAttentionRepeatedKv(dt, 6, 3, 9, 13, 8, false);
  }
  testAttentionFd(2, 5, 7, 4, false);
  testAttentionFd(2, 6, 6, 4, true);
  testAttentionFd(6, 5, 5, 4, true, 3);
  testAttentionFd(4, 4, 6, 4, false, 2);
}

/// The 6-layer, 384-wide GPT-2 of benchmarks/cpu_ddp.py on one of two
/// ranks: 4 sequences x 6 heads of 128 x 64, causal (the shape the CPU
/// kernel's full-width softmax blocks and whole-head backward tasks were
/// tuned on). Run last: under the CUDA emulation's seeded random schedules
/// (cuda-emulated.test), launches added earlier would reorder the f32
/// atomics of every later kernel.
void testAttentionBenchmarkShape() {
  for (zrt_dtype dt : kFloatTypes)
    testAttention(dt, 24, 128, 128, 64, true);
}

//===----------------------------------------------------------------------===//
// zrt_cross_entropy, zrt_embedding
//===----------------------------------------------------------------------===//

void testCrossEntropy(zrt_dtype dt, zrt_dtype idt, int64_t rows, int64_t cols,
                      int64_t offset = 0) {
  Rng rng(17 + rows * 3 + cols + (idt == ZRT_I64) + offset);
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
  std::string tag = fmt("%s targets %s %lldx%lld%s", name(dt), name(idt),
                        (long long)rows, (long long)cols,
                        offset ? " unaligned" : "");
  Scalar loss(static_cast<float>(kNaN));
  zrt_cross_entropy(dt, logits.dev, targets.dev, idt, rows, cols, loss.dev);
  checker.close("zrt_cross_entropy " + tag, {loss.get()}, {total / rows},
                1e-5, 1e-6);
  Scalar dl(static_cast<float>(dloss));
  Tensor g(dt, rows * cols, offset);
  g.poison();
  zrt_cross_entropy_grad(dt, dl.dev, logits.dev, targets.dev, idt, g.dev, rows,
                         cols);
  double at = (dt == ZRT_BF16 ? 1e-5 : 1e-6) * dloss / rows;
  checker.close("zrt_cross_entropy_grad " + tag, g.download(), grad,
                rtolOf(dt, 1e-5), at);
  // In place over the logits.
  zrt_cross_entropy_grad(dt, dl.dev, logits.dev, targets.dev, idt, logits.dev,
                         rows, cols);
  checker.close("zrt_cross_entropy_grad in place " + tag, logits.download(),
                grad, rtolOf(dt, 1e-5), at);
}

/// zrt_cross_entropy_ex / _grad_ex against a double reference: every third
/// row's target set to `ignore` (a token id or -100) when `hasIgnore`,
/// label smoothing `eps`, and a given count (a data-parallel part's
/// share) when `given` > 0; then zrt_count_targets of the same targets.
void testCrossEntropyEx(zrt_dtype dt, zrt_dtype idt, int64_t rows,
                        int64_t cols, bool hasIgnore, int64_t ignore,
                        double eps, double given) {
  Rng rng(41 + rows * 3 + cols + (idt == ZRT_I64) + (hasIgnore ? 5 : 0));
  Tensor logits(dt, rows * cols);
  logits.fillNormal(rng, 0.0, 2.0);
  logits.upload();
  Tensor targets = randomIds(idt, rows, cols, rng);
  if (hasIgnore) {
    for (int64_t r = 0; r < rows; r += 3)
      targets.v[r] = static_cast<double>(ignore);
    targets.upload();
  }
  auto ignored = [&](int64_t r) {
    return hasIgnore && targets.v[r] == static_cast<double>(ignore);
  };
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r)
    counted += ignored(r) ? 0 : 1;
  double divisor = given > 0 ? given : static_cast<double>(counted);
  double total = 0, dloss = 1.7;
  Vec grad(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    if (ignored(r))
      continue;
    const double *x = &logits.v[r * cols];
    double m = -kInf, s = 0, all = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, x[c]);
    for (int64_t c = 0; c < cols; ++c) {
      s += std::exp(x[c] - m);
      all += x[c];
    }
    int64_t t = static_cast<int64_t>(targets.v[r]);
    double lse = m + std::log(s);
    total += (1 - eps) * (lse - x[t]) + eps * (lse - all / cols);
    for (int64_t c = 0; c < cols; ++c)
      grad[r * cols + c] = dloss / divisor *
                           (std::exp(x[c] - m) / s - eps / cols -
                            (c == t ? 1.0 - eps : 0.0));
  }
  std::string tag = fmt("%s targets %s %lldx%lld ignore %s smoothing %g%s",
                        name(dt), name(idt), (long long)rows, (long long)cols,
                        hasIgnore ? std::to_string(ignore).c_str() : "none",
                        eps, given > 0 ? " given count" : "");
  Scalar count(static_cast<float>(given));
  Scalar loss(static_cast<float>(kNaN));
  zrt_cross_entropy_ex(dt, logits.dev, targets.dev, idt, rows, cols,
                       hasIgnore, ignore, eps, given > 0 ? count.dev : nullptr,
                       loss.dev);
  checker.close("zrt_cross_entropy_ex " + tag, {loss.get()},
                {total / divisor}, 1e-5, 1e-6);
  Scalar dl(static_cast<float>(dloss));
  Tensor g(dt, rows * cols);
  g.poison();
  zrt_cross_entropy_grad_ex(dt, dl.dev, logits.dev, targets.dev, idt, g.dev,
                            rows, cols, hasIgnore, ignore, eps,
                            given > 0 ? count.dev : nullptr);
  double at = (dt == ZRT_BF16 ? 1e-5 : 1e-6) * dloss / divisor;
  checker.close("zrt_cross_entropy_grad_ex " + tag, g.download(), grad,
                rtolOf(dt, 1e-5), at);
  if (hasIgnore) {
    Scalar n(-1.0f);
    zrt_count_targets(targets.dev, idt, rows, ignore, n.dev);
    checker.close("zrt_count_targets " + tag, {n.get()},
                  {static_cast<double>(counted)}, 0, 0);
  }
}

void testCrossEntropyFd() {
  Rng rng(31);
  int64_t rows = 3, cols = 11;
  Tensor x(ZRT_F32, rows * cols);
  x.fillNormal(rng, 0.0, 2.0);
  x.upload();
  Tensor ids = randomIds(ZRT_I64, rows, cols, rng);
  double dloss = 1.3;
  Scalar dl(static_cast<float>(dloss));
  Tensor grad(ZRT_F32, rows * cols);
  zrt_cross_entropy_grad(ZRT_F32, dl.dev, x.dev, ids.dev, ZRT_I64, grad.dev,
                         rows, cols);
  checkFd("zrt_cross_entropy_grad f32 3x11", grad.download(),
          finiteDiff(x.v,
                     [&](const Vec &v) {
                       Tensor in = f32Tensor(v);
                       Scalar loss;
                       zrt_cross_entropy(ZRT_F32, in.dev, ids.dev, ZRT_I64,
                                         rows, cols, loss.dev);
                       return dloss * loss.get();
                     },
                     1e-2));
}

void testEmbedding(zrt_dtype dt, zrt_dtype idt, int64_t n, int64_t vocab,
                   int64_t cols) {
  Rng rng(23 + n + vocab * 3 + cols * 5 + (idt == ZRT_I64));
  Tensor table(dt, vocab * cols), dy(dt, n * cols);
  table.fillNormal(rng);
  dy.fillNormal(rng);
  table.upload();
  dy.upload();
  // Ids from the first half of the table: repeats, and unused rows.
  Tensor ids = randomIds(idt, n, std::max<int64_t>(1, vocab / 2), rng);
  Vec out(n * cols), grad(vocab * cols, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t id = static_cast<int64_t>(ids.v[i]);
    for (int64_t c = 0; c < cols; ++c) {
      out[i * cols + c] = table.v[id * cols + c];
      grad[id * cols + c] += dy.v[i * cols + c];
    }
  }
  std::string tag = fmt("%s ids %s n %lld vocab %lld cols %lld", name(dt),
                        name(idt), (long long)n, (long long)vocab,
                        (long long)cols);
  Tensor o(dt, n * cols), g(dt, vocab * cols);
  o.poison();
  g.poison();
  zrt_embedding(dt, table.dev, ids.dev, idt, o.dev, n, vocab, cols);
  checker.exact("zrt_embedding " + tag, o.download(), out);
  zrt_embedding_grad(dt, dy.dev, ids.dev, idt, g.dev, n, vocab, cols, -1);
  // Sums rounded once: within half an ulp of the exact sum (f32 sums may
  // be added in another order on a GPU).
  checker.close("zrt_embedding_grad " + tag, g.download(), grad,
                rtolOf(dt, 1e-6), 1e-6);
  // padding_idx: the row of the first id (selected at least once) stays
  // zero, the others as before.
  int64_t padding = static_cast<int64_t>(ids.v[0]);
  for (int64_t c = 0; c < cols; ++c)
    grad[padding * cols + c] = 0.0;
  g.poison();
  zrt_embedding_grad(dt, dy.dev, ids.dev, idt, g.dev, n, vocab, cols,
                     padding);
  checker.close(fmt("zrt_embedding_grad %s padding_idx %lld", tag.c_str(),
                    (long long)padding),
                g.download(), grad, rtolOf(dt, 1e-6), 1e-6);
}

void testLosses() {
  for (zrt_dtype dt : kFloatTypes) {
    for (zrt_dtype idt : {ZRT_I32, ZRT_I64}) {
      testCrossEntropy(dt, idt, 7, 13);
      testCrossEntropy(dt, idt, 64, 5001);
      testEmbedding(dt, idt, 23, 11, 5);
      testEmbedding(dt, idt, 2000, 300, 64);
    }
    testCrossEntropy(dt, ZRT_I32, 32, 50304);
    testCrossEntropy(dt, ZRT_I64, 16, 1024, 1);
    testEmbedding(dt, ZRT_I32, 40, 50, 24);
    testEmbedding(dt, ZRT_I64, 64, 17, 768);
    testEmbedding(dt, ZRT_I32, 33, 9, 13);
  }
  testCrossEntropyFd();
  for (zrt_dtype dt : kFloatTypes) {
    testCrossEntropyEx(dt, ZRT_I32, 7, 13, true, 2, 0.1, 0);
    testCrossEntropyEx(dt, ZRT_I64, 64, 5001, true, -100, 0.0, 0);
    testCrossEntropyEx(dt, ZRT_I32, 33, 50, false, 0, 0.25, 0);
    testCrossEntropyEx(dt, ZRT_I64, 9, 17, true, 4, 0.1, 11.5);
  }
  {
    // Every target ignored: NaN (0 / 0, as PyTorch), gradient 0; with a
    // given count, 0.
    Tensor x(ZRT_F32, 2 * 3), t(ZRT_I32, 2), g(ZRT_F32, 2 * 3);
    x.upload();
    t.v = {1, 1};
    t.upload();
    Scalar l(0.0f), dl(1.0f), n(4.0f);
    zrt_cross_entropy_ex(ZRT_F32, x.dev, t.dev, ZRT_I32, 2, 3, 1, 1, 0.1,
                         nullptr, l.dev);
    double v = l.get();
    checker.truth("zrt_cross_entropy_ex of ignored rows only", std::isnan(v),
                  fmt("%g (NaN expected)", v));
    zrt_cross_entropy_ex(ZRT_F32, x.dev, t.dev, ZRT_I32, 2, 3, 1, 1, 0.1,
                         n.dev, l.dev);
    checker.close("zrt_cross_entropy_ex of ignored rows only, given count",
                  {l.get()}, {0.0}, 0, 0);
    // Nothing counted in the global batch either: NaN, as PyTorch's mean.
    Scalar none(0.0f);
    zrt_cross_entropy_ex(ZRT_F32, x.dev, t.dev, ZRT_I32, 2, 3, 1, 1, 0.1,
                         none.dev, l.dev);
    double v0 = l.get();
    checker.truth("zrt_cross_entropy_ex of ignored rows only, given count 0",
                  std::isnan(v0), fmt("%g (NaN expected)", v0));
    g.poison();
    zrt_cross_entropy_grad_ex(ZRT_F32, dl.dev, x.dev, t.dev, ZRT_I32, g.dev,
                              2, 3, 1, 1, 0.1, nullptr);
    checker.close("zrt_cross_entropy_grad_ex of ignored rows only",
                  g.download(), Vec(6, 0.0), 0, 0);
  }
  Scalar loss(0.0f);
  Tensor none(ZRT_F32, 1), ids(ZRT_I32, 1);
  zrt_cross_entropy(ZRT_F32, none.dev, ids.dev, ZRT_I32, 0, 5, loss.dev);
  double l = loss.get();
  checker.truth("zrt_cross_entropy of zero rows", std::isnan(l),
                fmt("%g (NaN expected)", l));
  // A part with no rows (a rank's empty slice): NaN alone, as the mean of
  // nothing; with the global batch's count, 0 (it adds nothing to the
  // sum), unless that count is 0 as well. The CPU and CUDA runtimes agree.
  Scalar given(4.0f), zero(0.0f);
  zrt_cross_entropy_ex(ZRT_F32, none.dev, ids.dev, ZRT_I32, 0, 5, 1, 1, 0.1,
                       nullptr, loss.dev);
  double e = loss.get();
  checker.truth("zrt_cross_entropy_ex of zero rows", std::isnan(e),
                fmt("%g (NaN expected)", e));
  zrt_cross_entropy_ex(ZRT_F32, none.dev, ids.dev, ZRT_I32, 0, 5, 1, 1, 0.1,
                       given.dev, loss.dev);
  checker.close("zrt_cross_entropy_ex of zero rows, given count",
                {loss.get()}, {0.0}, 0, 0);
  zrt_cross_entropy_ex(ZRT_F32, none.dev, ids.dev, ZRT_I32, 0, 5, 1, 1, 0.1,
                       zero.dev, loss.dev);
  double e0 = loss.get();
  checker.truth("zrt_cross_entropy_ex of zero rows, given count 0",
                std::isnan(e0), fmt("%g (NaN expected)", e0));
}

//===----------------------------------------------------------------------===//
// zrt_transpose, zrt_reduce_sum, zrt_broadcast, zrt_concat / zrt_split,
// zrt_pack / zrt_unpack
//===----------------------------------------------------------------------===//

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
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Distinct values of `dtype` (integers for the integer dtypes).
void fillPattern(Tensor &x, Rng &rng) {
  for (int64_t i = 0; i < x.n; ++i)
    x.set(i, x.dtype == ZRT_I32 || x.dtype == ZRT_I64
                 ? static_cast<double>(rng.below(1 << 30))
                 : rng.normal());
}

void testTranspose(zrt_dtype dt, const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &perm) {
  Rng rng(29 + numelOf(shape) + perm.size());
  int64_t n = numelOf(shape);
  Tensor x(dt, n), y(dt, n);
  fillPattern(x, rng);
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
                const std::vector<uint8_t> &reduced, bool mean) {
  Rng rng(31 + numelOf(shape) + reduced.size() + mean);
  int64_t n = numelOf(shape);
  int rank = static_cast<int>(shape.size());
  Tensor x(dt, n);
  x.fillNormal(rng, 0.5, 1.0);
  x.upload();
  std::vector<int64_t> outShape;
  int64_t count = 1;
  for (int i = 0; i < rank; ++i)
    if (reduced[i])
      count *= shape[i];
    else
      outShape.push_back(shape[i]);
  double scale = mean && count ? 1.0 / count : 1.0;
  int64_t outN = numelOf(outShape);
  std::vector<int64_t> outStride = stridesOf(outShape);
  Vec ref(outN, 0.0), mag(outN, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0, od = static_cast<int64_t>(outShape.size());
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d])
        o += idx * outStride[--od];
    }
    ref[o] += x.v[i] * scale;
    mag[o] += std::fabs(x.v[i] * scale);
  }
  Tensor y(dt, outN);
  y.poison();
  zrt_reduce_sum(dt, x.dev, y.dev, rank, shape.data(), reduced.data(), scale);
  std::string mask;
  for (uint8_t r : reduced)
    mask += r ? 'R' : 'k';
  // Sums in double (or f32 pairs) rounded once: within an ulp of the
  // exactly rounded sum.
  checker.close(fmt("zrt_reduce_sum %s %s dims %s%s", name(dt),
                    shapeText(shape).c_str(), mask.c_str(),
                    mean ? " (mean)" : ""),
                y.download(), ref, dt == ZRT_BF16 ? 8e-3 : 2.5e-7,
                1e-9 + 1e-12 * maxAbs(mag));
}

void testBroadcast(zrt_dtype dt, const std::vector<int64_t> &xShape,
                   const std::vector<int64_t> &yShape, int64_t offset = 0) {
  Rng rng(37 + numelOf(yShape) + offset);
  int64_t xn = numelOf(xShape), yn = numelOf(yShape);
  Tensor x(dt, xn, offset), y(dt, yn, offset);
  fillPattern(x, rng);
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
  for (int i = 0; i < count; ++i) {
    parts.emplace_back(dt, outer * sizes[i] * inner);
    fillPattern(parts.back(), rng);
    parts.back().upload();
  }
  for (Tensor &p : parts)
    inputs.push_back(p.dev);
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
  std::string tag = fmt("%s sizes %s outer %lld inner %lld", name(dt),
                        shapeText(sizes).c_str(), (long long)outer,
                        (long long)inner);
  zrt_concat(dt, count, inputs.data(), sizes.data(), whole.dev, outer, inner);
  checker.exact("zrt_concat " + tag, whole.download(), ref);
  std::vector<Tensor> back;
  std::vector<void *> outputs;
  for (int i = 0; i < count; ++i) {
    back.emplace_back(dt, outer * sizes[i] * inner);
    back.back().poison();
  }
  for (Tensor &b : back)
    outputs.push_back(b.dev);
  whole.v = ref;
  whole.upload();
  zrt_split(dt, whole.dev, count, outputs.data(), sizes.data(), outer, inner);
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    Vec got = back[i].download();
    for (size_t j = 0; j < got.size() && ok; ++j)
      ok = got[j] == parts[i].v[j];
  }
  checker.truth("zrt_split " + tag, ok, ok ? "every part equal" : "DIFFER");
}

void testPack(zrt_dtype dt, const std::vector<int64_t> &numels) {
  Rng rng(43 + numels.size());
  int count = static_cast<int>(numels.size());
  int64_t total = 0;
  for (int64_t n : numels)
    total += n;
  std::vector<Tensor> parts;
  std::vector<const void *> inputs;
  for (int i = 0; i < count; ++i) {
    parts.emplace_back(dt, numels[i]);
    fillPattern(parts.back(), rng);
    parts.back().upload();
  }
  for (Tensor &p : parts)
    inputs.push_back(p.dev);
  Tensor packed(dt, total);
  packed.poison();
  // The tensors end to end.
  Vec ref;
  for (const Tensor &p : parts)
    ref.insert(ref.end(), p.v.begin(), p.v.end());
  std::string tag =
      numels.size() <= 8
          ? fmt("%s numels %s", name(dt), shapeText(numels).c_str())
          : fmt("%s %d tensors", name(dt), count);
  zrt_pack(dt, count, inputs.data(), numels.data(), packed.dev);
  checker.exact("zrt_pack " + tag, packed.download(), ref);
  std::vector<Tensor> back;
  std::vector<void *> outputs;
  for (int i = 0; i < count; ++i) {
    back.emplace_back(dt, numels[i]);
    back.back().poison();
  }
  for (Tensor &b : back)
    outputs.push_back(b.dev);
  zrt_unpack(dt, packed.dev, count, outputs.data(), numels.data());
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    Vec got = back[i].download();
    for (size_t j = 0; j < got.size() && ok; ++j)
      ok = got[j] == parts[i].v[j];
  }
  checker.truth("zrt_unpack " + tag, ok, ok ? "every tensor equal" : "DIFFER");
}

void testShapes() {
  struct Perm {
    std::vector<int64_t> shape, perm;
  };
  std::vector<Perm> perms = {
      {{}, {}},
      {{37, 45}, {1, 0}},
      {{33, 65}, {1, 0}},
      {{3, 1, 4}, {2, 1, 0}},
      {{3, 5, 4, 7}, {0, 2, 1, 3}},
      {{3, 5, 4, 7}, {3, 2, 1, 0}},
      {{3, 5, 4, 7}, {2, 0, 3, 1}},
      {{3, 5, 4, 7}, {0, 1, 2, 3}},
      {{1, 5, 1, 3}, {3, 0, 2, 1}},
      {{2, 3, 1, 4, 5}, {4, 3, 2, 1, 0}},
      {{2, 3, 5, 7, 11}, {4, 0, 3, 1, 2}},
      {{64, 130, 70}, {2, 0, 1}},
      {{8, 96, 12, 16}, {0, 2, 1, 3}},
      {{4, 64, 12, 64}, {0, 2, 1, 3}},
      {{4, 0, 3}, {2, 1, 0}},
  };
  for (zrt_dtype dt : {ZRT_F32, ZRT_BF16})
    for (const Perm &p : perms)
      testTranspose(dt, p.shape, p.perm);
  testTranspose(ZRT_I64, {3, 5, 4}, {2, 0, 1});
  testTranspose(ZRT_I64, {2, 3, 4, 5}, {3, 2, 1, 0});
  testTranspose(ZRT_I32, {3, 5, 4}, {1, 2, 0});
  testTranspose(ZRT_I32, {5, 6, 7}, {1, 2, 0});

  for (zrt_dtype dt : kFloatTypes) {
    std::vector<int64_t> shape = {3, 5, 4, 7};
    for (int mask = 0; mask < 16; ++mask) {
      std::vector<uint8_t> reduced(4);
      for (int d = 0; d < 4; ++d)
        reduced[d] = (mask >> (3 - d)) & 1;
      testReduce(dt, shape, reduced, mask == 5);
    }
    testReduce(dt, {1, 6, 1}, {1, 0, 1}, false);
    testReduce(dt, {2, 0, 3}, {0, 1, 0}, false); // sums of nothing
    testReduce(dt, {6, 0, 4}, {0, 1, 0}, false);
    testReduce(dt, {}, {}, false);
    testReduce(dt, {4000, 300}, {1, 0}, true); // a bias gradient
    testReduce(dt, {512, 768}, {1, 0}, false);
    testReduce(dt, {4, 128, 768}, {1, 1, 0}, true);
    testReduce(dt, {300, 4000}, {0, 1}, false);
    testReduce(dt, {200003}, {1}, false); // a long run, split
    testReduce(dt, {6, 5000, 3}, {1, 0, 1}, false);
    testReduce(dt, {7, 2000, 3}, {0, 1, 0}, false);
    testReduce(dt, {2, 3, 4, 5, 6, 7}, {1, 0, 1, 0, 1, 0}, false);
  }

  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> casts = {
      {{5}, {3, 4, 5}},       {{4, 1}, {3, 4, 5}},
      {{1}, {2, 3}},          {{}, {2, 3}},
      {{3, 1, 5}, {2, 3, 4, 5}}, {{1, 1}, {1, 1}},
      {{3, 4}, {3, 4}},       {{2, 1, 1}, {2, 3, 4}},
      {{768}, {64, 96, 768}}, {{64, 96, 1}, {64, 96, 50}},
      {{3}, {0, 3}},          {{37, 1}, {37, 13}},
      {{2, 1, 3}, {4, 2, 5, 3}},
  };
  for (zrt_dtype dt : kFloatTypes) {
    for (auto &[xs, ys] : casts)
      testBroadcast(dt, xs, ys);
    testBroadcast(dt, {768}, {5, 768}, 1);
  }
  testBroadcast(ZRT_I64, {3, 1}, {2, 3, 4});

  testConcatSplit(ZRT_F32, {2, 5, 1}, 3, 4);
  testConcatSplit(ZRT_BF16, {3, 0, 2}, 5, 1);
  testConcatSplit(ZRT_BF16, {300000, 11}, 1, 7);
  testConcatSplit(ZRT_F32, {12, 12, 12}, 96, 64);
  testConcatSplit(ZRT_I64, {1, 2}, 2, 3);
  for (zrt_dtype dt : kFloatTypes) {
    testConcatSplit(dt, {2, 0, 3, 1}, 3, 5);
    testConcatSplit(dt, {768, 768, 768}, 64, 1);
    std::vector<int64_t> many;
    for (int i = 0; i < 21; ++i)
      many.push_back(1 + i % 4);
    testConcatSplit(dt, many, 4, 3);
    testPack(dt, {13, 5, 1, 0, 8});
    testPack(dt, {10, 0, 7, 33});
    std::vector<int64_t> numels;
    for (int i = 0; i < 20; ++i)
      numels.push_back(i * 37 % 101);
    testPack(dt, numels);
  }
  testPack(ZRT_F32, {700001, 3});
  testPack(ZRT_BF16, std::vector<int64_t>(40, 1001));
}

//===----------------------------------------------------------------------===//
// Llama-class models: zrt_rmsnorm, zrt_rope, zrt_slice / zrt_slice_grad,
// zrt_dropout
//===----------------------------------------------------------------------===//

void testRmsnorm(zrt_dtype dt, int64_t rows, int64_t cols,
                 int64_t offset = 0) {
  Rng rng(131 + rows * 3 + cols + offset);
  double eps = 1e-5;
  Tensor x(dt, rows * cols, offset), w(dt, cols), dy(dt, rows * cols, offset);
  x.fillNormal(rng, 0.2, 1.0);
  w.fillNormal(rng, 1.0, 0.3);
  dy.fillNormal(rng);
  Vec y(rows * cols), dx(rows * cols), dw(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double ms = 0, gx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      ms += x.v[r * cols + c] * x.v[r * cols + c];
      gx += dy.v[r * cols + c] * w.v[c] * x.v[r * cols + c];
    }
    double rrms = 1.0 / std::sqrt(ms / cols + eps);
    gx /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      double xv = x.v[r * cols + c], g = dy.v[r * cols + c] * w.v[c];
      y[r * cols + c] = xv * rrms * w.v[c];
      dx[r * cols + c] = rrms * (g - xv * rrms * rrms * gx);
      dw[c] += dy.v[r * cols + c] * xv * rrms;
    }
  }
  std::string tag = fmt("%s %lldx%lld%s", name(dt), (long long)rows,
                        (long long)cols, offset ? " unaligned" : "");
  double rt = rtolOf(dt, 1e-5), at = dt == ZRT_BF16 ? 2e-2 : 2e-5;
  x.upload();
  w.upload();
  dy.upload();
  Tensor out(dt, rows * cols, offset), gx(dt, rows * cols, offset),
      gw(dt, cols);
  out.poison();
  gx.poison();
  gw.poison();
  zrt_rmsnorm(dt, x.dev, w.dev, out.dev, rows, cols, eps);
  zrt_rmsnorm_grad(dt, dy.dev, x.dev, w.dev, gx.dev, gw.dev, rows, cols, eps);
  if (rows > 0) { // else only dweight, zeros, has values
    checker.close("zrt_rmsnorm " + tag, out.download(), y, rt, at);
    checker.close("zrt_rmsnorm_grad dx " + tag, gx.download(), dx, rt,
                  at * std::max(1.0, maxAbs(dx)));
  }
  checker.close("zrt_rmsnorm_grad dweight " + tag, gw.download(), dw, rt,
                at * std::sqrt(static_cast<double>(std::max<int64_t>(rows, 1))));
}

void testRmsnormFd() {
  Rng rng(137);
  int64_t rows = 3, cols = 7;
  double eps = 1e-5;
  Tensor x(ZRT_F32, rows * cols), w(ZRT_F32, cols), dy(ZRT_F32, rows * cols);
  x.fillNormal(rng);
  w.fillNormal(rng, 1.0, 0.5);
  dy.fillNormal(rng);
  for (Tensor *t : {&x, &w, &dy})
    t->upload();
  Tensor dx(ZRT_F32, rows * cols), dw(ZRT_F32, cols);
  zrt_rmsnorm_grad(ZRT_F32, dy.dev, x.dev, w.dev, dx.dev, dw.dev, rows, cols,
                   eps);
  auto forward = [&](const Vec &xv, const Vec &wv) {
    Tensor xt = f32Tensor(xv), wt = f32Tensor(wv), y(ZRT_F32, rows * cols);
    zrt_rmsnorm(ZRT_F32, xt.dev, wt.dev, y.dev, rows, cols, eps);
    return weighted(y.download(), dy.v);
  };
  double h = 1e-2;
  std::string what = "zrt_rmsnorm_grad f32 3x7";
  checkFd(what + " dx", dx.download(),
          finiteDiff(x.v, [&](const Vec &v) { return forward(v, w.v); }, h));
  checkFd(what + " dweight", dw.download(),
          finiteDiff(w.v, [&](const Vec &v) { return forward(x.v, v); }, h));
}

/// train.rope of `rows` rows of d: row r at position (r / period) %
/// positions, pairs (2i, 2i+1) (style 0) or (i, i + d/2) (style 1) turned
/// by position * theta^(-2i/d), the other way when `inverse`.
Vec ropeRef(const Vec &x, int64_t rows, int64_t d, int64_t positions,
            int64_t period, double theta, int style, bool inverse,
            const std::vector<double> *invFreq = nullptr) {
  Vec y(x.size(), 0.0);
  int64_t half = d / 2;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t p = (r / period) % positions;
    for (int64_t i = 0; i < half; ++i) {
      double angle =
          p * (invFreq ? (*invFreq)[i] : std::pow(theta, -2.0 * i / d));
      double c = std::cos(angle),
             s = inverse ? -std::sin(angle) : std::sin(angle);
      int64_t a = style == 0 ? 2 * i : i, b = style == 0 ? 2 * i + 1 : i + half;
      y[r * d + a] = x[r * d + a] * c - x[r * d + b] * s;
      y[r * d + b] = x[r * d + b] * c + x[r * d + a] * s;
    }
  }
  return y;
}

void testRope(zrt_dtype dt, int64_t rows, int64_t d, int64_t positions,
              int64_t period, double theta, int style) {
  Rng rng(151 + rows + d * 3 + style + positions * 5 + period);
  Tensor x(dt, rows * d), y(dt, rows * d), back(dt, rows * d),
      inv(dt, rows * d);
  x.fillNormal(rng);
  x.upload();
  Vec ref = ropeRef(x.v, rows, d, positions, period, theta, style, false);
  Vec refInv = ropeRef(x.v, rows, d, positions, period, theta, style, true);
  y.poison();
  back.poison();
  inv.poison();
  zrt_rope(dt, x.dev, y.dev, rows, d, positions, period, theta, style, 0);
  zrt_rope(dt, y.dev, back.dev, rows, d, positions, period, theta, style, 1);
  zrt_rope(dt, x.dev, inv.dev, rows, d, positions, period, theta, style, 1);
  std::string tag =
      fmt("%s %s rows %lld d %lld positions %lld period %lld theta %g",
          name(dt), style == 0 ? "interleaved" : "rotate_half",
          (long long)rows, (long long)d, (long long)positions,
          (long long)period, theta);
  // A rotation of a pair rounded once: within half an ulp of the larger of
  // the pair (bf16), a few f32 roundings of the pair's size (f32).
  double rt = rtolOf(dt, 4e-6), at = dt == ZRT_BF16 ? 8e-3 : 4e-6;
  Vec pairAt(x.v.size());
  int64_t half = d / 2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < half; ++i) {
      int64_t a = r * d + (style == 0 ? 2 * i : i),
              b = r * d + (style == 0 ? 2 * i + 1 : i + half);
      pairAt[a] = pairAt[b] = at * (std::fabs(x.v[a]) + std::fabs(x.v[b]));
    }
  checker.close("zrt_rope " + tag, y.download(), ref, rt, pairAt);
  checker.close("zrt_rope inverse " + tag, inv.download(), refInv, rt, pairAt);
  // The inverse undoes the rotation, up to the rounding of y and its own.
  Vec twice(pairAt.size());
  for (size_t i = 0; i < pairAt.size(); ++i)
    twice[i] = 2 * pairAt[i];
  checker.close("zrt_rope inverse of zrt_rope " + tag, back.download(), x.v,
                2 * rt, twice);
}

/// zrt_rope_scaled against transformers' rope scalings transcribed here:
/// llama3 (_compute_llama3_parameters) with Llama 3.2's factors and an
/// original context of 1024 under 4096 positions (the 32 pairs of d 64,
/// theta 500000, fall in all three bands: kept below the wavelength 256,
/// divided by 32 above 1024, blended between), and linear (f / factor).
void testRopeScaled(zrt_dtype dt) {
  int64_t rows = 2 * 4096, d = 64, positions = 4096, period = 1, half = d / 2;
  double theta = 500000.0;
  struct Case {
    const char *name;
    double factor, low, high, original;
  } cases[] = {{"llama3", 32.0, 1.0, 4.0, 1024.0}, {"linear", 4.0, 0, 0, 0}};
  for (const Case &c : cases) {
    std::vector<double> invFreq(half);
    for (int64_t i = 0; i < half; ++i) {
      double f = 1.0 / std::pow(theta, 2.0 * i / d);
      if (c.original == 0) {
        invFreq[i] = f / c.factor;
        continue;
      }
      double lowWavelen = c.original / c.low, highWavelen = c.original / c.high;
      double wavelen = 2 * M_PI / f;
      double llama = wavelen > lowWavelen ? f / c.factor : f;
      double smooth = (c.original / wavelen - c.low) / (c.high - c.low);
      double smoothed = (1 - smooth) * llama / c.factor + smooth * llama;
      bool medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
      invFreq[i] = medium ? smoothed : llama;
    }
    Rng rng(163 + static_cast<int>(c.factor));
    Tensor x(dt, rows * d), y(dt, rows * d), inv(dt, rows * d);
    x.fillNormal(rng);
    x.upload();
    y.poison();
    inv.poison();
    Vec ref = ropeRef(x.v, rows, d, positions, period, theta, 1, false, &invFreq);
    Vec refInv = ropeRef(x.v, rows, d, positions, period, theta, 1, true, &invFreq);
    zrt_rope_scaled(dt, x.dev, y.dev, rows, d, positions, period, theta, 1, 0,
                    c.factor, c.low, c.high, c.original);
    zrt_rope_scaled(dt, x.dev, inv.dev, rows, d, positions, period, theta, 1,
                    1, c.factor, c.low, c.high, c.original);
    double rt = rtolOf(dt, 4e-6), at = dt == ZRT_BF16 ? 8e-3 : 4e-6;
    Vec pairAt(x.v.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < half; ++i)
        pairAt[r * d + i] = pairAt[r * d + i + half] =
            at * (std::fabs(x.v[r * d + i]) + std::fabs(x.v[r * d + i + half]));
    std::string tag = fmt("%s %s rows %lld d %lld positions %lld", c.name,
                          name(dt), (long long)rows, (long long)d,
                          (long long)positions);
    checker.close("zrt_rope_scaled " + tag, y.download(), ref, rt, pairAt);
    checker.close("zrt_rope_scaled inverse " + tag, inv.download(), refInv, rt,
                  pairAt);
  }
}

/// The inverse rotation is the transposed one (what train.rope's
/// derivative uses): <rope(x), g> = <x, rope_inverse(g)>.
void testRopeAdjoint() {
  Rng rng(157);
  int64_t rows = 24, d = 10, positions = 7, period = 2;
  for (int style = 0; style < 2; ++style) {
    Tensor x(ZRT_F32, rows * d), g(ZRT_F32, rows * d), y(ZRT_F32, rows * d),
        gi(ZRT_F32, rows * d);
    x.fillNormal(rng);
    g.fillNormal(rng);
    x.upload();
    g.upload();
    zrt_rope(ZRT_F32, x.dev, y.dev, rows, d, positions, period, 1000.0, style,
             0);
    zrt_rope(ZRT_F32, g.dev, gi.dev, rows, d, positions, period, 1000.0,
             style, 1);
    double lhs = weighted(y.download(), g.v), rhs = weighted(x.v, gi.download());
    checker.close(fmt("zrt_rope f32 %s rows %lld d %lld: <rope(x), g> = <x, "
                      "inverse(g)>",
                      style == 0 ? "interleaved" : "rotate_half",
                      (long long)rows, (long long)d),
                  {lhs}, {rhs}, 1e-5, 1e-5);
  }
}

/// zrt_slice: element o of out_shape reads in[offsets + index(o) * strides];
/// zrt_slice_grad scatters dy there into zeros. Bitwise.
void testSlice(zrt_dtype dt, const std::vector<int64_t> &in,
               const std::vector<int64_t> &offsets,
               const std::vector<int64_t> &strides,
               const std::vector<int64_t> &out) {
  int64_t n = numelOf(out), m = numelOf(in);
  Tensor x(dt, m), y(dt, n), g(dt, n), dx(dt, m);
  for (int64_t i = 0; i < m; ++i)
    x.set(i, static_cast<double>(i % 251) - 100.0);
  for (int64_t i = 0; i < n; ++i)
    g.set(i, static_cast<double>(i % 127) + 0.5);
  int rank = static_cast<int>(in.size());
  std::vector<int64_t> inStride = stridesOf(in);
  Vec ry(n), rdx(m, 0.0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t rest = o, src = 0;
    for (int dim = rank - 1; dim >= 0; --dim) {
      src += (offsets[dim] + rest % out[dim] * strides[dim]) * inStride[dim];
      rest /= out[dim];
    }
    ry[o] = x.v[src];
    rdx[src] = g.v[o];
  }
  x.upload();
  g.upload();
  y.poison();
  dx.poison();
  zrt_slice(dt, x.dev, y.dev, rank, in.data(), offsets.data(), strides.data(),
            out.data());
  zrt_slice_grad(dt, g.dev, dx.dev, rank, in.data(), offsets.data(),
                 strides.data(), out.data());
  std::string tag = fmt("%s %s offsets %s strides %s -> %s", name(dt),
                        shapeText(in).c_str(), shapeText(offsets).c_str(),
                        shapeText(strides).c_str(), shapeText(out).c_str());
  if (n > 0) // else only dx, zeros, has values
    checker.exact("zrt_slice " + tag, y.download(), ry);
  checker.exact("zrt_slice_grad " + tag, dx.download(), rdx);
}

/// zrt_dropout of x viewed as [outer, rows, inner], the rows being global
/// rows [rowOffset, rowOffset + rows) of globalRows, against Random.h's
/// mask (the spec zrt.h names): kept elements are exactly f32(x) * f32(1 /
/// (1 - p)) rounded to dt, the others 0. Returns the number kept.
int64_t dropoutRef(zrt_dtype dt, const Vec &x, int64_t inner, int64_t rows,
                   int64_t rowOffset, int64_t globalRows, double p,
                   uint64_t seed, int64_t step, Vec &ref) {
  uint32_t threshold = zeroc::random::dropoutThreshold(p);
  float scale = static_cast<float>(1.0 / (1.0 - p));
  ref.assign(x.size(), 0.0);
  int64_t kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    uint64_t position = zeroc::random::dropoutPosition(
        i, static_cast<uint64_t>(inner), static_cast<uint64_t>(rows),
        static_cast<uint64_t>(rowOffset), static_cast<uint64_t>(globalRows));
    if (!zeroc::random::dropoutKeeps(seed, static_cast<uint64_t>(step),
                                     position, threshold))
      continue;
    ++kept;
    ref[i] = roundTo(dt, static_cast<float>(x[i]) * scale);
  }
  return kept;
}

/// The rows [r0, r1) of x viewed as [outer, rows, inner].
Vec rowsOf(const Vec &x, int64_t outer, int64_t rows, int64_t inner,
           int64_t r0, int64_t r1) {
  Vec part;
  for (int64_t o = 0; o < outer; ++o)
    part.insert(part.end(), x.begin() + (o * rows + r0) * inner,
                x.begin() + (o * rows + r1) * inner);
  return part;
}

void testDropout(zrt_dtype dt) {
  // The whole tensor: the mask, the scale, the kept fraction (within 5
  // standard deviations of 1 - p).
  for (double p : {0.1, 0.5}) {
    int64_t outer = 3, rows = 8, inner = 4099, n = outer * rows * inner;
    Rng rng(171 + static_cast<int>(p * 10));
    Tensor x(dt, n), y(dt, n);
    x.fillNormal(rng, 1.0, 0.5);
    x.upload();
    y.poison();
    zrt_dropout(dt, x.dev, y.dev, n, inner, rows, 0, rows, p, 1234, 7);
    Vec ref;
    int64_t kept = dropoutRef(dt, x.v, inner, rows, 0, rows, p, 1234, 7, ref);
    std::string tag = fmt("zrt_dropout %s p %g n %lld", name(dt), p,
                          (long long)n);
    checker.exact(tag + " (Random.h's mask, x * f32(1 / (1 - p)))",
                  y.download(), ref);
    double fraction = static_cast<double>(kept) / n;
    double sigma = std::sqrt(p * (1 - p) / n);
    checker.truth(tag + " kept fraction",
                  std::fabs(fraction - (1 - p)) < 5 * sigma,
                  fmt("%.5f kept, 1 - p = %.2f, sigma %.5f", fraction, 1 - p,
                      sigma));
  }
  // A batch split over ranks (evenly and not): each piece's rows, computed
  // alone, are the whole tensor's; twice the same call, the same mask.
  int64_t outer = 3, rows = 8, inner = 37, n = outer * rows * inner;
  double p = 0.3;
  Rng rng(173);
  Tensor x(dt, n), whole(dt, n), again(dt, n);
  x.fillNormal(rng);
  x.upload();
  whole.poison();
  again.poison();
  zrt_dropout(dt, x.dev, whole.dev, n, inner, rows, 0, rows, p, 99, 4);
  zrt_dropout(dt, x.dev, again.dev, n, inner, rows, 0, rows, p, 99, 4);
  Vec all = whole.download();
  checker.exact(fmt("zrt_dropout %s the same call twice", name(dt)),
                again.download(), all);
  for (const std::vector<int64_t> &cuts :
       {std::vector<int64_t>{0, 4, 8}, {0, 2, 4, 6, 8}, {0, 3, 8}, {0, 1, 8}}) {
    Vec got, expect;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      int64_t r0 = cuts[c], local = cuts[c + 1] - cuts[c];
      Tensor part(dt, outer * local * inner), out(dt, outer * local * inner);
      part.v = rowsOf(x.v, outer, rows, inner, r0, r0 + local);
      part.upload();
      out.poison();
      zrt_dropout(dt, part.dev, out.dev, part.n, inner, local, r0, rows, p, 99,
                  4);
      Vec o = out.download();
      got.insert(got.end(), o.begin(), o.end());
      Vec e = rowsOf(all, outer, rows, inner, r0, r0 + local);
      expect.insert(expect.end(), e.begin(), e.end());
    }
    checker.exact(fmt("zrt_dropout %s rows split %s of %lld, each piece "
                      "alone vs the whole",
                      name(dt), shapeText(cuts).c_str(), (long long)rows),
                  got, expect);
  }
  // Another step or seed draws another mask: independent masks agree on
  // p^2 + (1 - p)^2 = 58% of the elements.
  Tensor other(dt, n), reseeded(dt, n);
  zrt_dropout(dt, x.dev, other.dev, n, inner, rows, 0, rows, p, 99, 5);
  zrt_dropout(dt, x.dev, reseeded.dev, n, inner, rows, 0, rows, p, 100, 4);
  Vec ov = other.download(), rv = reseeded.download();
  int64_t sameStep = 0, sameSeed = 0;
  for (int64_t i = 0; i < n; ++i) {
    sameStep += (ov[i] == 0) == (all[i] == 0);
    sameSeed += (rv[i] == 0) == (all[i] == 0);
  }
  checker.truth(fmt("zrt_dropout %s another step, another seed", name(dt)),
                sameStep < n * 0.7 && sameSeed < n * 0.7,
                fmt("masks agree on %lld (step 5) and %lld (seed 100) of %lld",
                    (long long)sameStep, (long long)sameSeed, (long long)n));
  // p = 0 keeps everything (scale 1).
  Tensor same(dt, n);
  same.poison();
  zrt_dropout(dt, x.dev, same.dev, n, inner, rows, 0, rows, 0.0, 99, 4);
  checker.exact(fmt("zrt_dropout %s p 0", name(dt)), same.download(), x.v);
}

void testLlama() {
  for (zrt_dtype dt : kFloatTypes) {
    testRmsnorm(dt, 21, 13);
    testRmsnorm(dt, 300, 768); // parallel rows and blocks
    testRmsnorm(dt, 33, 768, 1);
    testRmsnorm(dt, 3, 4096);
    testRmsnorm(dt, 0, 5); // dweight of no rows: zeros
    for (int style = 0; style < 2; ++style) {
      testRope(dt, 5 * 3 * 4, 6, 5, 3, 10000.0, style); // positions wrap
      testRope(dt, 2 * 4 * 9, 8, 9, 1, 500000.0, style);
      testRope(dt, 7, 2, 7, 1, 10000.0, style);
    }
    testRope(dt, 4 * 4096, 64, 4096, 1, 500000.0, 1); // long positions
    testRope(dt, 4 * 4096, 128, 4096, 1, 500000.0, 0);
    testRopeScaled(dt);
    testDropout(dt);
  }
  testRmsnormFd();
  testRopeAdjoint();
  for (zrt_dtype dt : {ZRT_F32, ZRT_BF16, ZRT_I32, ZRT_I64}) {
    testSlice(dt, {1, 32, 48}, {0, 0, 0}, {1, 1, 1}, {1, 17, 48});
    testSlice(dt, {3, 4, 7}, {1, 0, 1}, {1, 2, 2}, {2, 2, 3});
    testSlice(dt, {2, 5, 3, 8}, {0, 0, 0, 4}, {1, 1, 1, 1}, {2, 5, 3, 4});
    testSlice(dt, {64, 130}, {3, 5}, {3, 1}, {20, 120});
    testSlice(dt, {6}, {5}, {1}, {1});
    testSlice(dt, {2, 3, 4, 5, 6}, {1, 0, 1, 2, 0}, {1, 2, 3, 1, 2},
              {1, 2, 1, 3, 3});
    testSlice(dt, {4, 6}, {1, 0}, {1, 1}, {0, 6}); // empty
    testSlice(dt, {}, {}, {}, {});                 // a scalar
  }
}

//===----------------------------------------------------------------------===//
// Edge cases the sanitizers found: a NaN through the kernels' exp, empty
// parts without a buffer
//===----------------------------------------------------------------------===//

void testSanitizerCases() {
  for (zrt_dtype dt : kFloatTypes) {
    // A NaN in a row makes its softmax (and the max-subtracted exp of its
    // NaN) NaN, and nothing else.
    int64_t rows = 3, cols = 37;
    Rng rng(181);
    Tensor x(dt, rows * cols), y(dt, rows * cols);
    x.fillNormal(rng);
    x.set(cols + 5, kNaN);
    x.upload();
    y.poison();
    zrt_softmax(dt, x.dev, y.dev, rows, cols);
    Vec got = y.download();
    bool ok = true;
    for (int64_t i = 0; i < rows * cols; ++i)
      ok = ok && (i / cols == 1) == std::isnan(got[i]);
    checker.truth(fmt("zrt_softmax %s a NaN in row 1 of 3", name(dt)), ok,
                  ok ? "row 1 NaN, rows 0 and 2 finite" : "WRONG rows");
    Tensor ids = randomIds(ZRT_I32, rows, cols, rng);
    Scalar loss(0.0f);
    zrt_cross_entropy(dt, x.dev, ids.dev, ZRT_I32, rows, cols, loss.dev);
    double l = loss.get();
    checker.truth(fmt("zrt_cross_entropy %s a NaN logit", name(dt)),
                  std::isnan(l), fmt("%g (NaN expected)", l));
  }
  // Parts of zero elements passed as NULL (a program's empty tensors).
  for (zrt_dtype dt : kFloatTypes) {
    int64_t outer = 3, inner = 2;
    Rng rng(191);
    Tensor a(dt, outer * 2 * inner), b(dt, outer * 3 * inner),
        whole(dt, outer * 5 * inner);
    fillPattern(a, rng);
    fillPattern(b, rng);
    a.upload();
    b.upload();
    whole.poison();
    int64_t sizes[4] = {0, 2, 0, 3};
    const void *inputs[4] = {nullptr, a.dev, nullptr, b.dev};
    zrt_concat(dt, 4, inputs, sizes, whole.dev, outer, inner);
    Vec ref;
    for (int64_t o = 0; o < outer; ++o) {
      ref.insert(ref.end(), a.v.begin() + o * 2 * inner,
                 a.v.begin() + (o + 1) * 2 * inner);
      ref.insert(ref.end(), b.v.begin() + o * 3 * inner,
                 b.v.begin() + (o + 1) * 3 * inner);
    }
    std::string tag = fmt("%s sizes [0, 2, 0, 3], the empty parts NULL",
                          name(dt));
    checker.exact("zrt_concat " + tag, whole.download(), ref);
    Tensor a2(dt, a.n), b2(dt, b.n);
    a2.poison();
    b2.poison();
    void *outputs[4] = {nullptr, a2.dev, nullptr, b2.dev};
    zrt_split(dt, whole.dev, 4, outputs, sizes, outer, inner);
    Vec both = a2.download(), second = b2.download();
    both.insert(both.end(), second.begin(), second.end());
    Vec expect = a.v;
    expect.insert(expect.end(), b.v.begin(), b.v.end());
    checker.exact("zrt_split " + tag, both, expect);
  }
}

//===----------------------------------------------------------------------===//
// Norms, clipping, the schedule, AdamW, SGD (per tensor and per flat
// buffer), copies
//===----------------------------------------------------------------------===//

void testSquaredNorm(zrt_dtype dt, int64_t n, int64_t offset) {
  Rng rng(47 + n + offset);
  Tensor x(dt, n, offset);
  x.fillNormal(rng);
  x.upload();
  double ref = 0;
  for (double v : x.v)
    ref += v * v;
  Scalar out(static_cast<float>(kNaN));
  zrt_squared_norm(dt, x.dev, n, out.dev);
  checker.close(fmt("zrt_squared_norm %s n %lld%s", name(dt), (long long)n,
                    offset ? " unaligned" : ""),
                {out.get()}, {ref}, 1e-6, 1e-30);
}

/// With `scale` (not 0): grad_scale, the gradient multiplied by it and
/// rounded to f32 first (train-fuse-optimizer's clipping coefficient), as
/// the reference evaluator's adamw_update with grad_scale computes it.
void testAdamW(int64_t n, int64_t offset, float scale = 0.0f) {
  Rng rng(53 + n + offset);
  Tensor p(ZRT_F32, n, offset), g(ZRT_F32, n, offset), m(ZRT_F32, n, offset),
      v(ZRT_F32, n, offset);
  p.fillNormal(rng);
  p.upload();
  m.upload();
  v.upload();
  Scalar gs(scale);
  Vec rp = p.v, rm(n, 0.0), rv(n, 0.0);
  double lr = 1e-3, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  for (int64_t step = 0; step < 3; ++step) {
    g.fillNormal(rng);
    g.upload();
    zrt_adamw(p.f32(), g.f32(), scale != 0.0f ? gs.dev : nullptr, m.f32(),
              v.f32(), n, static_cast<float>(lr), step, b1, b2, eps, wd);
    double t = step + 1.0;
    for (int64_t i = 0; i < n; ++i) {
      double gi = scale != 0.0f ? static_cast<double>(static_cast<float>(
                                      g.v[i] * static_cast<double>(scale)))
                                : g.v[i];
      rp[i] *= 1 - static_cast<double>(static_cast<float>(lr)) * wd;
      rm[i] = b1 * rm[i] + (1 - b1) * gi;
      rv[i] = b2 * rv[i] + (1 - b2) * gi * gi;
      rp[i] -= static_cast<float>(lr) / (1 - std::pow(b1, t)) *
               (rm[i] / (std::sqrt(rv[i]) / std::sqrt(1 - std::pow(b2, t)) +
                         eps));
    }
  }
  std::string tag = fmt("zrt_adamw f32 n %lld 3 steps%s%s", (long long)n,
                        offset ? " unaligned" : "",
                        scale != 0.0f ? fmt(" grad_scale %g", scale).c_str()
                                      : "");
  checker.close(tag + " param", p.download(), rp, 1e-5, 1e-7);
  checker.close(tag + " exp_avg", m.download(), rm, 1e-5, 1e-7);
  checker.close(tag + " exp_avg_sq", v.download(), rv, 1e-5, 1e-12);
}

void testSgd(int64_t n, double momentum) {
  Rng rng(59 + n + static_cast<int>(momentum * 10));
  Tensor p(ZRT_F32, n), g(ZRT_F32, n), buf(ZRT_F32, n);
  p.fillNormal(rng);
  p.upload();
  buf.upload();
  Vec rp = p.v, rb(n, 0.0);
  double lr = 0.1, wd = 0.01;
  for (int step = 0; step < 3; ++step) {
    g.fillNormal(rng);
    g.upload();
    zrt_sgd(p.f32(), g.f32(), momentum != 0 ? buf.f32() : nullptr, n,
            static_cast<float>(lr), momentum, wd);
    for (int64_t i = 0; i < n; ++i) {
      double d = g.v[i] + wd * rp[i];
      rb[i] = momentum != 0 ? momentum * rb[i] + d : d;
      rp[i] -= static_cast<float>(lr) * rb[i];
    }
  }
  checker.close(fmt("zrt_sgd f32 n %lld 3 steps momentum %g%s", (long long)n,
                    momentum, momentum != 0 ? "" : " (no buffer)"),
                p.download(), rp, 1e-5, 1e-7);
}

/// A member of a flat buffer: logical elements [offset, offset + numel).
struct Member {
  int64_t offset, numel;
  bool decay;
};

/// zrt_adamw_buffer / zrt_sgd_buffer over each of `shards` shards of a
/// buffer of `numel` logical elements, against the per-tensor zrt_adamw /
/// zrt_sgd on each member's part of the shard (with the member's weight
/// decay) and on the padding and gaps (without): bitwise the same after
/// three steps. With `scale` (AdamW, not 0): the bucket kernel takes it as
/// grad_scale, the per-tensor calls none on the gradient multiplied by it
/// apart (the train.mul that train-fuse-optimizer folds): still bitwise.
void testOptimizerBuffer(bool adamw, const std::vector<Member> &members,
                         int64_t numel, int64_t shards, double momentum,
                         const char *what, float scale = 0.0f) {
  Rng rng(61 + numel + shards + members.size() + adamw);
  int64_t shard = numel / shards;
  std::vector<int64_t> begin, end;
  std::vector<uint8_t> decay;
  for (const Member &m : members) {
    begin.push_back(m.offset);
    end.push_back(m.offset + m.numel);
    decay.push_back(m.decay ? 1 : 0);
  }
  // The pieces with one flag each: members and the gaps between them.
  std::vector<Member> pieces;
  int64_t at = 0;
  for (const Member &m : members) {
    if (m.offset > at)
      pieces.push_back({at, m.offset - at, false});
    pieces.push_back(m);
    at = m.offset + m.numel;
  }
  if (at < numel)
    pieces.push_back({at, numel - at, false});

  // Two copies of the state: one for the bucket kernel, one per tensor.
  Tensor p1(ZRT_F32, numel), m1(ZRT_F32, numel), v1(ZRT_F32, numel);
  Tensor p2(ZRT_F32, numel), m2(ZRT_F32, numel), v2(ZRT_F32, numel);
  Tensor g(ZRT_F32, numel), gScaled(ZRT_F32, numel);
  Scalar gs(scale);
  p1.fillNormal(rng);
  p2.v = p1.v;
  for (Tensor *t : {&p1, &m1, &v1, &p2, &m2, &v2})
    t->upload();
  bool withBuffer = !adamw && momentum == 0.0 ? false : true;
  float lr = adamw ? 1e-3f : 0.05f;
  double b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  for (int64_t step = 0; step < 3; ++step) {
    g.fillNormal(rng);
    g.upload();
    for (int64_t i = 0; i < numel; ++i)
      gScaled.v[i] = scale != 0.0f
                         ? static_cast<double>(static_cast<float>(g.v[i]) *
                                               scale)
                         : g.v[i];
    gScaled.upload();
    for (int64_t r = 0; r < shards; ++r) {
      int64_t first = r * shard;
      if (adamw)
        zrt_adamw_buffer(p1.f32() + first, g.f32() + first,
                         scale != 0.0f ? gs.dev : nullptr, m1.f32() + first,
                         v1.f32() + first, shard, first,
                         static_cast<int>(members.size()), begin.data(),
                         end.data(), decay.data(), lr, step, b1, b2, eps, wd);
      else
        zrt_sgd_buffer(p1.f32() + first, g.f32() + first,
                       withBuffer ? m1.f32() + first : nullptr, shard, first,
                       static_cast<int>(members.size()), begin.data(),
                       end.data(), decay.data(), lr, momentum, wd);
      for (const Member &piece : pieces) {
        int64_t lo = std::max(piece.offset, first);
        int64_t hi = std::min(piece.offset + piece.numel, first + shard);
        if (lo >= hi)
          continue;
        double pieceWd = piece.decay ? wd : 0.0;
        if (adamw)
          zrt_adamw(p2.f32() + lo, gScaled.f32() + lo, nullptr, m2.f32() + lo,
                    v2.f32() + lo, hi - lo, lr, step, b1, b2, eps, pieceWd);
        else
          zrt_sgd(p2.f32() + lo, g.f32() + lo,
                  withBuffer ? m2.f32() + lo : nullptr, hi - lo, lr, momentum,
                  pieceWd);
      }
    }
  }
  std::string tag = fmt("%s %s: %zu members in %lld elements, %lld shard(s)%s",
                        adamw ? "zrt_adamw_buffer" : "zrt_sgd_buffer", what,
                        members.size(), (long long)numel, (long long)shards,
                        scale != 0.0f ? fmt(", grad_scale %g", scale).c_str()
                                      : "");
  checker.exact(tag + " param", p1.download(), p2.download());
  if (adamw || withBuffer)
    checker.exact(tag + (adamw ? " exp_avg" : " momentum_buffer"),
                  m1.download(), m2.download());
  if (adamw)
    checker.exact(tag + " exp_avg_sq", v1.download(), v2.download());
}

void testOptimizerBuffers() {
  // A bucket: weights with decay, biases without, a gap, padding at the end
  // (620 = 4 x 155: every shard cut unevenly, the last with the padding).
  std::vector<Member> bucket = {
      {0, 100, true}, {100, 8, false}, {111, 500, true}, {611, 8, false}};
  for (bool adamw : {true, false}) {
    testOptimizerBuffer(adamw, bucket, 620, 1, 0.9, "a bucket, replicated");
    testOptimizerBuffer(adamw, bucket, 620, 4, 0.9, "a bucket, sharded");
  }
  testOptimizerBuffer(false, bucket, 620, 4, 0.0, "a bucket, no momentum");
  // Many members (more runs than one CUDA launch takes).
  std::vector<Member> many;
  for (int i = 0; i < 300; ++i)
    many.push_back({i * 4, 3, i % 2 == 0});
  testOptimizerBuffer(true, many, 1200, 2, 0.9, "300 members");
  // No segments at all: the whole shard without decay.
  testOptimizerBuffer(true, {}, 64, 2, 0.9, "padding only");
  // A clipping coefficient folded in (train-fuse-optimizer).
  testOptimizerBuffer(true, bucket, 620, 4, 0.9, "a bucket, sharded", 0.3712f);
}

void testOptimizers() {
  for (zrt_dtype dt : kFloatTypes) {
    testSquaredNorm(dt, 1000003, 0);
    testSquaredNorm(dt, 1000003, 1);
    testSquaredNorm(dt, 100003, 0);
    testSquaredNorm(dt, 7, 0);
    testSquaredNorm(dt, 0, 0);
  }
  for (double sq : {0.0, 0.25, 1.0, 4.0, 1e6}) {
    Scalar in(static_cast<float>(sq)), out(static_cast<float>(kNaN));
    double maxNorm = 1.0;
    zrt_clip_coef(in.dev, maxNorm, out.dev);
    double norm = std::sqrt(static_cast<double>(static_cast<float>(sq)));
    double ref = std::min(1.0, maxNorm / (norm + 1e-6));
    checker.close(fmt("zrt_clip_coef squared norm %g max norm 1", sq),
                  {out.get()}, {ref}, 1e-7, 0.0);
  }
  {
    // Constant, and cosine with warm-up 10, max_steps 100.
    Vec got, ref;
    const double pi = 3.14159265358979323846;
    double lr = 6e-4, minLr = 6e-5;
    for (int64_t s : {0, 1, 5, 9, 10, 11, 50, 99, 100, 101, 500}) {
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
    checker.close("zrt_lr_schedule constant and cosine (warm-up 10, "
                  "max_steps 100)",
                  got, ref, 1e-7, 0.0);
  }
  for (int64_t n : {int64_t{1001}, int64_t{4096}})
    for (int64_t offset : {int64_t{0}, int64_t{1}})
      testAdamW(n, offset);
  testAdamW(1001, 0, 0.3712f);
  testAdamW(4096, 1, 0.3712f);
  for (double momentum : {0.9, 0.0}) {
    testSgd(1001, momentum);
    testSgd(50001, momentum);
  }
  testOptimizerBuffers();
}

void testCopies() {
  for (zrt_dtype dt : kFloatTypes)
    for (int64_t n : {int64_t{1}, int64_t{1001}, int64_t{3000001}}) {
      Rng rng(67 + n);
      Tensor x(dt, n), y(dt, n);
      x.fillNormal(rng);
      x.upload();
      y.poison();
      zrt_copy(y.dev, x.dev, x.bytes());
      checker.exact(fmt("zrt_copy %s n %lld", name(dt), (long long)n),
                    y.download(), x.v);
      std::vector<float> host(static_cast<size_t>(n), -1.0f);
      zrt_read_f32(host.data(), y.dev, dt, n);
      checker.absorb(host.data(), host.size() * sizeof(float));
      checker.exact(fmt("zrt_read_f32 %s n %lld", name(dt), (long long)n),
                    Vec(host.begin(), host.end()), x.v);
    }
}

/// zrt.h's dtype table, as the kernels' runtime sees it.
void testDtypeTable() {
  bool ok = zrt_dtype_valid(ZRT_NUM_DTYPES - 1) &&
            !zrt_dtype_valid(ZRT_NUM_DTYPES) && !zrt_dtype_valid(-1);
  std::string rows;
#define CONFORMANCE_ROW_(e, value, ctype, bytes, text, is_float)              \
  ok = ok && zrt_dtype_size(e) == bytes && sizeof(ctype) == bytes &&           \
       std::strcmp(zrt_dtype_name(e), text) == 0 && e == value;                \
  rows += fmt("%s%s %zu", rows.empty() ? "" : ", ", zrt_dtype_name(e),         \
              zrt_dtype_size(e));
  ZRT_DTYPES(CONFORMANCE_ROW_)
#undef CONFORMANCE_ROW_
  checker.truth(fmt("zrt_dtype_size and zrt_dtype_name of %d dtypes",
                    static_cast<int>(ZRT_NUM_DTYPES)),
                ok, rows + " bytes");
}

//===----------------------------------------------------------------------===//
// Failure modes (--fail=CASE)
//===----------------------------------------------------------------------===//

struct FailCase {
  const char *name, *expect;
  std::function<void()> run;
};

/// Reads one value back: the CUDA kernels report bad ids from the device
/// at the next host synchronisation.
void synchronize(const Tensor &t) {
  std::vector<float> host(static_cast<size_t>(t.n));
  if (t.n > 0)
    zrt_read_f32(host.data(), t.dev, t.dtype, t.n);
}

std::vector<FailCase> failCases() {
  return {
      {"embedding-id", "zrt_embedding: id 9 at position 2 is outside [0, 5)",
       [] {
         Tensor table(ZRT_F32, 5 * 2), out(ZRT_F32, 3 * 2), ids(ZRT_I32, 3);
         ids.v = {0, 3, 9};
         ids.upload();
         zrt_embedding(ZRT_F32, table.dev, ids.dev, ZRT_I32, out.dev, 3, 5, 2);
         synchronize(out);
       }},
      {"embedding-grad-id",
       "zrt_embedding_grad: id -1 at position 0 is outside [0, 5)",
       [] {
         Tensor dy(ZRT_F32, 2 * 2), out(ZRT_F32, 5 * 2), ids(ZRT_I64, 2);
         ids.v = {-1, 0};
         ids.upload();
         zrt_embedding_grad(ZRT_F32, dy.dev, ids.dev, ZRT_I64, out.dev, 2, 5,
                            2, -1);
         synchronize(out);
       }},
      {"gather-index", "zrt_gather: index 8 at position 3 is outside [0, 8)",
       [] {
         Tensor x(ZRT_F32, 2 * 8), out(ZRT_F32, 2 * 2), idx(ZRT_I32, 4);
         idx.v = {0, 7, 1, 8};
         idx.upload();
         int64_t xShape[2] = {2, 8}, idxShape[2] = {2, 2};
         zrt_gather(ZRT_F32, x.dev, idx.dev, ZRT_I32, out.dev, 2, xShape,
                    idxShape, 1);
         synchronize(out);
       }},
      {"gather-grad-index",
       "zrt_gather_grad: index -2 at position 0 is outside [0, 3)",
       [] {
         Tensor dy(ZRT_F32, 2), out(ZRT_F32, 3), idx(ZRT_I64, 2);
         idx.v = {-2, 1};
         idx.upload();
         int64_t xShape[1] = {3}, idxShape[1] = {2};
         zrt_gather_grad(ZRT_F32, dy.dev, idx.dev, ZRT_I64, out.dev, 1, xShape,
                         idxShape, 0);
         synchronize(out);
       }},
      {"var-correction",
       "zrt_reduce_var: correction 4 must be in [0, 4) (the elements each "
       "result reduces)",
       [] {
         Tensor x(ZRT_F32, 8), y(ZRT_F32, 2);
         int64_t shape[2] = {2, 4};
         uint8_t reduced[2] = {0, 1};
         zrt_reduce_var(ZRT_F32, x.dev, y.dev, 2, shape, reduced, 4);
       }},
      {"embedding-id-dtype",
       "zrt_embedding: id dtype must be i32 or i64, got f32 (0)",
       [] {
         Tensor table(ZRT_F32, 10), out(ZRT_F32, 6), ids(ZRT_F32, 3);
         zrt_embedding(ZRT_F32, table.dev, ids.dev, ZRT_F32, out.dev, 3, 5, 2);
       }},
      {"cross-entropy-target",
       "zrt_cross_entropy: target 7 at position 1 is outside [0, 7)",
       [] {
         Tensor logits(ZRT_F32, 2 * 7), ids(ZRT_I32, 2);
         ids.v = {1, 7};
         ids.upload();
         Scalar loss;
         zrt_cross_entropy(ZRT_F32, logits.dev, ids.dev, ZRT_I32, 2, 7,
                           loss.dev);
         // As generated code reads a loss: the CUDA runtime reports ids
         // found out of range on the device there (a plain copy did not,
         // and this case passed on the CPU only).
         float value = 0;
         zrt_read_f32(&value, loss.dev, ZRT_F32, 1);
       }},
      {"cross-entropy-grad-target",
       "zrt_cross_entropy_grad: target -1 at position 0 is outside [0, 4)",
       [] {
         Tensor logits(ZRT_BF16, 2 * 4), out(ZRT_BF16, 2 * 4),
             ids(ZRT_I64, 2);
         ids.v = {-1, 0};
         ids.upload();
         Scalar dloss(1.0f);
         zrt_cross_entropy_grad(ZRT_BF16, dloss.dev, logits.dev, ids.dev,
                                ZRT_I64, out.dev, 2, 4);
         synchronize(out);
       }},
      {"matmul-dtype",
       "zrt_matmul: unsupported dtype i32 (2); expected f32 or bf16",
       [] {
         Tensor x(ZRT_I32, 16);
         zrt_matmul(ZRT_I32, x.dev, x.dev, x.dev, 1, 2, 2, 2, ZRT_NO_TRANS,
                    ZRT_NO_TRANS, 4, 4, 4);
       }},
      {"matmul-overlap",
       "zrt_matmul: stride_c 5 is less than m * n = 6 with batch 2: the "
       "outputs would overlap",
       [] {
         Tensor x(ZRT_F32, 64);
         zrt_matmul(ZRT_F32, x.dev, x.dev, x.f32() + 32, 2, 2, 3, 2,
                    ZRT_NO_TRANS, ZRT_NO_TRANS, 4, 6, 5);
       }},
      {"matmul-negative", "zrt_matmul: m must be >= 0, got -1",
       [] {
         zrt_matmul(ZRT_F32, nullptr, nullptr, nullptr, 1, -1, 2, 3,
                    ZRT_NO_TRANS, ZRT_NO_TRANS, 0, 0, 0);
       }},
      {"matmul-trans",
       "zrt_matmul: trans_b must be ZRT_NO_TRANS (0) or ZRT_TRANS (1), got 2",
       [] {
         Tensor x(ZRT_F32, 16);
         zrt_matmul(ZRT_F32, x.dev, x.dev, x.dev, 1, 2, 2, 2, ZRT_NO_TRANS,
                    static_cast<zrt_trans>(2), 4, 4, 4);
       }},
      {"attention-mask",
       "zrt_attention: mask must be ZRT_ATTENTION_FULL (0) or "
       "ZRT_ATTENTION_CAUSAL (1), got 3",
       [] {
         Tensor x(ZRT_F32, 16);
         zrt_attention(ZRT_F32, x.dev, x.dev, x.dev, x.dev, 1, 1, 2, 2, 2, 1.0,
                       static_cast<zrt_attention_mask>(3));
       }},
      {"mask-fill",
       "zrt_causal_mask: fill must be ZRT_MASK_NEG_INF (0) or ZRT_MASK_ZERO "
       "(1), got -1",
       [] {
         Tensor x(ZRT_F32, 16);
         zrt_causal_mask(ZRT_F32, x.dev, x.dev, 1, 4, 4,
                         static_cast<zrt_mask_fill>(-1));
       }},
      {"softmax-dtype",
       "zrt_softmax: unsupported dtype i64 (3); expected f32 or bf16",
       [] {
         Tensor x(ZRT_I64, 4);
         zrt_softmax(ZRT_I64, x.dev, x.dev, 1, 4);
       }},
      {"broadcast-shape", "zrt_broadcast: cannot broadcast [3] to [4]",
       [] {
         Tensor x(ZRT_F32, 8);
         int64_t xs[1] = {3}, ys[1] = {4};
         zrt_broadcast(ZRT_F32, x.dev, 1, xs, x.dev, 1, ys);
       }},
      {"transpose-perm",
       "zrt_transpose: perm is not a permutation of [0, 2)",
       [] {
         Tensor x(ZRT_F32, 6), y(ZRT_F32, 6);
         int64_t shape[2] = {2, 3}, perm[2] = {0, 0};
         zrt_transpose(ZRT_F32, x.dev, y.dev, 2, shape, perm);
       }},
      {"lr-schedule",
       "zrt_lr_schedule: the cosine schedule needs max_steps (10) > warmup "
       "(10)",
       [] { zrt_lr_schedule(10, 1e-3, ZRT_LR_COSINE, 10, 0.0, 10); }},
      {"lr-kind",
       "zrt_lr_schedule: unknown schedule 2 (ZRT_LR_CONSTANT (0) or "
       "ZRT_LR_COSINE (1))",
       [] {
         zrt_lr_schedule(0, 1e-3, static_cast<zrt_lr_kind>(2), 10, 0.0, 100);
       }},
      {"pack-numel", "zrt_pack: numel 1 is negative (-2)",
       [] {
         Tensor x(ZRT_F32, 4), out(ZRT_F32, 4);
         int64_t numels[2] = {4, -2};
         const void *in[2] = {x.dev, x.dev};
         zrt_pack(ZRT_F32, 2, in, numels, out.dev);
       }},
      {"buffer-segments",
       "zrt_adamw_buffer: segment 1 is [5, 12): segments must be sorted "
       "ranges [begin, end) of logical indices that do not overlap",
       [] {
         Tensor x(ZRT_F32, 16);
         int64_t begin[2] = {0, 5}, end[2] = {8, 12};
         uint8_t decay[2] = {1, 0};
         zrt_adamw_buffer(x.f32(), x.f32(), nullptr, x.f32(), x.f32(), 16, 0,
                          2, begin, end, decay, 1e-3f, 0, 0.9, 0.95, 1e-8,
                          0.1);
       }},
      {"attention-group",
       "zrt_attention: 6 query heads do not form groups of 4",
       [] {
         Tensor x(ZRT_F32, 64);
         zrt_attention(ZRT_F32, x.dev, x.dev, x.dev, x.dev, 6, 4, 2, 2, 2, 1.0,
                       ZRT_ATTENTION_CAUSAL);
       }},
      {"attention-grad-group",
       "zrt_attention_grad: 4 query heads do not form groups of 0",
       [] {
         Tensor x(ZRT_F32, 64);
         zrt_attention_grad(ZRT_F32, x.dev, x.dev, x.dev, x.dev, x.dev, x.dev,
                            x.dev, 4, 0, 2, 2, 2, 1.0, ZRT_ATTENTION_FULL);
       }},
      {"rmsnorm-rows", "zrt_rmsnorm: rows must be >= 0, got -1",
       [] {
         Tensor x(ZRT_F32, 8);
         zrt_rmsnorm(ZRT_F32, x.dev, x.dev, x.dev, -1, 4, 1e-5);
       }},
      {"rope-odd", "zrt_rope: the head dimension 5 is odd",
       [] {
         Tensor x(ZRT_F32, 10);
         zrt_rope(ZRT_F32, x.dev, x.dev, 2, 5, 2, 1, 10000.0, 0, 0);
       }},
      {"rope-style",
       "zrt_rope: style 2 is neither 0 (interleaved) nor 1 (rotate_half)",
       [] {
         Tensor x(ZRT_F32, 8);
         zrt_rope(ZRT_F32, x.dev, x.dev, 2, 4, 2, 1, 10000.0, 2, 0);
       }},
      {"rope-theta", "zrt_rope: theta 0 must be finite and positive",
       [] {
         Tensor x(ZRT_F32, 8);
         zrt_rope(ZRT_F32, x.dev, x.dev, 2, 4, 2, 1, 0.0, 0, 0);
       }},
      {"slice-bounds",
       "zrt_slice: dimension 1: 3 elements from offset 2 with stride 2 do "
       "not fit in 6",
       [] {
         Tensor x(ZRT_F32, 24), y(ZRT_F32, 12);
         int64_t in[2] = {4, 6}, offsets[2] = {0, 2}, strides[2] = {1, 2},
                 out[2] = {4, 3};
         zrt_slice(ZRT_F32, x.dev, y.dev, 2, in, offsets, strides, out);
       }},
      {"slice-grad-stride",
       "zrt_slice_grad: dimension 0: 2 elements from offset 0 with stride 0 "
       "do not fit in 4",
       [] {
         Tensor x(ZRT_F32, 4), y(ZRT_F32, 2);
         int64_t in[1] = {4}, offsets[1] = {0}, strides[1] = {0}, out[1] = {2};
         zrt_slice_grad(ZRT_F32, y.dev, x.dev, 1, in, offsets, strides, out);
       }},
      {"dropout-p", "zrt_dropout: p = 1 is outside [0, 1)",
       [] {
         Tensor x(ZRT_F32, 8);
         zrt_dropout(ZRT_F32, x.dev, x.dev, 8, 4, 2, 0, 2, 1.0, 1, 0);
       }},
      {"dropout-rows",
       "zrt_dropout: 40 elements are not whole rows of 4 x 5 at rows [6, 10) "
       "of 8",
       [] {
         Tensor x(ZRT_F32, 40);
         zrt_dropout(ZRT_F32, x.dev, x.dev, 40, 5, 4, 6, 8, 0.1, 1, 0);
       }},
      {"dtype-size", "zrt_dtype_size: unknown dtype 7",
       [] { zrt_dtype_size(static_cast<zrt_dtype>(7)); }},
  };
}

//===----------------------------------------------------------------------===//
// zrt_reduce_max (+ _grad), zrt_reduce_var, zrt_log_softmax, zrt_gather
// (+ _grad): the generic ops of TrainGenericOps.td
//===----------------------------------------------------------------------===//

/// For every element of `shape`, the row-major index of the result of a
/// reduction over the flagged dimensions it belongs to.
std::vector<int64_t> reductionMap(const std::vector<int64_t> &shape,
                                  const std::vector<uint8_t> &reduced,
                                  int64_t &outputs) {
  int rank = static_cast<int>(shape.size());
  std::vector<int64_t> outShape;
  for (int d = 0; d < rank; ++d)
    if (!reduced[d])
      outShape.push_back(shape[d]);
  outputs = numelOf(outShape);
  std::vector<int64_t> outStride = stridesOf(outShape);
  std::vector<int64_t> map(numelOf(shape));
  for (int64_t i = 0; i < static_cast<int64_t>(map.size()); ++i) {
    int64_t rest = i, o = 0, od = static_cast<int64_t>(outShape.size());
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d])
        o += idx * outStride[--od];
    }
    map[i] = o;
  }
  return map;
}

std::string maskText(const std::vector<uint8_t> &reduced) {
  std::string mask;
  for (uint8_t r : reduced)
    mask += r ? 'R' : 'k';
  return mask;
}

/// zrt_reduce_max and zrt_reduce_max_grad; with `ties`, the inputs are
/// drawn from a few integers, so that maxima tie and share the cotangent.
void testReduceMax(zrt_dtype dt, const std::vector<int64_t> &shape,
                   const std::vector<uint8_t> &reduced, bool ties) {
  Rng rng(41 + numelOf(shape) + ties);
  int64_t n = numelOf(shape), outputs = 0;
  std::vector<int64_t> map = reductionMap(shape, reduced, outputs);
  int rank = static_cast<int>(shape.size());
  Tensor x(dt, n), dy(dt, outputs);
  for (int64_t i = 0; i < n; ++i)
    x.set(i, ties ? static_cast<double>(rng.below(3)) : rng.normal());
  dy.fillNormal(rng);
  x.upload();
  dy.upload();
  Vec ref(outputs, -INFINITY), count(outputs, 0.0), grad(n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    ref[map[i]] = std::max(ref[map[i]], x.v[i]);
  for (int64_t i = 0; i < n; ++i)
    count[map[i]] += x.v[i] == ref[map[i]];
  for (int64_t i = 0; i < n; ++i)
    if (x.v[i] == ref[map[i]])
      grad[i] = roundTo(dt, dy.v[map[i]] / count[map[i]]);
  std::string tag = fmt("%s %s dims %s%s", name(dt), shapeText(shape).c_str(),
                        maskText(reduced).c_str(), ties ? " with ties" : "");
  Tensor y(dt, outputs), dx(dt, n);
  y.poison();
  dx.poison();
  zrt_reduce_max(dt, x.dev, y.dev, rank, shape.data(), reduced.data());
  checker.exact("zrt_reduce_max " + tag, y.download(), ref);
  zrt_reduce_max_grad(dt, dy.dev, x.dev, y.dev, dx.dev, rank, shape.data(),
                      reduced.data());
  checker.close("zrt_reduce_max_grad " + tag, dx.download(), grad,
                rtolOf(dt, 1e-6), 0.0);
}

void testReduceVar(zrt_dtype dt, const std::vector<int64_t> &shape,
                   const std::vector<uint8_t> &reduced, int64_t correction) {
  Rng rng(43 + numelOf(shape) + correction);
  int64_t n = numelOf(shape), outputs = 0;
  std::vector<int64_t> map = reductionMap(shape, reduced, outputs);
  int rank = static_cast<int>(shape.size());
  Tensor x(dt, n);
  x.fillNormal(rng, 3.0, 2.0); // an offset the mean must remove
  x.upload();
  int64_t count = n / outputs;
  Vec mean(outputs, 0.0), ref(outputs, 0.0);
  for (int64_t i = 0; i < n; ++i)
    mean[map[i]] += x.v[i] / count;
  for (int64_t i = 0; i < n; ++i)
    ref[map[i]] += (x.v[i] - mean[map[i]]) * (x.v[i] - mean[map[i]]) /
                   static_cast<double>(count - correction);
  Tensor y(dt, outputs);
  y.poison();
  zrt_reduce_var(dt, x.dev, y.dev, rank, shape.data(), reduced.data(),
                 correction);
  checker.close(fmt("zrt_reduce_var %s %s dims %s correction %lld", name(dt),
                    shapeText(shape).c_str(), maskText(reduced).c_str(),
                    (long long)correction),
                y.download(), ref, rtolOf(dt, 1e-5), 1e-6);
}

void testLogSoftmax(zrt_dtype dt, int64_t rows, int64_t cols, bool masked) {
  Rng rng(47 + rows * cols + masked);
  Tensor x(dt, rows * cols);
  x.fillNormal(rng, 0.0, 3.0);
  if (masked) // -inf entries (a causal mask's) in every row but one column
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = r % cols + 1; c < cols; ++c)
        x.set(r * cols + c, -INFINITY);
  x.upload();
  Vec ref(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, x.v[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(x.v[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c)
      ref[r * cols + c] = x.v[r * cols + c] - m - std::log(sum);
  }
  Tensor y(dt, rows * cols);
  y.poison();
  zrt_log_softmax(dt, x.dev, y.dev, rows, cols);
  checker.close(fmt("zrt_log_softmax %s %lldx%lld%s", name(dt),
                    (long long)rows, (long long)cols,
                    masked ? " with -inf" : ""),
                y.download(), ref, rtolOf(dt, 1e-5), 1e-5);
}

void testGather(zrt_dtype dt, zrt_dtype idt, const std::vector<int64_t> &xShape,
                const std::vector<int64_t> &idxShape, int dim) {
  Rng rng(53 + numelOf(xShape) + numelOf(idxShape) + dim + (idt == ZRT_I64));
  int rank = static_cast<int>(xShape.size());
  int64_t xn = numelOf(xShape), n = numelOf(idxShape);
  Tensor x(dt, xn), dy(dt, n);
  x.fillNormal(rng);
  dy.fillNormal(rng);
  x.upload();
  dy.upload();
  Tensor idx = randomIds(idt, n, xShape[dim], rng);
  std::vector<int64_t> xStride = stridesOf(xShape);
  Vec ref(n), grad(xn, 0.0);
  for (int64_t p = 0; p < n; ++p) {
    int64_t rest = p, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rest % idxShape[d];
      rest /= idxShape[d];
      offset += (d == dim ? static_cast<int64_t>(idx.v[p]) : c) * xStride[d];
    }
    ref[p] = x.v[offset];
    grad[offset] += dy.v[p];
  }
  std::string tag = fmt("%s index %s x %s index %s dim %d", name(dt), name(idt),
                        shapeText(xShape).c_str(), shapeText(idxShape).c_str(),
                        dim);
  Tensor y(dt, n), dx(dt, xn);
  y.poison();
  dx.poison();
  zrt_gather(dt, x.dev, idx.dev, idt, y.dev, rank, xShape.data(),
             idxShape.data(), dim);
  checker.exact("zrt_gather " + tag, y.download(), ref);
  zrt_gather_grad(dt, dy.dev, idx.dev, idt, dx.dev, rank, xShape.data(),
                  idxShape.data(), dim);
  // f32 sums rounded once (added in any order on a GPU).
  checker.close("zrt_gather_grad " + tag, dx.download(), grad,
                rtolOf(dt, 1e-6), 1e-6);
}

void testGeneric() {
  for (zrt_dtype dt : kFloatTypes) {
    testReduceMax(dt, {5, 7}, {0, 1}, false);
    testReduceMax(dt, {3, 4, 5}, {1, 0, 1}, false);
    testReduceMax(dt, {3, 4, 5}, {1, 0, 1}, true);
    testReduceMax(dt, {6, 9}, {1, 1}, true);
    testReduceMax(dt, {4, 3}, {0, 0}, false);
    testReduceVar(dt, {5, 7}, {0, 1}, 1);
    testReduceVar(dt, {3, 4, 5}, {1, 0, 1}, 0);
    testReduceVar(dt, {300, 17}, {1, 0}, 1);
    testReduceVar(dt, {2, 3}, {1, 1}, 5);
    testLogSoftmax(dt, 13, 37, false);
    testLogSoftmax(dt, 9, 9, true);
    testLogSoftmax(dt, 4, 1000, false);
    for (zrt_dtype idt : {ZRT_I32, ZRT_I64}) {
      testGather(dt, idt, {4, 8}, {4, 3}, 1);
      testGather(dt, idt, {3, 4, 5}, {6, 2, 5}, 0);
    }
    testGather(dt, ZRT_I32, {2, 3, 50}, {2, 3, 1}, 2);
    testGather(dt, ZRT_I64, {7}, {40}, 0);
  }
  // A NaN in a slice is its maximum, as torch.amax.
  Tensor x(ZRT_F32, 6), y(ZRT_F32, 2);
  x.v = {1, NAN, 3, 4, 5, 6};
  x.upload();
  int64_t shape[2] = {2, 3};
  uint8_t reduced[2] = {0, 1};
  zrt_reduce_max(ZRT_F32, x.dev, y.dev, 2, shape, reduced);
  Vec got = y.download();
  checker.truth("zrt_reduce_max f32 a NaN in row 0 of 2",
                std::isnan(got[0]) && got[1] == 6.0,
                fmt("%g %g (NaN 6 expected)", got[0], got[1]));
}

} // namespace
} // namespace conformance

using namespace conformance;

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
  std::printf("kernel conformance suite on %s\n", describeDevice().c_str());
  testDtypeTable();
  testMatmuls();
  testNorms();
  testAttentions();
  testLosses();
  testShapes();
  testLlama();
  testGeneric();
  testSanitizerCases();
  testOptimizers();
  testCopies();
  runtimeSpecificTests();
  testAttentionBenchmarkShape();
  std::printf("output digest: %016llx\n",
              static_cast<unsigned long long>(checker.digest));
  std::printf("kernel tests (%s): %d checks, %d passed, %d failed\n",
              runtimeName(), checker.checks, checker.checks - checker.failed,
              checker.failed);
  return checker.failed == 0 ? 0 : 1;
}
