//===- Device.cpp - the device hooks of Services.h, for the CPU -----------===//
//
// The CPU runtime's "device" is the host: the program reads the ids and the
// states where the services write them, so every hook is trivial. The CUDA
// runtime's versions (Cuda/Device.cu) move them to and from the GPU.
//
//===----------------------------------------------------------------------===//

#include "Services.h"
#include "StateLayout.h"

#include <cstdlib>
#include <cstring>

namespace zeroc::rt {

void deviceInitialize(const zrt_program &) {}

IdBuffer::IdBuffer(size_t size) : bytes(size) {
  size_t rounded = (bytes + 63) / 64 * 64;
  hostData = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!hostData)
    zrt_fail("out of memory for a batch of ids (%zu bytes)", bytes);
}

IdBuffer::~IdBuffer() { std::free(hostData); }

void *IdBuffer::host() { return hostData; }

const void *IdBuffer::upload() { return hostData; }

void allocateStates(const zrt_program &program) {
  // Flat buffers once, in their category, zeroed; their members point into
  // them (StateLayout.h).
  for (int b = 0; b < program.num_buffers; ++b) {
    zrt_buffer &buffer = program.buffers[b];
    buffer.data = zrt_alloc(bufferBytes(buffer), buffer.category);
    std::memset(buffer.data, 0, bufferBytes(buffer));
  }
  for (int i = 0; i < program.num_states; ++i) {
    zrt_state &state = program.states[i];
    if (isMember(state))
      continue;
    state.data = zrt_alloc(stateBytes(state), stateCategory(state));
    std::memset(state.data, 0, stateBytes(state));
  }
  pointMembers(program, worldRank(), worldSize());
}

void statesToDevice(const zrt_program &) {}

void statesToHost(const zrt_program &) {}

void stateToHost(const zrt_state &state, size_t offset, size_t bytes,
                 void *host) {
  std::memcpy(host, static_cast<const uint8_t *>(state.data) + offset, bytes);
}

void freeStates(const zrt_program &program) {
  for (int i = 0; i < program.num_states; ++i) {
    zrt_state &state = program.states[i];
    if (!isMember(state))
      zrt_free(state.data, stateBytes(state), stateCategory(state));
    state.data = nullptr;
  }
  for (int b = 0; b < program.num_buffers; ++b) {
    zrt_buffer &buffer = program.buffers[b];
    zrt_free(buffer.data, bufferBytes(buffer), buffer.category);
    buffer.data = nullptr;
  }
}

int64_t devicePeakBytes() { return -1; }

} // namespace zeroc::rt
