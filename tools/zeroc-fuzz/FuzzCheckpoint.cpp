//===- FuzzCheckpoint.cpp - the executables' checkpoint and weight readers ===//
//
// Input: one byte (bit 0: read as --init weights instead of a --resume
// manifest), then the bytes of the file. With bit 0 set, the runtime's
// weight reader (lib/Runtime/Common/Checkpoint.cpp, through Services.h)
// loads the file into a program's states, as an executable does before its
// first step: a small model of two parameters, bf16 with f32 masters,
// sharded two ways (ZeRO stage 3, rank 0 of 2). Without it, the file is a
// checkpoint's manifest.json for the checks `--resume` makes of it before
// it reads any data (parseManifest: the CRC, the format, every field,
// every tensor's slices), and a manifest that passes must print and parse
// again. Run once with ZEROC_FUZZ_WRITE_SEEDS=DIR, the target writes a
// valid manifest and weight file there for the seed corpus, and exits.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Common/Checkpoint.h"
#include "../../lib/Runtime/Common/Services.h"
#include "../../lib/Runtime/Common/StateLayout.h"

#include "zeroc/Support/SafeTensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace st = zeroc::safetensors;
using namespace zeroc::rt;
namespace ckpt = zeroc::rt::ckpt;

namespace {

const int64_t shapeWte[] = {16, 8};
const int64_t shapeBias[] = {5};

// Each state is the only member of its own buffer, sharded two ways (the
// buffer padded to 2 equal shards): rank 0 holds the first half.
// name, of, kind, dtype, rank, shape, numel, init, std, weight_decay, data,
// buffer, buffer_offset
zrt_state states[] = {
    {"transformer.wte.weight", nullptr, ZRT_STATE_PARAM, ZRT_BF16, 2,
     shapeWte, 128, ZRT_INIT_NORMAL, 0.02, 1, nullptr, 0, 0},
    {"transformer.ln.bias", nullptr, ZRT_STATE_PARAM, ZRT_BF16, 1, shapeBias,
     5, ZRT_INIT_ZEROS, 0.0, 0, nullptr, 1, 0},
    {"transformer.wte.weight.master", "transformer.wte.weight",
     ZRT_STATE_MASTER, ZRT_F32, 2, shapeWte, 128, ZRT_INIT_ZEROS, 0.0, 0,
     nullptr, 2, 0},
    {"transformer.ln.bias.master", "transformer.ln.bias", ZRT_STATE_MASTER,
     ZRT_F32, 1, shapeBias, 5, ZRT_INIT_ZEROS, 0.0, 0, nullptr, 3, 0},
    {"transformer.wte.weight.exp_avg", "transformer.wte.weight",
     ZRT_STATE_EXP_AVG, ZRT_F32, 2, shapeWte, 128, ZRT_INIT_ZEROS, 0.0, 0,
     nullptr, 4, 0},
};

// name, dtype, category, numel (2 shards), shard_numel, data
zrt_buffer buffers[] = {
    {"wte", ZRT_BF16, ZRT_MEM_PARAMETERS, 128, 64, nullptr},
    {"ln.bias", ZRT_BF16, ZRT_MEM_PARAMETERS, 6, 3, nullptr},
    {"wte.master", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES, 128, 64, nullptr},
    {"ln.bias.master", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES, 6, 3, nullptr},
    {"wte.exp_avg", ZRT_F32, ZRT_MEM_OPTIMIZER_STATES, 128, 64, nullptr},
};

void noStep(zrt_comm *, const void *, const void *, int64_t, float *, float *,
            float *) {}

zrt_program program = {"fuzzmodel", 2, 3, 1, 4, 16, ZRT_I32,
                       static_cast<int>(sizeof states / sizeof states[0]),
                       states, noStep, nullptr, nullptr,
                       static_cast<int>(sizeof buffers / sizeof buffers[0]),
                       buffers};

size_t elementSize(zrt_dtype dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

/// Rank 0's shard of every buffer, its members pointed into it.
void allocate() {
  for (zrt_buffer &buffer : buffers)
    buffer.data = std::calloc(buffer.shard_numel, elementSize(buffer.dtype));
  pointMembers(program, 0, 2);
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
  // A manifest of one f32 tensor in two slices of one file.
  ckpt::Manifest manifest;
  manifest.model = "fuzzmodel";
  manifest.step = 5;
  manifest.dataPosition = 20;
  manifest.globalBatch = 4;
  manifest.seqLen = 8;
  manifest.seed = 1;
  manifest.worldSize = 2;
  manifest.zeroStage = 3;
  manifest.files.push_back({"model.rank0.safetensors", 160, 0x12345678u});
  ckpt::Tensor tensor;
  tensor.name = "w";
  tensor.kind = "param";
  tensor.shape = {4, 2};
  tensor.numel = 8;
  tensor.slices.push_back({"model.rank0.safetensors", 0, 4, 96, 1u});
  tensor.slices.push_back({"model.rank0.safetensors", 4, 8, 112, 2u});
  manifest.tensors.push_back(tensor);
  std::string text = ckpt::serializeManifest(manifest);
  std::vector<uint8_t> buffer(text.begin(), text.end());
  buffer.insert(buffer.begin(), 0); // the selector byte: --resume
  writeBytes(dir + "/manifest", buffer.data(), buffer.size());

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
  std::string path = dir + (init ? "/model.safetensors" : "/manifest.json");
  if (init)
    writeBytes(path, data + 1, size - 1);
  if (init) {
    (void)initializeFromFile(program, path);
  } else {
    std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
    ckpt::Manifest manifest;
    if (ckpt::parseManifest(path, text, manifest).empty()) {
      ckpt::Manifest again;
      if (!ckpt::parseManifest(path, ckpt::serializeManifest(manifest), again)
               .empty())
        std::abort(); // a manifest that passes must print and parse again
    }
  }
  return 0;
}
