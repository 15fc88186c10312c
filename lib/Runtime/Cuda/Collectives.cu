//===- Collectives.cu - zrt_*_start and zrt_wait on NCCL ------------------===//
//
// The ABI's collectives: the one place where NCCL calls, events and stream
// waits happen (generated CUDA code calls zrt_*_start(comm, ..., stream) and
// zrt_wait, exactly as generated C++ does on the CPU).
//
// Streams: each *_start records an event on the caller's stream (`stream`,
// or the compute stream when NULL), makes the communication stream wait for
// it, enqueues the NCCL call there and records the request's 'done' event
// on it; zrt_wait makes the caller's stream wait for 'done'
// (cudaStreamWaitEvent) and recycles the request. The host never blocks, so
// zrt_comm_seconds_waited() is 0 on a GPU: exposed communication shows as
// GPU time in the step, not as host waiting. Requests and their events come
// from a pool that grows to the most collectives ever in flight at once
// (during the first step) and is reused after: no event is created per
// step. Calls come from one host thread (the program's), as the compute
// stream's order requires anyway.
//
// A world of one rank makes no NCCL communicator and calls no NCCL: each
// collective is a device copy on the caller's stream (none when the buffers
// are the same), and its zrt_wait has nothing to order.
//
// Buffers may alias in NCCL's in-place forms, which zrt.h makes the ABI's
// for both runtimes: send == recv for an all-reduce; recv == send + rank *
// recv_count (the rank's slot of send) for a reduce-scatter; send == recv +
// rank * send_count (the rank's slot of recv) for an all-gather. Any other
// overlap goes through a temporary from the memory pool, on the
// communication stream, copied out after the collective. Sums only; the
// NCCL type of each dtype of zrt.h's table is below (NCCL adds bf16 in f32
// and rounds). Bytes sent are counted as the CPU runtime counts them
// (Common/RingBytes.h).
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include "Services.h"

#include <nccl.h>

#include <cstdint>

using namespace zeroc::rt;
using namespace zeroc::rt::cuda;

struct zrt_request {
  cudaEvent_t done = nullptr;    // recorded on the comm stream (ranks > 1)
  cudaStream_t origin = nullptr; // the stream zrt_wait orders after `done`
  zrt_request *next = nullptr;   // in the free list
  bool inFlight = false;
  bool local = false; // one rank: the copy is on `origin` already
};

