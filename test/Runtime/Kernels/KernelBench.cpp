//===- KernelBench.cpp - speed of the CPU kernels at GPT-2-small sizes ----===//
//
// zeroc-rt-kernel-bench [--batch=B] [--seq=T] [--reps=N] [--only=WHAT]
//
// Times zrt_matmul (the GEMMs of one GPT-2 small layer and of the tied
// lm_head, forward and both backward products), zrt_attention and
// zrt_attention_grad, and the row kernels of a step (layernorm, softmax,
// cross-entropy, embedding, AdamW), in f32 and bf16, and prints the best
// wall time of at least N repetitions (and 0.5 s) after a warm-up, the rate
// by wall time and the rate per CPU-second (all threads' CPU time, the
// figure to read on a machine shared with other work): GFLOP/s for the GEMMs and attention (causal
// attention counts only the unmasked half: 4 t s d bh / 2 forward, twice
// that plus the recomputed scores, 10 t s d bh / 2, backward), GB/s of
// compulsory traffic for the others. cblas_sgemm called directly (threaded
// by OpenBLAS itself) is the reference the matmul rows are measured against. WHAT is matmul, attention or
// rows. docs/runtime-kernels.md records a run.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Runtime/zrt.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace {

int reps = 3;

/// Process CPU time (every thread's), in seconds.
double cpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/// Best wall time and best CPU time, in seconds, of at least `reps` runs
/// after one warm-up, repeated until they took 0.5 s (at most 100 runs): the
/// minimum filters out time slices lost to other processes on a shared
/// machine, and CPU time (which OpenMP threads waiting at a barrier inflate)
/// gives the work per core.
struct Timing {
  double wall, cpu;
};
Timing timeIt(const std::function<void()> &fn) {
  fn();
  Timing best{1e30, 1e30};
  double total = 0;
  for (int r = 0; r < 100 && (r < reps || total < 0.5); ++r) {
    double c0 = cpuSeconds();
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(end - start).count();
    best.wall = std::min(best.wall, secs);
    best.cpu = std::min(best.cpu, cpuSeconds() - c0);
    total += secs;
  }
  return best;
}

/// A buffer of n elements of dtype, filled with small values.
struct Buffer {
  std::vector<uint16_t> half;
  std::vector<float> full;
  zrt_dtype dtype;
  Buffer(zrt_dtype dtype, int64_t n, float scale = 0.02f) : dtype(dtype) {
    uint64_t state = 0x1234567 + n;
    auto next = [&] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) * scale;
    };
    if (dtype == ZRT_BF16) {
      half.resize(n);
      for (auto &h : half)
        h = zrt_f32_to_bf16(next());
    } else {
      full.resize(n);
      for (auto &f : full)
        f = next();
    }
  }
  void *data() {
    return dtype == ZRT_BF16 ? static_cast<void *>(half.data())
                             : static_cast<void *>(full.data());
  }
};

const char *name(zrt_dtype dtype) { return dtype == ZRT_BF16 ? "bf16" : "f32"; }

void report(const char *what, zrt_dtype dtype, const char *shape, Timing t,
            double amount, const char *unit) {
  std::printf("%-26s %-5s %-28s %9.3f ms %8.1f %-7s %8.1f\n", what,
              name(dtype), shape, t.wall * 1e3, amount / t.wall * 1e-9, unit,
              amount / t.cpu * 1e-9);
  std::fflush(stdout);
}

/// c = a @ b^T (forward), da = dc @ b (NN), db = dc^T @ a (TN), for an
/// activation [rows, in] and a weight [out, in].
void benchLinear(const char *what, int64_t rows, int64_t in, int64_t out,
                 bool sgemmToo) {
  char shape[64];
  std::snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)rows,
                (long long)out, (long long)in);
  double flops = 2.0 * rows * in * out;
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    Buffer x(dtype, rows * in), w(dtype, out * in), y(dtype, rows * out);
    Buffer dx(dtype, rows * in), dw(dtype, out * in);
    std::string base = what;
    Timing t = timeIt([&] {
      zrt_matmul(dtype, x.data(), w.data(), y.data(), 1, rows, out, in,
                 ZRT_NO_TRANS, ZRT_TRANS, 0, 0, 0);
    });
    report((base + " fwd x@w^T").c_str(), dtype, shape, t, flops, "GFLOP/s");
    t = timeIt([&] {
      zrt_matmul(dtype, y.data(), w.data(), dx.data(), 1, rows, in, out,
                 ZRT_NO_TRANS, ZRT_NO_TRANS, 0, 0, 0);
    });
    report((base + " bwd dy@w").c_str(), dtype, shape, t, flops, "GFLOP/s");
    t = timeIt([&] {
      zrt_matmul(dtype, y.data(), x.data(), dw.data(), 1, out, in, rows,
                 ZRT_TRANS, ZRT_NO_TRANS, 0, 0, 0);
    });
    report((base + " bwd dy^T@x").c_str(), dtype, shape, t, flops, "GFLOP/s");
    if (sgemmToo && dtype == ZRT_F32) {
      t = timeIt([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in,
                    1.0f, x.full.data(), in, w.full.data(), in, 0.0f,
                    y.full.data(), out);
      });
      report((base + " cblas_sgemm").c_str(), dtype, shape, t, flops,
             "GFLOP/s");
    }
  }
}

