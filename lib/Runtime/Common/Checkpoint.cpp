//===- Checkpoint.cpp - state storage: the table, --seed and --init -------===//
//
// Every zrt_state gets its storage from zrt_alloc (parameters in
// PARAMETERS, gradients in GRADIENTS, everything else in OPTIMIZER_STATES;
// Device.cpp, Cuda/Device.cu). This file checks the program's state table
// (its flat buffers included) and initializes the storage through host
// memory (on a GPU the states are initialized before they move to the
// device, Services.h statesToDevice). What a rank holds of a state is
// zrt_state_range's (zrt.h, StateLayout.cpp; localRange here): the whole
// tensor in its own storage, or its share of a flat buffer (an uneven or
// empty range of its elements when the buffer is sharded). It writes only
// those elements; a buffer's padding stays zero.
//
// Initialization is the evaluator's (lib/Evaluator/State.cpp) element for
// element: a parameter's element i is Random.h's normal(name, seed, std, i)
// rounded to f32 and then to the parameter's type, a master copy is that f32
// value, other state is zero. So every world size and stage starts from the
// same weights.
//
// Checkpoints (--save, --resume, --init DIR) are CheckpointSave.cpp and
// CheckpointLoad.cpp; their format is Checkpoint.h's.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "zeroc/Support/OutputFile.h"
#include "zeroc/Support/Random.h"
#include "zeroc/Support/SafeTensors.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <set>

#include <sys/stat.h>

namespace st = zeroc::safetensors;
namespace output = zeroc::output;

namespace zeroc::rt {

namespace {

std::string modelName(const zrt_program &program) {
  return program.model ? program.model : "model";
}

std::vector<int64_t> logicalShape(const zrt_state &state) {
  return std::vector<int64_t>(state.shape, state.shape + state.rank);
}

/// Stores `value` at element `index` of storage of `dtype`, rounding as the
/// evaluator does (f32 by a cast, bf16 to nearest even of the f32 value).
inline void storeValue(void *data, zrt_dtype dtype, int64_t index,
                       double value) {
  switch (dtype) {
  case ZRT_F32:
    static_cast<float *>(data)[index] = static_cast<float>(value);
    break;
  case ZRT_BF16:
    static_cast<uint16_t *>(data)[index] =
        zrt_f32_to_bf16(static_cast<float>(value));
    break;
  case ZRT_I32:
    static_cast<int32_t *>(data)[index] = static_cast<int32_t>(value);
    break;
  case ZRT_I64:
    static_cast<int64_t *>(data)[index] = static_cast<int64_t>(value);
    break;
  }
}

/// Element `index` of a file tensor (F32, BF16 or F64) as a double.
inline double fileValue(const st::Tensor &tensor, int64_t index) {
  const uint8_t *bytes = tensor.bytes.data();
  switch (tensor.dtype) {
  case st::DType::F32: {
    float value;
    std::memcpy(&value, bytes + 4 * index, 4);
    return value;
  }
  case st::DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * index, 2);
    return zrt_bf16_to_f32(bits);
  }
  case st::DType::F64: {
    double value;
    std::memcpy(&value, bytes + 8 * index, 8);
    return value;
  }
  default:
    return 0;
  }
}

/// The parameter state called `name`, or null.
const zrt_state *findParam(const zrt_program &program, const char *name) {
  if (!name)
    return nullptr;
  for (int i = 0; i < program.num_states; ++i)
    if (program.states[i].kind == ZRT_STATE_PARAM &&
        std::strcmp(program.states[i].name, name) == 0)
      return &program.states[i];
  return nullptr;
}

/// The initial value of element `index` of parameter `param` (before
/// rounding to the parameter's type).
inline double initialValue(const zrt_state &param, uint64_t seed,
                           int64_t index) {
  switch (param.init) {
  case ZRT_INIT_ZEROS:
    return 0.0;
  case ZRT_INIT_ONES:
    return 1.0;
  case ZRT_INIT_NORMAL:
    return random::normal(param.name, seed, param.std,
                          static_cast<uint64_t>(index));
  }
  return 0.0;
}

/// The parameter the module's train.tied gives the second name `alias`,
/// or null.
const zrt_state *tiedParam(const zrt_program &program,
                           const std::string &alias) {
  for (int i = 0; i < program.num_tied && program.tied; ++i)
    if (alias == program.tied[2 * i])
      return findParam(program, program.tied[2 * i + 1]);
  return nullptr;
}

