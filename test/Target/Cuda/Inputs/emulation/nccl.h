/*===- nccl.h - NCCL on the CPU runtime, for testing the generated CUDA ----===*
 *
 * Not NCCL: each collective is queued on its stream (cuda_runtime.h beside
 * this file) and, when that stream runs, is the CPU runtime's MPI
 * collective, started and waited for at once. The CPU runtime's
 * zrt_*_start and zrt_wait are renamed zrt_cpu_* in the archive the test
 * links (objcopy --redefine-sym), so that the CUDA runtime's own
 * (lib/Runtime/Cuda/Collectives.cu) are the program's. Buffers must alias
 * only in NCCL's in-place forms, as with the real NCCL.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_TEST_EMULATED_NCCL_H
#define ZEROC_TEST_EMULATED_NCCL_H

#include "cuda_runtime.h"
#include "zeroc/Runtime/zrt.h"

#include <stdint.h>

struct zc_emu_nccl {
  int rank, ranks;
};
typedef zc_emu_nccl *ncclComm_t;
typedef enum {
  ncclSuccess = 0,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5
} ncclResult_t;
typedef enum {
  ncclInt32 = 2,
  ncclInt64 = 4,
  ncclFloat32 = 7,
  ncclBfloat16 = 9
} ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;

extern "C" {
zrt_request *zrt_cpu_all_reduce_start(zrt_comm *comm, const void *send,
                                      void *recv, size_t count,
                                      zrt_dtype dtype, void *stream);
zrt_request *zrt_cpu_reduce_scatter_start(zrt_comm *comm, const void *send,
                                          void *recv, size_t recv_count,
                                          zrt_dtype dtype, void *stream);
zrt_request *zrt_cpu_all_gather_start(zrt_comm *comm, const void *send,
                                      void *recv, size_t send_count,
                                      zrt_dtype dtype, void *stream);
void zrt_cpu_wait(zrt_request *request);
}

inline zrt_dtype zc_emu_dtype(ncclDataType_t type) {
  switch (type) {
  case ncclInt32:
    return ZRT_I32;
  case ncclInt64:
    return ZRT_I64;
  case ncclBfloat16:
    return ZRT_BF16;
  case ncclFloat32:
    break;
  }
  return ZRT_F32;
}

/* Whether [a, a + aBytes) and [b, b + bBytes) overlap. */
inline bool zc_emu_overlap(const void *a, size_t aBytes, const void *b,
                           size_t bBytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

inline ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                  ncclDataType_t type, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = count * zrt_dtype_size(zc_emu_dtype(type));
  if (!comm || op != ncclSum)
    return ncclInvalidArgument;
  if (send != recv && zc_emu_overlap(send, bytes, recv, bytes))
    return ncclInvalidUsage;
  ++zc_emu_stats.nccl;
  zc_emu_enqueue(stream, [=] {
    zrt_cpu_wait(zrt_cpu_all_reduce_start(NULL, send, recv, count,
                                          zc_emu_dtype(type), NULL));
  });
  return ncclSuccess;
}
inline ncclResult_t ncclReduceScatter(const void *send, void *recv,
                                      size_t recvCount, ncclDataType_t type,
                                      ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
  size_t bytes = recvCount * zrt_dtype_size(zc_emu_dtype(type));
  if (!comm || op != ncclSum)
    return ncclInvalidArgument;
  if ((const char *)send + comm->rank * bytes != recv &&
      zc_emu_overlap(send, bytes * comm->ranks, recv, bytes))
    return ncclInvalidUsage;
  ++zc_emu_stats.nccl;
  zc_emu_enqueue(stream, [=] {
    zrt_cpu_wait(zrt_cpu_reduce_scatter_start(NULL, send, recv, recvCount,
                                              zc_emu_dtype(type), NULL));
  });
  return ncclSuccess;
}
inline ncclResult_t ncclAllGather(const void *send, void *recv,
                                  size_t sendCount, ncclDataType_t type,
                                  ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = sendCount * zrt_dtype_size(zc_emu_dtype(type));
  if (!comm)
    return ncclInvalidArgument;
  if ((const char *)recv + comm->rank * bytes != send &&
      zc_emu_overlap(send, bytes, recv, bytes * comm->ranks))
    return ncclInvalidUsage;
  ++zc_emu_stats.nccl;
  zc_emu_enqueue(stream, [=] {
    zrt_cpu_wait(zrt_cpu_all_gather_start(NULL, send, recv, sendCount,
                                          zc_emu_dtype(type), NULL));
  });
  return ncclSuccess;
}

inline const char *ncclGetErrorString(ncclResult_t result) {
  return result == ncclInvalidUsage ? "emulated: buffers overlap"
                                    : "emulated: invalid argument";
}
inline const char *ncclGetLastError(ncclComm_t) { return ""; }

#endif
