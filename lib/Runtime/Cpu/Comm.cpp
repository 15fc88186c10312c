//===- Comm.cpp - zrt collectives over MPI_COMM_WORLD ---------------------===//
//
// The CPU runtime's (Cuda/Comm.cu is the CUDA runtime's: NCCL).
//
// Each *_start is one MPI non-blocking collective (MPI_Iallreduce,
// MPI_Ireduce_scatter_block, MPI_Iallgather); zrt_wait is MPI_Waitall on it,
// timed. f32 and integer sums use MPI's predefined types and MPI_SUM; bf16
// sums use a 2-byte contiguous datatype with a commutative user operation
// that adds in f32 and rounds to nearest even, as every kernel does.
//
// Buffers that alias in zrt.h's in-place forms (the CUDA runtime's, which
// are NCCL's) go in place: send == recv for an all-reduce (MPI_IN_PLACE);
// send at the rank's slot of recv for an all-gather (MPI_IN_PLACE); recv at
// the rank's slot of send for a reduce-scatter, which MPI_IN_PLACE cannot
// say (MPI leaves rank r's result at the start of the buffer): the
// reduce-scatter runs with MPI_IN_PLACE on the whole buffer and zrt_wait
// moves the result (recv_count elements) from the start to the rank's slot,
// on every rank but 0. Any other overlap goes through a temporary that
// zrt_wait copies out. The CPU runtime has no streams: `stream` is ignored.
//
// Progress while the kernels compute (Progress.h): Open MPI progresses a
// non-blocking collective only inside MPI calls, so every request started
// here is kept in `inFlight` until a poll (pollCollectives, called by the
// GEMM and attention kernels, on the MPI thread, at most once per
// kPollIntervalSeconds) sees MPI_Testall complete it, or until its
// zrt_wait. A request a poll completed keeps MPI_REQUEST_NULL handles, so
// its zrt_wait returns at once (and still copies a temporary or an
// in-place shard out). ZEROC_COMM_PROGRESS=0 turns the polls off.
//
// Bytes sent are counted by the ring formula on the buffer passed
// (Common/RingBytes.h, as the CUDA runtime counts them).
//
//===----------------------------------------------------------------------===//

#include "Progress.h"
#include "RingBytes.h"
#include "Services.h"
#include "Timeout.h"
#include "Trace.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <mpi.h>

using namespace zeroc::rt;

struct zrt_comm {
  MPI_Comm comm;
};

struct zrt_request {
  std::vector<MPI_Request> requests;
  zeroc::rt::CollectiveInfo info{}; // for --collective-timeout's message
  void *temporary = nullptr; // receives instead of `destination`
  void *destination = nullptr;
  size_t bytes = 0;
  // An in-place reduce-scatter on rank r > 0: the result, at `shardFrom`
  // (the start of the buffer), moves to `destination` (its slot r).
  const void *shardFrom = nullptr;
  // Completed by a poll (Progress.h), and when on the trace's clock (-1:
  // the trace was off).
  bool completed = false;
  double completedMicros = -1;
};

