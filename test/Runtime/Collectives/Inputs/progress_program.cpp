// A hand-written "generated" program whose training step checks that the
// CPU runtime's collectives progress while the kernels compute
// (lib/Runtime/Cpu/Progress.h): for an all-reduce, a reduce-scatter (in
// place, in the rank's own slot) and an all-gather (in place) of 4 MiB, it
// starts the collective, then runs small zrt_matmul products until a poll
// inside them has seen the collective complete (or PROGRESS_BOUND_S
// seconds have passed, default 60), then waits it and checks the result.
// Open MPI progresses a non-blocking collective only inside MPI calls, and
// this loop makes none but the runtime's polls: without them nothing
// completes before the wait, whatever the time given.
//
// Rank 0 prints, per collective, on how many ranks it completed during
// the compute, then "progress: N checks passed on R rank(s)".

#include "zeroc/Runtime/zrt.h"

#include "Progress.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int checks = 0;

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Runs 64 x 64 x 64 products until a poll has completed `request` or the
/// bound has passed. Returns whether it completed during the compute.
bool computeUntilDone(zrt_request *request, double bound) {
  static std::vector<float> a(64 * 64, 0.5f), b(64 * 64, 0.25f),
      c(64 * 64);
  double start = secondsNow();
  while (!zeroc::rt::collectiveCompletedByPoll(request) &&
         secondsNow() - start < bound)
    zrt_matmul(ZRT_F32, a.data(), b.data(), c.data(), 1, 64, 64, 64,
               ZRT_NO_TRANS, ZRT_NO_TRANS, 64 * 64, 64 * 64, 64 * 64);
  if (c[0] != 0.5f * 0.25f * 64)
    zrt_fail("the compute loop's product is %g, expected %g", c[0],
             0.5 * 0.25 * 64);
  return zeroc::rt::collectiveCompletedByPoll(request);
}

/// How many ranks say `early` (a blocking all-reduce through the runtime).
int ranksSaying(zrt_comm *comm, bool early) {
  int32_t flag = early ? 1 : 0;
  zrt_wait(zrt_all_reduce_start(comm, &flag, &flag, 1, ZRT_I32, nullptr));
  return flag;
}

void check(const char *what, const float *data, int64_t n,
           float (*want)(int64_t, int), int ranks) {
  for (int64_t i = 0; i < n; ++i)
    if (data[i] != want(i, ranks))
      zrt_fail("%s: element %lld is %g, expected %g", what,
               static_cast<long long>(i), data[i], want(i, ranks));
  ++checks;
}

void report(zrt_comm *comm, const char *what, bool early) {
  int count = ranksSaying(comm, early);
  if (zrt_rank(comm) == 0)
    std::printf("%s: completed during compute on %d of %d rank(s)\n", what,
                count, zrt_world_size(comm));
}

void step(zrt_comm *comm, const void *, const void *, int64_t, float *loss,
          float *gradNorm, float *lr) {
  int rank = zrt_rank(comm), ranks = zrt_world_size(comm);
  const char *boundText = std::getenv("PROGRESS_BOUND_S");
  double bound = boundText ? std::atof(boundText) : 60;
  const int64_t n = int64_t{1} << 20; // 4 MiB of f32 per rank

  { // all-reduce in place: element i of rank r is (r + 1) * (i % 5)
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i)
      x[i] = static_cast<float>((rank + 1) * (i % 5));
    zrt_request *r =
        zrt_all_reduce_start(comm, x.data(), x.data(), n, ZRT_F32, nullptr);
    bool early = computeUntilDone(r, bound);
    zrt_wait(r);
    check("all-reduce", x.data(), n,
          [](int64_t i, int p) {
            return static_cast<float>(p * (p + 1) / 2 * (i % 5));
          },
          ranks);
    report(comm, "all-reduce", early);
  }
  { // reduce-scatter in place, into the rank's own slot
    std::vector<float> x(n * ranks);
    for (int64_t i = 0; i < n * ranks; ++i)
      x[i] = static_cast<float>((rank + 1) * (i % 3));
    zrt_request *r = zrt_reduce_scatter_start(comm, x.data(),
                                              x.data() + rank * n, n,
                                              ZRT_F32, nullptr);
    bool early = computeUntilDone(r, bound);
    zrt_wait(r);
    float sumOfRanks = static_cast<float>(ranks * (ranks + 1) / 2);
    for (int64_t i = rank * n; i < (rank + 1) * n; ++i)
      if (x[i] != sumOfRanks * static_cast<float>(i % 3))
        zrt_fail("reduce-scatter: element %lld of slot %d is %g, expected %g",
                 static_cast<long long>(i - rank * n), rank, x[i],
                 sumOfRanks * static_cast<float>(i % 3));
    ++checks;
    report(comm, "reduce-scatter", early);
  }
  { // all-gather in place from the rank's slot: slot r holds r + 1
    std::vector<float> x(n * ranks, -1.0f);
    for (int64_t i = 0; i < n; ++i)
      x[rank * n + i] = static_cast<float>(rank + 1);
    zrt_request *r = zrt_all_gather_start(comm, x.data() + rank * n, x.data(),
                                          n, ZRT_F32, nullptr);
    bool early = computeUntilDone(r, bound);
    zrt_wait(r);
    for (int64_t i = 0; i < n * ranks; ++i)
      if (x[i] != static_cast<float>(i / n + 1))
        zrt_fail("all-gather: element %lld is %g, expected %g",
                 static_cast<long long>(i), x[i],
                 static_cast<double>(i / n + 1));
    ++checks;
    report(comm, "all-gather", early);
  }
  if (rank == 0) {
    std::printf("progress: %d checks passed on %d rank(s)\n", checks, ranks);
    std::fflush(stdout);
  }
  *loss = 0;
  *gradNorm = 0;
  *lr = 0;
}

const zrt_program program = {
    "progress", 2, 0, 1, 4, 256, ZRT_I32, 0, nullptr, step, nullptr, nullptr};

} // namespace

const zrt_program *zeroc_program(void) { return &program; }
