//===- Emulation.cpp - CUDA's execution model, memory and cuBLASLt on the CPU ===//
//
// The CPU emulation of CUDA (docs/cuda.md, include/*.h): what a launch,
// a copy, a stream and a cuBLASLt matmul do, with the checks that make a
// kernel bug visible without a GPU.
//
// * Blocks run one at a time; a block's threads are fibers on one OS
//   thread, switched (by a few instructions of x86-64 assembly, no signal
//   mask) only where a thread waits: __syncthreads(), a warp collective,
//   its exit. Between those points a thread runs alone, so every order the
//   scheduler picks is one the hardware may produce.
// * Each launch runs in every order of ZC_EMU_SCHEDULES (default
//   "forward,reverse,random": threads and blocks in index order, reversed,
//   and shuffled from ZC_EMU_SEED), from the same device memory; the
//   memory the kernel's arguments reach must come out bitwise the same (or,
//   for kernels with floating-point atomics, within their reassociation
//   error), else the kernel has a race and the emulation says so.
// * Device memory is mmap'd, one mapping per allocation, placed at the end
//   of its pages before an inaccessible guard page, and inaccessible except
//   while a kernel, a copy or a cuBLASLt call runs: host code reading device
//   memory, a kernel running off the end of an allocation, a copy or a
//   kernel argument naming host memory, a double free or (with
//   ZC_EMU_LEAK_CHECK=1) an allocation alive at exit is an error that names
//   the call, the kernel or the allocation's caller (ZC_EMU_LEAK_ALLOW: a
//   comma-separated list of callers whose allocations live for the whole
//   run, matched as parts of the caller's name).
// * Streams created by cudaStreamCreate* are queues that run only when
//   something waits for them (cudaStreamSynchronize, an event, a
//   synchronous call); the default stream runs at once.
//
// Every error prints one line starting "emulated CUDA:" and exits 1.
//
//===----------------------------------------------------------------------===//

#include "cuda_runtime.h"
#include "cublasLt.h"
#include "mma.h"

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <deque>
#include <dlfcn.h>
#include <map>
#include <random>
#include <set>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

bool failing = false;
const char *lastCall = "(none)";

[[noreturn]] void vfatal(const char *format, va_list args) {
  failing = true;
  std::fflush(stdout);
  std::fputs("emulated CUDA: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  _exit(1);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) void
fatal(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vfatal(format, args);
}

std::string describeCaller(const void *address) {
  Dl_info info;
  if (address && dladdr(address, &info) && info.dli_sname) {
    int status = 0;
    char *name = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    std::string result = status == 0 && name ? name : info.dli_sname;
    std::free(name);
    return result;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%p", address);
  return buffer;
}

const char *envOr(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value && *value ? value : fallback;
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

constexpr size_t kPage = 4096;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Allocation {
  char *base;
  size_t bytes;    // as requested
  size_t rounded;  // to 256 bytes: the end of the data pages
  char *map;       // guard page, data pages, guard page
  size_t mapBytes;
  long id;
  const char *call;
  std::string caller;
  bool freePending = false;
  int access = 0; // operations running on it (accessible while > 0)
};

std::map<uintptr_t, Allocation> allocations; // by base
std::map<uintptr_t, std::string> freed;       // base -> who freed it
long nextAllocation = 1;

char *dataPages(const Allocation &a) { return a.map + kPage; }
size_t dataBytes(const Allocation &a) { return a.mapBytes - 2 * kPage; }

void protect(const Allocation &a, bool on) {
  if (mprotect(dataPages(a), dataBytes(a),
               on ? PROT_READ | PROT_WRITE : PROT_NONE) != 0)
    fatal("mprotect of allocation #%ld failed", a.id);
}

/// The allocation holding [p, p + bytes), or nullptr (p past its end by at
/// most nothing counts for bytes == 0).
Allocation *findAllocation(const void *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin())
    return nullptr;
  --it;
  Allocation &a = it->second;
  if (address >= it->first && address <= it->first + a.rounded)
    return &a;
  return nullptr;
}

/// The allocation whose mapping (guards included) holds p.
Allocation *findMapping(const void *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  for (auto &entry : allocations) {
    Allocation &a = entry.second;
    uintptr_t map = reinterpret_cast<uintptr_t>(a.map);
    if (address >= map && address < map + a.mapBytes)
      return &a;
  }
  return nullptr;
}

/// The allocations an operation reaches (a kernel's arguments, a copy's
/// operands) accessible while alive; every other allocation stays
/// inaccessible, so that the cost is the operation's own memory.
class DeviceAccess {
public:
  explicit DeviceAccess(std::initializer_list<const void *> ptrs) {
    for (const void *p : ptrs)
      if (Allocation *a = findAllocation(p))
        add(a);
  }
  explicit DeviceAccess(const std::vector<long> &ids) {
    for (long id : ids)
      for (auto &entry : allocations)
        if (entry.second.id == id)
          add(&entry.second);
  }
  ~DeviceAccess() {
    for (uintptr_t base : bases) {
      auto it = allocations.find(base);
      if (it != allocations.end() && --it->second.access == 0)
        protect(it->second, false);
    }
  }
  DeviceAccess(const DeviceAccess &) = delete;
  DeviceAccess &operator=(const DeviceAccess &) = delete;

private:
  void add(Allocation *a) {
    uintptr_t base = reinterpret_cast<uintptr_t>(a->base);
    if (std::find(bases.begin(), bases.end(), base) != bases.end())
      return;
    bases.push_back(base);
    if (a->access++ == 0)
      protect(*a, true);
  }
  std::vector<uintptr_t> bases;
};

// Device bytes allocated now and at most (the pool's reserved memory).
uint64_t deviceBytes = 0, deviceBytesHigh = 0;

void *allocate(size_t bytes, const char *call, const void *caller) {
  Allocation a;
  a.bytes = bytes;
  a.rounded = roundUp(bytes ? bytes : 1, 256);
  size_t pages = roundUp(a.rounded, kPage);
  a.mapBytes = pages + 2 * kPage;
  void *map = mmap(nullptr, a.mapBytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED)
    return nullptr;
  a.map = static_cast<char *>(map);
  a.base = a.map + kPage + (pages - a.rounded);
  a.id = nextAllocation++;
  a.call = call;
  a.caller = describeCaller(caller);
  protect(a, true);
  std::memset(a.base, 0xff, a.rounded); // uninitialised: NaN everywhere
  protect(a, false);
  deviceBytes += a.rounded;
  deviceBytesHigh = std::max(deviceBytesHigh, deviceBytes);
  char *base = a.base;
  freed.erase(reinterpret_cast<uintptr_t>(base));
  allocations.emplace(reinterpret_cast<uintptr_t>(base), std::move(a));
  return base;
}

Allocation &checkFreeable(void *ptr, const char *call) {
  auto it = allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations.end()) {
    auto f = freed.find(reinterpret_cast<uintptr_t>(ptr));
    if (f != freed.end())
      fatal("%s(%p): double free (already freed by %s)", call, ptr,
            f->second.c_str());
    if (Allocation *inside = findAllocation(ptr))
      fatal("%s(%p): not the start of an allocation (%zu bytes into #%ld of "
            "%zu bytes)",
            call, ptr,
            static_cast<size_t>(static_cast<char *>(ptr) - inside->base),
            inside->id, inside->bytes);
    fatal("%s(%p): not device memory (a host pointer, or never allocated)",
          call, ptr);
  }
  if (it->second.freePending)
    fatal("%s(%p): double free (a free of allocation #%ld is already queued)",
          call, ptr, it->second.id);
  return it->second;
}

void release(void *ptr, const char *call) {
  auto it = allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations.end())
    fatal("%s(%p): double free", call, ptr);
  deviceBytes -= it->second.rounded;
  munmap(it->second.map, it->second.mapBytes);
  freed[it->first] = call;
  allocations.erase(it);
}

/// Fails unless [p, p + bytes) lies in one device allocation.
void checkDeviceRange(const void *p, size_t bytes, const char *call,
                      const char *what) {
  if (bytes == 0)
    return;
  Allocation *a = findAllocation(p);
  if (!a) {
    if (freed.count(reinterpret_cast<uintptr_t>(p)))
      fatal("%s: the %s %p is freed device memory", call, what, p);
    fatal("%s: the %s %p is not device memory (a host pointer?)", call, what,
          p);
  }
  size_t offset = static_cast<size_t>(static_cast<const char *>(p) - a->base);
  if (offset + bytes > a->bytes)
    fatal("%s: the %s [%p, +%zu bytes) extends %zu bytes past the end of "
          "allocation #%ld (%zu bytes, from %s)",
          call, what, p, bytes, offset + bytes - a->bytes, a->id, a->bytes,
          a->caller.c_str());
}

void checkHostRange(const void *p, size_t bytes, const char *call,
                    const char *what) {
  if (bytes == 0)
    return;
  if (findAllocation(p) || findMapping(p))
    fatal("%s: the %s %p is device memory, not host memory", call, what, p);
}

} // namespace

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