namespace {

zrt_comm worldComm{MPI_COMM_WORLD};
MPI_Datatype bf16Type = MPI_DATATYPE_NULL;
MPI_Op bf16Sum = MPI_OP_NULL;
std::atomic<int64_t> bytesSent{0};
double secondsWaited = 0;

/// Requests started and not yet completed by a poll nor waited, in start
/// order (the MPI thread's only).
std::vector<zrt_request *> inFlight;
/// The thread that initialized MPI: the only one that may call it
/// (MPI_THREAD_FUNNELED).
thread_local bool onMpiThread = false;
/// Polls no more often than this: an MPI_Testall costs about a microsecond,
/// a GEMM tile of the models this runs tens to thousands.
constexpr double kPollIntervalSeconds = 100e-6;
double lastCompletionMicros = -1;

double monotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Progress.h's hook: tests every request in flight, rate-limited.
void progressCollectives() {
  if (!onMpiThread)
    return;
  static double lastPoll = 0;
  double now = monotonicSeconds();
  if (now - lastPoll < kPollIntervalSeconds)
    return;
  lastPoll = now;
  for (size_t i = 0; i < inFlight.size();) {
    zrt_request *request = inFlight[i];
    int done = 0;
    MPI_Testall(static_cast<int>(request->requests.size()),
                request->requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) {
      ++i;
      continue;
    }
    request->completed = true;
    if (zrt_trace_enabled)
      request->completedMicros = traceClockMicros();
    inFlight.erase(inFlight.begin() + static_cast<std::ptrdiff_t>(i));
    collectivesInFlight.fetch_sub(1, std::memory_order_relaxed);
  }
}

/// A started request, in flight until a poll or its wait completes it.
zrt_request *track(zrt_request *request) {
  inFlight.push_back(request);
  collectivesInFlight.fetch_add(1, std::memory_order_relaxed);
  return request;
}

/// Pieces of an all-reduce larger than MPI's int counts.
constexpr size_t kMaxChunk = size_t(1) << 30;

void bf16SumFunction(void *in, void *inout, int *length, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *length; ++i)
    b[i] = zrt_f32_to_bf16(zrt_bf16_to_f32(a[i]) + zrt_bf16_to_f32(b[i]));
}

MPI_Comm mpiComm(const zrt_comm *comm) {
  return comm ? comm->comm : MPI_COMM_WORLD;
}

int commSize(const zrt_comm *comm) {
  int size = 1;
  MPI_Comm_size(mpiComm(comm), &size);
  return size;
}

int commRank(const zrt_comm *comm) {
  int rank = 0;
  MPI_Comm_rank(mpiComm(comm), &rank);
  return rank;
}

struct TypeAndOp {
  MPI_Datatype type;
  MPI_Op op;
};

/// MPI's datatype and sum for each dtype of zrt.h's table (a dtype added
/// there without one here does not compile).
template <zrt_dtype D> TypeAndOp mpiTypeFor(const char *function);
template <> TypeAndOp mpiTypeFor<ZRT_F32>(const char *) {
  return {MPI_FLOAT, MPI_SUM};
}
template <> TypeAndOp mpiTypeFor<ZRT_BF16>(const char *function) {
  if (bf16Type == MPI_DATATYPE_NULL)
    zrt_fail("%s: the runtime's bf16 sum is not set up (MPI not "
             "initialized by the runtime's main?)",
             function);
  return {bf16Type, bf16Sum};
}
template <> TypeAndOp mpiTypeFor<ZRT_I32>(const char *) {
  return {MPI_INT32_T, MPI_SUM};
}
template <> TypeAndOp mpiTypeFor<ZRT_I64>(const char *) {
  return {MPI_INT64_T, MPI_SUM};
}