/// The tensor of `file` that holds `param`: its own name, else one of the
/// names the module ties to it.
const st::Tensor *paramTensor(const zrt_program &program, const st::File &file,
                              const zrt_state &param) {
  if (const st::Tensor *tensor = file.find(param.name))
    return tensor;
  for (int i = 0; i < program.num_tied && program.tied; ++i)
    if (std::strcmp(program.tied[2 * i + 1], param.name) == 0)
      if (const st::Tensor *tensor = file.find(program.tied[2 * i]))
        return tensor;
  return nullptr;
}

/// The flat buffers of the program: each a known dtype and category,
/// replicated (shard_numel == numel) or sharded N ways (numel == N *
/// shard_numel).
std::string validateBuffers(const zrt_program &program) {
  if (program.num_buffers < 0 ||
      (program.num_buffers > 0 && !program.buffers))
    return "no buffer table (num_buffers " +
           std::to_string(program.num_buffers) + ")";
  for (int b = 0; b < program.num_buffers; ++b) {
    const zrt_buffer &buffer = program.buffers[b];
    std::string name = "buffer #" + std::to_string(b) +
                       (buffer.name ? " '" + std::string(buffer.name) + "'"
                                    : std::string());
    if (!zrt_dtype_valid(buffer.dtype))
      return name + ": unknown dtype " + std::to_string(buffer.dtype);
    if (buffer.category < 0 || buffer.category >= ZRT_MEM_CATEGORIES)
      return name + ": unknown memory category " +
             std::to_string(buffer.category);
    if (buffer.numel < 0 || buffer.shard_numel < 0)
      return name + ": numel " + std::to_string(buffer.numel) +
             ", shard_numel " + std::to_string(buffer.shard_numel);
    if (buffer.shard_numel != buffer.numel &&
        buffer.numel != program.world_size * buffer.shard_numel)
      return name + ": numel " + std::to_string(buffer.numel) +
             " is neither shard_numel " + std::to_string(buffer.shard_numel) +
             " (replicated) nor " + std::to_string(program.world_size) +
             " x shard_numel (sharded over the world)";
  }
  // Members of one buffer do not overlap.
  std::vector<std::vector<std::pair<int64_t, int>>> members(
      static_cast<size_t>(program.num_buffers));
  for (int i = 0; i < program.num_states; ++i) {
    const zrt_state &state = program.states[i];
    if (state.buffer >= 0 && state.buffer < program.num_buffers)
      members[state.buffer].push_back({state.buffer_offset, i});
  }
  for (int b = 0; b < program.num_buffers; ++b) {
    auto &list = members[static_cast<size_t>(b)];
    std::sort(list.begin(), list.end());
    for (size_t k = 1; k < list.size(); ++k) {
      const zrt_state &before = program.states[list[k - 1].second];
      const zrt_state &after = program.states[list[k].second];
      if (before.buffer_offset + before.numel > after.buffer_offset)
        return std::string("states '") + before.name + "' and '" + after.name +
               "' overlap in buffer #" + std::to_string(b);
    }
  }
  return "";
}

/// A member of a flat buffer: a valid index, the buffer's dtype, inside its
/// logical numbering.
std::string validateMember(const zrt_program &program,
                           const zrt_state &state) {
  if (state.buffer >= program.num_buffers)
    return "buffer " + std::to_string(state.buffer) + " is not one of the " +
           std::to_string(program.num_buffers) + " buffers";
  const zrt_buffer &buffer = program.buffers[state.buffer];
  std::string name = "buffer #" + std::to_string(state.buffer);
  if (buffer.dtype != state.dtype)
    return std::string("dtype ") + zrt_dtype_name(state.dtype) + " in " +
           name + " of dtype " + zrt_dtype_name(buffer.dtype);
  if (state.buffer_offset < 0 ||
      state.buffer_offset + state.numel > buffer.numel)
    return "elements [" + std::to_string(state.buffer_offset) + ", " +
           std::to_string(state.buffer_offset + state.numel) +
           ") are outside " + name + "'s " + std::to_string(buffer.numel);
  return "";
}

} // namespace

//===----------------------------------------------------------------------===//
// The program's state table
//===----------------------------------------------------------------------===//

