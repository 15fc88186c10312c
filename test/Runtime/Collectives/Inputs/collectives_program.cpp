// A hand-written "generated" program whose training step checks zrt.h's
// collectives on every rank instead of training: every dtype of the table,
// out of place, in the in-place forms zrt.h defines (all-reduce send ==
// recv; reduce-scatter recv == send + rank * count; all-gather send == recv
// + rank * count), with other overlaps (which go through a temporary), with
// empty counts, several requests in flight at once, and the bytes counted.
// Compiled against the CPU runtime and against the CUDA runtime's
// collectives on the emulated CUDA (test/Target/Cuda/Inputs/emulation),
// where buffers are host memory. Rank 0 prints "collectives: N checks
// passed on R rank(s)"; a wrong value fails (zrt_fail) naming the check.

#include "zeroc/Runtime/zrt.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int checks = 0;
int64_t expectedBytes = 0;

/// Bytes one rank sends (zrt.h: ring accounting of the whole buffer).
void expectRing(int factor, int64_t n, int ranks, zrt_dtype dtype) {
  int64_t numerator = int64_t{factor} * (ranks - 1) * n;
  expectedBytes += (2 * numerator + ranks) / (2 * ranks) *
                   static_cast<int64_t>(zrt_dtype_size(dtype));
}

/// Element i of a buffer of `dtype`, as a double.
double get(const void *data, zrt_dtype dtype, int64_t i) {
  switch (dtype) {
  case ZRT_F32:
    return static_cast<const float *>(data)[i];
  case ZRT_BF16:
    return zrt_bf16_to_f32(static_cast<const uint16_t *>(data)[i]);
  case ZRT_I32:
    return static_cast<const int32_t *>(data)[i];
  case ZRT_I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  }
  return 0;
}

void set(void *data, zrt_dtype dtype, int64_t i, double value) {
  switch (dtype) {
  case ZRT_F32:
    static_cast<float *>(data)[i] = static_cast<float>(value);
    break;
  case ZRT_BF16:
    static_cast<uint16_t *>(data)[i] = zrt_f32_to_bf16(static_cast<float>(value));
    break;
  case ZRT_I32:
    static_cast<int32_t *>(data)[i] = static_cast<int32_t>(value);
    break;
  case ZRT_I64:
    static_cast<int64_t *>(data)[i] = static_cast<int64_t>(value);
    break;
  }
}

/// A zrt_alloc'ed buffer of n elements (activations).
struct Buffer {
  zrt_dtype dtype;
  size_t bytes;
  char *data;
  Buffer(zrt_dtype dtype, int64_t n)
      : dtype(dtype), bytes(static_cast<size_t>(n) * zrt_dtype_size(dtype)),
        data(static_cast<char *>(zrt_alloc(bytes, ZRT_MEM_ACTIVATIONS))) {
    std::memset(data, 0xee, bytes);
  }
  ~Buffer() { zrt_free(data, bytes, ZRT_MEM_ACTIVATIONS); }
  void *at(int64_t i) { return data + i * zrt_dtype_size(dtype); }
};

/// What rank r contributes at element i (exact in bf16: small integers).
double value(int r, int64_t i) { return (r + 1) * (i % 7 + 1); }

/// The sum over ranks of value(r, i).
double sum(int ranks, int64_t i) {
  return (i % 7 + 1) * ranks * (ranks + 1) / 2.0;
}

void expect(const std::string &what, const void *data, zrt_dtype dtype,
            int64_t n, double (*want)(int, int, int64_t), int rank, int ranks) {
  for (int64_t i = 0; i < n; ++i) {
    double got = get(data, dtype, i), expected = want(rank, ranks, i);
    if (got != expected)
      zrt_fail("%s (%s): element %lld is %g, expected %g", what.c_str(),
               zrt_dtype_name(dtype), static_cast<long long>(i), got,
               expected);
  }
  ++checks;
}