namespace {

/// Recorded on the caller's stream at each start; the comm stream waits on
/// its latest record (a later record does not change an enqueued wait).
cudaEvent_t ready = nullptr;
zrt_request *freeRequests = nullptr;

/// NCCL's datatype for each dtype of zrt.h's table (a dtype added there
/// without one here does not compile).
template <zrt_dtype D> ncclDataType_t ncclTypeFor();
template <> ncclDataType_t ncclTypeFor<ZRT_F32>() { return ncclFloat32; }
template <> ncclDataType_t ncclTypeFor<ZRT_BF16>() { return ncclBfloat16; }
template <> ncclDataType_t ncclTypeFor<ZRT_I32>() { return ncclInt32; }
template <> ncclDataType_t ncclTypeFor<ZRT_I64>() { return ncclInt64; }

ncclDataType_t ncclTypeOf(const char *function, zrt_dtype dtype) {
  switch (dtype) {
#define ZRT_NCCL_TYPE_(e, value, ctype, bytes, name, is_float)                 \
  case e:                                                                      \
    return ncclTypeFor<e>();
    ZRT_DTYPES(ZRT_NCCL_TYPE_)
#undef ZRT_NCCL_TYPE_
  }
  zrt_fail("%s: unknown dtype %d", function, static_cast<int>(dtype));
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

void checkBuffers(const char *function, const void *send, const void *recv,
                  size_t count) {
  if (count && (!send || !recv))
    zrt_fail("%s: NULL buffer for %zu elements", function, count);
}

/// A request from the pool; `withEvent`: it needs its `done` event (the
/// events are made once, with the request, and reused).
zrt_request *takeRequest(bool withEvent) {
  zrt_request *request = freeRequests;
  if (request) {
    freeRequests = request->next;
  } else {
    request = new zrt_request;
  }
  if (withEvent && !request->done)
    ZRT_CUDA(cudaEventCreateWithFlags(&request->done, cudaEventDisableTiming));
  request->next = nullptr;
  request->inFlight = true;
  request->local = !withEvent;
  return request;
}

cudaStream_t originOf(void *stream) {
  return stream ? static_cast<cudaStream_t>(stream) : computeStream();
}

/// A collective's start across ranks: the comm stream waits for the
/// caller's stream.
zrt_request *begin(cudaStream_t origin) {
  if (!ready)
    ZRT_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  ZRT_CUDA(cudaEventRecord(ready, origin));
  ZRT_CUDA(cudaStreamWaitEvent(commStream(), ready, 0));
  zrt_request *request = takeRequest(/*withEvent=*/true);
  request->origin = origin;
  return request;
}

zrt_request *finish(zrt_request *request) {
  ZRT_CUDA(cudaEventRecord(request->done, commStream()));
  return request;
}

/// Where a collective writes on `stream`: `recv`, or a temporary when
/// `recv` overlaps the send buffer other than in the in-place form
/// (`copyOut` then moves the result to `recv`).
struct Output {
  void *target = nullptr;
  void *temporary = nullptr;
  void *destination = nullptr;
  size_t bytes = 0;
  cudaStream_t stream = nullptr;

  Output(void *recv, size_t recvBytes, bool needsTemporary,
         cudaStream_t stream)
      : target(recv), destination(recv), bytes(recvBytes), stream(stream) {
    if (!needsTemporary)
      return;
    ZRT_CUDA(cudaMallocAsync(&temporary, bytes ? bytes : 1, stream));
    target = temporary;
  }

  void copyOut() {
    if (!temporary)
      return;
    if (bytes)
      ZRT_CUDA(cudaMemcpyAsync(destination, temporary, bytes,
                               cudaMemcpyDeviceToDevice, stream));
    ZRT_CUDA(cudaFreeAsync(temporary, stream));
  }
};

/// A world of one: recv = send, on the caller's stream; no NCCL, no events.
zrt_request *alone(cudaStream_t origin, void *recv, const void *send,
                   size_t bytes, bool overlap) {
  if (bytes && recv != send) {
    Output out(recv, bytes, overlap, origin);
    ZRT_CUDA(cudaMemcpyAsync(out.target, send, bytes, cudaMemcpyDeviceToDevice,
                             origin));
    out.copyOut();
  }
  zrt_request *request = takeRequest(/*withEvent=*/false);
  request->origin = origin;
  return request;
}

void requireNccl(const char *function) {
  if (!ncclCommunicator())
    zrt_fail("%s: no NCCL communicator (collectives across ranks need the "
             "runtime's main to set them up)",
             function);
}

} // namespace

extern "C" zrt_request *zrt_all_reduce_start(zrt_comm *, const void *send,
                                             void *recv, size_t count,
                                             zrt_dtype dtype, void *stream) {
  const char *function = "zrt_all_reduce_start";
  ncclDataType_t type = ncclTypeOf(function, dtype);
  checkBuffers(function, send, recv, count);
  size_t bytes = count * zrt_dtype_size(dtype);
  int ranks = commSize();
  cudaStream_t origin = originOf(stream);
  // In place: send == recv.
  bool overlap = send != recv && overlaps(send, bytes, recv, bytes);
  countCollective(ZRT_ALL_REDUCE, count, dtype);
  if (ranks == 1)
    return alone(origin, recv, send, bytes, overlap);
  requireNccl(function);
  zrt_request *request = begin(origin);
  Output out(recv, bytes, overlap, commStream());
  if (count)
    checkNccl(ncclAllReduce(send, out.target, count, type, ncclSum,
                            ncclCommunicator(), commStream()),
              "ncclAllReduce");
  out.copyOut();
  return finish(request);
}

extern "C" zrt_request *zrt_reduce_scatter_start(zrt_comm *, const void *send,
                                                 void *recv, size_t recv_count,
                                                 zrt_dtype dtype,
                                                 void *stream) {
  const char *function = "zrt_reduce_scatter_start";
  ncclDataType_t type = ncclTypeOf(function, dtype);
  checkBuffers(function, send, recv, recv_count);
  int ranks = commSize();
  size_t recvBytes = recv_count * zrt_dtype_size(dtype);
  size_t sendBytes = recvBytes * static_cast<size_t>(ranks);
  cudaStream_t origin = originOf(stream);
  // In place: recv is this rank's slot of send.
  bool inPlace = static_cast<const char *>(send) +
                     static_cast<size_t>(commRank()) * recvBytes ==
                 static_cast<const char *>(recv);
  bool overlap = !inPlace && overlaps(send, sendBytes, recv, recvBytes);
  countCollective(ZRT_REDUCE_SCATTER, recv_count * static_cast<size_t>(ranks),
                  dtype);
  if (ranks == 1)
    return alone(origin, recv, send, recvBytes, overlap);
  requireNccl(function);
  zrt_request *request = begin(origin);
  Output out(recv, recvBytes, overlap, commStream());
  if (recv_count)
    checkNccl(ncclReduceScatter(send, out.target, recv_count, type, ncclSum,
                                ncclCommunicator(), commStream()),
              "ncclReduceScatter");
  out.copyOut();
  return finish(request);
}

extern "C" zrt_request *zrt_all_gather_start(zrt_comm *, const void *send,
                                             void *recv, size_t send_count,
                                             zrt_dtype dtype, void *stream) {
  const char *function = "zrt_all_gather_start";
  ncclDataType_t type = ncclTypeOf(function, dtype);
  checkBuffers(function, send, recv, send_count);
  int ranks = commSize();
  size_t sendBytes = send_count * zrt_dtype_size(dtype);
  size_t recvBytes = sendBytes * static_cast<size_t>(ranks);
  cudaStream_t origin = originOf(stream);
  // In place: send is this rank's slot of recv.
  bool inPlace = static_cast<const char *>(recv) +
                     static_cast<size_t>(commRank()) * sendBytes ==
                 static_cast<const char *>(send);
  bool overlap = !inPlace && overlaps(send, sendBytes, recv, recvBytes);
  countCollective(ZRT_ALL_GATHER, send_count * static_cast<size_t>(ranks),
                  dtype);
  if (ranks == 1)
    return alone(origin, recv, send, sendBytes, overlap);
  requireNccl(function);
  zrt_request *request = begin(origin);
  Output out(recv, recvBytes, overlap, commStream());
  if (send_count)
    checkNccl(ncclAllGather(send, out.target, send_count, type,
                            ncclCommunicator(), commStream()),
              "ncclAllGather");
  out.copyOut();
  return finish(request);
}

extern "C" void zrt_wait(zrt_request *request) {
  if (!request)
    zrt_fail("zrt_wait: null request");
  if (!request->inFlight)
    zrt_fail("zrt_wait: the request was already waited for");
  // The caller's stream waits; the host does not. The wait is enqueued:
  // `done` may be recorded again by the next start that takes this request.
  if (!request->local)
    ZRT_CUDA(cudaStreamWaitEvent(request->origin, request->done, 0));
  request->inFlight = false;
  request->next = freeRequests;
  freeRequests = request;
}
