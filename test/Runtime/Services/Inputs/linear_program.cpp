// A hand-written stand-in for generated code: a tiny tied-embedding model
// trained with SGD + momentum, data parallel over the zrt collectives. It
// exercises the runtime's services (main, data, init, checkpoints, logging,
// collectives, memory accounting) without the code generator. The math is
// plain loops, so these tests do not depend on the kernel library.
//
//   e = wte[x]                       [n, C]
//   a = e @ proj.weight^T + proj.bias
//   h = a * scale                    [n, C]
//   logits = h @ wte^T               [n, V]   (lm_head tied to wte)
//   loss = mean cross-entropy(logits, y)
//
// Compile-time configuration:
//   -DZW=N       world size (default 1); the global batch is always 4
//   -DZSTAGE=S   0: replicated states, gradients all-reduced;
//                3: params, grads, momentum and masters sharded N ways,
//                   params all-gathered, grads reduce-scattered
//                1 (with ZFLAT only): params replicated, grads, momentum
//                   and masters sharded; the updated shard of the params
//                   is all-gathered in place
//   -DZBF16=1    bf16 params and grads with f32 master copies
//   -DZFLAT=1    zrt.h's flat-buffer layout: every kind of state lives in
//                one buffer (params, grads, momentum, masters), members at
//                the same offsets with a gap of 3 elements after
//                proj.weight; collectives run in place on the buffers.
//                Else the per-tensor layout: at stage 0 each state has its
//                own storage (the whole tensor), at stage 3 each state is
//                the only member of a buffer of its own, padded to N equal
//                shards (rank r holds elements [r*S, (r+1)*S) of each
//                tensor, S = ceil(numel / N)), with a collective per
//                tensor.
//   -DZMODEL=""  the model name (default "linear")
//   -DZSTALL=K   rank ZSTALL_RANK (default 1) stops itself (SIGSTOP, as a
//                stuck device or a dead link looks) at step K, after its
//                gradients are computed, before it joins their reduction;
//                with -DZSTALL_SLEEP=S it is busy for S seconds instead
//   -DZSTALL_START  rank ZSTALL_RANK (by the launcher's environment) stops
//                itself before MPI starts
//   -DZBADLAYOUT=1  (with ZFLAT) two members overlap: a malformed program
//
// Both layouts compute the same: the same initial values, losses and
// checkpoints (logical tensors, whichever layout wrote them) from the same
// seed.
//
// With ZEROC_TEST_DUMP=PATH in the environment, rank r appends each batch it
// is given to PATH.rankR: "train STEP: TOKENS | TARGETS" ("eval" for the
// forward entry point, whose step is not passed). ZEROC_TEST_STEP_MS=T makes
// every training step take T ms more (for the tests that signal a run).

#include "zeroc/Runtime/zrt.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef ZW
#define ZW 1
#endif
#ifndef ZSTAGE
#define ZSTAGE 0
#endif
#ifndef ZBF16
#define ZBF16 0
#endif
#ifndef ZMODEL
#define ZMODEL "linear"
#endif
#ifndef ZSTALL_RANK
#define ZSTALL_RANK 1
#endif
#ifndef ZFLAT
#define ZFLAT 0
#endif
#if ZSTAGE == 1 && !ZFLAT
#error "stage 1 is for the flat layout (-DZFLAT=1)"
#endif

