//===- MpiFacade.cpp - MPI for the CUDA runtime, loaded only when needed --===//
//
// Implements MpiFacade/mpi.h: one rank by itself, or every call forwarded to
// libzeroc_mpi.so (MpiShim.cpp) once zeroc_mpi_facade_load has opened it.
// Plain C++ (no CUDA): compiled into libzeroc_rt_cuda.a with the services.
//
// One rank: MPI_Init_thread and MPI_Finalize set flags; rank 0 of 1; a
// reduction, gather or broadcast copies the send buffer to the receive
// buffer (nothing to do in place); contiguous datatypes record their size;
// MPI_Abort flushes and exits with the code.
//
//===----------------------------------------------------------------------===//

#include "MpiFacade/mpi.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace {

/// The shim's functions, once loaded.
struct Shim {
#define ZEROC_MPI_SHIM_POINTER(ret, name, params) ret(*name) params = nullptr;
  ZEROC_MPI_SHIM_FUNCTIONS(ZEROC_MPI_SHIM_POINTER)
#undef ZEROC_MPI_SHIM_POINTER
};

Shim shim;
bool loaded = false;

// One rank's state.
bool initialized = false, finalized = false;
std::mutex typesMutex;
/// Byte sizes of the derived datatypes, by code - ZEROC_MPI_FIRST_DERIVED;
/// kFreed once freed.
std::vector<size_t> derivedSizes;
constexpr size_t kFreed = ~size_t(0);

[[noreturn]] void fatal(const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fflush(stdout);
  std::fprintf(stderr, "zeroc: error: MPI facade: %s\n", message);
  std::fflush(nullptr);
  std::_Exit(1);
}

void checkWorld(const char *function, MPI_Comm comm) {
  if (comm != MPI_COMM_WORLD)
    fatal("%s: only MPI_COMM_WORLD exists (got communicator %d)", function,
          comm);
}

size_t typeSize(const char *function, MPI_Datatype type) {
  switch (type) {
  case ZEROC_MPI_BYTE:
  case ZEROC_MPI_CHAR:
    return 1;
  case ZEROC_MPI_INT:
  case ZEROC_MPI_INT32_T:
  case ZEROC_MPI_FLOAT:
    return 4;
  case ZEROC_MPI_INT64_T:
  case ZEROC_MPI_UINT64_T:
  case ZEROC_MPI_DOUBLE:
    return 8;
  default:
    break;
  }
  std::lock_guard<std::mutex> lock(typesMutex);
  size_t index = static_cast<size_t>(type - ZEROC_MPI_FIRST_DERIVED);
  if (type >= ZEROC_MPI_FIRST_DERIVED && index < derivedSizes.size() &&
      derivedSizes[index] != kFreed)
    return derivedSizes[index];
  fatal("%s: unknown datatype %d", function, type);
}

/// recv = send (count elements of `type`) unless in place.
void copyIn(const char *function, const void *send, void *recv, int count,
            MPI_Datatype type) {
  if (count < 0)
    fatal("%s: negative count %d", function, count);
  size_t bytes = static_cast<size_t>(count) * typeSize(function, type);
  if (send == MPI_IN_PLACE || send == recv || bytes == 0)
    return;
  std::memmove(recv, send, bytes);
}

void checkRoot(const char *function, int root) {
  if (root != 0)
    fatal("%s: root %d on a world of one rank", function, root);
}

} // namespace