struct zc_emu_stream {
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0, executed = 0;
};

struct zc_emu_event {
  zc_emu_stream *stream = nullptr;
  uint64_t position = 0;
};

namespace {

std::set<zc_emu_stream *> streams;
// Events and cuBLASLt objects alive: a runtime that keeps them for the
// whole run (a cached plan, the handle) leaves them reachable from here,
// not leaked, as far as a leak checker can tell.
// (Never destroyed, so that it still holds them when a leak checker runs
// after the static destructors.)
std::set<const void *> *handles = new std::set<const void *>;
template <typename T> T *track(T *object) {
  handles->insert(object);
  return object;
}
template <typename T> void untrack(T *object) {
  handles->erase(object);
  delete object;
}
cudaError_t lastError = cudaSuccess;
long eventsCreated = 0;

void runStream(zc_emu_stream *stream, uint64_t position) {
  while (stream->executed < position && !stream->queue.empty()) {
    std::function<void()> op = std::move(stream->queue.front());
    stream->queue.pop_front();
    ++stream->executed;
    op();
  }
}

void drainAll() {
  bool again = true;
  while (again) {
    again = false;
    for (zc_emu_stream *s : streams)
      if (!s->queue.empty()) {
        runStream(s, s->enqueued);
        again = true;
      }
  }
}

void checkStream(cudaStream_t stream, const char *call) {
  if (stream && !streams.count(stream))
    fatal("%s: stream %p was never created or is destroyed", call,
          static_cast<void *>(stream));
}

/// Runs `op` on `stream`: at once on the default stream (after all other
/// work: the legacy default stream), queued on a created one.
void enqueue(cudaStream_t stream, const char *call, std::function<void()> op) {
  checkStream(stream, call);
  if (!stream) {
    drainAll();
    op();
    return;
  }
  stream->queue.push_back(std::move(op));
  ++stream->enqueued;
}

} // namespace

//===----------------------------------------------------------------------===//
// Fibers
//===----------------------------------------------------------------------===//

extern "C" void zc_emu_switch(void **save, void *next);
extern "C" void zc_emu_fiber_start();
asm(R"(
  .text
  .globl zc_emu_switch
  .type zc_emu_switch,@function
zc_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size zc_emu_switch, .-zc_emu_switch
  .globl zc_emu_fiber_start
  .type zc_emu_fiber_start,@function
zc_emu_fiber_start:
  movq %r12, %rdi
  call *%r13
  ud2
  .size zc_emu_fiber_start, .-zc_emu_fiber_start
)");

