//===- Collectives.cu - zrt_*_start and zrt_wait on NCCL ------------------===//
//
// The ABI's collectives, for callers that do not call NCCL themselves
// (generated CUDA code does, through Comm.cu's zrt_nccl_comm and friends).
// A file of its own so that an executable links these, and the NCCL
// collectives they name, only when it calls them.
//
// Streams: each *_start records an event on the caller's stream (`stream`,
// or the compute stream when NULL), makes the communication stream wait for
// it, enqueues the NCCL call there and records a 'done' event; zrt_wait makes
// the caller's stream wait for 'done' (cudaStreamWaitEvent) and recycles the
// request. The host never blocks, so zrt_comm_seconds_waited() is 0 on a
// GPU: exposed communication shows as GPU time in the step, not as host
// waiting. Requests and their events are pooled. Calls come from one host
// thread (the program's), as the compute stream's order requires anyway.
// A world of one rank needs no NCCL: each collective is a device copy on
// the same streams.
//
// Buffers may alias as NCCL's in-place forms allow (send == recv for an
// all-reduce; recv at the rank's slot of send for a reduce-scatter, send at
// the rank's slot of recv for an all-gather). Any other overlap, including
// a reduce-scatter with send == recv on a rank other than 0 (MPI_IN_PLACE's
// meaning, which the CPU runtime follows), goes through a temporary from
// the memory pool, on the communication stream, copied out after the
// collective. Sums only; f32 -> ncclFloat32, bf16 -> ncclBfloat16 (NCCL
// sums in f32 and rounds), i32 / i64 -> ncclInt32 / ncclInt64. Bytes sent
// are counted as the CPU runtime counts them (Comm.cu, countCollective).
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
  cudaEvent_t done = nullptr;
  cudaStream_t origin = nullptr; // the stream zrt_wait orders after `done`
  zrt_request *next = nullptr;   // in the free list
  bool inFlight = false;
};

namespace {

/// Recorded on the caller's stream at each start; the comm stream waits on
/// its latest record (a later record does not change an enqueued wait).
cudaEvent_t ready = nullptr;
zrt_request *freeRequests = nullptr;

ncclDataType_t ncclTypeOf(const char *function, zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return ncclFloat32;
  case ZRT_BF16:
    return ncclBfloat16;
  case ZRT_I32:
    return ncclInt32;
  case ZRT_I64:
    return ncclInt64;
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

zrt_request *takeRequest() {
  zrt_request *request = freeRequests;
  if (request) {
    freeRequests = request->next;
  } else {
    request = new zrt_request;
    ZRT_CUDA(cudaEventCreateWithFlags(&request->done, cudaEventDisableTiming));
  }
  request->next = nullptr;
  request->inFlight = true;
  return request;
}

/// A collective's start: the comm stream waits for the caller's stream.
zrt_request *begin(void *stream) {
  cudaStream_t origin =
      stream ? static_cast<cudaStream_t>(stream) : computeStream();
  if (!ready)
    ZRT_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  ZRT_CUDA(cudaEventRecord(ready, origin));
  ZRT_CUDA(cudaStreamWaitEvent(commStream(), ready, 0));
  zrt_request *request = takeRequest();
  request->origin = origin;
  return request;
}

zrt_request *finish(zrt_request *request) {
  ZRT_CUDA(cudaEventRecord(request->done, commStream()));
  return request;
}

/// Where a collective writes: `recv`, or a temporary when `recv` overlaps
/// the send buffer other than in NCCL's in-place form (`copyOut` then
/// moves the result to `recv`).
struct Output {
  void *target = nullptr;
  void *temporary = nullptr;
  void *destination = nullptr;
  size_t bytes = 0;

  Output(void *recv, size_t recvBytes, bool needsTemporary)
      : target(recv), destination(recv), bytes(recvBytes) {
    if (!needsTemporary)
      return;
    ZRT_CUDA(cudaMallocAsync(&temporary, bytes ? bytes : 1, commStream()));
    target = temporary;
  }

  void copyOut() {
    if (!temporary)
      return;
    cudaStream_t stream = commStream();
    if (bytes)
      ZRT_CUDA(cudaMemcpyAsync(destination, temporary, bytes,
                               cudaMemcpyDeviceToDevice, stream));
    ZRT_CUDA(cudaFreeAsync(temporary, stream));
  }
};

/// A world of one: recv = send (bytes), on the comm stream.
void copyAlone(void *target, const void *send, size_t bytes) {
  if (bytes && target != send)
    ZRT_CUDA(cudaMemcpyAsync(target, send, bytes, cudaMemcpyDeviceToDevice,
                             commStream()));
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
  if (ranks > 1)
    requireNccl(function);
  zrt_request *request = begin(stream);
  Output out(recv, bytes, send != recv && overlaps(send, bytes, recv, bytes));
  if (count) {
    if (ranks > 1)
      checkNccl(ncclAllReduce(send, out.target, count, type, ncclSum,
                              ncclCommunicator(), commStream()),
                "ncclAllReduce");
    else
      copyAlone(out.target, send, bytes);
  }
  out.copyOut();
  countCollective(2, count, dtype);
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
  if (ranks > 1)
    requireNccl(function);
  // NCCL's in place: recv is this rank's slot of send.
  bool inPlace = static_cast<const char *>(send) +
                     static_cast<size_t>(commRank()) * recvBytes ==
                 static_cast<const char *>(recv);
  zrt_request *request = begin(stream);
  Output out(recv, recvBytes,
             !inPlace && overlaps(send, sendBytes, recv, recvBytes));
  if (recv_count) {
    if (ranks > 1)
      checkNccl(ncclReduceScatter(send, out.target, recv_count, type, ncclSum,
                                  ncclCommunicator(), commStream()),
                "ncclReduceScatter");
    else
      copyAlone(out.target, send, recvBytes);
  }
  out.copyOut();
  countCollective(1, recv_count * static_cast<size_t>(ranks), dtype);
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
  if (ranks > 1)
    requireNccl(function);
  // NCCL's in place: send is this rank's slot of recv.
  bool inPlace = static_cast<const char *>(recv) +
                     static_cast<size_t>(commRank()) * sendBytes ==
                 static_cast<const char *>(send);
  zrt_request *request = begin(stream);
  Output out(recv, recvBytes,
             !inPlace && overlaps(send, sendBytes, recv, recvBytes));
  if (send_count) {
    if (ranks > 1)
      checkNccl(ncclAllGather(send, out.target, send_count, type,
                              ncclCommunicator(), commStream()),
                "ncclAllGather");
    else
      copyAlone(out.target, send, sendBytes);
  }
  out.copyOut();
  countCollective(1, send_count * static_cast<size_t>(ranks), dtype);
  return finish(request);
}

extern "C" void zrt_wait(zrt_request *request) {
  if (!request)
    zrt_fail("zrt_wait: null request");
  if (!request->inFlight)
    zrt_fail("zrt_wait: the request was already waited for");
  ZRT_CUDA(cudaStreamWaitEvent(request->origin, request->done, 0));
  // The wait is enqueued: `done` may be recorded again by the next start.
  request->inFlight = false;
  request->next = freeRequests;
  freeRequests = request;
}
