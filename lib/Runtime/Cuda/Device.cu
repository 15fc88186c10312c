//===- Device.cu - the GPU of this process, and the device hooks ----------===//
//
// One process per GPU: the device is the launcher's local rank
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, LOCAL_RANK;
// else 0), or the one device CUDA_VISIBLE_DEVICES leaves a process that a
// launcher bound to a single GPU. Opening it creates the compute stream (every
// kernel of a step), the communication stream (Comm.cu's collectives, high
// priority), the cuBLASLt handle and its 32 MiB workspace, and raises the
// release threshold of the device's default memory pool to UINT64_MAX, so that
// zrt_alloc's cudaMallocAsync (Memory.cu) keeps what it once reserved: after
// the first step every allocation is a reuse.
//
// Both streams are non-blocking: nothing here or in the kernels uses the
// legacy default stream, so every copy names its stream.
//
// The device hooks of Services.h: ids go through pinned host buffers to
// device buffers (one upload per entry point, ordered on the compute
// stream); states are initialized in host memory and moved once to
// zrt_alloc'ed device memory (statesToDevice), whose addresses then stay
// fixed for the run; a checkpoint copies them out piece by piece
// (stateToHost), through a bounded host buffer.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Device.h"

#include "Services.h"
#include "StateLayout.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace zeroc::rt::cuda {

namespace {

struct Context {
  bool open = false;
  int device = -1;
  cudaStream_t compute = nullptr;
  cudaStream_t comm = nullptr;
  cublasLtHandle_t blas = nullptr;
  void *workspace = nullptr;
  int multiprocessors = 0;
  cudaMemPool_t pool = nullptr;
  bool syncLaunches = false; // ZEROC_CUDA_SYNC=1
};

Context context;

constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

const Context &ctx() {
  if (!context.open)
    ensureDevice();
  return context;
}

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

} // namespace

std::string cudaFailure(cudaError_t status, const std::string &what) {
  return what + ": " + cudaGetErrorString(status) + " (" +
         cudaGetErrorName(status) + ")";
}

std::string openDevice() {
  if (context.open)
    return "";
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    std::string message = "no CUDA device is visible to this process";
    if (status != cudaSuccess)
      message +=
          " (cudaGetDeviceCount: " + std::string(cudaGetErrorString(status)) +
          ")";
    if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"))
      message += "; CUDA_VISIBLE_DEVICES='" + std::string(visible) + "'";
    return message + "; a zeroc CUDA executable needs one GPU per rank";
  }
  int local = launcherLocalRank();
  // A launcher that binds one GPU to each process (Slurm's --gpus-per-task,
  // a wrapper script) leaves it the only visible device: use it. (Two ranks
  // given the same GPU that way fail in ncclCommInitRank, naming it.)
  std::string visible = environment("CUDA_VISIBLE_DEVICES");
  int device = local;
  if (local >= count && count == 1 && !visible.empty() &&
      visible.find(',') == std::string::npos)
    device = 0;
  if (device >= count) {
    int localRanks = launcherLocalSize();
    std::string message =
        "this node has " + std::to_string(count) + " visible CUDA device(s)";
    if (localRanks > 0)
      message += " but runs " + std::to_string(localRanks) + " ranks";
    return message + "; local rank " + std::to_string(local) +
           " has no GPU of its own: start at most " + std::to_string(count) +
           " rank(s) per node, one per GPU";
  }

  Context fresh;
  fresh.device = device;
  auto failed = [&](cudaError_t error, const char *what) {
    return cudaFailure(error, "GPU " + std::to_string(device) + ": " + what);
  };
  if ((status = cudaSetDevice(device)) != cudaSuccess)
    return failed(status, "cudaSetDevice");
  int pools = 0;
  if ((status = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported,
                                       device)) != cudaSuccess)
    return failed(status, "cudaDeviceGetAttribute");
  if (!pools)
    return "GPU " + std::to_string(device) +
           " does not support stream-ordered allocation (cudaMallocAsync), "
           "which the runtime's allocator needs";
  if ((status = cudaDeviceGetAttribute(&fresh.multiprocessors,
                                       cudaDevAttrMultiProcessorCount,
                                       device)) != cudaSuccess)
    return failed(status, "cudaDeviceGetAttribute");
  if ((status = cudaStreamCreateWithFlags(
           &fresh.compute, cudaStreamNonBlocking)) != cudaSuccess)
    return failed(status, "cudaStreamCreateWithFlags");
  // The collectives' stream gets the highest priority, so that their kernels
  // start as soon as their inputs are ready, between the step's kernels.
  int leastPriority = 0, greatestPriority = 0;
  if ((status = cudaDeviceGetStreamPriorityRange(
           &leastPriority, &greatestPriority)) != cudaSuccess)
    return failed(status, "cudaDeviceGetStreamPriorityRange");
  if ((status = cudaStreamCreateWithPriority(&fresh.comm, cudaStreamNonBlocking,
                                             greatestPriority)) != cudaSuccess)
    return failed(status, "cudaStreamCreateWithPriority");
  if ((status = cudaDeviceGetDefaultMemPool(&fresh.pool, device)) !=
      cudaSuccess)
    return failed(status, "cudaDeviceGetDefaultMemPool");
  uint64_t threshold = UINT64_MAX;
  if ((status =
           cudaMemPoolSetAttribute(fresh.pool, cudaMemPoolAttrReleaseThreshold,
                                   &threshold)) != cudaSuccess)
    return failed(status, "cudaMemPoolSetAttribute(release threshold)");
  cublasStatus_t blas = cublasLtCreate(&fresh.blas);
  if (blas != CUBLAS_STATUS_SUCCESS)
    return "GPU " + std::to_string(device) +
           ": cublasLtCreate: " + cublasLtGetStatusString(blas) + " (" +
           cublasLtGetStatusName(blas) + ")";
  if ((status = cudaMalloc(&fresh.workspace, kBlasWorkspaceBytes)) !=
      cudaSuccess)
    return failed(status, "cudaMalloc (the cuBLASLt workspace)");
  fresh.syncLaunches = environment("ZEROC_CUDA_SYNC") == "1";
  fresh.open = true;
  context = fresh;
  return "";
}