namespace zc_emu {

Thread *current = nullptr;
uint3 blockIdxValue;
dim3 blockDimValue, gridDimValue;

namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kMaxThreads = 1024;
constexpr size_t kMaxDynamicShared = 232448; // sm_90: 227 KiB per block
constexpr size_t kDefaultDynamicShared = 48 * 1024;

enum State { kReady, kAtBarrier, kAtWarp, kDone };

struct Fiber {
  Thread thread;
  State state = kReady;
  void *sp = nullptr;
  char *stack = nullptr; // guard page, then the stack
};

struct Warp {
  unsigned arrived = 0, mask = 0;
  Collective kind = kSyncwarp;
  const char *what = "";
  uint64_t value[32];
  int param[32];
  int width[32];
  uint64_t result[32];
};

struct Block {
  Fiber fibers[kMaxThreads];
  Warp warps[kMaxThreads / 32];
  unsigned threads = 0, done = 0, atBarrier = 0;
  Fiber *running = nullptr;
  void *schedulerSp = nullptr;
  const std::function<void()> *body = nullptr;
} block;

char *sharedMap = nullptr; // dynamic shared memory, then a guard page
char *sharedBase = nullptr;
size_t sharedBytes = 0;

const LaunchConfig *launching = nullptr;
struct Counts {
  uint64_t launches = 0, blocks = 0, threads = 0, barriers = 0, collectives = 0;
  size_t orders = 0; // of the last launch
} counts;
uint64_t blockSerial = 0; // one more for every block run
std::unordered_map<void *, uint64_t> staticSharedBlock;
bool floatAtomics = false;
std::unordered_map<const void *, int> dynamicSharedLimit;

void yieldToScheduler() {
  Fiber *self = block.running;
  zc_emu_switch(&self->sp, block.schedulerSp);
}

void fiberMain(void *arg) {
  Fiber *self = static_cast<Fiber *>(arg);
  (*block.body)();
  self->state = kDone;
  ++block.done;
  zc_emu_switch(&self->sp, block.schedulerSp);
  __builtin_trap();
}

void initFiber(Fiber &f) {
  if (!f.stack) {
    void *map = mmap(nullptr, kStackBytes + kPage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
      fatal("no memory for a fiber stack");
    mprotect(map, kPage, PROT_NONE);
    f.stack = static_cast<char *>(map);
  }
  uintptr_t top = reinterpret_cast<uintptr_t>(f.stack + kPage + kStackBytes);
  top &= ~uintptr_t{15};
  void **sp = reinterpret_cast<void **>(top);
  sp[-1] = nullptr;
  sp[-2] = nullptr;
  sp[-3] = reinterpret_cast<void *>(&zc_emu_fiber_start); // ret
  sp[-4] = nullptr;                                        // rbp
  sp[-5] = nullptr;                                        // rbx
  sp[-6] = &f;                                             // r12
  sp[-7] = reinterpret_cast<void *>(&fiberMain);           // r13
  sp[-8] = nullptr;                                        // r14
  sp[-9] = nullptr;                                        // r15
  f.sp = &sp[-9];
  f.state = kReady;
}

const char *stateName(State s) {
  switch (s) {
  case kReady:
    return "running";
  case kAtBarrier:
    return "at __syncthreads()";
  case kAtWarp:
    return "in a warp collective";
  case kDone:
    return "exited";
  }
  return "?";
}

[[noreturn]] void deadlock() {
  // Which threads wait, and for whom.
  std::string detail;
  for (unsigned w = 0; w < (block.threads + 31) / 32; ++w) {
    Warp &warp = block.warps[w];
    if (!warp.arrived)
      continue;
    unsigned missing = warp.mask & ~warp.arrived;
    int lane = __builtin_ctz(missing);
    Fiber &f = block.fibers[w * 32 + lane];
    char line[256];
    std::snprintf(line, sizeof(line),
                  "lanes 0x%08x of warp %u wait in %s (mask 0x%08x) for lane "
                  "%d, which is %s",
                  warp.arrived, w, warp.what, warp.mask, lane,
                  stateName(f.state));
    detail = line;
    break;
  }
  if (detail.empty() && block.atBarrier) {
    for (unsigned t = 0; t < block.threads; ++t)
      if (block.fibers[t].state == kDone) {
        Fiber &f = block.fibers[t];
        char line[256];
        std::snprintf(line, sizeof(line),
                      "%u of %u threads wait at __syncthreads(), which thread "
                      "(%u,%u,%u) never reaches (it exited)",
                      block.atBarrier, block.threads, f.thread.idx.x,
                      f.thread.idx.y, f.thread.idx.z);
        detail = line;
        break;
      }
  }
  fatal("kernel %s, block (%u,%u,%u): a barrier not reached by every thread: "
        "%s",
        launching->name, blockIdxValue.x, blockIdxValue.y, blockIdxValue.z,
        detail.c_str());
}

enum Order { kForward, kReverse, kRandom };

void runBlock(Order order, std::mt19937_64 &rng) {
  unsigned n = block.threads;
  std::vector<unsigned> perm(n);
  for (unsigned i = 0; i < n; ++i)
    perm[i] = order == kReverse ? n - 1 - i : i;
  if (order == kRandom)
    std::shuffle(perm.begin(), perm.end(), rng);
  ++blockSerial;
  ++counts.blocks;
  counts.threads += n;
  block.done = 0;
  block.atBarrier = 0;
  for (unsigned w = 0; w < (n + 31) / 32; ++w)
    block.warps[w].arrived = 0;
  for (unsigned i = 0; i < n; ++i) {
    Fiber &f = block.fibers[i];
    f.thread.linear = i;
    f.thread.idx = {i % blockDimValue.x, (i / blockDimValue.x) % blockDimValue.y,
                    i / (blockDimValue.x * blockDimValue.y)};
    initFiber(f);
  }
  if (sharedBytes)
    std::memset(sharedBase, 0xff, sharedBytes);
  while (block.done < n) {
    bool progressed = false;
    for (unsigned i : perm) {
      Fiber &f = block.fibers[i];
      if (f.state != kReady)
        continue;
      block.running = &f;
      current = &f.thread;
      zc_emu_switch(&block.schedulerSp, f.sp);
      progressed = true;
    }
    block.running = nullptr;
    if (!progressed)
      deadlock();
    if (order == kRandom)
      std::shuffle(perm.begin(), perm.end(), rng);
  }
}

void runGrid(const LaunchConfig &config, const std::function<void()> &body,
             Order order, uint64_t seed) {
  std::mt19937_64 rng(seed);
  dim3 g = config.grid;
  uint64_t count = uint64_t{g.x} * g.y * g.z;
  std::vector<uint64_t> blocks(count);
  for (uint64_t i = 0; i < count; ++i)
    blocks[i] = order == kReverse ? count - 1 - i : i;
  if (order == kRandom)
    std::shuffle(blocks.begin(), blocks.end(), rng);
  gridDimValue = g;
  blockDimValue = config.block;
  block.threads = config.block.x * config.block.y * config.block.z;
  block.body = &body;
  for (uint64_t b : blocks) {
    blockIdxValue = {static_cast<unsigned>(b % g.x),
                     static_cast<unsigned>((b / g.x) % g.y),
                     static_cast<unsigned>(b / (uint64_t{g.x} * g.y))};
    runBlock(order, rng);
  }
  current = nullptr;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

struct Region {
  char *base;
  size_t bytes;
  long id;
  bool guessed; // a word of a struct argument, not a pointer argument
};
std::vector<Region> pendingRegions;
const char *pendingName = "";

std::vector<Order> schedules() {
  static std::vector<Order> orders = [] {
    std::vector<Order> list;
    std::string spec = envOr("ZC_EMU_SCHEDULES", "forward,reverse,random");
    size_t start = 0;
    while (start <= spec.size()) {
      size_t comma = spec.find(',', start);
      std::string name = spec.substr(
          start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name == "forward")
        list.push_back(kForward);
      else if (name == "reverse")
        list.push_back(kReverse);
      else if (name == "random")
        list.push_back(kRandom);
      else
        fatal("ZC_EMU_SCHEDULES: unknown order '%s' (forward, reverse, random)",
              name.c_str());
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    return list;
  }();
  return orders;
}

const char *orderName(Order o) {
  return o == kForward ? "forward" : o == kReverse ? "reverse" : "random";
}

uint64_t launchCount = 0;

bool closeFloats(uint32_t a, uint32_t b) {
  float x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  if (std::isnan(x) && std::isnan(y))
    return true;
  double d = std::fabs(static_cast<double>(x) - y);
  return d <= 1e-4 * std::max(std::fabs(x), std::fabs(y)) + 1e-6;
}

void executeLaunch(const LaunchConfig &config, const std::function<void()> &body,
                   const std::vector<Region> &launched) {
  std::vector<long> ids;
  std::vector<Region> live;
  for (const Region &r : launched) {
    // Freed between the launch and its turn on the stream (a free on
    // another stream not ordered after the kernel); a guessed word of a
    // struct argument is then no pointer the kernel uses.
    auto it = allocations.find(reinterpret_cast<uintptr_t>(r.base));
    bool gone = it == allocations.end() || it->second.id != r.id;
    if (gone && r.guessed)
      continue;
    if (gone) {
      auto f = freed.find(reinterpret_cast<uintptr_t>(r.base));
      fatal("kernel %s runs on allocation #%ld (%p), freed by %s before the "
            "kernel ran",
            config.name, r.id, static_cast<void *>(r.base),
            f != freed.end() ? f->second.c_str() : "a later free");
    }
    ids.push_back(r.id);
    live.push_back(r);
  }
  const std::vector<Region> &regions = live;
  DeviceAccess access(ids);
  launching = &config;
  sharedBytes = config.shared;
  if (sharedBytes) {
    if (!sharedMap) {
      size_t bytes = roundUp(kMaxDynamicShared, kPage) + kPage;
      void *map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (map == MAP_FAILED)
        fatal("no memory for shared memory");
      sharedMap = static_cast<char *>(map);
      mprotect(sharedMap + bytes - kPage, kPage, PROT_NONE);
    }
    sharedBase = sharedMap + roundUp(kMaxDynamicShared, kPage) -
                 roundUp(sharedBytes, 128);
  }
  std::vector<Order> orders = schedules();
  ++counts.launches;
  counts.orders = orders.size();
  uint64_t seed = std::strtoull(envOr("ZC_EMU_SEED", "1"), nullptr, 10) * 1000003u +
                  launchCount++;
  std::vector<std::vector<char>> before, first;
  if (orders.size() > 1)
    for (const Region &r : regions)
      before.emplace_back(r.base, r.base + r.bytes);
  for (size_t o = 0; o < orders.size(); ++o) {
    if (o > 0)
      for (size_t i = 0; i < regions.size(); ++i)
        std::memcpy(regions[i].base, before[i].data(), regions[i].bytes);
    floatAtomics = false;
    runGrid(config, body, orders[o], seed);
    if (orders.size() == 1)
      break;
    if (o == 0) {
      for (const Region &r : regions)
        first.emplace_back(r.base, r.base + r.bytes);
      continue;
    }
    for (size_t i = 0; i < regions.size(); ++i) {
      const Region &r = regions[i];
      if (std::memcmp(r.base, first[i].data(), r.bytes) == 0)
        continue;
      for (size_t b = 0; b + 4 <= r.bytes; b += 4) {
        uint32_t x, y;
        std::memcpy(&x, first[i].data() + b, 4);
        std::memcpy(&y, r.base + b, 4);
        if (x == y || (floatAtomics && closeFloats(x, y)))
          continue;
        fatal("race in kernel %s: the %s and %s schedules of its threads give "
              "different outputs (allocation #%ld, byte %zu: 0x%08x vs "
              "0x%08x%s)",
              config.name, orderName(orders[0]), orderName(orders[o]), r.id, b,
              x, y,
              floatAtomics ? ", beyond the reassociation error of its float "
                             "atomics"
                           : "");
      }
      if (r.bytes % 4 &&
          std::memcmp(r.base + r.bytes / 4 * 4,
                      first[i].data() + r.bytes / 4 * 4, r.bytes % 4) != 0)
        fatal("race in kernel %s: the %s and %s schedules give different "
              "outputs (allocation #%ld, its last bytes)",
              config.name, orderName(orders[0]), orderName(orders[o]), r.id);
    }
  }
  launching = nullptr;
}

} // namespace

void beginLaunchArguments(const char *name) {
  pendingRegions.clear();
  pendingName = name;
}

void scanArgument(const void *data, size_t bytes, int index, bool isPointer) {
  auto addRegion = [](Allocation *a, bool guessed) {
    for (Region &r : pendingRegions)
      if (r.id == a->id) {
        r.guessed = r.guessed && guessed;
        return;
      }
    pendingRegions.push_back({a->base, a->rounded, a->id, guessed});
  };
  if (isPointer) {
    const void *p;
    std::memcpy(&p, data, sizeof(p));
    if (!p)
      return;
    Allocation *a = findAllocation(p);
    if (!a)
      a = findMapping(p);
    if (a) {
      if (a->freePending)
        fatal("launch of %s: argument %d (%p) is device memory already "
              "freed by cudaFreeAsync (earlier in stream order)",
              pendingName, index, p);
      addRegion(a, false);
      return;
    }
    if (freed.count(reinterpret_cast<uintptr_t>(p)))
      fatal("launch of %s: argument %d (%p) is freed device memory",
            pendingName, index, p);
    fatal("launch of %s: argument %d (%p) is not device memory (a host "
          "pointer)",
          pendingName, index, p);
  }
  // Pointers inside a struct argument: every aligned word that points into
  // an allocation (conservatively).
  for (size_t off = 0; off + sizeof(void *) <= bytes; off += sizeof(void *)) {
    const void *p;
    std::memcpy(&p, static_cast<const char *>(data) + off, sizeof(p));
    // (A word that only looks like a pointer, such as stale bytes in an
    // unused field, may name memory whose free is pending: not a use.)
    if (Allocation *a = findAllocation(p))
      if (!a->freePending)
        addRegion(a, true);
  }
}

void launch(const LaunchConfig &config, std::function<void()> body) {
  lastCall = config.name;
  const dim3 &b = config.block, &g = config.grid;
  char problem[200] = "";
  uint64_t threads = uint64_t{b.x} * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0)
    std::snprintf(problem, sizeof(problem), "an empty grid (%u,%u,%u) or block (%u,%u,%u)",
                  g.x, g.y, g.z, b.x, b.y, b.z);
  else if (threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
    std::snprintf(problem, sizeof(problem),
                  "a block of (%u,%u,%u) = %" PRIu64
                  " threads (sm_90: at most 1024, z at most 64)",
                  b.x, b.y, b.z, threads);
  else if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    std::snprintf(problem, sizeof(problem),
                  "a grid of (%u,%u,%u) blocks (sm_90: x < 2^31, y and z at "
                  "most 65535)",
                  g.x, g.y, g.z);
  else {
    auto it = dynamicSharedLimit.find(config.fn);
    size_t limit = it == dynamicSharedLimit.end() ? kDefaultDynamicShared
                                                  : static_cast<size_t>(it->second);
    if (config.shared > limit)
      std::snprintf(problem, sizeof(problem),
                    "%zu bytes of dynamic shared memory, above the kernel's "
                    "limit of %zu (48 KiB unless raised by cudaFuncSetAttribute)",
                    config.shared, limit);
  }
  if (*problem) {
    std::fprintf(stderr, "emulated CUDA: launch of %s: %s\n", config.name,
                 problem);
    lastError = cudaErrorInvalidConfiguration;
    return;
  }
  std::vector<Region> regions = pendingRegions;
  LaunchConfig copy = config;
  enqueue(config.stream, config.name,
          [copy, body = std::move(body), regions]() {
            executeLaunch(copy, body, regions);
          });
}

cudaError_t funcSetAttribute(const void *kernel, cudaFuncAttribute attr,
                             int value) {
  lastCall = "cudaFuncSetAttribute";
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || static_cast<size_t>(value) > kMaxDynamicShared)
      return cudaErrorInvalidValue;
    dynamicSharedLimit[kernel] = value;
  }
  return cudaSuccess;
}

void *dynamicShared() { return sharedBytes ? sharedBase : sharedMap; }

void sharedStatic(void *p, size_t bytes) {
  uint64_t &seen = staticSharedBlock[p];
  if (seen != blockSerial) {
    seen = blockSerial;
    std::memset(p, 0xff, bytes);
  }
}

void noteFloatAtomic() { floatAtomics = true; }

void kernelError(const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  fatal("kernel %s, block (%u,%u,%u), thread (%u,%u,%u): %s",
        launching ? launching->name : "?", blockIdxValue.x, blockIdxValue.y,
        blockIdxValue.z, current ? current->idx.x : 0,
        current ? current->idx.y : 0, current ? current->idx.z : 0, message);
}

void syncthreads() {
  if (!block.running)
    fatal("__syncthreads() outside a kernel");
  if (++block.atBarrier == block.threads) {
    ++counts.barriers;
    block.atBarrier = 0;
    for (unsigned t = 0; t < block.threads; ++t)
      if (block.fibers[t].state == kAtBarrier)
        block.fibers[t].state = kReady;
    return;
  }
  block.running->state = kAtBarrier;
  yieldToScheduler();
}

namespace {

void completeWmma(Warp &warp) {
  auto req = [&](int lane) {
    return reinterpret_cast<const WmmaRequest *>(warp.value[lane]);
  };
  const WmmaRequest &r0 = *req(0);
  for (int l = 1; l < 32; ++l) {
    const WmmaRequest &r = *req(l);
    if (r.op != r0.op || r.ptr != r0.ptr || r.ld != r0.ld ||
        r.colMajor != r0.colMajor)
      kernelError("%s: lane %d passes (%p, ld %u) but lane 0 (%p, ld %u): "
                  "the lanes of a warp must pass the same arguments",
                  warp.what, l, r.ptr, r.ld, r0.ptr, r0.ld);
  }
  if (r0.op == 0 || r0.op == 1) {
    if (reinterpret_cast<uintptr_t>(r0.ptr) % 32)
      kernelError("%s: the tile pointer %p is not 32-byte (256-bit) aligned",
                  warp.what, r0.ptr);
    if ((r0.ld * r0.elementBytes) % 16)
      kernelError("%s: ld %u is not a multiple of 16 bytes", warp.what, r0.ld);
    for (int l = 0; l < 32; ++l) {
      const WmmaRequest &r = *req(l);
      char *frag = static_cast<char *>(r.frag);
      for (int j = 0; j < 8; ++j) {
        int i = l + 32 * j, row = i / 16, col = i % 16;
        size_t element = r.colMajor ? static_cast<size_t>(col) * r.ld + row
                                    : static_cast<size_t>(row) * r.ld + col;
        char *mem = const_cast<char *>(static_cast<const char *>(r.ptr)) +
                    element * r.elementBytes;
        if (r.op == 0)
          std::memcpy(frag + j * r.elementBytes, mem, r.elementBytes);
        else
          std::memcpy(mem, frag + j * r.elementBytes, r.elementBytes);
      }
    }
    return;
  }
  float a[256], b[256], c[256];
  for (int l = 0; l < 32; ++l) {
    const WmmaRequest &r = *req(l);
    for (int j = 0; j < 8; ++j) {
      int i = l + 32 * j;
      a[i] = float(static_cast<const __nv_bfloat16 *>(r.a)[j]);
      b[i] = float(static_cast<const __nv_bfloat16 *>(r.b)[j]);
      c[i] = static_cast<const float *>(r.c)[j];
    }
  }
  float d[256];
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 16; ++col) {
      float acc = c[row * 16 + col];
      for (int k = 0; k < 16; ++k)
        acc += a[row * 16 + k] * b[k * 16 + col]; // bf16 products: exact
      d[row * 16 + col] = acc;
    }
  for (int l = 0; l < 32; ++l) {
    float *frag = static_cast<float *>(req(l)->frag);
    for (int j = 0; j < 8; ++j)
      frag[j] = d[l + 32 * j];
  }
}

void completeCollective(Warp &warp) {
  unsigned mask = warp.mask;
  for (int l = 0; l < 32; ++l) {
    if (!(mask & (1u << l)))
      continue;
    int width = warp.width[l], base = l & ~(width - 1), src = l;
    switch (warp.kind) {
    case kShflIdx:
      src = base + ((warp.param[l] % width) + width) % width;
      break;
    case kShflUp:
      src = l - warp.param[l] < base ? l : l - warp.param[l];
      break;
    case kShflDown:
      src = l + warp.param[l] >= base + width ? l : l + warp.param[l];
      break;
    case kShflXor:
      src = l ^ warp.param[l];
      if (src >= base + width || src < 0 || src > 31)
        src = l;
      break;
    default:
      break;
    }
    switch (warp.kind) {
    case kShflIdx:
    case kShflUp:
    case kShflDown:
    case kShflXor:
      if (!(mask & (1u << src)))
        kernelError("%s: lane %d reads lane %d, which is not in the mask "
                    "0x%08x (an undefined value)",
                    warp.what, l, src, mask);
      warp.result[l] = warp.value[src];
      break;
    case kBallot:
    case kAll:
    case kAny: {
      unsigned ballot = 0;
      for (int k = 0; k < 32; ++k)
        if ((mask & (1u << k)) && warp.value[k])
          ballot |= 1u << k;
      warp.result[l] = warp.kind == kBallot ? ballot
                       : warp.kind == kAll  ? ballot == mask
                                            : ballot != 0;
      break;
    }
    default:
      warp.result[l] = 0;
    }
  }
  if (warp.kind == kWmmaLoad || warp.kind == kWmmaStore || warp.kind == kWmmaMma)
    completeWmma(warp);
}

} // namespace