extern "C" {

int zeroc_mpi_facade_load(char *error, size_t error_size) {
  auto fail = [&](const std::string &message) {
    if (error && error_size)
      std::snprintf(error, error_size, "%s", message.c_str());
    return 1;
  };
  if (loaded)
    return 0;
  if (initialized)
    return fail("MPI was already started without the shim");
  const char *override = std::getenv("ZEROC_MPI_SHIM");
  std::string path = override && *override ? override : "libzeroc_mpi.so";
  // RTLD_GLOBAL: MPI libraries load plugins that look for their symbols.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *why = dlerror();
    return fail("cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  Shim found;
#define ZEROC_MPI_SHIM_LOAD(ret, name, params)                                 \
  found.name =                                                                 \
      reinterpret_cast<ret(*) params>(dlsym(handle, "zeroc_mpi_shim_" #name)); \
  if (!found.name)                                                             \
    return fail(path + " does not export zeroc_mpi_shim_" #name                \
                       " (not a zeroc MPI shim, or of another version)");
  ZEROC_MPI_SHIM_FUNCTIONS(ZEROC_MPI_SHIM_LOAD)
#undef ZEROC_MPI_SHIM_LOAD
  int version = found.abi_version();
  if (version != ZEROC_MPI_SHIM_ABI)
    return fail(path + " implements the shim ABI " + std::to_string(version) +
                ", this executable needs " +
                std::to_string(ZEROC_MPI_SHIM_ABI) +
                " (rebuild it with the runtime)");
  shim = found;
  loaded = true;
  return 0;
}

int zeroc_mpi_facade_loaded(void) { return loaded ? 1 : 0; }

int zeroc_mpi_Init_thread(int *argc, char ***argv, int required,
                          int *provided) {
  if (loaded)
    return shim.init_thread(argc, argv, required, provided);
  if (initialized)
    fatal("MPI_Init_thread: called twice");
  initialized = true;
  if (provided)
    *provided = required;
  return MPI_SUCCESS;
}

int zeroc_mpi_Initialized(int *flag) {
  if (loaded)
    return shim.initialized(flag);
  *flag = initialized ? 1 : 0;
  return MPI_SUCCESS;
}

int zeroc_mpi_Finalized(int *flag) {
  if (loaded)
    return shim.finalized(flag);
  *flag = finalized ? 1 : 0;
  return MPI_SUCCESS;
}

int zeroc_mpi_Finalize(void) {
  if (loaded)
    return shim.finalize();
  finalized = true;
  return MPI_SUCCESS;
}

int zeroc_mpi_Abort(MPI_Comm comm, int code) {
  checkWorld("MPI_Abort", comm);
  std::fflush(nullptr);
  if (loaded) {
    int up = 0, down = 0;
    shim.initialized(&up);
    shim.finalized(&down);
    if (up && !down)
      shim.abort(code);
  }
  std::_Exit(code);
}

int zeroc_mpi_Comm_rank(MPI_Comm comm, int *rank) {
  checkWorld("MPI_Comm_rank", comm);
  if (loaded)
    return shim.comm_rank(rank);
  *rank = 0;
  return MPI_SUCCESS;
}

int zeroc_mpi_Comm_size(MPI_Comm comm, int *size) {
  checkWorld("MPI_Comm_size", comm);
  if (loaded)
    return shim.comm_size(size);
  *size = 1;
  return MPI_SUCCESS;
}

int zeroc_mpi_Allreduce(const void *send, void *recv, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  checkWorld("MPI_Allreduce", comm);
  if (loaded)
    return shim.allreduce(send, recv, count, datatype, op);
  copyIn("MPI_Allreduce", send, recv, count, datatype);
  return MPI_SUCCESS;
}

int zeroc_mpi_Reduce(const void *send, void *recv, int count,
                     MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm) {
  checkWorld("MPI_Reduce", comm);
  if (loaded)
    return shim.reduce(send, recv, count, datatype, op, root);
  checkRoot("MPI_Reduce", root);
  copyIn("MPI_Reduce", send, recv, count, datatype);
  return MPI_SUCCESS;
}

int zeroc_mpi_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm) {
  checkWorld("MPI_Bcast", comm);
  if (loaded)
    return shim.bcast(buffer, count, datatype, root);
  checkRoot("MPI_Bcast", root);
  return MPI_SUCCESS;
}

int zeroc_mpi_Gather(const void *send, int send_count, MPI_Datatype send_type,
                     void *recv, int recv_count, MPI_Datatype recv_type,
                     int root, MPI_Comm comm) {
  checkWorld("MPI_Gather", comm);
  if (loaded)
    return shim.gather(send, send_count, send_type, recv, recv_count, recv_type,
                       root);
  checkRoot("MPI_Gather", root);
  if (send != MPI_IN_PLACE &&
      static_cast<size_t>(send_count) * typeSize("MPI_Gather", send_type) !=
          static_cast<size_t>(recv_count) * typeSize("MPI_Gather", recv_type))
    fatal("MPI_Gather: %d elements of datatype %d sent, %d of %d received",
          send_count, send_type, recv_count, recv_type);
  copyIn("MPI_Gather", send, recv, send_count, send_type);
  return MPI_SUCCESS;
}

int zeroc_mpi_Type_contiguous(int count, MPI_Datatype old_type,
                              MPI_Datatype *new_type) {
  if (loaded)
    return shim.type_contiguous(count, old_type, new_type);
  if (count < 0)
    fatal("MPI_Type_contiguous: negative count %d", count);
  size_t size =
      static_cast<size_t>(count) * typeSize("MPI_Type_contiguous", old_type);
  std::lock_guard<std::mutex> lock(typesMutex);
  derivedSizes.push_back(size);
  *new_type = static_cast<MPI_Datatype>(ZEROC_MPI_FIRST_DERIVED +
                                        derivedSizes.size() - 1);
  return MPI_SUCCESS;
}

int zeroc_mpi_Type_commit(MPI_Datatype *type) {
  if (loaded)
    return shim.type_commit(type);
  typeSize("MPI_Type_commit", *type); // checks that it exists
  return MPI_SUCCESS;
}

int zeroc_mpi_Type_free(MPI_Datatype *type) {
  if (loaded)
    return shim.type_free(type);
  typeSize("MPI_Type_free", *type);
  if (*type >= ZEROC_MPI_FIRST_DERIVED) {
    std::lock_guard<std::mutex> lock(typesMutex);
    derivedSizes[static_cast<size_t>(*type - ZEROC_MPI_FIRST_DERIVED)] = kFreed;
  }
  *type = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

double zeroc_mpi_Wtime(void) {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // extern "C"