void ensureDevice() {
  if (context.open)
    return;
  std::string error = openDevice();
  if (!error.empty())
    zrt_fail("%s", error.c_str());
}

int deviceOrdinal() { return ctx().device; }

cudaStream_t commStream() { return ctx().comm; }

cudaMemPool_t memoryPool() { return ctx().pool; }

//===----------------------------------------------------------------------===//
// Cuda.h
//===----------------------------------------------------------------------===//

cudaStream_t computeStream() { return ctx().compute; }

cublasLtHandle_t blasLt() { return ctx().blas; }

void *blasWorkspace() { return ctx().workspace; }

size_t blasWorkspaceBytes() { return kBlasWorkspaceBytes; }

int multiprocessors() { return ctx().multiprocessors; }

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    zrt_fail("%s", cudaFailure(status, what).c_str());
}

void checkBlas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    zrt_fail("%s: cuBLASLt: %s (%s)", what, cublasLtGetStatusString(status),
             cublasLtGetStatusName(status));
}

void checkLaunch(const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    zrt_fail("%s", cudaFailure(status, std::string("kernel ") + kernel +
                                           ": the launch failed")
                       .c_str());
  if (ctx().syncLaunches) {
    status = cudaStreamSynchronize(context.compute);
    if (status != cudaSuccess)
      zrt_fail("%s", cudaFailure(status, std::string("kernel ") + kernel +
                                             " failed (ZEROC_CUDA_SYNC=1)")
                         .c_str());
  }
}

} // namespace zeroc::rt::cuda

using namespace zeroc::rt;
using namespace zeroc::rt::cuda;

extern "C" void *zrt_compute_stream(void) { return computeStream(); }

extern "C" void zrt_check_launch(const char *kernel) {
  checkLaunch(kernel ? kernel : "(unnamed)");
}

//===----------------------------------------------------------------------===//
// The device hooks of Services.h
//===----------------------------------------------------------------------===//

namespace zeroc::rt {

void deviceInitialize(const zrt_program &) {
  agree(openDevice());
  ncclInitialize();
}

IdBuffer::IdBuffer(size_t size) : bytes(size) {
  ensureDevice();
  size_t allocated = bytes ? bytes : 1;
  ZRT_CUDA(cudaMallocHost(&hostData, allocated));
  ZRT_CUDA(cudaMalloc(&deviceData, allocated));
  cudaEvent_t event = nullptr;
  ZRT_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  uploaded = event;
}

IdBuffer::~IdBuffer() {
  // Errors here are ignored: the run is over, or failing already.
  auto event = static_cast<cudaEvent_t>(uploaded);
  if (event) {
    (void)cudaEventSynchronize(event);
    (void)cudaEventDestroy(event);
  }
  if (deviceData)
    (void)cudaFree(deviceData);
  if (hostData)
    (void)cudaFreeHost(hostData);
}

void *IdBuffer::host() {
  // A never-recorded event is complete.
  ZRT_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(uploaded)));
  return hostData;
}

const void *IdBuffer::upload() {
  cudaStream_t stream = computeStream();
  if (bytes)
    ZRT_CUDA(cudaMemcpyAsync(deviceData, hostData, bytes,
                             cudaMemcpyHostToDevice, stream));
  ZRT_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(uploaded), stream));
  return deviceData;
}