void benchMatmul(int64_t batch, int64_t seq) {
  int64_t rows = batch * seq, c = 768;
  std::printf("\n# zrt_matmul: GPT-2 small linear layers, %lld tokens\n",
              (long long)rows);
  benchLinear("attn.c_attn", rows, c, 3 * c, true);
  benchLinear("attn.c_proj", rows, c, c, false);
  benchLinear("mlp.c_fc", rows, c, 4 * c, false);
  benchLinear("mlp.c_proj", rows, 4 * c, c, false);
  benchLinear("lm_head", rows, c, 50257, true);
}

void benchAttention(int64_t batch, int64_t seq) {
  int64_t heads = 12, d = 64, bh = batch * heads;
  std::printf("\n# zrt_attention: bh=%lld (batch %lld x 12 heads), t=s=%lld, "
              "d=64\n",
              (long long)bh, (long long)batch, (long long)seq);
  for (int causal : {1, 0})
    for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
      int64_t n = bh * seq * d;
      Buffer q(dtype, n, 2.0f), k(dtype, n, 2.0f), v(dtype, n, 2.0f),
          out(dtype, n), dout(dtype, n, 2.0f), dq(dtype, n), dk(dtype, n),
          dv(dtype, n);
      double scale = 1.0 / 8.0, pairs = double(seq) * seq * (causal ? 0.5 : 1);
      char shape[64];
      std::snprintf(shape, sizeof(shape), "%lldx%lldx%lldx64%s", (long long)bh,
                    (long long)seq, (long long)seq, causal ? " causal" : "");
      Timing t = timeIt([&] {
        zrt_attention(dtype, q.data(), k.data(), v.data(), out.data(), bh, 1,
                      seq,
                      seq, d, scale,
                      causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
      });
      report("attention fwd", dtype, shape, t, 4.0 * pairs * d * bh,
             "GFLOP/s");
      t = timeIt([&] {
        zrt_attention_grad(dtype, dout.data(), q.data(), k.data(), v.data(),
                           dq.data(), dk.data(), dv.data(), bh, 1, seq, seq, d,
                           scale,
                           causal ? ZRT_ATTENTION_CAUSAL : ZRT_ATTENTION_FULL);
      });
      report("attention bwd", dtype, shape, t, 10.0 * pairs * d * bh,
             "GFLOP/s");
    }
}