void checkDtype(zrt_comm *comm, zrt_dtype dt, int64_t c) {
  int rank = zrt_rank(comm), ranks = zrt_world_size(comm);
  std::string tag = " count " + std::to_string(c);
  auto summed = [](int, int ranks, int64_t i) { return sum(ranks, i); };

  { // all-reduce, out of place
    Buffer send(dt, c), recv(dt, c);
    for (int64_t i = 0; i < c; ++i)
      set(send.data, dt, i, value(rank, i));
    zrt_wait(zrt_all_reduce_start(comm, send.data, recv.data, c, dt, nullptr));
    expect("all-reduce" + tag, recv.data, dt, c, summed, rank, ranks);
    expectRing(2, c, ranks, dt);
  }
  { // all-reduce in place (send == recv)
    Buffer buf(dt, c);
    for (int64_t i = 0; i < c; ++i)
      set(buf.data, dt, i, value(rank, i));
    zrt_wait(zrt_all_reduce_start(comm, buf.data, buf.data, c, dt, nullptr));
    expect("all-reduce in place" + tag, buf.data, dt, c, summed, rank, ranks);
    expectRing(2, c, ranks, dt);
  }
  if (c > 0) { // all-reduce into an overlapping buffer one element on
    Buffer buf(dt, c + 1);
    for (int64_t i = 0; i < c; ++i)
      set(buf.data, dt, i, value(rank, i));
    zrt_wait(zrt_all_reduce_start(comm, buf.data, buf.at(1), c, dt, nullptr));
    expect("all-reduce overlapping" + tag, buf.at(1), dt, c, summed, rank,
           ranks);
    expectRing(2, c, ranks, dt);
  }
  { // reduce-scatter, out of place: rank r gets the sum of slot r
    Buffer send(dt, c * ranks), recv(dt, c);
    for (int64_t i = 0; i < c * ranks; ++i)
      set(send.data, dt, i, value(rank, i));
    zrt_wait(zrt_reduce_scatter_start(comm, send.data, recv.data, c, dt,
                                      nullptr));
    for (int64_t i = 0; i < c; ++i)
      if (get(recv.data, dt, i) != sum(ranks, rank * c + i))
        zrt_fail("reduce-scatter%s (%s): element %lld is %g, expected %g",
                 tag.c_str(), zrt_dtype_name(dt), static_cast<long long>(i),
                 get(recv.data, dt, i), sum(ranks, rank * c + i));
    ++checks;
    expectRing(1, c * ranks, ranks, dt);
  }
  { // reduce-scatter in place: the result lands in the rank's own slot
    Buffer buf(dt, c * ranks);
    for (int64_t i = 0; i < c * ranks; ++i)
      set(buf.data, dt, i, value(rank, i));
    zrt_wait(zrt_reduce_scatter_start(comm, buf.data, buf.at(rank * c), c, dt,
                                      nullptr));
    for (int64_t i = 0; i < c; ++i)
      if (get(buf.at(rank * c), dt, i) != sum(ranks, rank * c + i))
        zrt_fail("reduce-scatter in place%s (%s): element %lld of slot %d is "
                 "%g, expected %g",
                 tag.c_str(), zrt_dtype_name(dt), static_cast<long long>(i),
                 rank, get(buf.at(rank * c), dt, i),
                 sum(ranks, rank * c + i));
    ++checks;
    expectRing(1, c * ranks, ranks, dt);
  }
  { // reduce-scatter with recv == send: in place on rank 0 only; on the
    // others an overlap (a temporary), the result at the start
    Buffer buf(dt, c * ranks);
    for (int64_t i = 0; i < c * ranks; ++i)
      set(buf.data, dt, i, value(rank, i));
    zrt_wait(
        zrt_reduce_scatter_start(comm, buf.data, buf.data, c, dt, nullptr));
    for (int64_t i = 0; i < c; ++i)
      if (get(buf.data, dt, i) != sum(ranks, rank * c + i))
        zrt_fail("reduce-scatter into send%s (%s): element %lld is %g, "
                 "expected %g",
                 tag.c_str(), zrt_dtype_name(dt), static_cast<long long>(i),
                 get(buf.data, dt, i), sum(ranks, rank * c + i));
    ++checks;
    expectRing(1, c * ranks, ranks, dt);
  }
  auto checkGathered = [&](const std::string &what, const void *recv) {
    for (int r = 0; r < ranks; ++r)
      for (int64_t i = 0; i < c; ++i)
        if (get(recv, dt, r * c + i) != value(r, i))
          zrt_fail("%s%s (%s): element %lld of rank %d's slot is %g, expected "
                   "%g",
                   what.c_str(), tag.c_str(), zrt_dtype_name(dt),
                   static_cast<long long>(i), r, get(recv, dt, r * c + i),
                   value(r, i));
    ++checks;
    expectRing(1, c * ranks, ranks, dt);
  };
  { // all-gather, out of place
    Buffer send(dt, c), recv(dt, c * ranks);
    for (int64_t i = 0; i < c; ++i)
      set(send.data, dt, i, value(rank, i));
    zrt_wait(zrt_all_gather_start(comm, send.data, recv.data, c, dt, nullptr));
    checkGathered("all-gather", recv.data);
  }
  { // all-gather in place: the rank's input is its own slot
    Buffer buf(dt, c * ranks);
    for (int64_t i = 0; i < c; ++i)
      set(buf.at(rank * c), dt, i, value(rank, i));
    zrt_wait(zrt_all_gather_start(comm, buf.at(rank * c), buf.data, c, dt,
                                  nullptr));
    checkGathered("all-gather in place", buf.data);
  }
  { // all-gather from the start of recv: in place on rank 0 only
    Buffer buf(dt, c * ranks);
    for (int64_t i = 0; i < c; ++i)
      set(buf.data, dt, i, value(rank, i));
    zrt_wait(zrt_all_gather_start(comm, buf.data, buf.data, c, dt, nullptr));
    checkGathered("all-gather from recv", buf.data);
  }
}