namespace {

/// What the runtime allocates for the states: each flat buffer, then each
/// state with its own storage (members of a buffer live in it).
struct Storage {
  void **data;
  size_t bytes;
  zrt_mem_category category;
  const char *name;
};

std::vector<Storage> storages(const zrt_program &program) {
  std::vector<Storage> all;
  for (int b = 0; b < program.num_buffers; ++b) {
    zrt_buffer &buffer = program.buffers[b];
    all.push_back({&buffer.data, bufferBytes(buffer), buffer.category,
                   buffer.name ? buffer.name : "(buffer)"});
  }
  for (int i = 0; i < program.num_states; ++i) {
    zrt_state &state = program.states[i];
    if (!isMember(state))
      all.push_back(
          {&state.data, stateBytes(state), stateCategory(state), state.name});
  }
  return all;
}

/// Each storage's device memory (zrt_alloc, in its category), in the order
/// of storages(); allocated by the first statesToDevice, kept until
/// freeStates.
std::vector<void *> deviceStorage;
/// Whether the storages point at deviceStorage (else at host memory).
bool statesOnDevice = false;

void *hostStorage(const Storage &storage) {
  size_t rounded = (storage.bytes + 63) / 64 * 64;
  void *data = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!data)
    zrt_fail("out of host memory for state '%s' (%s)", storage.name,
             humanBytes(static_cast<int64_t>(storage.bytes)).c_str());
  return data;
}

} // namespace

void allocateStates(const zrt_program &program) {
  std::vector<Storage> all = storages(program);
  deviceStorage.assign(all.size(), nullptr);
  statesOnDevice = false;
  for (Storage &storage : all) {
    *storage.data = hostStorage(storage);
    std::memset(*storage.data, 0, storage.bytes);
  }
  pointMembers(program, commRank(), commSize());
}

void statesToDevice(const zrt_program &program) {
  if (statesOnDevice)
    return;
  cudaStream_t stream = computeStream();
  std::vector<Storage> all = storages(program);
  for (size_t i = 0; i < all.size(); ++i) {
    void *&device = deviceStorage[i];
    if (!device)
      device = zrt_alloc(all[i].bytes, all[i].category);
    if (all[i].bytes)
      ZRT_CUDA(cudaMemcpyAsync(device, *all[i].data, all[i].bytes,
                               cudaMemcpyHostToDevice, stream));
  }
  ZRT_CUDA(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < all.size(); ++i) {
    std::free(*all[i].data);
    *all[i].data = deviceStorage[i];
  }
  pointMembers(program, commRank(), commSize());
  statesOnDevice = true;
}

void statesToHost(const zrt_program &program) {
  if (!statesOnDevice)
    return;
  cudaStream_t stream = computeStream();
  std::vector<Storage> all = storages(program);
  std::vector<void *> host(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    host[i] = hostStorage(all[i]);
    if (all[i].bytes)
      ZRT_CUDA(cudaMemcpyAsync(host[i], *all[i].data, all[i].bytes,
                               cudaMemcpyDeviceToHost, stream));
  }
  // Also waits for every step's kernels, and (through zrt_wait's events)
  // for the collectives they waited on.
  ZRT_CUDA(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < all.size(); ++i)
    *all[i].data = host[i];
  pointMembers(program, commRank(), commSize());
  statesOnDevice = false;
}

void stateToHost(const zrt_state &state, size_t offset, size_t bytes,
                 void *host) {
  const uint8_t *source = static_cast<const uint8_t *>(state.data) + offset;
  if (!statesOnDevice) {
    std::memcpy(host, source, bytes);
    return;
  }
  // On the compute stream: after every kernel of the steps before.
  cudaStream_t stream = computeStream();
  ZRT_CUDA(
      cudaMemcpyAsync(host, source, bytes, cudaMemcpyDeviceToHost, stream));
  ZRT_CUDA(cudaStreamSynchronize(stream));
}

void freeStates(const zrt_program &program) {
  std::vector<Storage> all = storages(program);
  for (size_t i = 0; i < all.size(); ++i) {
    if (!statesOnDevice)
      std::free(*all[i].data);
    if (i < deviceStorage.size() && deviceStorage[i])
      zrt_free(deviceStorage[i], all[i].bytes, all[i].category);
    *all[i].data = nullptr;
  }
  pointMembers(program, commRank(), commSize());
  deviceStorage.clear();
  statesOnDevice = false;
  if (context.open)
    ZRT_CUDA(cudaStreamSynchronize(context.compute));
}

const char *blasCoreName() { return nullptr; }

int64_t devicePeakBytes() {
  if (!context.open)
    return 0;
  uint64_t high = 0;
  ZRT_CUDA(cudaMemPoolGetAttribute(context.pool, cudaMemPoolAttrReservedMemHigh,
                                   &high));
  return static_cast<int64_t>(high);
}

} // namespace zeroc::rt
