//===- FuzzCheckpoint.cpp - the executables' checkpoint and weight readers ===//
//
// Input: one byte (bit 0: read as --init weights instead of a --resume
// state), then the bytes of the file. The runtime's readers
// (lib/Runtime/Cpu/Checkpoint.cpp, through Services.h) load it into a
// program's states, as an executable does before its first step: a small
// model of two parameters, bf16 with f32 masters, sharded two ways (ZeRO
// stage 3, rank 0 of 2), so that every check of the state table and the
// metadata is reachable. Run once with ZEROC_FUZZ_WRITE_SEEDS=DIR, the
// target writes a valid state file and weight file there for the seed
// corpus, and exits.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Cpu/Services.h"

#include "zeroc/Support/SafeTensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace st = zeroc::safetensors;
using namespace zeroc::rt;

namespace {

const int64_t shapeWte[] = {16, 8};
const int64_t shapeBias[] = {5};

// name, of, kind, dtype, rank, shape, numel, shards, storage_numel, init,
// std, weight_decay, data
zrt_state states[] = {
    {"transformer.wte.weight", nullptr, ZRT_STATE_PARAM, ZRT_BF16, 2,
     shapeWte, 128, 2, 64, ZRT_INIT_NORMAL, 0.02, 1, nullptr},
    {"transformer.ln.bias", nullptr, ZRT_STATE_PARAM, ZRT_BF16, 1, shapeBias,
     5, 2, 3, ZRT_INIT_ZEROS, 0.0, 0, nullptr},
    {"transformer.wte.weight.master", "transformer.wte.weight",
     ZRT_STATE_MASTER, ZRT_F32, 2, shapeWte, 128, 2, 64, ZRT_INIT_ZEROS, 0.0,
     0, nullptr},
    {"transformer.ln.bias.master", "transformer.ln.bias", ZRT_STATE_MASTER,
     ZRT_F32, 1, shapeBias, 5, 2, 3, ZRT_INIT_ZEROS, 0.0, 0, nullptr},
    {"transformer.wte.weight.exp_avg", "transformer.wte.weight",
     ZRT_STATE_EXP_AVG, ZRT_F32, 2, shapeWte, 128, 2, 64, ZRT_INIT_ZEROS, 0.0,
     0, nullptr},
};

void noStep(zrt_comm *, const void *, const void *, int64_t, float *, float *,
            float *) {}

zrt_program program = {"fuzzmodel", 2, 3, 1, 4, 16, ZRT_I32,
                       static_cast<int>(sizeof states / sizeof states[0]),
                       states, noStep, nullptr, nullptr};

size_t elementSize(zrt_dtype dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

void allocate() {
  for (zrt_state &state : states)
    state.data = std::calloc(state.storage_numel, elementSize(state.dtype));
}

/// A directory of this process's own, holding the file under test.
const std::string &workDirectory() {
  static std::string dir = [] {
    char pattern[] = "/tmp/zeroc-fuzz-checkpoint-XXXXXX";
    const char *made = mkdtemp(pattern);
    if (!made)
      std::abort();
    return std::string(made);
  }();
  return dir;
}

void writeBytes(const std::string &path, const void *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    std::abort();
  if (size)
    std::fwrite(data, 1, size, file);
  std::fclose(file);
}

void writeSeeds(const std::string &dir) {
  st::File state;
  state.metadata = {{"format", "zeroc-state"},  {"producer", "zeroc"},
                    {"model", "fuzzmodel"},     {"world_size", "2"},
                    {"zero_stage", "3"},        {"rank", "0"},
                    {"step", "5"},              {"seed", "1"},
                    {"fingerprint", stateFingerprint(program)}};
  for (const zrt_state &entry : states) {
    st::Tensor tensor;
    tensor.name = entry.name;
    tensor.dtype = entry.dtype == ZRT_BF16 ? st::DType::BF16 : st::DType::F32;
    tensor.shape = {entry.storage_numel};
    tensor.bytes.assign(entry.storage_numel * elementSize(entry.dtype), 0);
    state.tensors.push_back(tensor);
  }
  std::vector<uint8_t> buffer;
  if (!st::serialize(state, buffer).empty())
    std::abort();
  buffer.insert(buffer.begin(), 0); // the selector byte: --resume
  writeBytes(dir + "/state.rank0", buffer.data(), buffer.size());

  st::File weights;
  weights.metadata = {{"format", "pt"}};
  for (const zrt_state &entry : states) {
    if (entry.kind != ZRT_STATE_PARAM)
      continue;
    std::vector<double> values(entry.numel, 0.25);
    weights.tensors.push_back(st::fromDoubles(
        entry.name, st::DType::F32,
        std::vector<int64_t>(entry.shape, entry.shape + entry.rank), values));
  }
  if (!st::serialize(weights, buffer).empty())
    std::abort();
  buffer.insert(buffer.begin(), 1); // --init
  writeBytes(dir + "/model", buffer.data(), buffer.size());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  allocate();
  if (const char *dir = std::getenv("ZEROC_FUZZ_WRITE_SEEDS")) {
    writeSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const std::string &dir = workDirectory();
  bool init = data[0] & 1;
  std::string path =
      dir + (init ? "/model.safetensors" : "/state.rank0.safetensors");
  writeBytes(path, data + 1, size - 1);
  if (init) {
    (void)initializeFromFile(program, path);
  } else {
    CheckpointInfo info;
    (void)loadCheckpoint(program, dir, info);
  }
  return 0;
}
