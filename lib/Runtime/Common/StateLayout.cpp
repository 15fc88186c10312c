//===- StateLayout.cpp - zrt_state_range: what a rank holds of a state ----===//
//
// The one definition of the state layout (zrt.h): a state with its own
// storage (the whole tensor on every rank) or a member of a flat buffer
// (replicated, or sharded in chunks of shard_numel of the buffer's logical
// numbering, so that a member's share on a rank may be uneven or empty).
// Sharding is the buffer's alone. Allocation, initialization, --init and
// the checkpoints (--save, --resume, through localRange, its wrapper) all
// ask zrt_state_range; StateLayout.h has the services' helpers around it.
//
//===----------------------------------------------------------------------===//

#include "StateLayout.h"

#include <algorithm>

namespace {

int64_t clampTo(int64_t value, int64_t lo, int64_t hi) {
  return std::min(std::max(value, lo), hi);
}

char *advance(void *data, int64_t elements, zrt_dtype dtype) {
  return static_cast<char *>(data) +
         elements * static_cast<int64_t>(zrt_dtype_size(dtype));
}

} // namespace

extern "C" zrt_range zrt_state_range(const zrt_program *program,
                                     const zrt_state *state, int rank,
                                     int world_size) {
  (void)world_size; // the layout needs only the rank: numel = N * shard
  zrt_range range = {0, 0, nullptr};
  if (state->buffer < 0) { // its own storage: the whole tensor
    range.count = state->numel;
    range.data = range.count > 0 ? state->data : nullptr;
    return range;
  }
  const zrt_buffer &buffer = program->buffers[state->buffer];
  if (buffer.shard_numel == buffer.numel) { // replicated
    range.count = state->numel;
    if (range.count > 0 && buffer.data)
      range.data = advance(buffer.data, state->buffer_offset, buffer.dtype);
    return range;
  }
  int64_t s = buffer.shard_numel, first = rank * s;
  int64_t lo = clampTo(first - state->buffer_offset, 0, state->numel);
  int64_t hi = clampTo(first + s - state->buffer_offset, 0, state->numel);
  range.offset = lo;
  range.count = hi > lo ? hi - lo : 0;
  if (range.count > 0 && buffer.data)
    range.data = advance(buffer.data, state->buffer_offset + lo - first,
                         buffer.dtype);
  return range;
}

namespace zeroc::rt {

StateRange localRange(const zrt_program &program, const zrt_state &state,
                      int rank, int worldSize) {
  zrt_range range = zrt_state_range(&program, &state, rank, worldSize);
  return StateRange{range.offset, range.count};
}

size_t heldBytes(const zrt_program &program, const zrt_state &state,
                 int rank, int worldSize) {
  return static_cast<size_t>(
             zrt_state_range(&program, &state, rank, worldSize).count) *
         zrt_dtype_size(state.dtype);
}

size_t bufferBytes(const zrt_buffer &buffer) {
  return static_cast<size_t>(buffer.shard_numel) * zrt_dtype_size(buffer.dtype);
}

void pointMembers(const zrt_program &program, int rank, int worldSize) {
  for (int i = 0; i < program.num_states; ++i) {
    zrt_state &state = program.states[i];
    if (state.buffer >= 0)
      state.data = zrt_state_range(&program, &state, rank, worldSize).data;
  }
}

} // namespace zeroc::rt
