/*===- nccl.h - NCCL on the CPU, for the emulated CUDA runtime -------------===*
 *
 * Not NCCL: the part of NCCL's API that lib/Runtime/Cuda uses (Comm.cu,
 * Collectives.cu, Timeout.cu), for the whole CUDA runtime on the CPU
 * emulation of CUDA (docs/cuda.md). A collective is queued on its stream
 * (cuda_runtime.h beside this file) and, when that stream runs, is an MPI
 * exchange through the runtime's own MPI facade (MpiFacade/mpi.h, the
 * libzeroc_mpi.so shim of the real build): every rank's buffer is
 * gathered and broadcast, and each rank adds the contributions in rank
 * order (in f32, bf16 rounded after each addition, as NCCL's ring does on
 * the wire). Buffers must alias only in NCCL's in-place forms; device
 * pointers only (Nccl.cpp).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_CUDA_EMULATION_NCCL_H
#define ZEROC_CUDA_EMULATION_NCCL_H

#include "cuda_runtime.h"

#include <cstddef>

struct zc_emu_nccl;
typedef zc_emu_nccl *ncclComm_t;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7
} ncclResult_t;

typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
} ncclDataType_t;

typedef enum { ncclSum = 0 } ncclRedOp_t;

typedef struct {
  char internal[128];
} ncclUniqueId;

typedef struct {
  int blocking;
} ncclConfig_t;
#define NCCL_CONFIG_INITIALIZER {1}

const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                    ncclUniqueId id, int rank,
                                    ncclConfig_t *config);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state);
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvCount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendCount,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream);

#endif