namespace {

constexpr int64_t V = 16, C = 8, T = 8, GLOBAL_BATCH = 4;
constexpr int64_t B = GLOBAL_BATCH / ZW;
constexpr int64_t N = B * T; // rows per rank
constexpr float LR = 0.5f, MOMENTUM = 0.9f;
constexpr zrt_dtype PDT = ZBF16 ? ZRT_BF16 : ZRT_F32;
constexpr int64_t SHARDS = ZSTAGE == 3 ? ZW : 1;

constexpr int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The flat layout: members' offsets in every buffer (a gap after
// proj.weight), the logical length, and how each buffer is laid out.
#ifndef ZBADLAYOUT
#define ZBADLAYOUT 0
#endif
// -DZBADLAYOUT=1: proj.bias overlaps proj.weight (the runtime refuses it).
constexpr int64_t OFFSETS[] = {0, V * C, V * C + C * C + 3 - 4 * ZBADLAYOUT,
                               V * C + C * C + 3 + C};
constexpr int64_t FLAT = V * C + C * C + 3 + 2 * C; // 211 elements
constexpr bool PARAMS_SHARDED = ZSTAGE == 3;
constexpr bool OPTIM_SHARDED = ZSTAGE != 0; // grads, momentum, masters
constexpr int64_t shardOf(bool sharded) {
  return sharded ? ceilDiv(FLAT, ZW) : FLAT;
}
constexpr int64_t numelOf(bool sharded) {
  return sharded ? ZW * shardOf(true) : FLAT;
}
enum { BPARAMS, BGRADS, BMOMENTUM, BMASTERS };

const int64_t shapeWte[] = {V, C};
const int64_t shapeProj[] = {C, C};
const int64_t shapeVec[] = {C};

#if ZFLAT
#define PARAM(p, name, rank, shape, numel, init, std)                          \
  {                                                                            \
    name, nullptr, ZRT_STATE_PARAM, PDT, rank, shape, numel, init, std,        \
        rank >= 2, nullptr, BPARAMS, OFFSETS[p]                                \
  }
#define STATE(p, b, name, of, kind, dtype, rank, shape, numel)                 \
  {                                                                            \
    name, of, kind, dtype, rank, shape, numel, ZRT_INIT_ZEROS, 0.0, 0,         \
        nullptr, b, OFFSETS[p]                                                 \
  }
#else
// Per tensor: its own storage (stage 0), or at stage 3 the only member of
// buffer b * P + p (the states' order below), at offset 0.
#define OWN_BUFFER(b, p) (SHARDS > 1 ? (b) * 4 + (p) : -1)
#define PARAM(p, name, rank, shape, numel, init, std)                          \
  {                                                                            \
    name, nullptr, ZRT_STATE_PARAM, PDT, rank, shape, numel, init, std,        \
        rank >= 2, nullptr, OWN_BUFFER(BPARAMS, p), 0                          \
  }
#define STATE(p, b, name, of, kind, dtype, rank, shape, numel)                 \
  {                                                                            \
    name, of, kind, dtype, rank, shape, numel, ZRT_INIT_ZEROS, 0.0, 0,         \
        nullptr, OWN_BUFFER(b, p), 0                                           \
  }
#endif

// Parameters first, then per parameter: grad, momentum buffer (, master).
// clang-format off
zrt_state states[] = {
    PARAM(0, "transformer.wte.weight", 2, shapeWte, V * C, ZRT_INIT_NORMAL, 0.5),
    PARAM(1, "transformer.proj.weight", 2, shapeProj, C * C, ZRT_INIT_NORMAL, 0.3),
    PARAM(2, "transformer.proj.bias", 1, shapeVec, C, ZRT_INIT_ZEROS, 0.0),
    PARAM(3, "transformer.scale", 1, shapeVec, C, ZRT_INIT_ONES, 0.0),
    STATE(0, BGRADS, "transformer.wte.weight.grad", "transformer.wte.weight",
          ZRT_STATE_GRAD, PDT, 2, shapeWte, V * C),
    STATE(1, BGRADS, "transformer.proj.weight.grad", "transformer.proj.weight",
          ZRT_STATE_GRAD, PDT, 2, shapeProj, C * C),
    STATE(2, BGRADS, "transformer.proj.bias.grad", "transformer.proj.bias",
          ZRT_STATE_GRAD, PDT, 1, shapeVec, C),
    STATE(3, BGRADS, "transformer.scale.grad", "transformer.scale",
          ZRT_STATE_GRAD, PDT, 1, shapeVec, C),
    STATE(0, BMOMENTUM, "transformer.wte.weight.momentum_buffer",
          "transformer.wte.weight", ZRT_STATE_MOMENTUM_BUFFER, ZRT_F32, 2,
          shapeWte, V * C),
    STATE(1, BMOMENTUM, "transformer.proj.weight.momentum_buffer",
          "transformer.proj.weight", ZRT_STATE_MOMENTUM_BUFFER, ZRT_F32, 2,
          shapeProj, C * C),
    STATE(2, BMOMENTUM, "transformer.proj.bias.momentum_buffer",
          "transformer.proj.bias", ZRT_STATE_MOMENTUM_BUFFER, ZRT_F32, 1,
          shapeVec, C),
    STATE(3, BMOMENTUM, "transformer.scale.momentum_buffer",
          "transformer.scale", ZRT_STATE_MOMENTUM_BUFFER, ZRT_F32, 1,
          shapeVec, C),
#if ZBF16
    STATE(0, BMASTERS, "transformer.wte.weight.master",
          "transformer.wte.weight", ZRT_STATE_MASTER, ZRT_F32, 2, shapeWte,
          V * C),
    STATE(1, BMASTERS, "transformer.proj.weight.master",
          "transformer.proj.weight", ZRT_STATE_MASTER, ZRT_F32, 2, shapeProj,
          C * C),
    STATE(2, BMASTERS, "transformer.proj.bias.master", "transformer.proj.bias",
          ZRT_STATE_MASTER, ZRT_F32, 1, shapeVec, C),
    STATE(3, BMASTERS, "transformer.scale.master", "transformer.scale",
          ZRT_STATE_MASTER, ZRT_F32, 1, shapeVec, C),
#endif
};

#if ZFLAT
zrt_buffer buffers[] = {
    {"params", PDT, ZRT_MEM_PARAMETERS, numelOf(PARAMS_SHARDED),
     shardOf(PARAMS_SHARDED), nullptr},
    {"grads", PDT, ZRT_MEM_GRADIENTS, numelOf(OPTIM_SHARDED),
     shardOf(OPTIM_SHARDED), nullptr},
    {"momentum", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES, numelOf(OPTIM_SHARDED),
     shardOf(OPTIM_SHARDED), nullptr},
#if ZBF16
    {"masters", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES, numelOf(OPTIM_SHARDED),
     shardOf(OPTIM_SHARDED), nullptr},
#endif
};
constexpr int NUM_BUFFERS = sizeof buffers / sizeof buffers[0];
#elif ZSTAGE == 3
// One buffer per state, in the states' order: ceil(numel / N) elements a
// rank.
constexpr int64_t NUMELS[] = {V * C, C * C, C, C};
#define OWN(name, dtype, category, p)                                          \
  {name, dtype, category, ZW * ceilDiv(NUMELS[p], ZW), ceilDiv(NUMELS[p], ZW), \
   nullptr}
#define OWN4(name, dtype, category)                                            \
  OWN(name ".wte.weight", dtype, category, 0),                                 \
      OWN(name ".proj.weight", dtype, category, 1),                            \
      OWN(name ".proj.bias", dtype, category, 2),                              \
      OWN(name ".scale", dtype, category, 3)
zrt_buffer buffers[] = {
    OWN4("params", PDT, ZRT_MEM_PARAMETERS),
    OWN4("grads", PDT, ZRT_MEM_GRADIENTS),
    OWN4("momentum", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES),
#if ZBF16
    OWN4("masters", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES),
#endif
};
constexpr int NUM_BUFFERS = sizeof buffers / sizeof buffers[0];
#else
zrt_buffer *buffers = nullptr;
constexpr int NUM_BUFFERS = 0;
#endif
// clang-format on
constexpr int P = 4; // parameters
zrt_state &param(int p) { return states[p]; }
zrt_state &grad(int p) { return states[P + p]; }
zrt_state &momentum(int p) { return states[2 * P + p]; }
#if ZBF16
zrt_state &master(int p) { return states[3 * P + p]; }
#endif

/// Where this rank stores a state of the per-tensor layout: its own
/// storage, or (stage 3) its buffer's shard; and how many elements,
/// padding included.
void *storageOf(const zrt_state &state) {
  return state.buffer >= 0 ? buffers[state.buffer].data : state.data;
}
int64_t storedNumel(const zrt_state &state) {
  return state.buffer >= 0 ? buffers[state.buffer].shard_numel : state.numel;
}

/// An accounted buffer.
struct Buffer {
  void *data;
  size_t bytes;
  zrt_mem_category category;
  Buffer(size_t n, zrt_dtype dtype, zrt_mem_category c)
      : bytes(n * zrt_dtype_size(dtype)), category(c) {
    data = zrt_alloc(bytes, category);
    std::memset(data, 0, bytes);
  }
  ~Buffer() { zrt_free(data, bytes, category); }
  float *f() { return static_cast<float *>(data); }
};

float load(const void *data, zrt_dtype dtype, int64_t i) {
  return dtype == ZRT_BF16
             ? zrt_bf16_to_f32(static_cast<const uint16_t *>(data)[i])
             : static_cast<const float *>(data)[i];
}
void store(void *data, zrt_dtype dtype, int64_t i, float v) {
  if (dtype == ZRT_BF16)
    static_cast<uint16_t *>(data)[i] = zrt_f32_to_bf16(v);
  else
    static_cast<float *>(data)[i] = v;
}

int64_t id(const void *ids, int64_t i) {
  // id_dtype is I32 (see the program below)
  return static_cast<const int32_t *>(ids)[i];
}

void dump(zrt_comm *comm, const char *what, int64_t step, const void *tokens,
          const void *targets) {
  const char *path = std::getenv("ZEROC_TEST_DUMP");
  if (!path)
    return;
  std::string name =
      std::string(path) + ".rank" + std::to_string(zrt_rank(comm));
  FILE *file = std::fopen(name.c_str(), "a");
  if (!file)
    zrt_fail("cannot append to %s", name.c_str());
  std::fprintf(file, "%s %lld:", what, static_cast<long long>(step));
  for (int64_t i = 0; i < N; ++i)
    std::fprintf(file, " %lld", static_cast<long long>(id(tokens, i)));
  std::fprintf(file, " |");
  for (int64_t i = 0; i < N; ++i)
    std::fprintf(file, " %lld", static_cast<long long>(id(targets, i)));
  std::fprintf(file, "\n");
  std::fclose(file);
}

/// Full f32 values of every parameter (gathered at stage 3).
void fullParams(zrt_comm *comm, std::vector<float> *out) {
#if ZFLAT
  // The params buffer, all-gathered (not in place: stage 3 keeps only the
  // shard) when it is sharded.
  zrt_buffer &pb = buffers[BPARAMS];
  Buffer *whole = nullptr;
  const void *full = pb.data;
  if (PARAMS_SHARDED) {
    whole = new Buffer(pb.numel, PDT, ZRT_MEM_GATHERED_PARAMETERS);
    zrt_wait(zrt_all_gather_start(comm, pb.data, whole->data, pb.shard_numel,
                                  PDT, nullptr));
    full = whole->data;
  }
  for (int p = 0; p < P; ++p) {
    out[p].resize(param(p).numel);
    for (int64_t i = 0; i < param(p).numel; ++i)
      out[p][i] = load(full, PDT, OFFSETS[p] + i);
  }
  delete whole;
  return;
#endif
  if (SHARDS == 1) {
    for (int p = 0; p < P; ++p) {
      out[p].resize(param(p).numel);
      for (int64_t i = 0; i < param(p).numel; ++i)
        out[p][i] = load(storageOf(param(p)), PDT, i);
    }
    return;
  }
  Buffer *gathered[P];
  zrt_request *requests[P];
  for (int p = 0; p < P; ++p) {
    gathered[p] = new Buffer(storedNumel(param(p)) * SHARDS, PDT,
                             ZRT_MEM_GATHERED_PARAMETERS);
    requests[p] = zrt_all_gather_start(comm, storageOf(param(p)), gathered[p]->data,
                                       storedNumel(param(p)), PDT, nullptr);
  }
  for (int p = 0; p < P; ++p) {
    zrt_wait(requests[p]);
    out[p].resize(param(p).numel);
    for (int64_t i = 0; i < param(p).numel; ++i)
      out[p][i] = load(gathered[p]->data, PDT, i);
    delete gathered[p];
  }
}

/// Loss of the local batch (N rows; `targets` may be null with
/// `logits`); with `grads`, also the gradients of that loss; with `logits`,
/// the logits of the rows.
float forwardBackward(const std::vector<float> *w, const void *tokens,
                      const void *targets, std::vector<float> *grads,
                      int64_t N = ::N, float *logits = nullptr) {
  const float *wte = w[0].data(), *W = w[1].data(), *b = w[2].data(),
              *s = w[3].data();
  Buffer eB(N * C, ZRT_F32, ZRT_MEM_ACTIVATIONS),
      aB(N * C, ZRT_F32, ZRT_MEM_ACTIVATIONS),
      hB(N * C, ZRT_F32, ZRT_MEM_ACTIVATIONS),
      zB(N * V, ZRT_F32, ZRT_MEM_ACTIVATIONS);
  float *e = eB.f(), *a = aB.f(), *h = hB.f(), *z = zB.f();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < C; ++j)
      e[i * C + j] = wte[id(tokens, i) * C + j];
  for (int64_t i = 0; i < N; ++i)
    for (int64_t k = 0; k < C; ++k) {
      float sum = b[k];
      for (int64_t j = 0; j < C; ++j)
        sum += W[k * C + j] * e[i * C + j];
      a[i * C + k] = sum;
      h[i * C + k] = sum * s[k];
    }
  double loss = 0;
  for (int64_t i = 0; i < N; ++i) {
    float max = -INFINITY;
    for (int64_t v = 0; v < V; ++v) {
      float sum = 0;
      for (int64_t k = 0; k < C; ++k)
        sum += h[i * C + k] * wte[v * C + k];
      z[i * V + v] = sum;
      max = std::fmax(max, sum);
      if (logits)
        logits[i * V + v] = sum;
    }
    if (!targets)
      continue;
    double total = 0;
    for (int64_t v = 0; v < V; ++v)
      total += std::exp(z[i * V + v] - max);
    loss += std::log(total) + max - z[i * V + id(targets, i)];
    if (grads) // z becomes dz
      for (int64_t v = 0; v < V; ++v)
        z[i * V + v] = static_cast<float>(
            (std::exp(z[i * V + v] - max) / total - (v == id(targets, i))) / N);
  }
  if (!grads)
    return static_cast<float>(loss / N);
  float *dwte = grads[0].data(), *dW = grads[1].data(), *db = grads[2].data(),
        *ds = grads[3].data();
  for (int p = 0; p < P; ++p)
    std::fill(grads[p].begin(), grads[p].end(), 0.0f);
  for (int64_t i = 0; i < N; ++i) {
    float dh[C], da[C];
    for (int64_t k = 0; k < C; ++k) {
      float sum = 0;
      for (int64_t v = 0; v < V; ++v)
        sum += z[i * V + v] * wte[v * C + k];
      dh[k] = sum;
    }
    for (int64_t v = 0; v < V; ++v)
      for (int64_t k = 0; k < C; ++k)
        dwte[v * C + k] += z[i * V + v] * h[i * C + k];
    for (int64_t k = 0; k < C; ++k) {
      ds[k] += dh[k] * a[i * C + k];
      da[k] = dh[k] * s[k];
      db[k] += da[k];
      for (int64_t j = 0; j < C; ++j)
        dW[k * C + j] += da[k] * e[i * C + j];
    }
    for (int64_t j = 0; j < C; ++j) {
      float sum = 0;
      for (int64_t k = 0; k < C; ++k)
        sum += da[k] * W[k * C + j];
      dwte[id(tokens, i) * C + j] += sum;
    }
  }
  return static_cast<float>(loss / N);
}

