//===- StateLayout.h - the services' helpers around zrt_state_range -*- C++ -*-===//
//
// Internal to lib/Runtime: what the allocators (Cpu/Device.cpp,
// Cuda/Device.cu) and the checkpoint code share about the two state
// layouts of zrt.h (a state's own storage, a member of a flat buffer).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_STATELAYOUT_H
#define ZEROC_LIB_RUNTIME_COMMON_STATELAYOUT_H

#include "zeroc/Runtime/zrt.h"

#include <cstddef>
#include <cstdint>

namespace zeroc::rt {

/// The logical elements of a state that a rank holds: flat elements
/// [offset, offset + count) of the unpadded tensor (count may be 0), stored
/// contiguously from that rank's `state.data` (a member's `data` points at
/// the first element it holds, pointMembers below).
struct StateRange {
  int64_t offset = 0;
  int64_t count = 0;
};

/// zrt_state_range without the data pointer, for any rank: what the
/// initialization and the checkpoints (plan, save, load) read and write.
StateRange localRange(const zrt_program &program, const zrt_state &state,
                      int rank, int worldSize);

/// Whether `state` lives in a flat buffer.
inline bool isMember(const zrt_state &state) { return state.buffer >= 0; }

/// The bytes rank `rank` stores for `state`: its own storage (the whole
/// tensor) or, for a member, the elements it holds of the buffer.
size_t heldBytes(const zrt_program &program, const zrt_state &state,
                 int rank, int worldSize);

/// The bytes a rank stores of `buffer` (shard_numel elements).
size_t bufferBytes(const zrt_buffer &buffer);

/// Points every member state's `data` at what this rank holds of it, in
/// the buffers' current storage (NULL when it holds nothing).
void pointMembers(const zrt_program &program, int rank, int worldSize);

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_STATELAYOUT_H