uint64_t warpCollective(Collective kind, unsigned mask, uint64_t value,
                        int param, int width, const char *what) {
  Fiber *self = block.running;
  if (!self)
    fatal("%s outside a kernel", what);
  unsigned linear = self->thread.linear, lane = linear % 32, w = linear / 32;
  unsigned lanes = std::min(32u, block.threads - w * 32);
  unsigned exist = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  if (!(mask & (1u << lane)))
    kernelError("%s: the calling lane %u is not in its mask 0x%08x", what, lane,
                mask);
  if (mask & ~exist)
    kernelError("%s: the mask 0x%08x names lanes that do not exist (warp %u "
                "has %u threads)",
                what, mask, w, lanes);
  if (width < 1 || width > 32 || (width & (width - 1)))
    kernelError("%s: width %d is not a power of two in [1, 32]", what, width);
  Warp &warp = block.warps[w];
  if (warp.arrived == 0) {
    warp.kind = kind;
    warp.mask = mask;
    warp.what = what;
  } else if (warp.kind != kind || warp.mask != mask) {
    kernelError("lane %u of warp %u calls %s (mask 0x%08x) while lanes 0x%08x "
                "wait in %s (mask 0x%08x): diverged warp collectives",
                lane, w, what, mask, warp.arrived, warp.what, warp.mask);
  }
  warp.value[lane] = value;
  warp.param[lane] = param;
  warp.width[lane] = width;
  warp.arrived |= 1u << lane;
  if (warp.arrived == warp.mask) {
    ++counts.collectives;
    completeCollective(warp);
    warp.arrived = 0;
    for (int l = 0; l < 32; ++l)
      if ((mask & (1u << l)) && static_cast<unsigned>(l) != lane)
        block.fibers[w * 32 + l].state = kReady;
    return warp.result[lane];
  }
  self->state = kAtWarp;
  yieldToScheduler();
  return warp.result[lane];
}

