/*===- mpi.h - the CUDA runtime's MPI facade ------------------------------===*
 *
 * The CUDA runtime compiles the shared services (lib/Runtime/Common: Main,
 * Checkpoint, Data, Sample, Runtime, ...) with this directory first on the
 * include path, so that their `#include <mpi.h>` finds this file instead of
 * a real MPI: the executable links no MPI library and starts on a machine
 * that has none. Like LAMMPS's STUBS/mpi.h, it declares the small subset of
 * MPI that the services use; unlike it, it can also reach the real MPI:
 *
 *   - zeroc_mpi_facade_load() (called by Cuda/Comm.cu before MPI_Init_thread
 *     when the program's world size, or the launcher's, is above 1) opens
 *     the shim libzeroc_mpi.so (Cuda/MpiShim.cpp, built against the real
 *     MPI) with dlopen: $ZEROC_MPI_SHIM, else the name alone, found through
 *     the executable's RUNPATH (<build>/lib). Every call below is then
 *     forwarded to it.
 *   - Without it, the calls implement one rank: rank 0 of 1, reductions,
 *     gathers and broadcasts are copies, MPI_Abort exits.
 *
 * Only MPI_COMM_WORLD exists. The functions are zeroc_mpi_* (the MPI_*
 * names are macros), so no MPI symbol is defined in the executable.
 * MpiFacade.cpp implements them; zeroc_mpi_shim.h is the shim's ABI.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_MPI_FACADE_MPI_H
#define ZEROC_MPI_FACADE_MPI_H

#include <stddef.h>

#include "zeroc_mpi_shim.h"

#define ZEROC_MPI_FACADE 1

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;

#define MPI_SUCCESS 0
#define MPI_COMM_WORLD ((MPI_Comm)ZEROC_MPI_COMM_WORLD)

#define MPI_DATATYPE_NULL ((MPI_Datatype)ZEROC_MPI_DATATYPE_NULL)
#define MPI_BYTE ((MPI_Datatype)ZEROC_MPI_BYTE)
#define MPI_CHAR ((MPI_Datatype)ZEROC_MPI_CHAR)
#define MPI_INT ((MPI_Datatype)ZEROC_MPI_INT)
#define MPI_INT32_T ((MPI_Datatype)ZEROC_MPI_INT32_T)
#define MPI_INT64_T ((MPI_Datatype)ZEROC_MPI_INT64_T)
#define MPI_UINT64_T ((MPI_Datatype)ZEROC_MPI_UINT64_T)
#define MPI_FLOAT ((MPI_Datatype)ZEROC_MPI_FLOAT)
#define MPI_DOUBLE ((MPI_Datatype)ZEROC_MPI_DOUBLE)

#define MPI_OP_NULL ((MPI_Op)ZEROC_MPI_OP_NULL)
#define MPI_SUM ((MPI_Op)ZEROC_MPI_SUM)
#define MPI_MIN ((MPI_Op)ZEROC_MPI_MIN)
#define MPI_MAX ((MPI_Op)ZEROC_MPI_MAX)

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_IN_PLACE ((void *)ZEROC_MPI_IN_PLACE_ADDRESS)

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the real MPI through the shim; before MPI_Init_thread. Returns 0, or
 * non-zero with a message (dlerror's) in `error`. */
int zeroc_mpi_facade_load(char *error, size_t error_size);
/* 1 once the shim is loaded (MPI is real), else 0. */
int zeroc_mpi_facade_loaded(void);

int zeroc_mpi_Init_thread(int *argc, char ***argv, int required,
                          int *provided);
int zeroc_mpi_Initialized(int *flag);
int zeroc_mpi_Finalized(int *flag);
int zeroc_mpi_Finalize(void);
int zeroc_mpi_Abort(MPI_Comm comm, int code);
int zeroc_mpi_Comm_rank(MPI_Comm comm, int *rank);
int zeroc_mpi_Comm_size(MPI_Comm comm, int *size);
int zeroc_mpi_Allreduce(const void *send, void *recv, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int zeroc_mpi_Reduce(const void *send, void *recv, int count,
                     MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm);
int zeroc_mpi_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm);
int zeroc_mpi_Gather(const void *send, int send_count, MPI_Datatype send_type,
                     void *recv, int recv_count, MPI_Datatype recv_type,
                     int root, MPI_Comm comm);
int zeroc_mpi_Type_contiguous(int count, MPI_Datatype old_type,
                              MPI_Datatype *new_type);
int zeroc_mpi_Type_commit(MPI_Datatype *type);
int zeroc_mpi_Type_free(MPI_Datatype *type);
/* Seconds on a monotonic clock (the process's own, also with the shim). */
double zeroc_mpi_Wtime(void);

#ifdef __cplusplus
}
#endif

#define MPI_Init_thread zeroc_mpi_Init_thread
#define MPI_Initialized zeroc_mpi_Initialized
#define MPI_Finalized zeroc_mpi_Finalized
#define MPI_Finalize zeroc_mpi_Finalize
#define MPI_Abort zeroc_mpi_Abort
#define MPI_Comm_rank zeroc_mpi_Comm_rank
#define MPI_Comm_size zeroc_mpi_Comm_size
#define MPI_Allreduce zeroc_mpi_Allreduce
#define MPI_Reduce zeroc_mpi_Reduce
#define MPI_Bcast zeroc_mpi_Bcast
#define MPI_Gather zeroc_mpi_Gather
#define MPI_Type_contiguous zeroc_mpi_Type_contiguous
#define MPI_Type_commit zeroc_mpi_Type_commit
#define MPI_Type_free zeroc_mpi_Type_free
#define MPI_Wtime zeroc_mpi_Wtime

#endif /* ZEROC_MPI_FACADE_MPI_H */
