//===- MpiShim.cpp - libzeroc_mpi.so: the real MPI behind the facade ------===//
//
// Built against the real MPI (find_package(MPI)) into libzeroc_mpi.so, which
// the CUDA runtime's MPI facade (MpiFacade.cpp) opens with dlopen when a
// program runs on more than one rank. Exports only the plain-C functions of
// MpiFacade/zeroc_mpi_shim.h: integer datatype and operation codes, the
// world communicator only. Derived datatypes live here, handed to the
// facade as codes from ZEROC_MPI_FIRST_DERIVED up.
//
//===----------------------------------------------------------------------===//

#include "MpiFacade/zeroc_mpi_shim.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#define ZEROC_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

// The ABI's prototypes: a definition below that differs is a compile error.
#define ZEROC_MPI_SHIM_DECLARE(ret, name, params)                              \
  ZEROC_SHIM_EXPORT ret zeroc_mpi_shim_##name params;
ZEROC_MPI_SHIM_FUNCTIONS(ZEROC_MPI_SHIM_DECLARE)
#undef ZEROC_MPI_SHIM_DECLARE

namespace {

std::mutex typesMutex;
/// The derived datatypes, by code - ZEROC_MPI_FIRST_DERIVED
/// (MPI_DATATYPE_NULL once freed).
std::vector<MPI_Datatype> derived;

[[noreturn]] void fatal(const char *function, const char *what, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "zeroc: error: libzeroc_mpi: %s: %s %d\n", function,
               what, code);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

MPI_Datatype datatype(const char *function, int code) {
  switch (code) {
  case ZEROC_MPI_BYTE:
    return MPI_BYTE;
  case ZEROC_MPI_CHAR:
    return MPI_CHAR;
  case ZEROC_MPI_INT:
    return MPI_INT;
  case ZEROC_MPI_INT32_T:
    return MPI_INT32_T;
  case ZEROC_MPI_INT64_T:
    return MPI_INT64_T;
  case ZEROC_MPI_UINT64_T:
    return MPI_UINT64_T;
  case ZEROC_MPI_FLOAT:
    return MPI_FLOAT;
  case ZEROC_MPI_DOUBLE:
    return MPI_DOUBLE;
  default:
    break;
  }
  std::lock_guard<std::mutex> lock(typesMutex);
  size_t index = static_cast<size_t>(code - ZEROC_MPI_FIRST_DERIVED);
  if (code >= ZEROC_MPI_FIRST_DERIVED && index < derived.size() &&
      derived[index] != MPI_DATATYPE_NULL)
    return derived[index];
  fatal(function, "unknown datatype", code);
}

MPI_Op operation(const char *function, int code) {
  switch (code) {
  case ZEROC_MPI_SUM:
    return MPI_SUM;
  case ZEROC_MPI_MIN:
    return MPI_MIN;
  case ZEROC_MPI_MAX:
    return MPI_MAX;
  default:
    fatal(function, "unknown operation", code);
  }
}

int threadLevel(int code) {
  switch (code) {
  case 0:
    return MPI_THREAD_SINGLE;
  case 1:
    return MPI_THREAD_FUNNELED;
  case 2:
    return MPI_THREAD_SERIALIZED;
  default:
    return MPI_THREAD_MULTIPLE;
  }
}

int threadCode(int level) {
  if (level == MPI_THREAD_SINGLE)
    return 0;
  if (level == MPI_THREAD_FUNNELED)
    return 1;
  if (level == MPI_THREAD_SERIALIZED)
    return 2;
  return 3;
}

/// The facade's MPI_IN_PLACE as the real one.
const void *sendBuffer(const void *send) {
  return send == reinterpret_cast<const void *>(ZEROC_MPI_IN_PLACE_ADDRESS)
             ? MPI_IN_PLACE
             : send;
}

} // namespace

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_abi_version(void) {
  return ZEROC_MPI_SHIM_ABI;
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_init_thread(int *argc, char ***argv,
                                                 int required, int *provided) {
  int level = 0;
  int status = MPI_Init_thread(argc, argv, threadLevel(required), &level);
  if (provided)
    *provided = threadCode(level);
  return status;
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_initialized(int *flag) {
  return MPI_Initialized(flag);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_finalized(int *flag) {
  return MPI_Finalized(flag);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_finalize(void) { return MPI_Finalize(); }

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_abort(int code) {
  return MPI_Abort(MPI_COMM_WORLD, code);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_comm_rank(int *rank) {
  return MPI_Comm_rank(MPI_COMM_WORLD, rank);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_comm_size(int *size) {
  return MPI_Comm_size(MPI_COMM_WORLD, size);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_allreduce(const void *send, void *recv,
                                               int count, int type, int op) {
  return MPI_Allreduce(sendBuffer(send), recv, count,
                       datatype("MPI_Allreduce", type),
                       operation("MPI_Allreduce", op), MPI_COMM_WORLD);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_reduce(const void *send, void *recv,
                                            int count, int type, int op,
                                            int root) {
  return MPI_Reduce(sendBuffer(send), recv, count, datatype("MPI_Reduce", type),
                    operation("MPI_Reduce", op), root, MPI_COMM_WORLD);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_bcast(void *buffer, int count, int type,
                                           int root) {
  return MPI_Bcast(buffer, count, datatype("MPI_Bcast", type), root,
                   MPI_COMM_WORLD);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_gather(const void *send, int send_count,
                                            int send_type, void *recv,
                                            int recv_count, int recv_type,
                                            int root) {
  return MPI_Gather(sendBuffer(send), send_count,
                    datatype("MPI_Gather", send_type), recv, recv_count,
                    datatype("MPI_Gather", recv_type), root, MPI_COMM_WORLD);
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_type_contiguous(int count, int old_type,
                                                     int *new_type) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int status = MPI_Type_contiguous(
      count, datatype("MPI_Type_contiguous", old_type), &type);
  if (status != MPI_SUCCESS)
    return status;
  std::lock_guard<std::mutex> lock(typesMutex);
  derived.push_back(type);
  *new_type = ZEROC_MPI_FIRST_DERIVED + static_cast<int>(derived.size()) - 1;
  return MPI_SUCCESS;
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_type_commit(int *type) {
  MPI_Datatype real = datatype("MPI_Type_commit", *type);
  int status = MPI_Type_commit(&real);
  if (*type >= ZEROC_MPI_FIRST_DERIVED) {
    std::lock_guard<std::mutex> lock(typesMutex);
    derived[static_cast<size_t>(*type - ZEROC_MPI_FIRST_DERIVED)] = real;
  }
  return status;
}

ZEROC_SHIM_EXPORT int zeroc_mpi_shim_type_free(int *type) {
  MPI_Datatype real = datatype("MPI_Type_free", *type);
  int status = MPI_Type_free(&real);
  if (*type >= ZEROC_MPI_FIRST_DERIVED) {
    std::lock_guard<std::mutex> lock(typesMutex);
    derived[static_cast<size_t>(*type - ZEROC_MPI_FIRST_DERIVED)] =
        MPI_DATATYPE_NULL;
  }
  *type = ZEROC_MPI_DATATYPE_NULL;
  return status;
}