std::string validateProgram(const zrt_program &program, int worldSize) {
  std::string model = modelName(program);
  auto bad = [&](const std::string &what) {
    return "the program '" + model + "' is malformed: " + what;
  };
  if (program.world_size < 1)
    return bad("world_size " + std::to_string(program.world_size));
  if (program.batch_per_rank < 1 || program.seq_len < 1)
    return bad("batch_per_rank " + std::to_string(program.batch_per_rank) +
               ", seq_len " + std::to_string(program.seq_len));
  if (program.vocab < 1)
    return bad("vocab " + std::to_string(program.vocab));
  if (program.id_dtype != ZRT_I32 && program.id_dtype != ZRT_I64)
    return bad("id_dtype is not ZRT_I32 or ZRT_I64");
  if (!program.train_step)
    return bad("no train_step entry point");
  if (program.num_states < 0 || (program.num_states > 0 && !program.states))
    return bad("no state table");
  if (std::string error = validateBuffers(program); !error.empty())
    return bad(error);
  std::set<std::string> names;
  for (int i = 0; i < program.num_states; ++i) {
    const zrt_state &state = program.states[i];
    if (!state.name)
      return bad("state #" + std::to_string(i) + " has no name");
    std::string name = state.name;
    auto badState = [&](const std::string &what) {
      return bad("state '" + name + "': " + what);
    };
    if (!names.insert(name).second)
      return badState("declared twice");
    if (state.kind < ZRT_STATE_PARAM || state.kind > ZRT_STATE_GRAD)
      return badState("unknown kind " + std::to_string(state.kind));
    if (!zrt_dtype_valid(state.dtype))
      return badState("unknown dtype " + std::to_string(state.dtype));
    if (state.rank < 0 || (state.rank > 0 && !state.shape))
      return badState("no shape");
    int64_t numel = 1;
    for (int d = 0; d < state.rank; ++d) {
      if (state.shape[d] < 0)
        return badState("negative dimension");
      numel *= state.shape[d];
    }
    if (numel != state.numel)
      return badState("numel " + std::to_string(state.numel) +
                      " is not the product of its shape " +
                      ckpt::formatShape(logicalShape(state)));
    if (state.buffer < -1)
      return badState("buffer " + std::to_string(state.buffer) +
                      " (-1: its own storage, else an index into buffers)");
    if (isMember(state))
      if (std::string error = validateMember(program, state); !error.empty())
        return badState(error);
    if (state.init < ZRT_INIT_ZEROS || state.init > ZRT_INIT_NORMAL)
      return badState("unknown init " + std::to_string(state.init));
    StateRange range = localRange(program, state, worldRank(), worldSize);
    if (range.count < 0 || range.offset < 0 ||
        range.offset + range.count > state.numel)
      return badState("rank " + std::to_string(worldRank()) +
                      " holds elements [" + std::to_string(range.offset) +
                      ", " + std::to_string(range.offset + range.count) +
                      "), outside its tensor");
  }
  for (int i = 0; i < program.num_states; ++i) {
    const zrt_state &state = program.states[i];
    if (state.kind == ZRT_STATE_PARAM)
      continue;
    const zrt_state *param = findParam(program, state.of);
    if (!param)
      return bad("state '" + std::string(state.name) + "' belongs to '" +
                 (state.of ? state.of : "(null)") +
                 "', which is not a parameter");
    if (param->numel != state.numel)
      return bad("state '" + std::string(state.name) + "' has " +
                 std::to_string(state.numel) + " elements, its parameter " +
                 std::to_string(param->numel));
  }
  return "";
}

zrt_mem_category stateCategory(const zrt_state &state) {
  switch (state.kind) {
  case ZRT_STATE_PARAM:
    return ZRT_MEM_PARAMETERS;
  case ZRT_STATE_GRAD:
    return ZRT_MEM_GRADIENTS;
  default:
    return ZRT_MEM_OPTIMIZER_STATES;
  }
}

size_t stateBytes(const zrt_state &state) {
  if (isMember(state))
    return 0; // its buffer's storage
  return static_cast<size_t>(state.numel) * zrt_dtype_size(state.dtype);
}

