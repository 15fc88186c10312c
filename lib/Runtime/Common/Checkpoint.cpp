//===- Checkpoint.cpp - state storage: init, --init, --save, --resume -----===//
//
// Every zrt_state gets its storage from zrt_alloc (parameters in
// PARAMETERS, gradients in GRADIENTS, everything else in OPTIMIZER_STATES;
// Device.cpp, Cuda/Device.cu). This file reads and writes it through host
// memory: on a GPU the states are initialized before they move to the
// device and saved after they come back (Services.h, statesToDevice).
// What a rank holds of a state is zrt_state_range's (zrt.h, StateLayout.cpp):
// its own storage (a sharded state, shards = N, holds flat elements
// [r*storage_numel, ...) of the full tensor on rank r, padding zero) or its
// share of a flat buffer (an uneven or empty range of its elements when the
// buffer is sharded). Initialization, --init, the model file and the state
// files all go through that range.
//
// Initialization is the evaluator's (lib/Evaluator/State.cpp) element for
// element: a parameter's element i is Random.h's normal(name, seed, std, i)
// rounded to f32 and then to the parameter's type, a master copy is that f32
// value, other state is zero. So every world size and stage starts from the
// same weights.
//
// A checkpoint directory holds
//   model.safetensors        the full fp32 weights, gathered with MPI (the
//                            master copy where there is one), named as the
//                            parameters; a model without an lm_head param
//                            gets lm_head.weight = transformer.wte.weight
//   state.rankR.safetensors  rank R's storage of every state, raw, with
//                            metadata: model, world_size, zero_stage, rank,
//                            step, seed, fingerprint
// Files are written to temporaries and renamed into place only once every
// rank has written its own, so a failure leaves nothing half-written.
//
//===----------------------------------------------------------------------===//

#include "Services.h"
#include "StateLayout.h"

#include "zeroc/Support/Random.h"
#include "zeroc/Support/SafeTensors.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

namespace st = zeroc::safetensors;