#if ZFLAT
/// The step on the flat buffers: the gradient buffer's logical values
/// summed in place (an all-reduce when replicated, else a reduce-scatter of
/// a full bucket in place, its shard then copied to the grads buffer),
/// SGD over every element this rank holds of the optimizer buffers
/// (padding and the gap stay zero), and at stage 1 the updated shard of
/// the replicated params all-gathered in place.
void trainStepFlat(zrt_comm *comm, const void *tokens, const void *targets,
                   int64_t step, float *loss, float *gradNorm, float *lr) {
  int world = zrt_world_size(comm), rank = zrt_rank(comm);
  dump(comm, "train", step, tokens, targets);
  std::vector<float> w[P], g[P];
  fullParams(comm, w);
  for (int p = 0; p < P; ++p)
    g[p].resize(param(p).numel);
  *loss = forwardBackward(w, tokens, targets, g);
  *lr = LR;

  zrt_buffer &pb = buffers[BPARAMS], &gb = buffers[BGRADS],
             &mb = buffers[BMOMENTUM];
  if (!OPTIM_SHARDED) {
    std::memset(gb.data, 0, gb.numel * zrt_dtype_size(PDT));
    for (int p = 0; p < P; ++p)
      for (int64_t i = 0; i < param(p).numel; ++i)
        store(gb.data, PDT, OFFSETS[p] + i, g[p][i]);
    zrt_wait(zrt_all_reduce_start(comm, gb.data, gb.data, gb.numel, PDT,
                                  nullptr));
  } else {
    Buffer bucket(gb.numel, PDT, ZRT_MEM_GRADIENT_BUCKETS);
    for (int p = 0; p < P; ++p)
      for (int64_t i = 0; i < param(p).numel; ++i)
        store(bucket.data, PDT, OFFSETS[p] + i, g[p][i]);
    size_t shardBytes = gb.shard_numel * zrt_dtype_size(PDT);
    char *slot = static_cast<char *>(bucket.data) + rank * shardBytes;
    zrt_wait(zrt_reduce_scatter_start(comm, bucket.data, slot,
                                      gb.shard_numel, PDT, nullptr));
    std::memcpy(gb.data, slot, shardBytes);
  }

  // The mean gradient's norm over all shards.
  float squares = 0;
  for (int64_t i = 0; i < gb.shard_numel; ++i) {
    float v = load(gb.data, PDT, i) / world;
    squares += v * v;
  }
  if (OPTIM_SHARDED)
    zrt_wait(
        zrt_all_reduce_start(comm, &squares, &squares, 1, ZRT_F32, nullptr));
  *gradNorm = std::sqrt(squares);

  // SGD with momentum on what this rank holds of the optimizer buffers:
  // logical elements [first, first + shard_numel).
  int64_t first = OPTIM_SHARDED ? rank * mb.shard_numel : 0;
  int64_t paramAt = PARAMS_SHARDED ? 0 : first; // in the params buffer
  float *buf = static_cast<float *>(mb.data);
  for (int64_t j = 0; j < mb.shard_numel; ++j) {
    float gj = load(gb.data, PDT, j) / world;
    buf[j] = MOMENTUM * buf[j] + gj;
#if ZBF16
    float *m = static_cast<float *>(buffers[BMASTERS].data);
    m[j] -= LR * buf[j];
    store(pb.data, PDT, paramAt + j, m[j]);
#else
    store(pb.data, PDT, paramAt + j,
          load(pb.data, PDT, paramAt + j) - LR * buf[j]);
#endif
  }
  if (OPTIM_SHARDED && !PARAMS_SHARDED) {
    char *mine = static_cast<char *>(pb.data) +
                 rank * mb.shard_numel * zrt_dtype_size(PDT);
    zrt_wait(zrt_all_gather_start(comm, mine, pb.data, mb.shard_numel, PDT,
                                  nullptr));
  }
}
#endif

