/*===- zeroc_mpi_shim.h - the ABI between the MPI facade and its shim -----===*
 *
 * The CUDA runtime never links MPI. Its services see the facade's mpi.h
 * (beside this file); when a program runs on more than one rank, the facade
 * loads libzeroc_mpi.so (lib/Runtime/Cuda/MpiShim.cpp, compiled against the
 * real MPI) with dlopen and forwards every call to the functions below.
 *
 * Plain C, no MPI types: communicators are the world only, datatypes and
 * operations are the integer codes below (derived datatypes get codes from
 * ZEROC_MPI_FIRST_DERIVED up, handed out by the shim), MPI_IN_PLACE is the
 * address ZEROC_MPI_IN_PLACE_ADDRESS, thread levels are 0..3 (single,
 * funneled, serialized, multiple). Every function returns an MPI error code
 * (MPI_SUCCESS = 0); the real MPI's default handler aborts on errors anyway.
 *
 * Bump ZEROC_MPI_SHIM_ABI whenever anything here changes: the facade
 * refuses a shim of another version.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_MPI_SHIM_H
#define ZEROC_MPI_SHIM_H

#define ZEROC_MPI_SHIM_ABI 1

/* The only communicator. */
#define ZEROC_MPI_COMM_WORLD 1

/* Datatypes. */
#define ZEROC_MPI_DATATYPE_NULL 0
#define ZEROC_MPI_BYTE 1
#define ZEROC_MPI_CHAR 2
#define ZEROC_MPI_INT 3
#define ZEROC_MPI_INT32_T 4
#define ZEROC_MPI_INT64_T 5
#define ZEROC_MPI_UINT64_T 6
#define ZEROC_MPI_FLOAT 7
#define ZEROC_MPI_DOUBLE 8
#define ZEROC_MPI_FIRST_DERIVED 64

/* Reduction operations. */
#define ZEROC_MPI_OP_NULL 0
#define ZEROC_MPI_SUM 1
#define ZEROC_MPI_MIN 2
#define ZEROC_MPI_MAX 3

/* MPI_IN_PLACE as the facade passes it. */
#define ZEROC_MPI_IN_PLACE_ADDRESS 1

/* The shim's functions, each exported as zeroc_mpi_shim_NAME:
 * X(return type, NAME, parameter list). */
#define ZEROC_MPI_SHIM_FUNCTIONS(X)                                            \
  X(int, abi_version, (void))                                                  \
  X(int, init_thread, (int *argc, char ***argv, int required, int *provided))  \
  X(int, initialized, (int *flag))                                             \
  X(int, finalized, (int *flag))                                               \
  X(int, finalize, (void))                                                     \
  X(int, abort, (int code))                                                    \
  X(int, comm_rank, (int *rank))                                               \
  X(int, comm_size, (int *size))                                               \
  X(int, allreduce,                                                            \
    (const void *send, void *recv, int count, int datatype, int op))           \
  X(int, reduce,                                                               \
    (const void *send, void *recv, int count, int datatype, int op, int root)) \
  X(int, bcast, (void *buffer, int count, int datatype, int root))             \
  X(int, gather,                                                               \
    (const void *send, int send_count, int send_type, void *recv,              \
     int recv_count, int recv_type, int root))                                 \
  X(int, type_contiguous, (int count, int old_type, int *new_type))            \
  X(int, type_commit, (int *type))                                             \
  X(int, type_free, (int *type))

#endif /* ZEROC_MPI_SHIM_H */
