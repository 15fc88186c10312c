//===- Nccl.cpp - NCCL over MPI, for the emulated CUDA runtime -------------===//
//
// The NCCL calls of lib/Runtime/Cuda on the CPU emulation of CUDA
// (include/nccl.h, docs/cuda.md). Compiled against the CUDA runtime's MPI
// facade (lib/Runtime/Cuda/MpiFacade/mpi.h), so that the MPI underneath is
// the libzeroc_mpi.so shim the real runtime loads. Each collective is
// queued on its stream and runs when the stream runs (the emulation's
// streams run when something waits for them): every rank's send buffer is
// gathered on rank 0 and broadcast, then each rank computes its result
// from the contributions, added in rank order.
//
//===----------------------------------------------------------------------===//

#include "nccl.h"

#include <mpi.h> // the facade

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct zc_emu_nccl {
  int rank = 0, ranks = 1;
  bool aborted = false;
};

namespace {

long ncclCalls = 0;

size_t typeBytes(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  }
  return 0;
}

bool overlap(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  uintptr_t x = reinterpret_cast<uintptr_t>(a),
            y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "emulated NCCL: %s\n", what);
  std::fflush(stderr);
  std::exit(1);
}

/// Every rank's `bytes` bytes from `send`, rank after rank.
std::vector<char> gatherAll(const zc_emu_nccl *comm, const void *send,
                            size_t bytes) {
  std::vector<char> all(bytes * comm->ranks);
  if (bytes > static_cast<size_t>(INT32_MAX) / comm->ranks)
    fail("a collective of more than 2 GiB");
  int n = static_cast<int>(bytes);
  if (MPI_Gather(send, n, MPI_BYTE, all.data(), n, MPI_BYTE, 0,
                 MPI_COMM_WORLD) != MPI_SUCCESS ||
      MPI_Bcast(all.data(), n * comm->ranks, MPI_BYTE, 0, MPI_COMM_WORLD) !=
          MPI_SUCCESS)
    fail("MPI_Gather or MPI_Bcast failed");
  return all;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// out[i] = the sum over ranks of all[rank][offset + i], i < count.
template <typename T>
void sumAs(const std::vector<char> &all, size_t rankBytes, size_t offset,
           size_t count, void *out) {
  const T *in = reinterpret_cast<const T *>(all.data());
  size_t stride = rankBytes / sizeof(T);
  size_t ranks = all.size() / rankBytes;
  T *o = static_cast<T *>(out);
  for (size_t i = 0; i < count; ++i) {
    T s = in[offset + i];
    for (size_t r = 1; r < ranks; ++r)
      s += in[r * stride + offset + i];
    o[i] = s;
  }
}

void sum(ncclDataType_t type, const std::vector<char> &all, size_t rankBytes,
         size_t offset, size_t count, void *out) {
  switch (type) {
  case ncclFloat32:
    return sumAs<float>(all, rankBytes, offset, count, out);
  case ncclFloat64:
    return sumAs<double>(all, rankBytes, offset, count, out);
  case ncclInt32:
    return sumAs<int32_t>(all, rankBytes, offset, count, out);
  case ncclInt64:
    return sumAs<int64_t>(all, rankBytes, offset, count, out);
  case ncclBfloat16: {
    const uint16_t *in = reinterpret_cast<const uint16_t *>(all.data());
    size_t stride = rankBytes / 2, ranks = all.size() / rankBytes;
    uint16_t *o = static_cast<uint16_t *>(out);
    for (size_t i = 0; i < count; ++i) {
      uint16_t s = in[offset + i];
      for (size_t r = 1; r < ranks; ++r)
        s = floatToBf16(bf16ToFloat(s) + bf16ToFloat(in[r * stride + offset + i]));
      o[i] = s;
    }
    return;
  }
  default:
    fail("a reduction of a type the emulated NCCL does not implement");
  }
}

ncclResult_t check(ncclComm_t comm, ncclDataType_t type, ncclRedOp_t op) {
  if (!comm || typeBytes(type) == 0 || op != ncclSum)
    return ncclInvalidArgument;
  if (comm->aborted)
    return ncclInvalidUsage;
  ++ncclCalls;
  return ncclSuccess;
}

struct Report {
  ~Report() {
    const char *stats = std::getenv("ZC_EMU_STATS");
    if (stats && std::strcmp(stats, "1") == 0)
      std::fprintf(stderr, "emulated NCCL: %ld calls\n", ncclCalls);
  }
} report;

} // namespace

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclInvalidUsage:
    return "invalid usage";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "internal error";
  }
}

const char *ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id, 0, sizeof *id);
  std::strcpy(id->internal, "zeroc emulated NCCL");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  if (std::strcmp(id.internal, "zeroc emulated NCCL") != 0 || nranks < 1 ||
      rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  int worldRank = -1, worldSize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (worldRank != rank || worldSize != nranks)
    return ncclInvalidUsage;
  *comm = new zc_emu_nccl{rank, nranks, false};
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                    ncclUniqueId id, int rank,
                                    ncclConfig_t *) {
  return ncclCommInitRank(comm, nranks, id, rank);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm)
    comm->aborted = true;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state) {
  if (!comm)
    return ncclInvalidArgument;
  *state = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = check(comm, type, op))
    return r;
  size_t bytes = count * typeBytes(type);
  if (send != recv && overlap(send, bytes, recv, bytes))
    return ncclInvalidUsage;
  zc_emu::enqueueDeviceOperation(
      stream, "ncclAllReduce", {send, recv}, [=] {
        std::vector<char> all = gatherAll(comm, send, bytes);
        sum(type, all, bytes, 0, count, recv);
      });
  return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvCount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = check(comm, type, op))
    return r;
  size_t size = typeBytes(type), bytes = recvCount * size;
  size_t sendBytes = bytes * comm->ranks;
  // In place: recv is send's own shard.
  if (overlap(send, sendBytes, recv, bytes) &&
      static_cast<const char *>(send) + comm->rank * bytes != recv)
    return ncclInvalidUsage;
  zc_emu::enqueueDeviceOperation(
      stream, "ncclReduceScatter", {send, recv}, [=] {
        std::vector<char> all = gatherAll(comm, send, sendBytes);
        sum(type, all, sendBytes, comm->rank * recvCount, recvCount, recv);
      });
  return ncclSuccess;
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendCount,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  if (ncclResult_t r = check(comm, type, ncclSum))
    return r;
  size_t bytes = sendCount * typeBytes(type);
  // In place: send is recv's own shard.
  if (overlap(send, bytes, recv, bytes * comm->ranks) &&
      static_cast<const char *>(recv) + comm->rank * bytes != send)
    return ncclInvalidUsage;
  zc_emu::enqueueDeviceOperation(
      stream, "ncclAllGather", {send, recv}, [=] {
        std::vector<char> all = gatherAll(comm, send, bytes);
        std::memmove(recv, all.data(), all.size());
      });
  return ncclSuccess;
}