void benchRows(int64_t batch, int64_t seq) {
  int64_t rows = batch * seq, c = 768, vocab = 50257;
  std::printf("\n# row kernels, %lld tokens (GB/s of compulsory traffic)\n",
              (long long)rows);
  for (zrt_dtype dtype : {ZRT_F32, ZRT_BF16}) {
    double e = dtype == ZRT_BF16 ? 2 : 4;
    char shape[64];
    std::snprintf(shape, sizeof(shape), "%lldx%lld", (long long)rows,
                  (long long)c);
    Buffer x(dtype, rows * c, 2.0f), w(dtype, c, 2.0f), b(dtype, c),
        y(dtype, rows * c), dy(dtype, rows * c), dx(dtype, rows * c),
        dw(dtype, c), db(dtype, c);
    Timing t = timeIt([&] {
      zrt_layernorm(dtype, x.data(), w.data(), b.data(), y.data(), rows, c,
                    1e-5);
    });
    report("layernorm fwd", dtype, shape, t, 2 * rows * c * e, "GB/s");
    t = timeIt([&] {
      zrt_layernorm_grad(dtype, dy.data(), x.data(), w.data(), dx.data(),
                         dw.data(), db.data(), rows, c, 1e-5);
    });
    report("layernorm bwd", dtype, shape, t, 3 * rows * c * e, "GB/s");

    int64_t srows = batch * 12 * 256; // softmax of attention-score rows
    std::snprintf(shape, sizeof(shape), "%lldx%lld", (long long)srows,
                  (long long)seq);
    Buffer s(dtype, srows * seq, 8.0f), sy(dtype, srows * seq),
        sdy(dtype, srows * seq);
    t = timeIt([&] { zrt_softmax(dtype, s.data(), sy.data(), srows, seq); });
    report("softmax fwd", dtype, shape, t, 2 * srows * seq * e, "GB/s");
    t = timeIt([&] {
      zrt_softmax_grad(dtype, sdy.data(), sy.data(), s.data(), srows, seq);
    });
    report("softmax bwd", dtype, shape, t, 3 * srows * seq * e, "GB/s");

    std::snprintf(shape, sizeof(shape), "%lldx%lld", (long long)rows,
                  (long long)vocab);
    Buffer logits(dtype, rows * vocab, 8.0f), dlogits(dtype, rows * vocab);
    std::vector<int32_t> targets(rows);
    for (int64_t i = 0; i < rows; ++i)
      targets[i] = static_cast<int32_t>((i * 7919) % vocab);
    float loss = 0;
    const float one = 1.0f;
    t = timeIt([&] {
      zrt_cross_entropy(dtype, logits.data(), targets.data(), ZRT_I32, rows,
                        vocab, &loss);
    });
    report("cross_entropy fwd", dtype, shape, t, rows * vocab * e, "GB/s");
    t = timeIt([&] {
      zrt_cross_entropy_grad(dtype, &one, logits.data(), targets.data(),
                             ZRT_I32, dlogits.data(), rows, vocab);
    });
    report("cross_entropy bwd", dtype, shape, t, 2 * rows * vocab * e, "GB/s");

    std::snprintf(shape, sizeof(shape), "%lld ids, %lldx%lld", (long long)rows,
                  (long long)vocab, (long long)c);
    Buffer table(dtype, vocab * c), emb(dtype, rows * c);
    t = timeIt([&] {
      zrt_embedding(dtype, table.data(), targets.data(), ZRT_I32, emb.data(),
                    rows, vocab, c);
    });
    report("embedding fwd", dtype, shape, t, 2 * rows * c * e, "GB/s");
    t = timeIt([&] {
      zrt_embedding_grad(dtype, emb.data(), targets.data(), ZRT_I32,
                         table.data(), rows, vocab, c, -1);
    });
    report("embedding bwd", dtype, shape, t, (rows + vocab) * c * e, "GB/s");
  }
  int64_t n = 124439808; // GPT-2 small's parameters
  std::vector<float> p(n, 0.01f), g(n, 0.001f), m(n, 0.0f), v(n, 0.0f);
  Timing t = timeIt([&] {
    zrt_adamw(p.data(), g.data(), nullptr, m.data(), v.data(), n, 6e-4f, 10,
              0.9, 0.95, 1e-8, 0.1);
  });
  report("adamw", ZRT_F32, "124439808 params", t, 7.0 * n * 4, "GB/s");
  float squared = 0;
  t = timeIt([&] { zrt_squared_norm(ZRT_F32, g.data(), n, &squared); });
  report("squared_norm", ZRT_F32, "124439808 params", t, 1.0 * n * 4, "GB/s");
}

} // namespace

int main(int argc, char **argv) {
  int64_t batch = 4, seq = 1024;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t len = std::strlen(flag);
      return arg.compare(0, len, flag) == 0 ? argv[i] + len : nullptr;
    };
    if (const char *v = value("--batch="))
      batch = std::atoll(v);
    else if (const char *v = value("--seq="))
      seq = std::atoll(v);
    else if (const char *v = value("--reps="))
      reps = std::atoi(v);
    else if (const char *v = value("--only="))
      only = v;
    else {
      std::fprintf(stderr,
                   "usage: %s [--batch=B] [--seq=T] [--reps=N] "
                   "[--only=matmul|attention|rows]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("zeroc-rt-kernel-bench: OpenMP %d threads, OpenBLAS %d threads "
              "(%s), batch %lld, seq %lld, best of >= %d runs\n"
              "columns: kernel, dtype, shape, best wall time, rate by wall "
              "time, rate per CPU-second (all threads' CPU time)\n",
              omp_get_max_threads(), openblas_get_num_threads(),
              openblas_get_corename(), (long long)batch, (long long)seq, reps);
  if (only.empty() || only == "matmul")
    benchMatmul(batch, seq);
  if (only.empty() || only == "attention")
    benchAttention(batch, seq);
  if (only.empty() || only == "rows")
    benchRows(batch, seq);
  return 0;
}
