//===- Runtime.cpp - errors, element sizes, memory accounting, processes --===//
//
// Shared by both runtimes: zrt_fail, the per-category
// current and peak byte counts behind zrt_mem_current/zrt_mem_peak (the
// allocators, Memory.cpp and Cuda/Memory.cu, count through them), and the
// process helpers of Services.h (agreeing on an error across ranks, exiting
// every rank cleanly, the launcher's environment, threads within a rank).
//
// The CUDA runtime compiles this file against its MPI facade
// (Cuda/MpiFacade/mpi.h): every MPI_* call here works there too, on one
// rank without any MPI library.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

using namespace zeroc::rt;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

bool mpiIsUp() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

} // namespace

extern "C" void zrt_fail(const char *format, ...) {
  char message[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fflush(stdout);
  if (worldSize() > 1)
    std::fprintf(stderr, "zeroc: error: rank %d: %s\n", worldRank(), message);
  else
    std::fprintf(stderr, "zeroc: error: %s\n", message);
  std::fflush(stderr);
  if (mpiIsUp())
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

//===----------------------------------------------------------------------===//
// Memory accounting
//===----------------------------------------------------------------------===//

namespace {

std::atomic<int64_t> currentBytes[ZRT_MEM_CATEGORIES];
std::atomic<int64_t> peakBytes[ZRT_MEM_CATEGORIES];
// Every category together: what one rank holds at its highest.
std::atomic<int64_t> totalBytes;
std::atomic<int64_t> peakTotal;

} // namespace

namespace zeroc::rt {

const char *categoryName(zrt_mem_category category) {
  static const char *names[] = {"parameters",       "gradients",
                                "optimizer_states", "gathered_parameters",
                                "gradient_buckets", "activations"};
  int index = static_cast<int>(category);
  return index >= 0 && index < ZRT_MEM_CATEGORIES ? names[index] : "?";
}

void checkCategory(const char *function, zrt_mem_category category) {
  if (static_cast<int>(category) < 0 || category >= ZRT_MEM_CATEGORIES)
    zrt_fail("%s: unknown memory category %d", function,
             static_cast<int>(category));
}

void countAllocation(zrt_mem_category category, size_t bytes) {
  int64_t now = currentBytes[category] += static_cast<int64_t>(bytes);
  int64_t peak = peakBytes[category].load();
  while (now > peak && !peakBytes[category].compare_exchange_weak(peak, now)) {
  }
  int64_t total = totalBytes += static_cast<int64_t>(bytes);
  int64_t top = peakTotal.load();
  while (total > top && !peakTotal.compare_exchange_weak(top, total)) {
  }
}

void countFree(zrt_mem_category category, size_t bytes) {
  currentBytes[category] -= static_cast<int64_t>(bytes);
  totalBytes -= static_cast<int64_t>(bytes);
}

int64_t peakTotalAllocated() { return peakTotal.load(); }

int64_t totalAllocated() {
  int64_t total = 0;
  for (const auto &bytes : currentBytes)
    total += bytes.load();
  return total;
}

} // namespace zeroc::rt

extern "C" int64_t zrt_mem_current(zrt_mem_category category) {
  checkCategory("zrt_mem_current", category);
  return currentBytes[category].load();
}

extern "C" int64_t zrt_mem_peak(zrt_mem_category category) {
  checkCategory("zrt_mem_peak", category);
  return peakBytes[category].load();
}

//===----------------------------------------------------------------------===//
// Process helpers
//===----------------------------------------------------------------------===//

namespace zeroc::rt {

int worldRank() {
  int rank = 0;
  if (mpiIsUp())
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 1;
  if (mpiIsUp())
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void exitAll(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpiIsUp()) {
    commFinalize();
    MPI_Finalize();
  }
  std::exit(status);
}

void failEverywhere(const std::string &message) {
  if (worldRank() == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "zeroc: error: %s\n", message.c_str());
  }
  exitAll(1);
}

void agree(const std::string &error) {
  int mine = error.empty() ? INT_MAX : worldRank();
  int first = mine;
  if (mpiIsUp())
    first = minOverRanks(mine); // under --collective-timeout
  if (first == INT_MAX)
    return;
  if (mine == first) {
    std::fflush(stdout);
    std::fprintf(stderr, "zeroc: error: %s\n", error.c_str());
  }
  exitAll(1);
}

namespace {

/// The first of `names` set in the environment, as an integer, or -1.
int environmentInteger(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (const char *value = std::getenv(name); value && *value)
      return std::atoi(value);
  return -1;
}

} // namespace

int launcherRank() {
  int rank = environmentInteger(
      {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
  return rank < 0 ? 0 : rank;
}

int launcherSize() {
  // Not SLURM_NTASKS: a batch script has it too, outside any srun step.
  int size = environmentInteger({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  return size < 0 ? 0 : size;
}

int launcherLocalRank() {
  int rank = environmentInteger({"OMPI_COMM_WORLD_LOCAL_RANK",
                                 "MPI_LOCALRANKID", "SLURM_LOCALID",
                                 "LOCAL_RANK"});
  return rank < 0 ? 0 : rank;
}

int launcherLocalSize() {
  int size = environmentInteger({"OMPI_COMM_WORLD_LOCAL_SIZE",
                                 "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
                                 "LOCAL_WORLD_SIZE"});
  return size < 0 ? 0 : size;
}

void parallelChunks(int64_t n,
                    const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
#ifdef _OPENMP
#pragma omp parallel
  {
    int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    int64_t begin = n * thread / threads, end = n * (thread + 1) / threads;
    if (begin < end)
      body(begin, end);
  }
#else
  static const int64_t threadCount = [] {
    int requested = environmentInteger({"OMP_NUM_THREADS"});
    if (requested > 0)
      return static_cast<int64_t>(requested);
    int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    int64_t local = std::max(1, launcherLocalSize());
    return std::max<int64_t>(1, cores / local);
  }();
  // Below this many elements a thread costs more than it saves.
  constexpr int64_t kMinPerThread = 1 << 16;
  int64_t threads = std::min(threadCount, (n + kMinPerThread - 1) /
                                              kMinPerThread);
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (int64_t t = 1; t < threads; ++t)
    workers.emplace_back(
        [&, t] { body(n * t / threads, n * (t + 1) / threads); });
  body(0, n / threads);
  for (std::thread &worker : workers)
    worker.join();
#endif
}

std::string humanBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%" PRId64 " B", bytes);
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

} // namespace zeroc::rt