TypeAndOp mpiTypeOf(const char *function, zrt_dtype dtype) {
  switch (dtype) {
#define ZRT_MPI_TYPE_(e, value, ctype, bytes, name, is_float)                  \
  case e:                                                                      \
    return mpiTypeFor<e>(function);
    ZRT_DTYPES(ZRT_MPI_TYPE_)
#undef ZRT_MPI_TYPE_
  }
  zrt_fail("%s: unknown dtype %d", function, static_cast<int>(dtype));
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

const char *dtypeText(zrt_dtype dtype) {
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

/// A new request for the collective `kind` of `count` elements.
zrt_request *newRequest(const char *kind, size_t count, zrt_dtype dtype) {
  auto *request = new zrt_request;
  request->info = {kind, nextCollectiveNumber(), count, dtypeText(dtype)};
  return request;
}

int checkedCount(const char *function, size_t count) {
  if (count > static_cast<size_t>(INT_MAX))
    zrt_fail("%s: %zu elements per rank exceed MPI's int count", function,
             count);
  return static_cast<int>(count);
}

void countRing(zrt_collective kind, size_t n, int ranks, zrt_dtype dtype) {
  bytesSent += ringBytes(kind, static_cast<int64_t>(n), ranks, dtype);
}

/// Points the request's receive side at a temporary when `recv` overlaps
/// `send` in a way MPI_IN_PLACE cannot express.
void *receiveBuffer(zrt_request *request, void *recv, size_t recvBytes) {
  request->temporary = std::malloc(recvBytes ? recvBytes : 1);
  if (!request->temporary)
    zrt_fail("collective: out of memory for a %zu-byte temporary", recvBytes);
  request->destination = recv;
  request->bytes = recvBytes;
  return request->temporary;
}

} // namespace

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

namespace zeroc::rt {

void commInitialize(int &argc, char **&argv, const zrt_program &) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Open MPI's non-blocking all-reduce (libnbc) picks a binomial tree
    // below 4 ranks: one rank reduces the whole bucket and sends it back.
    // Rabenseifner's (a reduce-scatter, then an all-gather) splits the
    // reduction over the ranks, as stages 1-3 do; the bucket buffers are
    // padded to N shards. A value the user set wins; other MPIs ignore it.
    ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3",
             /*overwrite=*/0);
    armStartupWatchdog(); // MPI_Init waits for every rank (Timeout.cpp)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    disarmStartupWatchdog();
  }
  onMpiThread = true;
  const char *progress = std::getenv("ZEROC_COMM_PROGRESS");
  collectiveProgressHook =
      progress && std::strcmp(progress, "0") == 0 ? nullptr
                                                  : progressCollectives;
  if (bf16Type != MPI_DATATYPE_NULL)
    return;
  MPI_Type_contiguous(2, MPI_BYTE, &bf16Type);
  MPI_Type_commit(&bf16Type);
  MPI_Op_create(bf16SumFunction, /*commute=*/1, &bf16Sum);
  timeoutInitialize();
}

void commFinalize() {
  collectiveProgressHook = nullptr;
  timeoutFinalize();
  if (bf16Sum != MPI_OP_NULL)
    MPI_Op_free(&bf16Sum);
  if (bf16Type != MPI_DATATYPE_NULL)
    MPI_Type_free(&bf16Type);
}

zrt_comm *defaultComm() { return &worldComm; }

bool collectiveCompletedByPoll(const zrt_request *request) {
  return request && request->completed;
}

double takeLastCompletionMicros() {
  double micros = lastCompletionMicros;
  lastCompletionMicros = -1;
  return micros;
}

} // namespace zeroc::rt

//===----------------------------------------------------------------------===//
// The ABI
//===----------------------------------------------------------------------===//

extern "C" int zrt_rank(const zrt_comm *comm) { return commRank(comm); }

extern "C" int zrt_world_size(const zrt_comm *comm) { return commSize(comm); }

extern "C" zrt_request *zrt_all_reduce_start(zrt_comm *comm, const void *send,
                                             void *recv, size_t count,
                                             zrt_dtype dtype, void *stream) {
  TypeAndOp mpi = mpiTypeOf("zrt_all_reduce_start", dtype);
  size_t size = zrt_dtype_size(dtype);
  size_t bytes = count * size;
  zrt_request *request = newRequest("all-reduce", count, dtype);
  const void *source = send;
  char *target = static_cast<char *>(recv);
  if (send == recv)
    source = MPI_IN_PLACE;
  else if (overlaps(send, bytes, recv, bytes))
    target = static_cast<char *>(receiveBuffer(request, recv, bytes));
  for (size_t done = 0; done < count; done += kMaxChunk) {
    size_t piece = std::min(kMaxChunk, count - done);
    const void *pieceSource =
        source == MPI_IN_PLACE
            ? MPI_IN_PLACE
            : static_cast<const char *>(source) + done * size;
    MPI_Request handle;
    MPI_Iallreduce(pieceSource, target + done * size, static_cast<int>(piece),
                   mpi.type, mpi.op, mpiComm(comm), &handle);
    request->requests.push_back(handle);
  }
  countRing(ZRT_ALL_REDUCE, count, commSize(comm), dtype);
  return track(request);
}