namespace zeroc::rt {

namespace {

std::string modelName(const zrt_program &program) {
  return program.model ? program.model : "model";
}

const char *kindName(zrt_state_kind kind) {
  switch (kind) {
  case ZRT_STATE_PARAM:
    return "param";
  case ZRT_STATE_MASTER:
    return "master";
  case ZRT_STATE_EXP_AVG:
    return "exp_avg";
  case ZRT_STATE_EXP_AVG_SQ:
    return "exp_avg_sq";
  case ZRT_STATE_MOMENTUM_BUFFER:
    return "momentum_buffer";
  case ZRT_STATE_GRAD:
    return "grad";
  }
  return "?";
}

st::DType fileDType(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return st::DType::F32;
  case ZRT_BF16:
    return st::DType::BF16;
  case ZRT_I32:
    return st::DType::I32;
  case ZRT_I64:
    return st::DType::I64;
  }
  return st::DType::F32;
}

std::vector<int64_t> logicalShape(const zrt_state &state) {
  return std::vector<int64_t>(state.shape, state.shape + state.rank);
}

/// What this rank holds of `state` (zrt_state_range).
zrt_range heldRange(const zrt_program &program, const zrt_state &state) {
  return zrt_state_range(&program, &state, worldRank(), worldSize());
}

/// The shape this rank's storage of a state is saved with: logical when it
/// holds the whole tensor unsharded, else [storage_numel] (own storage,
/// padding included) or [count] (a member of a sharded buffer).
std::vector<int64_t> storageShape(const zrt_program &program,
                                  const zrt_state &state) {
  if (state.shards <= 1)
    return logicalShape(state);
  if (isMember(state))
    return {heldRange(program, state).count};
  return {state.storage_numel};
}

size_t storageBytes(const zrt_program &program, const zrt_state &state) {
  return heldBytes(program, state, worldRank(), worldSize());
}

/// The start of this rank's storage of `state` (NULL when it holds none).
void *storageData(const zrt_program &program, const zrt_state &state) {
  return isMember(state) ? heldRange(program, state).data : state.data;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
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

/// Element `index` of storage of `dtype` as f32 (masters, the model file).
inline float loadFloat(const void *data, zrt_dtype dtype, int64_t index) {
  switch (dtype) {
  case ZRT_F32:
    return static_cast<const float *>(data)[index];
  case ZRT_BF16:
    return zrt_bf16_to_f32(static_cast<const uint16_t *>(data)[index]);
  case ZRT_I32:
    return static_cast<float>(static_cast<const int32_t *>(data)[index]);
  case ZRT_I64:
    return static_cast<float>(static_cast<const int64_t *>(data)[index]);
  }
  return 0;
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

/// The master copy of parameter `param`, or null.
const zrt_state *findMaster(const zrt_program &program,
                            const zrt_state &param) {
  for (int i = 0; i < program.num_states; ++i)
    if (program.states[i].kind == ZRT_STATE_MASTER && program.states[i].of &&
        std::strcmp(program.states[i].of, param.name) == 0)
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

/// Whether the model ties lm_head to the token embedding: it has
/// transformer.wte.weight and no lm_head.weight parameter.
bool tiesLmHead(const zrt_program &program) {
  return findParam(program, "transformer.wte.weight") &&
         !findParam(program, "lm_head.weight");
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

std::string joinPath(const std::string &dir, const std::string &name) {
  if (!dir.empty() && dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

/// mkdir -p.
std::string makeDirectories(const std::string &dir) {
  std::string prefix;
  size_t at = 0;
  while (at <= dir.size()) {
    size_t slash = dir.find('/', at);
    if (slash == std::string::npos)
      slash = dir.size();
    prefix = dir.substr(0, slash);
    at = slash + 1;
    if (prefix.empty())
      continue;
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return dir + ": cannot create the checkpoint directory: " +
             std::strerror(errno);
  }
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    return dir +
           ": cannot create the checkpoint directory: " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return dir + ": exists and is not a directory";
  return "";
}

std::string writeBytes(const std::string &path,
                       const std::vector<uint8_t> &buffer) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return path + ": cannot create: " + std::strerror(errno);
  size_t written = std::fwrite(buffer.data(), 1, buffer.size(), file);
  bool ok = written == buffer.size() && std::fflush(file) == 0 &&
            ::fsync(fileno(file)) == 0;
  int error = errno;
  ok = std::fclose(file) == 0 && ok;
  if (!ok) {
    std::remove(path.c_str());
    return path + ": write error: " + std::strerror(error);
  }
  return "";
}

/// Gathers the full flat value of `state` to rank 0 as f32 (every rank
/// calls this; only rank 0's result is meaningful): each rank sends what it
/// holds (zrt_state_range), rank 0 puts it at its logical offset.
std::vector<float> gatherFloats(const zrt_program &program,
                                const zrt_state &state) {
  std::vector<float> full;
  int rank = worldRank(), ranks = worldSize();
  zrt_range mine = heldRange(program, state);
  if (rank == 0)
    full.assign(static_cast<size_t>(state.numel), 0.0f);
  if (zrt_state_range(&program, &state, 0, ranks).count == state.numel) {
    // Rank 0 holds it all (replicated).
    if (rank == 0)
      for (int64_t i = 0; i < state.numel; ++i)
        full[i] = loadFloat(mine.data, state.dtype, i);
    return full;
  }
  int64_t most = 0;
  for (int r = 0; r < ranks; ++r)
    most = std::max(most, zrt_state_range(&program, &state, r, ranks).count);
  if (most > INT32_MAX)
    zrt_fail("--save: state '%s' holds %" PRId64
             " elements on a rank, more than one MPI gather takes",
             state.name, most);
  size_t size = zrt_dtype_size(state.dtype);
  std::vector<uint8_t> sent(static_cast<size_t>(most) * size, 0);
  if (mine.count > 0)
    std::memcpy(sent.data(), mine.data, static_cast<size_t>(mine.count) * size);
  MPI_Datatype element;
  MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &element);
  MPI_Type_commit(&element);
  std::vector<uint8_t> gathered;
  if (rank == 0)
    gathered.resize(sent.size() * static_cast<size_t>(ranks));
  MPI_Gather(sent.data(), static_cast<int>(most), element, gathered.data(),
             static_cast<int>(most), element, 0, MPI_COMM_WORLD);
  MPI_Type_free(&element);
  if (rank == 0)
    for (int r = 0; r < ranks; ++r) {
      zrt_range held = zrt_state_range(&program, &state, r, ranks);
      const uint8_t *from = gathered.data() + static_cast<size_t>(r) * sent.size();
      for (int64_t j = 0; j < held.count; ++j)
        full[held.offset + j] = loadFloat(from, state.dtype, j);
    }
  return full;
}

st::Tensor floatTensor(const std::string &name,
                       const std::vector<int64_t> &shape,
                       const std::vector<float> &values) {
  st::Tensor tensor;
  tensor.name = name;
  tensor.dtype = st::DType::F32;
  tensor.shape = shape;
  tensor.bytes.resize(values.size() * 4);
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
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
/// logical numbering, `shards` saying how the buffer is laid out.
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
  int64_t shards = buffer.shard_numel == buffer.numel ? 1 : program.world_size;
  if (state.shards != shards)
    return "shards " + std::to_string(state.shards) + " in " + name +
           ", which is " +
           (shards == 1 ? std::string("replicated (shards 1)")
                        : "sharded " + std::to_string(shards) + " ways");
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
                      formatShape(logicalShape(state)));
    if (state.shards < 1)
      return badState("shards " + std::to_string(state.shards));
    if (state.buffer < -1)
      return badState("buffer " + std::to_string(state.buffer) +
                      " (-1: its own storage, else an index into buffers)");
    if (isMember(state)) {
      if (std::string error = validateMember(program, state); !error.empty())
        return badState(error);
    } else if (state.shards == 1 && state.storage_numel != state.numel)
      return badState("unsharded, yet storage_numel " +
                      std::to_string(state.storage_numel) + " != numel " +
                      std::to_string(state.numel));
    if (state.shards > 1 && !isMember(state)) {
      if (state.shards != program.world_size)
        return badState("sharded " + std::to_string(state.shards) +
                        " ways on a world of " +
                        std::to_string(program.world_size));
      if (state.storage_numel * state.shards < state.numel)
        return badState(std::to_string(state.shards) + " shards of " +
                        std::to_string(state.storage_numel) +
                        " elements cannot hold " + std::to_string(state.numel));
    }
    if (state.init < ZRT_INIT_ZEROS || state.init > ZRT_INIT_NORMAL)
      return badState("unknown init " + std::to_string(state.init));
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
  return static_cast<size_t>(state.storage_numel) * zrt_dtype_size(state.dtype);
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

void initializeFromSeed(const zrt_program &program, uint64_t seed) {
  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    const zrt_state *param = initialSource(program, state);
    zrt_range held = heldRange(program, state);
    if (!param) {
      if (void *data = storageData(program, state))
        std::memset(data, 0, storageBytes(program, state));
      continue;
    }
    parallelChunks(held.count, [&](int64_t from, int64_t to) {
      for (int64_t j = from; j < to; ++j) {
        // Rounded to f32 first, as the evaluator does; a master keeps it.
        double value = static_cast<float>(
            initialValue(*param, seed, held.offset + j));
        storeValue(held.data, state.dtype, j, value);
      }
    });
  }
}

std::string initializeFromFile(const zrt_program &program,
                               const std::string &path) {
  st::File file;
  if (std::string error = st::readFile(path, file); !error.empty())
    return "--init: " + error;
  std::string model = modelName(program);
  bool tied = tiesLmHead(program);
  for (const st::Tensor &tensor : file.tensors) {
    std::string prefix = path + ": tensor '" + tensor.name + "': ";
    const zrt_state *param = findParam(program, tensor.name.c_str());
    bool tiedHead = !param && tied && tensor.name == "lm_head.weight";
    if (!param && !tiedHead)
      return prefix + "model '" + model + "' has no parameter of that name";
    if (tiedHead)
      param = findParam(program, "transformer.wte.weight");
    if (tensor.dtype != st::DType::F32 && tensor.dtype != st::DType::BF16 &&
        tensor.dtype != st::DType::F64)
      return prefix + "dtype " + st::dtypeName(tensor.dtype) +
             " is not F32 or BF16";
    if (tensor.shape != logicalShape(*param))
      return prefix + "shape " + formatShape(tensor.shape) + " differs from " +
             (tiedHead ? "the tied transformer.wte.weight's "
                       : "the "
                         "parameter's ") +
             formatShape(logicalShape(*param));
  }
  for (int s = 0; s < program.num_states; ++s)
    if (program.states[s].kind == ZRT_STATE_PARAM &&
        !file.find(program.states[s].name))
      return path + ": no tensor for parameter '" +
             std::string(program.states[s].name) + "' " +
             formatShape(logicalShape(program.states[s]));
  if (const st::Tensor *head = tied ? file.find("lm_head.weight") : nullptr) {
    const st::Tensor *wte = file.find("transformer.wte.weight");
    for (int64_t i = 0; i < head->numElements(); ++i)
      if (static_cast<float>(fileValue(*head, i)) !=
          static_cast<float>(fileValue(*wte, i)))
        return path +
               ": tensor 'lm_head.weight' differs from "
               "'transformer.wte.weight' at element " +
               std::to_string(i) + ", but model '" + model +
               "' ties them (it has no lm_head.weight parameter)";
  }

  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    const zrt_state *param = initialSource(program, state);
    if (!param) {
      if (void *data = storageData(program, state))
        std::memset(data, 0, storageBytes(program, state));
      continue;
    }
    const st::Tensor &tensor = *file.find(param->name);
    zrt_range held = heldRange(program, state);
    parallelChunks(held.count, [&](int64_t from, int64_t to) {
      for (int64_t j = from; j < to; ++j)
        storeValue(held.data, state.dtype, j,
                   static_cast<float>(fileValue(tensor, held.offset + j)));
    });
  }
  return "";
}

std::string stateFingerprint(const zrt_program &program) {
  std::string table;
  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &state = program.states[s];
    table += state.name;
    table += '|';
    table += kindName(state.kind);
    table += '|';
    table += zrt_dtype_name(state.dtype);
    table += '|';
    table += formatShape(logicalShape(state));
    table += '|' + std::to_string(state.shards) + '|' +
             std::to_string(state.storage_numel) + '|' +
             (state.of ? state.of : "");
    if (isMember(state)) {
      const zrt_buffer &buffer = program.buffers[state.buffer];
      table += "|buffer " + std::to_string(state.buffer) + " " +
               std::to_string(buffer.numel) + " " +
               std::to_string(buffer.shard_numel) + " @" +
               std::to_string(state.buffer_offset);
    }
    table += '\n';
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, random::fnv1a64(table));
  return hex;
}

//===----------------------------------------------------------------------===//
// --save
//===----------------------------------------------------------------------===//

std::string probeCheckpointDirectory(const std::string &dir) {
  if (std::string error = makeDirectories(dir); !error.empty())
    return error;
  std::string probe =
      joinPath(dir, ".zeroc-probe.rank" + std::to_string(worldRank()));
  FILE *file = std::fopen(probe.c_str(), "wb");
  if (!file)
    return dir + ": the checkpoint directory is not writable: " +
           std::strerror(errno);
  std::fclose(file);
  std::remove(probe.c_str());
  return "";
}

std::string saveCheckpoint(const zrt_program &program, const std::string &dir,
                           const CheckpointInfo &info) {
  int rank = worldRank();
  agree(makeDirectories(dir));

  // The fp32 model, gathered to rank 0.
  st::File model;
  model.metadata["format"] = "pt";
  model.metadata["producer"] = "zeroc";
  model.metadata["model"] = modelName(program);
  model.metadata["step"] = std::to_string(info.step);
  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &param = program.states[s];
    if (param.kind != ZRT_STATE_PARAM)
      continue;
    const zrt_state *master = findMaster(program, param);
    std::vector<float> values =
        gatherFloats(program, master ? *master : param);
    if (rank != 0)
      continue;
    model.tensors.push_back(
        floatTensor(param.name, logicalShape(param), values));
    if (tiesLmHead(program) &&
        std::strcmp(param.name, "transformer.wte.weight") == 0)
      model.tensors.push_back(
          floatTensor("lm_head.weight", logicalShape(param), values));
  }

  // This rank's storage of every state.
  st::File state;
  state.metadata["format"] = "zeroc-state";
  state.metadata["producer"] = "zeroc";
  state.metadata["model"] = modelName(program);
  state.metadata["world_size"] = std::to_string(program.world_size);
  state.metadata["zero_stage"] = std::to_string(program.zero_stage);
  state.metadata["rank"] = std::to_string(rank);
  state.metadata["step"] = std::to_string(info.step);
  state.metadata["seed"] = std::to_string(info.seed);
  state.metadata["fingerprint"] = stateFingerprint(program);
  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &entry = program.states[s];
    st::Tensor tensor;
    tensor.name = entry.name;
    tensor.dtype = fileDType(entry.dtype);
    tensor.shape = storageShape(program, entry);
    const uint8_t *data =
        static_cast<const uint8_t *>(storageData(program, entry));
    if (data)
      tensor.bytes.assign(data, data + storageBytes(program, entry));
    state.tensors.push_back(std::move(tensor));
  }