/// The parameter whose initial values `state` starts from: itself for a
/// parameter, its parameter for a master copy; null for state that starts
/// at zero.
static const zrt_state *initialSource(const zrt_program &program,
                                      const zrt_state &state) {
  if (state.kind == ZRT_STATE_PARAM)
    return &state;
  if (state.kind == ZRT_STATE_MASTER)
    return findParam(program, state.of);
  return nullptr;
}

/// Zeroes what this rank stores of `state`: its own storage (the whole
/// tensor) or the elements of its buffer it holds (StateLayout.h).
static void zeroHeld(const zrt_program &program, zrt_state &state) {
  if (state.data)
    std::memset(state.data, 0,
                heldBytes(program, state, worldRank(), worldSize()));
}

/// Fills the elements of `state` that this rank holds with value(i) for
/// logical element i.
template <typename Value>
void fillHeld(const zrt_program &program, zrt_state &state, Value value) {
  StateRange range = localRange(program, state, worldRank(), worldSize());
  parallelChunks(range.count, [&](int64_t from, int64_t to) {
    for (int64_t j = from; j < to; ++j)
      storeValue(state.data, state.dtype, j, value(range.offset + j));
  });
}

void initializeFromSeed(const zrt_program &program, uint64_t seed) {
  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    const zrt_state *param = initialSource(program, state);
    if (!param) {
      zeroHeld(program, state);
      continue;
    }
    // Rounded to f32 first, as the evaluator does; a master keeps it.
    fillHeld(program, state, [&](int64_t index) {
      return static_cast<double>(
          static_cast<float>(initialValue(*param, seed, index)));
    });
  }
}

std::string initializeFromFile(const zrt_program &program,
                               const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
      !isHuggingFaceCheckpoint(path)) {
    CheckpointInfo ignored;
    return initializeFromCheckpoint(program, path, ignored);
  }
  st::File file;
  if (std::string error = readInitFile(path, file); !error.empty())
    return "--init: " + error;
  std::string model = modelName(program);
  for (const st::Tensor &tensor : file.tensors) {
    std::string prefix = path + ": tensor '" + tensor.name + "': ";
    const zrt_state *param = findParam(program, tensor.name.c_str());
    const zrt_state *tiedTo = param ? nullptr : tiedParam(program, tensor.name);
    if (!param && !tiedTo)
      return prefix + "model '" + model + "' has no parameter of that name";
    if (tiedTo)
      param = tiedTo;
    if (tensor.dtype != st::DType::F32 && tensor.dtype != st::DType::BF16 &&
        tensor.dtype != st::DType::F64)
      return prefix + "dtype " + st::dtypeName(tensor.dtype) +
             " is not F32 or BF16";
    if (tensor.shape != logicalShape(*param))
      return prefix + "shape " + ckpt::formatShape(tensor.shape) +
             " differs from " +
             (tiedTo ? "the tied " + std::string(param->name) + "'s "
                     : std::string("the parameter's ")) +
             ckpt::formatShape(logicalShape(*param));
  }
  for (int s = 0; s < program.num_states; ++s)
    if (program.states[s].kind == ZRT_STATE_PARAM &&
        !paramTensor(program, file, program.states[s]))
      return path + ": no tensor for parameter '" +
             std::string(program.states[s].name) + "' " +
             ckpt::formatShape(logicalShape(program.states[s]));
  // A file with both names of a tied parameter: they must agree.
  for (int t = 0; t < program.num_tied && program.tied; ++t) {
    const char *alias = program.tied[2 * t], *name = program.tied[2 * t + 1];
    const st::Tensor *second = file.find(alias), *first = file.find(name);
    if (!second || !first)
      continue;
    for (int64_t i = 0; i < second->numElements(); ++i)
      if (static_cast<float>(fileValue(*second, i)) !=
          static_cast<float>(fileValue(*first, i)))
        return path + ": tensor '" + alias + "' differs from '" + name +
               "' at element " + std::to_string(i) + ", but model '" + model +
               "' ties them (train.tied: one parameter under both names)";
  }

  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    const zrt_state *param = initialSource(program, state);
    if (!param) {
      zeroHeld(program, state);
      continue;
    }
    const st::Tensor &tensor = *paramTensor(program, file, *param);
    fillHeld(program, state, [&](int64_t index) {
      return static_cast<double>(static_cast<float>(fileValue(tensor, index)));
    });
  }
  return "";
}

} // namespace zeroc::rt