extern "C" zrt_request *
zrt_reduce_scatter_start(zrt_comm *comm, const void *send, void *recv,
                         size_t recv_count, zrt_dtype dtype, void *stream) {
  TypeAndOp mpi = mpiTypeOf("zrt_reduce_scatter_start", dtype);
  int count = checkedCount("zrt_reduce_scatter_start", recv_count);
  int ranks = commSize(comm);
  size_t size = zrt_dtype_size(dtype);
  zrt_request *request =
      newRequest("reduce-scatter", recv_count * ranks, dtype);
  const void *source = send;
  void *target = recv;
  const char *ownSlot =
      static_cast<const char *>(send) + commRank(comm) * recv_count * size;
  if (recv == ownSlot) {
    // MPI_IN_PLACE: the input is the whole buffer and the result lands in
    // its first recv_count elements; zrt_wait moves it to the rank's slot.
    source = MPI_IN_PLACE;
    target = const_cast<void *>(send);
    if (recv != send) {
      request->shardFrom = send;
      request->destination = recv;
      request->bytes = recv_count * size;
    }
  } else if (overlaps(send, recv_count * ranks * size, recv,
                      recv_count * size)) {
    target = receiveBuffer(request, recv, recv_count * size);
  }
  MPI_Request handle;
  MPI_Ireduce_scatter_block(source, target, count, mpi.type, mpi.op,
                            mpiComm(comm), &handle);
  request->requests.push_back(handle);
  countRing(ZRT_REDUCE_SCATTER, recv_count * ranks, ranks, dtype);
  return track(request);
}

extern "C" zrt_request *zrt_all_gather_start(zrt_comm *comm, const void *send,
                                             void *recv, size_t send_count,
                                             zrt_dtype dtype, void *stream) {
  TypeAndOp mpi = mpiTypeOf("zrt_all_gather_start", dtype);
  int count = checkedCount("zrt_all_gather_start", send_count);
  int ranks = commSize(comm);
  size_t size = zrt_dtype_size(dtype);
  zrt_request *request = newRequest("all-gather", send_count * ranks, dtype);
  const void *source = send;
  void *target = recv;
  const char *ownSlot =
      static_cast<const char *>(recv) + commRank(comm) * send_count * size;
  if (send == ownSlot)
    source = MPI_IN_PLACE;
  else if (overlaps(send, send_count * size, recv, send_count * ranks * size))
    target = receiveBuffer(request, recv, send_count * ranks * size);
  MPI_Request handle;
  MPI_Iallgather(source, count, mpi.type, target, count, mpi.type,
                 mpiComm(comm), &handle);
  request->requests.push_back(handle);
  countRing(ZRT_ALL_GATHER, send_count * ranks, ranks, dtype);
  return track(request);
}

extern "C" void zrt_wait(zrt_request *request) {
  if (!request)
    zrt_fail("zrt_wait: null request");
  if (!request->completed) {
    auto it = std::find(inFlight.begin(), inFlight.end(), request);
    if (it != inFlight.end()) {
      inFlight.erase(it);
      collectivesInFlight.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  lastCompletionMicros = request->completedMicros;
  double start = MPI_Wtime();
  // A request a poll completed has null handles: no wait.
  waitWithDeadline(request->requests, request->info); // --collective-timeout
  secondsWaited += MPI_Wtime() - start;
  if (request->temporary) {
    std::memcpy(request->destination, request->temporary, request->bytes);
    std::free(request->temporary);
  }
  if (request->shardFrom) // the slots of different ranks do not overlap
    std::memcpy(request->destination, request->shardFrom, request->bytes);
  delete request;
}

extern "C" int64_t zrt_comm_bytes_sent(void) { return bytesSent.load(); }

extern "C" double zrt_comm_seconds_waited(void) { return secondsWaited; }