void wmmaCollective(const WmmaRequest &request, const char *what) {
  Collective kind = request.op == 0   ? kWmmaLoad
                    : request.op == 1 ? kWmmaStore
                                      : kWmmaMma;
  warpCollective(kind, 0xffffffffu, reinterpret_cast<uint64_t>(&request), 0, 32,
                 what);
}

} // namespace zc_emu

//===----------------------------------------------------------------------===//
// Faults: host access to device memory, kernels out of bounds
//===----------------------------------------------------------------------===//

namespace {

void onFault(int sig, siginfo_t *info, void *) {
  void *address = info->si_addr;
  using namespace zc_emu;
  if (launching && block.running) {
    char *a = static_cast<char *>(address);
    char *stack = block.running->stack;
    if (stack && a >= stack && a < stack + kPage)
      kernelError("stack overflow (a fiber has %zu KiB)", kStackBytes / 1024);
    if (sharedMap && a >= sharedBase + sharedBytes &&
        a < sharedMap + roundUp(kMaxDynamicShared, kPage) + kPage)
      kernelError("read or write at %p, %zu bytes past the end of its %zu "
                  "bytes of dynamic shared memory",
                  address, static_cast<size_t>(a - sharedBase) - sharedBytes,
                  sharedBytes);
    if (Allocation *m = findMapping(address)) {
      if (a >= m->base && a < m->base + m->rounded)
        kernelError("read or write at %p in device allocation #%ld (%zu "
                    "bytes, from %s), which none of the kernel's arguments "
                    "points to",
                    address, m->id, m->bytes, m->caller.c_str());
      if (a >= m->base + m->rounded)
        kernelError("read or write at %p, %zu bytes past the end of device "
                    "allocation #%ld (%zu bytes, from %s)",
                    address, static_cast<size_t>(a - m->base) - m->bytes, m->id,
                    m->bytes, m->caller.c_str());
      kernelError("read or write at %p, before device allocation #%ld (%zu "
                  "bytes, from %s)",
                  address, m->id, m->bytes, m->caller.c_str());
    }
    if (freed.size())
      kernelError("invalid read or write at %p (freed or never allocated "
                  "device memory, or a bad host pointer)",
                  address);
    kernelError("invalid read or write at %p", address);
  }
  if (Allocation *m = findMapping(address))
    fatal("host code touched device memory at %p (allocation #%ld, %zu bytes, "
          "from %s) outside a kernel, copy or cuBLASLt call; the last emulated "
          "CUDA call was %s",
          address, m->id, m->bytes, m->caller.c_str(), lastCall);
  signal(sig, SIG_DFL);
  raise(sig);
}

std::vector<std::string> leakAllowed() {
  std::vector<std::string> names;
  std::string spec = envOr("ZC_EMU_LEAK_ALLOW", "");
  size_t start = 0;
  while (start < spec.size()) {
    size_t comma = spec.find(',', start);
    names.push_back(spec.substr(start, comma == std::string::npos
                                           ? std::string::npos
                                           : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return names;
}

// Runs after the destructors of function-local statics constructed after
// Setup (atexit's order): it reads only namespace-scope state.
void atExit() {
  if (failing)
    return;
  drainAll();
  if (std::string(envOr("ZC_EMU_STATS", "0")) == "1") {
    using zc_emu::counts;
    std::fprintf(stderr,
                 "emulated CUDA: %" PRIu64 " launches, each in %zu orders (%s): "
                 "%" PRIu64 " blocks, %" PRIu64 " threads, %" PRIu64
                 " barriers, %" PRIu64 " warp collectives; %ld events "
                 "created\n",
                 counts.launches, counts.orders,
                 envOr("ZC_EMU_SCHEDULES", "forward,reverse,random"),
                 counts.blocks, counts.threads, counts.barriers,
                 counts.collectives, eventsCreated);
  }
  if (std::string(envOr("ZC_EMU_LEAK_CHECK", "0")) != "1")
    return;
  std::vector<std::string> allowed = leakAllowed();
  for (auto &entry : allocations) {
    const Allocation &a = entry.second;
    if (std::any_of(allowed.begin(), allowed.end(), [&](const std::string &n) {
          return !n.empty() && a.caller.find(n) != std::string::npos;
        }))
      continue;
    fatal("leak at exit: allocation #%ld (%zu bytes) from %s in %s was never "
          "freed",
          a.id, a.bytes, a.call, a.caller.c_str());
  }
}

struct Setup {
  Setup() {
    static char altStack[64 * 1024];
    stack_t ss = {};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof(altStack);
    sigaltstack(&ss, nullptr);
    struct sigaction sa = {};
    sa.sa_sigaction = onFault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    std::atexit(atExit);
  }
} setup;

int multiprocessorCount() {
  return std::max(1, std::atoi(envOr("ZC_EMU_SMS", "2")));
}

} // namespace

//===----------------------------------------------------------------------===//
// Runtime API
//===----------------------------------------------------------------------===//

#define CALL(name) lastCall = name

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorNotReady:
    return "device not ready";
  default:
    return "emulated CUDA error";
  }
}
const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case cudaErrorNotReady:
    return "cudaErrorNotReady";
  default:
    return "cudaErrorUnknown";
  }
}
cudaError_t cudaGetLastError(void) {
  cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return lastError; }
cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int) {
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "emulated GPU on the CPU");
  prop->totalGlobalMem = size_t{80} << 30;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = 232448;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = multiprocessorCount();
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int) {
  switch (attr) {
  case cudaDevAttrMultiProcessorCount:
    *value = multiprocessorCount();
    return cudaSuccess;
  case cudaDevAttrMaxThreadsPerBlock:
    *value = 1024;
    return cudaSuccess;
  case cudaDevAttrMaxSharedMemoryPerBlock:
    *value = 48 * 1024;
    return cudaSuccess;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    *value = 232448;
    return cudaSuccess;
  case cudaDevAttrWarpSize:
    *value = 32;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMajor:
    *value = 9;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMinor:
    *value = 0;
    return cudaSuccess;
  case cudaDevAttrMemoryPoolsSupported:
    *value = 1;
    return cudaSuccess;
  }
  fatal("cudaDeviceGetAttribute: attribute %d is not emulated",
        static_cast<int>(attr));
}
cudaError_t cudaDeviceSynchronize(void) {
  CALL("cudaDeviceSynchronize");
  drainAll();
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t *free, size_t *total) {
  *total = size_t{80} << 30;
  size_t used = 0;
  for (auto &entry : allocations)
    used += entry.second.bytes;
  *free = *total - std::min(used, *total);
  return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  CALL("cudaMalloc");
  *ptr = allocate(bytes, "cudaMalloc", __builtin_return_address(0));
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream) {
  CALL("cudaMallocAsync");
  checkStream(stream, "cudaMallocAsync");
  *ptr = allocate(bytes, "cudaMallocAsync", __builtin_return_address(0));
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *ptr) {
  CALL("cudaFree");
  if (!ptr)
    return cudaSuccess;
  checkFreeable(ptr, "cudaFree");
  drainAll();
  release(ptr, "cudaFree");
  return cudaSuccess;
}
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream) {
  CALL("cudaFreeAsync");
  if (!ptr)
    return cudaSuccess;
  checkFreeable(ptr, "cudaFreeAsync").freePending = true;
  enqueue(stream, "cudaFreeAsync", [ptr] { release(ptr, "cudaFreeAsync"); });
  return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) {
  static char thePool;
  if (device != 0)
    return cudaErrorInvalidDevice;
  *pool = reinterpret_cast<cudaMemPool_t>(&thePool);
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value) {
  if (!pool || !value)
    return cudaErrorInvalidValue;
  switch (attr) {
  case cudaMemPoolAttrReleaseThreshold: // nothing is released early anyway
    return cudaSuccess;
  case cudaMemPoolAttrReservedMemHigh:
  case cudaMemPoolAttrUsedMemHigh:
    // Only 0 is allowed: resets the high-water mark.
    if (*static_cast<uint64_t *>(value) != 0)
      return cudaErrorInvalidValue;
    deviceBytesHigh = deviceBytes;
    return cudaSuccess;
  default:
    fatal("cudaMemPoolSetAttribute: attribute %d is not emulated",
          static_cast<int>(attr));
  }
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value) {
  if (!pool || !value)
    return cudaErrorInvalidValue;
  uint64_t *out = static_cast<uint64_t *>(value);
  switch (attr) {
  case cudaMemPoolAttrReleaseThreshold:
    *out = UINT64_MAX;
    return cudaSuccess;
  case cudaMemPoolAttrReservedMemCurrent:
  case cudaMemPoolAttrUsedMemCurrent:
    *out = deviceBytes;
    return cudaSuccess;
  case cudaMemPoolAttrReservedMemHigh:
  case cudaMemPoolAttrUsedMemHigh:
    *out = deviceBytesHigh;
    return cudaSuccess;
  }
  fatal("cudaMemPoolGetAttribute: attribute %d is not emulated",
        static_cast<int>(attr));
}
cudaError_t cudaMallocHost(void **ptr, size_t bytes) {
  *ptr = std::malloc(bytes ? bytes : 1);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void *ptr) {
  std::free(ptr);
  return cudaSuccess;
}

namespace {

/// The kind's source and destination checked; returns false for
/// host-to-host (no device access needed).
void checkCopy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
               const char *call) {
  bool dstDevice = findAllocation(dst) != nullptr;
  bool srcDevice = findAllocation(src) != nullptr;
  switch (kind) {
  case cudaMemcpyHostToDevice:
    checkHostRange(src, bytes, call, "source (HostToDevice)");
    checkDeviceRange(dst, bytes, call, "destination (HostToDevice)");
    break;
  case cudaMemcpyDeviceToHost:
    checkDeviceRange(src, bytes, call, "source (DeviceToHost)");
    checkHostRange(dst, bytes, call, "destination (DeviceToHost)");
    break;
  case cudaMemcpyDeviceToDevice:
    checkDeviceRange(src, bytes, call, "source (DeviceToDevice)");
    checkDeviceRange(dst, bytes, call, "destination (DeviceToDevice)");
    break;
  case cudaMemcpyHostToHost:
    checkHostRange(src, bytes, call, "source (HostToHost)");
    checkHostRange(dst, bytes, call, "destination (HostToHost)");
    break;
  case cudaMemcpyDefault:
    if (dstDevice)
      checkDeviceRange(dst, bytes, call, "destination");
    if (srcDevice)
      checkDeviceRange(src, bytes, call, "source");
    break;
  }
}

} // namespace

namespace zc_emu {
void enqueueDeviceOperation(cudaStream_t stream, const char *call,
                            std::vector<const void *> pointers,
                            std::function<void()> op) {
  for (const void *p : pointers)
    if (!findAllocation(p))
      fatal("%s(%p): not device memory (a host pointer, or never allocated)",
            call, p);
  enqueue(stream, call, [call, pointers, op] {
    std::vector<long> ids;
    for (const void *p : pointers) {
      Allocation *a = findAllocation(p);
      if (!a)
        fatal("%s(%p): device memory freed before the operation ran", call, p);
      ids.push_back(a->id);
    }
    DeviceAccess access(ids);
    op();
  });
}
} // namespace zc_emu

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream) {
  CALL("cudaMemcpyAsync");
  checkCopy(dst, src, bytes, kind, "cudaMemcpyAsync");
  enqueue(stream, "cudaMemcpyAsync", [=] {
    DeviceAccess access{dst, src};
    std::memmove(dst, src, bytes);
  });
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  CALL("cudaMemcpy");
  checkCopy(dst, src, bytes, kind, "cudaMemcpy");
  drainAll();
  DeviceAccess access{dst, src};
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
  CALL("cudaMemcpy2DAsync");
  if (height == 0 || width == 0)
    return cudaSuccess;
  if (width > dpitch || width > spitch)
    return cudaErrorInvalidValue;
  checkCopy(dst, src, dpitch * (height - 1) + width, kind, "cudaMemcpy2DAsync");
  checkCopy(const_cast<void *>(src), src, 0, kind, "cudaMemcpy2DAsync");
  enqueue(stream, "cudaMemcpy2DAsync", [=] {
    DeviceAccess access{dst, src};
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char *>(dst) + r * dpitch,
                   static_cast<const char *>(src) + r * spitch, width);
  });
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream) {
  CALL("cudaMemsetAsync");
  checkDeviceRange(dst, bytes, "cudaMemsetAsync", "destination");
  enqueue(stream, "cudaMemsetAsync", [=] {
    DeviceAccess access{dst};
    std::memset(dst, value, bytes);
  });
  return cudaSuccess;
}
cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  CALL("cudaMemset");
  checkDeviceRange(dst, bytes, "cudaMemset", "destination");
  drainAll();
  DeviceAccess access{dst};
  std::memset(dst, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width,
                              size_t height, cudaStream_t stream) {
  CALL("cudaMemset2DAsync");
  if (height == 0 || width == 0)
    return cudaSuccess;
  if (width > pitch)
    return cudaErrorInvalidValue;
  checkDeviceRange(dst, pitch * (height - 1) + width, "cudaMemset2DAsync",
                   "destination");
  enqueue(stream, "cudaMemset2DAsync", [=] {
    DeviceAccess access{dst};
    for (size_t r = 0; r < height; ++r)
      std::memset(static_cast<char *>(dst) + r * pitch, value, width);
  });
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  *stream = new zc_emu_stream;
  streams.insert(*stream);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
  return cudaStreamCreate(stream);
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned, int) {
  return cudaStreamCreate(stream);
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
  *least = 0;
  *greatest = -5;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  checkStream(stream, "cudaStreamDestroy");
  if (!stream)
    return cudaErrorInvalidResourceHandle;
  runStream(stream, stream->enqueued);
  streams.erase(stream);
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CALL("cudaStreamSynchronize");
  checkStream(stream, "cudaStreamSynchronize");
  if (!stream)
    drainAll();
  else
    runStream(stream, stream->enqueued);
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t stream) {
  // The emulated device makes progress when asked: the queue runs.
  return cudaStreamSynchronize(stream);
}
cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = track(new zc_emu_event);
  ++eventsCreated;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  untrack(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  CALL("cudaEventRecord");
  if (!event)
    return cudaErrorInvalidResourceHandle;
  checkStream(stream, "cudaEventRecord");
  event->stream = stream;
  event->position = stream ? stream->enqueued : 0;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  CALL("cudaEventSynchronize");
  if (!event)
    return cudaErrorInvalidResourceHandle;
  if (event->stream && streams.count(event->stream))
    runStream(event->stream, event->position);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  return cudaEventSynchronize(event);
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.0f; // no timing on the emulation
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned) {
  CALL("cudaStreamWaitEvent");
  if (!event)
    return cudaErrorInvalidResourceHandle;
  zc_emu_stream *source = event->stream;
  uint64_t position = event->position;
  if (!source || source == stream)
    return cudaSuccess;
  enqueue(stream, "cudaStreamWaitEvent", [source, position] {
    if (streams.count(source))
      runStream(source, position);
  });
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// cuBLASLt
//===----------------------------------------------------------------------===//

struct zc_emu_lt_handle {
  int unused;
};
struct zc_emu_lt_desc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
  cudaDataType_t biasType;
  bool biasTypeSet = false;
};
struct zc_emu_lt_layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct zc_emu_lt_pref {
  uint64_t workspace = 0;
  uint32_t align[4] = {256, 256, 256, 256};
};