void step(zrt_comm *comm, const void *, const void *, int64_t, float *loss,
          float *gradNorm, float *lr) {
  int64_t before = zrt_comm_bytes_sent();
  expectedBytes = 0;
  for (zrt_dtype dt : {ZRT_F32, ZRT_BF16, ZRT_I32, ZRT_I64})
    for (int64_t c : {int64_t{0}, int64_t{1}, int64_t{37}})
      checkDtype(comm, dt, c);

  // Several in flight at once, waited in another order than started.
  int rank = zrt_rank(comm), ranks = zrt_world_size(comm);
  const int64_t c = 11;
  std::vector<Buffer *> buffers;
  std::vector<zrt_request *> requests;
  for (int k = 0; k < 6; ++k) {
    Buffer *buf = new Buffer(ZRT_F32, c * ranks);
    for (int64_t i = 0; i < c * ranks; ++i)
      set(buf->data, ZRT_F32, i, value(rank, i) + k);
    buffers.push_back(buf);
    requests.push_back(zrt_reduce_scatter_start(
        comm, buf->data, buf->at(rank * c), c, ZRT_F32, nullptr));
    expectRing(1, c * ranks, ranks, ZRT_F32);
  }
  for (int k = 5; k >= 0; --k) {
    zrt_wait(requests[k]);
    for (int64_t i = 0; i < c; ++i) {
      double want = sum(ranks, rank * c + i) + k * ranks;
      if (get(buffers[k]->at(rank * c), ZRT_F32, i) != want)
        zrt_fail("reduce-scatter %d of 6 in flight: element %lld is %g, "
                 "expected %g",
                 k, static_cast<long long>(i),
                 get(buffers[k]->at(rank * c), ZRT_F32, i), want);
    }
    ++checks;
    delete buffers[k];
  }

  int64_t sent = zrt_comm_bytes_sent() - before;
  if (sent != expectedBytes)
    zrt_fail("zrt_comm_bytes_sent counted %lld bytes, the ring formula %lld",
             static_cast<long long>(sent),
             static_cast<long long>(expectedBytes));
  ++checks;
  if (rank == 0) {
    std::printf("collectives: %d checks passed on %d rank(s)\n", checks, ranks);
    std::fflush(stdout);
  }
  *loss = 0;
  *gradNorm = 0;
  *lr = 0;
}

#ifndef ZW
#define ZW 1
#endif

const zrt_program program = {
    "collectives", ZW, 0, 1, 4, 256, ZRT_I32, 0, nullptr, step, nullptr,
    nullptr};

} // namespace

const zrt_program *zeroc_program(void) { return &program; }