void trainStep(zrt_comm *comm, const void *tokens, const void *targets,
               int64_t step, float *loss, float *gradNorm, float *lr) {
#if ZFLAT
  return trainStepFlat(comm, tokens, targets, step, loss, gradNorm, lr);
#endif
  int world = zrt_world_size(comm);
  dump(comm, "train", step, tokens, targets);
  // sleep_for sleeps on when a signal interrupts it.
  if (const char *ms = std::getenv("ZEROC_TEST_STEP_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  std::vector<float> w[P], g[P];
  fullParams(comm, w);
  for (int p = 0; p < P; ++p)
    g[p].resize(param(p).numel);
  *loss = forwardBackward(w, tokens, targets, g);
  *lr = LR;
#ifdef ZSTALL
  if (step == ZSTALL && zrt_rank(comm) == ZSTALL_RANK) {
#ifdef ZSTALL_SLEEP
    struct timespec busy = {ZSTALL_SLEEP, 0};
    nanosleep(&busy, nullptr);
#else
    std::raise(SIGSTOP);
#endif
  }
#endif

  // Sum the gradients over ranks into the grad states.
  zrt_request *requests[P];
  Buffer *buckets[P] = {};
  for (int p = 0; p < P; ++p) {
    zrt_state &gs = grad(p);
    void *held = storageOf(gs);
    if (SHARDS == 1) {
      for (int64_t i = 0; i < gs.numel; ++i)
        store(held, PDT, i, g[p][i]);
      requests[p] =
          zrt_all_reduce_start(comm, held, held, gs.numel, PDT, nullptr);
    } else {
      buckets[p] =
          new Buffer(storedNumel(gs) * SHARDS, PDT, ZRT_MEM_GRADIENT_BUCKETS);
      for (int64_t i = 0; i < gs.numel; ++i)
        store(buckets[p]->data, PDT, i, g[p][i]);
      requests[p] = zrt_reduce_scatter_start(comm, buckets[p]->data, held,
                                             storedNumel(gs), PDT, nullptr);
    }
  }
  for (int p = 0; p < P; ++p) {
    zrt_wait(requests[p]);
    delete buckets[p];
  }

  // The mean gradient's norm over all shards.
  float squares = 0;
  for (int p = 0; p < P; ++p)
    for (int64_t i = 0; i < storedNumel(grad(p)); ++i) {
      float v = load(storageOf(grad(p)), PDT, i) / world;
      squares += v * v;
    }
  if (SHARDS > 1)
    zrt_wait(
        zrt_all_reduce_start(comm, &squares, &squares, 1, ZRT_F32, nullptr));
  *gradNorm = std::sqrt(squares);

  // SGD with momentum on this rank's storage.
  for (int p = 0; p < P; ++p) {
    float *buf = static_cast<float *>(storageOf(momentum(p)));
    void *w = storageOf(param(p));
    for (int64_t i = 0; i < storedNumel(param(p)); ++i) {
      float gi = load(storageOf(grad(p)), PDT, i) / world;
      buf[i] = MOMENTUM * buf[i] + gi;
#if ZBF16
      float *m = static_cast<float *>(storageOf(master(p)));
      m[i] -= LR * buf[i];
      store(w, PDT, i, m[i]);
#else
      store(w, PDT, i, load(w, PDT, i) - LR * buf[i]);
#endif
    }
  }
}

void forward(zrt_comm *comm, const void *tokens, const void *targets,
             float *loss) {
  dump(comm, "eval", -1, tokens, targets);
  std::vector<float> w[P];
  fullParams(comm, w);
  *loss = forwardBackward(w, tokens, targets, nullptr);
}

/// The logits of one sequence of T tokens (for --sample).
void logits(zrt_comm *comm, const void *tokens, float *out) {
  std::vector<float> w[P];
  fullParams(comm, w);
  forwardBackward(w, tokens, nullptr, nullptr, T, out);
}

// The lm_head is tied to the embedding (train.tied).
const char *const tiedNames[] = {"lm_head.weight", "transformer.wte.weight"};

// clang-format off
const zrt_program program = {
    ZMODEL, ZW, ZSTAGE,
    B, T, V, ZRT_I32,        // batch per rank, seq_len, vocab, id dtype
    static_cast<int>(sizeof states / sizeof states[0]), states,
    trainStep, forward, logits, NUM_BUFFERS, buffers, 1, tiedNames};
// clang-format on

} // namespace

const zrt_program *zeroc_program(void) {
#ifdef ZSTALL_START
  // The runtime's main asks for the program before it starts MPI.
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank && std::atoi(rank) == ZSTALL_RANK)
    std::raise(SIGSTOP);
#endif
  return &program;
}