namespace {

[[noreturn]] __attribute__((format(printf, 2, 3))) void
blasError(const char *call, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  fatal("%s: %s", call, message);
}

size_t typeBytes(cudaDataType_t type, const char *call) {
  switch (type) {
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16BF:
    return 2;
  default:
    blasError(call, "data type %d is not emulated (CUDA_R_32F, CUDA_R_16BF)",
              static_cast<int>(type));
  }
}

template <typename T> void readAttr(T &out, const void *buf, size_t bytes,
                                    const char *call, const char *attr) {
  if (bytes != sizeof(T))
    blasError(call, "%s takes %zu bytes, got %zu", attr, sizeof(T), bytes);
  std::memcpy(&out, buf, sizeof(T));
}

double loadElement(const char *p, cudaDataType_t type) {
  if (type == CUDA_R_32F) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return zc_emu::bf16ToFloat(bits);
}

void storeElement(char *p, cudaDataType_t type, float v) {
  if (type == CUDA_R_32F) {
    std::memcpy(p, &v, 4);
    return;
  }
  uint16_t bits = zc_emu::bf16FromFloat(v);
  std::memcpy(p, &bits, 2);
}

float roundTf32(float x) {
  uint32_t u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u)
    return x;
  u += 0xfffu + ((u >> 13) & 1u);
  return __uint_as_float(u & 0xffffe000u);
}

int64_t alignmentOf(const void *p) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256u;
  return static_cast<int64_t>(bits & (~bits + 1));
}

} // namespace

const char *cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}
const char *cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid value was used as an argument";
  default:
    return "an error occurred";
  }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  *handle = track(new zc_emu_lt_handle{0});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  untrack(handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  const char *call = "cublasLtMatmulDescCreate";
  if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32)
    blasError(call, "compute type %d is not emulated (CUBLAS_COMPUTE_32F, "
              "CUBLAS_COMPUTE_32F_FAST_TF32)", static_cast<int>(compute));
  if (scale != CUDA_R_32F)
    blasError(call, "scale type %d is not emulated (CUDA_R_32F)",
              static_cast<int>(scale));
  *desc = track(new zc_emu_lt_desc);
  (*desc)->compute = compute;
  (*desc)->scale = scale;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  untrack(desc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t bytes) {
  const char *call = "cublasLtMatmulDescSetAttribute";
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
  case CUBLASLT_MATMUL_DESC_TRANSB: {
    int32_t op;
    readAttr(op, buf, bytes, call, "CUBLASLT_MATMUL_DESC_TRANS*");
    if (op != CUBLAS_OP_N && op != CUBLAS_OP_T)
      blasError(call, "transpose %d is not emulated (CUBLAS_OP_N, CUBLAS_OP_T)",
                op);
    (attr == CUBLASLT_MATMUL_DESC_TRANSA ? desc->transA : desc->transB) =
        static_cast<cublasOperation_t>(op);
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_DESC_EPILOGUE: {
    uint32_t e;
    readAttr(e, buf, bytes, call, "CUBLASLT_MATMUL_DESC_EPILOGUE");
    if (e != CUBLASLT_EPILOGUE_DEFAULT && e != CUBLASLT_EPILOGUE_BIAS &&
        e != CUBLASLT_EPILOGUE_RELU && e != CUBLASLT_EPILOGUE_RELU_BIAS)
      blasError(call, "epilogue %u is not emulated (DEFAULT, BIAS, RELU, "
                "RELU_BIAS)", e);
    desc->epilogue = static_cast<cublasLtEpilogue_t>(e);
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    readAttr(desc->bias, buf, bytes, call, "CUBLASLT_MATMUL_DESC_BIAS_POINTER");
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: {
    int32_t t;
    readAttr(t, buf, bytes, call, "CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE");
    desc->biasType = static_cast<cudaDataType_t>(t);
    desc->biasTypeSet = true;
    return CUBLAS_STATUS_SUCCESS;
  }
  default:
    blasError(call, "attribute %d is not emulated", static_cast<int>(attr));
  }
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType_t type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  typeBytes(type, "cublasLtMatrixLayoutCreate");
  *layout = track(new zc_emu_lt_layout);
  (*layout)->type = type;
  (*layout)->rows = rows;
  (*layout)->cols = cols;
  (*layout)->ld = ld;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  untrack(layout);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                 cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t bytes) {
  const char *call = "cublasLtMatrixLayoutSetAttribute";
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
    readAttr(layout->batch, buf, bytes, call,
             "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT");
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
    readAttr(layout->stride, buf, bytes, call,
             "CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET");
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATRIX_LAYOUT_LD:
    readAttr(layout->ld, buf, bytes, call, "CUBLASLT_MATRIX_LAYOUT_LD");
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATRIX_LAYOUT_ORDER: {
    int32_t order;
    readAttr(order, buf, bytes, call, "CUBLASLT_MATRIX_LAYOUT_ORDER");
    if (order != CUBLASLT_ORDER_COL)
      blasError(call, "order %d is not emulated (CUBLASLT_ORDER_COL)", order);
    return CUBLAS_STATUS_SUCCESS;
  }
  default:
    blasError(call, "attribute %d is not emulated", static_cast<int>(attr));
  }
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  *pref = track(new zc_emu_lt_pref);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  untrack(pref);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
    const void *buf, size_t bytes) {
  const char *call = "cublasLtMatmulPreferenceSetAttribute";
  switch (attr) {
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    readAttr(pref->workspace, buf, bytes, call,
             "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES");
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
    readAttr(pref->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf,
             bytes, call, "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES");
    return CUBLAS_STATUS_SUCCESS;
  default:
    blasError(call, "attribute %d is not emulated", static_cast<int>(attr));
  }
}