  // Write temporaries; rename only when every rank has written its own.
  std::string statePath =
      joinPath(dir, "state.rank" + std::to_string(rank) + ".safetensors");
  std::string modelPath = joinPath(dir, "model.safetensors");
  std::vector<std::pair<std::string, std::string>> written; // temp, final
  std::string error;
  auto write = [&](const st::File &file, const std::string &path) {
    if (!error.empty())
      return;
    std::vector<uint8_t> buffer;
    if (std::string problem = st::serialize(file, buffer); !problem.empty()) {
      error = path + ": " + problem;
      return;
    }
    std::string temporary = path + ".tmp";
    error = writeBytes(temporary, buffer);
    if (error.empty())
      written.push_back({temporary, path});
  };
  write(state, statePath);
  if (rank == 0)
    write(model, modelPath);
  int ok = error.empty() ? 1 : 0, allOk = ok;
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk)
    for (auto &[temporary, path] : written)
      std::remove(temporary.c_str());
  agree(error.empty() ? "" : "--save: " + error);
  for (auto &[temporary, path] : written)
    if (std::rename(temporary.c_str(), path.c_str()) != 0 && error.empty())
      error = "--save: " + path + ": cannot rename " + temporary +
              " into place: " + std::strerror(errno);
  agree(error);
  return "";
}

