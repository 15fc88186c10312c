/*===- nccl.h - NCCL on the CPU runtime, for testing the generated CUDA ----===*
 *
 * Not NCCL: each collective is the CPU runtime's MPI collective, started and
 * waited for at once (see cuda_runtime.h beside this file).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_TEST_EMULATED_NCCL_H
#define ZEROC_TEST_EMULATED_NCCL_H

#include "zeroc/Runtime/zrt.h"

typedef zrt_comm *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclInvalidArgument = 4 } ncclResult_t;
typedef enum { ncclFloat32 = 7, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;

static inline zrt_dtype zc_emu_dtype(ncclDataType_t type) {
  return type == ncclBfloat16 ? ZRT_BF16 : ZRT_F32;
}
static inline ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                         ncclDataType_t type, ncclRedOp_t op,
                                         ncclComm_t comm, cudaStream_t) {
  if (op != ncclSum)
    return ncclInvalidArgument;
  zrt_wait(zrt_all_reduce_start(comm, send, recv, count, zc_emu_dtype(type), NULL));
  return ncclSuccess;
}
static inline ncclResult_t ncclReduceScatter(const void *send, void *recv,
                                             size_t recvCount, ncclDataType_t type,
                                             ncclRedOp_t op, ncclComm_t comm,
                                             cudaStream_t) {
  if (op != ncclSum)
    return ncclInvalidArgument;
  zrt_wait(zrt_reduce_scatter_start(comm, send, recv, recvCount, zc_emu_dtype(type),
                                    NULL));
  return ncclSuccess;
}
static inline ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendCount,
                                         ncclDataType_t type, ncclComm_t comm,
                                         cudaStream_t) {
  zrt_wait(zrt_all_gather_start(comm, send, recv, sendCount, zc_emu_dtype(type), NULL));
  return ncclSuccess;
}

/* The CUDA runtime's NCCL hooks: the CPU runtime counts the bytes itself. */
extern "C" void *zrt_nccl_comm(zrt_comm *comm) { return comm; }
extern "C" void *zrt_comm_stream(void) { return NULL; }
extern "C" void zrt_check_nccl(int result, const char *call) {
  if (result != ncclSuccess)
    zrt_fail("%s: emulated NCCL error %d", call, result);
}
extern "C" void zrt_count_collective(int, int64_t, zrt_dtype) {}

#endif