namespace {

/// What a matmul's descriptor and layouts say; fails naming the mismatch.
void checkShapes(const char *call, const zc_emu_lt_desc *desc,
                 const zc_emu_lt_layout *a, const zc_emu_lt_layout *b,
                 const zc_emu_lt_layout *c, const zc_emu_lt_layout *d,
                 uint64_t &m, uint64_t &n, uint64_t &k) {
  m = desc->transA == CUBLAS_OP_N ? a->rows : a->cols;
  k = desc->transA == CUBLAS_OP_N ? a->cols : a->rows;
  uint64_t kb = desc->transB == CUBLAS_OP_N ? b->rows : b->cols;
  n = desc->transB == CUBLAS_OP_N ? b->cols : b->rows;
  if (kb != k)
    blasError(call, "op(A) is %" PRIu64 " x %" PRIu64 " but op(B) is %" PRIu64
              " x %" PRIu64 ": inner dimensions differ",
              m, k, kb, n);
  if (c->rows != m || c->cols != n || d->rows != m || d->cols != n)
    blasError(call, "C is %" PRIu64 " x %" PRIu64 " and D %" PRIu64 " x %" PRIu64
              ", op(A) op(B) is %" PRIu64 " x %" PRIu64,
              c->rows, c->cols, d->rows, d->cols, m, n);
  const zc_emu_lt_layout *all[4] = {a, b, c, d};
  const char *names[4] = {"A", "B", "C", "D"};
  for (int i = 0; i < 4; ++i) {
    const zc_emu_lt_layout *l = all[i];
    if (l->ld < static_cast<int64_t>(std::max<uint64_t>(l->rows, 1)))
      blasError(call, "%s's leading dimension %" PRId64 " is below its %" PRIu64
                " rows (column-major)",
                names[i], l->ld, l->rows);
    if (l->batch != d->batch)
      blasError(call, "%s has batch count %d, D %d", names[i], l->batch,
                d->batch);
  }
  if (c->type != d->type || c->ld != d->ld)
    blasError(call, "C and D layouts differ (type or ld): not emulated");
  if (a->type != b->type)
    blasError(call, "A and B types differ: not emulated");
  if (a->type == CUDA_R_32F && c->type != CUDA_R_32F)
    blasError(call, "f32 A, B with a bf16 C: not a cuBLASLt combination");
}

} // namespace

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
    cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *returned) {
  const char *call = "cublasLtMatmulAlgoGetHeuristic";
  uint64_t m, n, k;
  checkShapes(call, desc, a, b, c, d, m, n, k);
  *returned = 0;
  if (requested < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  // ZC_EMU_BLAS_NO_ALGO=1: no algorithm, as cuBLASLt says for shapes it
  // cannot do (the caller's fallback runs).
  if (std::string(envOr("ZC_EMU_BLAS_NO_ALGO", "0")) == "1")
    return CUBLAS_STATUS_NOT_SUPPORTED;
  std::memset(&results[0], 0, sizeof(results[0]));
  // The algorithm remembers the alignments it was chosen for.
  for (int i = 0; i < 4; ++i)
    results[0].algo.data[i] = pref ? pref->align[i] : 256;
  results[0].algo.data[7] = 0x5a43454d55ull; // "ZCEMU"
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              const void *alpha, const void *A,
                              cublasLtMatrixLayout_t adesc, const void *B,
                              cublasLtMatrixLayout_t bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t cdesc,
                              void *D, cublasLtMatrixLayout_t ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceBytes, cudaStream_t stream) {
  const char *call = "cublasLtMatmul";
  CALL(call);
  if (!handle || !desc || !adesc || !bdesc || !cdesc || !ddesc)
    blasError(call, "a NULL handle, descriptor or layout");
  uint64_t m, n, k;
  checkShapes(call, desc, adesc, bdesc, cdesc, ddesc, m, n, k);
  if (algo && algo->data[7] != 0x5a43454d55ull)
    blasError(call, "the algorithm did not come from "
              "cublasLtMatmulAlgoGetHeuristic");
  const void *ptrs[4] = {A, B, C, D};
  const zc_emu_lt_layout *layouts[4] = {adesc, bdesc, cdesc, ddesc};
  const char *names[4] = {"A", "B", "C", "D"};
  float alphaValue, betaValue;
  std::memcpy(&alphaValue, alpha, 4); // host scalars (the default mode)
  std::memcpy(&betaValue, beta, 4);
  for (int i = 0; i < 4; ++i) {
    const zc_emu_lt_layout *l = layouts[i];
    size_t bytes = typeBytes(l->type, call);
    if (algo && alignmentOf(ptrs[i]) < static_cast<int64_t>(algo->data[i]))
      blasError(call, "%s at %p is %" PRId64 "-byte aligned, below the %" PRIu64
                " bytes its algorithm was chosen for",
                names[i], ptrs[i], alignmentOf(ptrs[i]), algo->data[i]);
    uint64_t extent = (static_cast<uint64_t>(l->ld) * (l->cols - 1) + l->rows) *
                          bytes +
                      static_cast<uint64_t>(l->batch - 1) *
                          static_cast<uint64_t>(l->stride) * bytes;
    char what[64];
    std::snprintf(what, sizeof(what), "matrix %s (%" PRIu64 " x %" PRIu64
                  ", ld %" PRId64 ", batch %d, stride %" PRId64 ")",
                  names[i], l->rows, l->cols, l->ld, l->batch, l->stride);
    if (l->rows && l->cols)
      checkDeviceRange(ptrs[i], extent, call, what);
  }
  if (workspaceBytes)
    checkDeviceRange(workspace, workspaceBytes, call, "workspace");
  bool bias = desc->epilogue == CUBLASLT_EPILOGUE_BIAS ||
              desc->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
  cudaDataType_t biasType = desc->biasTypeSet ? desc->biasType : ddesc->type;
  if (bias) {
    if (!desc->bias)
      blasError(call, "a BIAS epilogue without CUBLASLT_MATMUL_DESC_BIAS_POINTER");
    checkDeviceRange(desc->bias, m * typeBytes(biasType, call), call, "bias");
  }
  zc_emu_lt_desc d = *desc;
  zc_emu_lt_layout la = *adesc, lb = *bdesc, lc = *cdesc, ld = *ddesc;
  enqueue(stream, call, [=] {
    DeviceAccess access{A, B, C, D, d.bias};
    bool tf32 = d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    size_t ea = typeBytes(la.type, call), eb = typeBytes(lb.type, call),
           ec = typeBytes(lc.type, call);
    // op(A) as m rows of k, op(B) as n columns of k, in double: the
    // products and sums are exact or within double rounding of the f32
    // accumulation cuBLASLt does.
    std::vector<double> rows(m * k), cols(n * k);
    for (int32_t batch = 0; batch < ld.batch; ++batch) {
      const char *a = static_cast<const char *>(A) + batch * la.stride * ea;
      const char *b = static_cast<const char *>(B) + batch * lb.stride * eb;
      const char *c = static_cast<const char *>(C) + batch * lc.stride * ec;
      char *dd = static_cast<char *>(D) + batch * ld.stride * ec;
      for (uint64_t i = 0; i < m; ++i)
        for (uint64_t kk = 0; kk < k; ++kk) {
          uint64_t off = d.transA == CUBLAS_OP_N ? i + kk * la.ld : kk + i * la.ld;
          double v = loadElement(a + off * ea, la.type);
          rows[i * k + kk] = tf32 ? roundTf32(static_cast<float>(v)) : v;
        }
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t kk = 0; kk < k; ++kk) {
          uint64_t off = d.transB == CUBLAS_OP_N ? kk + j * lb.ld : j + kk * lb.ld;
          double v = loadElement(b + off * eb, lb.type);
          cols[j * k + kk] = tf32 ? roundTf32(static_cast<float>(v)) : v;
        }
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t i = 0; i < m; ++i) {
          const double *x = &rows[i * k], *y = &cols[j * k];
          double sum = 0;
          for (uint64_t kk = 0; kk < k; ++kk)
            sum += x[kk] * y[kk];
          double out = alphaValue * sum;
          if (betaValue != 0.0f)
            out += betaValue * loadElement(c + (i + j * lc.ld) * ec, lc.type);
          if (bias)
            out += loadElement(static_cast<const char *>(d.bias) +
                                   i * typeBytes(biasType, call),
                               biasType);
          if ((d.epilogue == CUBLASLT_EPILOGUE_RELU ||
               d.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) &&
              out < 0)
            out = 0;
          storeElement(dd + (i + j * ld.ld) * ec, ld.type,
                       static_cast<float>(out));
        }
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}