//===----------------------------------------------------------------------===//
// --resume
//===----------------------------------------------------------------------===//

std::string loadCheckpoint(const zrt_program &program, const std::string &dir,
                           CheckpointInfo &info) {
  int rank = worldRank();
  std::string name = "state.rank" + std::to_string(rank) + ".safetensors";
  std::string path = joinPath(dir, name);
  st::File file;
  if (std::string error = st::readFile(path, file); !error.empty())
    return "--resume " + dir + ": no usable checkpoint for rank " +
           std::to_string(rank) + ": " + error;
  auto meta = [&](const char *key) -> std::string {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? "" : it->second;
  };
  std::string prefix = "--resume " + dir + ": ";
  if (meta("format") != "zeroc-state")
    return prefix + name + " is not a zeroc training state (metadata format '" +
           meta("format") + "')";
  if (meta("model") != modelName(program))
    return prefix + "the checkpoint is of model '" + meta("model") +
           "', this executable trains '" + modelName(program) + "'";
  if (meta("world_size") != std::to_string(program.world_size))
    return prefix + "the checkpoint was written by " + meta("world_size") +
           " rank(s), this executable runs on " +
           std::to_string(program.world_size);
  if (meta("zero_stage") != std::to_string(program.zero_stage))
    return prefix + "the checkpoint was written at ZeRO stage " +
           meta("zero_stage") + ", this executable uses stage " +
           std::to_string(program.zero_stage);
  if (meta("rank") != std::to_string(rank))
    return prefix + name + " says it is rank " + meta("rank") + "'s state";

  // The state table, tensor by tensor, then the fingerprint as a backstop.
  std::set<std::string> expected;
  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &state = program.states[s];
    expected.insert(state.name);
    const st::Tensor *tensor = file.find(state.name);
    if (!tensor)
      return prefix + "the checkpoint has no state '" +
             std::string(state.name) + "' (the state tables differ)";
    if (tensor->dtype != fileDType(state.dtype) ||
        tensor->shape != storageShape(program, state))
      return prefix + "state '" + std::string(state.name) + "' is " +
             st::dtypeName(tensor->dtype) + " " + formatShape(tensor->shape) +
             " in the checkpoint, " + st::dtypeName(fileDType(state.dtype)) +
             " " + formatShape(storageShape(program, state)) + " here";
  }
  for (const st::Tensor &tensor : file.tensors)
    if (!expected.count(tensor.name))
      return prefix + "the checkpoint has a state '" + tensor.name +
             "' that model '" + modelName(program) + "' does not declare";
  if (meta("fingerprint") != stateFingerprint(program))
    return prefix + "the state table differs (fingerprint " +
           meta("fingerprint") + " in the checkpoint, " +
           stateFingerprint(program) + " here)";
  char *end = nullptr;
  std::string step = meta("step"), seed = meta("seed");
  info.step = std::strtoll(step.c_str(), &end, 10);
  if (step.empty() || *end || info.step < 0)
    return prefix + name + ": bad step '" + step + "' in the metadata";
  info.seed = std::strtoull(seed.c_str(), &end, 10);

  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    if (void *data = storageData(program, state))
      std::memcpy(data, file.find(state.name)->bytes.data(),
                  storageBytes(program, state));
  }
  return "";
}

} // namespace zeroc::rt
