//===- Checkpoint.h - the checkpoint format's pieces ------------*- C++ -*-===//
//
// Internal to the checkpoint files of lib/Runtime/Common (both runtimes
// compile them): CRC-32C (Crc32c.cpp), a small JSON reader (Json.cpp), the
// manifest and the plan of who writes which slice (Manifest.cpp), durable
// file operations (CheckpointFiles.cpp), and the save and load
// collectives (CheckpointSave.cpp, CheckpointLoad.cpp). Main sees only
// Services.h. docs/executable.md describes the format.
//
// A checkpoint is a folder DIR/step-NNNNNNN holding
//   model.rankR.safetensors      the slices of the parameters rank R wrote
//   optimizer.rankR.safetensors  ... of masters, moments, momentum buffers
//   trainer.safetensors          step, data position, seed (rank 0)
//   manifest.json                every tensor, its slices, every file's and
//                                slice's CRC-32C; written last
// Every state is stored as its logical tensor, unpadded, cut into slices
// by the element ranges the ranks hold (localRange, StateLayout.h: the
// ranges of zrt_state_range), whatever the layout (a state's own storage or
// a flat buffer's): any world size, stage and layout reads it back.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_CHECKPOINT_H
#define ZEROC_LIB_RUNTIME_COMMON_CHECKPOINT_H

#include "Services.h"
#include "StateLayout.h"

#include "zeroc/Support/SafeTensors.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeroc::rt::ckpt {

//===----------------------------------------------------------------------===//
// CRC-32C (Crc32c.cpp)
//===----------------------------------------------------------------------===//

/// Continues `crc` (0 to start) over `size` bytes: crc32c(crc32c(0, a), b)
/// is the CRC of a followed by b.
uint32_t crc32c(uint32_t crc, const void *data, size_t size);
/// The CRC of A followed by B from crc32c(0, A), crc32c(0, B) and B's
/// length, without the bytes (so that a file's CRC follows from its parts').
uint32_t crc32cCombine(uint32_t first, uint32_t second, uint64_t secondBytes);
/// Eight lowercase hex digits.
std::string crcHex(uint32_t crc);

//===----------------------------------------------------------------------===//
// JSON (Json.cpp)
//===----------------------------------------------------------------------===//

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false; ///< an integer that fits int64 (`integer`)
  int64_t integer = 0;
  bool isUnsigned = false; ///< a non-negative integer (`unsignedInteger`)
  uint64_t unsignedInteger = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  /// The member called `key` of an object, or null.
  const Json *get(const std::string &key) const;
};

/// Parses a whole document. Returns "" or an error naming the byte offset.
std::string parseJson(const std::string &text, Json &value);
/// `text` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string &text);

//===----------------------------------------------------------------------===//
// The manifest (Manifest.cpp)
//===----------------------------------------------------------------------===//

constexpr const char *kManifestName = "manifest.json";
constexpr const char *kTrainerFile = "trainer.safetensors";
constexpr const char *kLatestName = "latest";

/// "param", "master", "exp_avg", ... (a trainer value is "trainer").
const char *kindName(zrt_state_kind kind);
/// "F32", "BF16", "I32", "I64": the safetensors spellings.
const char *dtypeName(zrt_dtype dtype);
bool parseDtype(const std::string &name, zrt_dtype &dtype);
std::string formatShape(const std::vector<int64_t> &shape);
/// "step-0000010".
std::string stepFolderName(int64_t step);
/// The step of a folder called "step-NNNNNNN" + `suffix`, or -1.
int64_t parseStepFolder(const std::string &name, const char *suffix = "");

/// Logical elements [begin, end) of a tensor, stored in `file` at bytes
/// [byteBegin, byteBegin + (end - begin) * element size).
struct Slice {
  std::string file;
  int64_t begin = 0, end = 0;
  int64_t byteBegin = 0;
  uint32_t crc = 0; ///< CRC-32C of the slice's bytes
};

struct Tensor {
  std::string name;
  std::string kind; ///< kindName(), or "trainer"
  std::string of;   ///< the parameter it belongs to ("" for a parameter)
  zrt_dtype dtype = ZRT_F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  std::vector<Slice> slices; ///< in element order, covering [0, numel)
};

struct FileRecord {
  std::string name;
  int64_t bytes = 0;
  uint32_t crc = 0;
};

struct Manifest {
  std::string model;
  int64_t step = 0;         ///< the next step to run
  int64_t dataPosition = 0; ///< global sequences consumed
  int64_t globalBatch = 0;  ///< of the run that wrote it
  int64_t seqLen = 0;
  uint64_t seed = 0;
  int64_t worldSize = 0, zeroStage = 0; ///< of the run that wrote it
  /// Names a reader should also give a tensor ("lm_head.weight" ->
  /// "transformer.wte.weight" for a model that ties them).
  std::vector<std::pair<std::string, std::string>> aliases;
  std::vector<FileRecord> files;
  std::vector<Tensor> tensors;
  uint32_t crc = 0; ///< manifest_crc32c: of the text before that line

  const Tensor *find(const std::string &name) const;
  const FileRecord *findFile(const std::string &name) const;
};

/// The manifest's text, its last member the CRC-32C of everything before
/// that member's line.
std::string serializeManifest(const Manifest &manifest);
/// Parses and checks `text` (read from `path`): the CRC, the format and
/// version, every field's type, every tensor's slices (in order, covering
/// its elements exactly, each in a listed file with the right byte count).
/// Errors name `path` and the tensor or file.
std::string parseManifest(const std::string &path, const std::string &text,
                          Manifest &manifest);

//===----------------------------------------------------------------------===//
// The plan: who writes which slice (Manifest.cpp)
//===----------------------------------------------------------------------===//

/// A tensor of the checkpoint: a state of the program (grads excluded:
/// every step overwrites them) or a trainer value.
struct PlanTensor {
  std::string name, kind, of;
  zrt_dtype dtype = ZRT_F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  int state = -1; ///< index into program.states, -1 for a trainer value
  int group = 0;  ///< 0 model, 1 optimizer, 2 trainer: which file
};

/// Logical elements [begin, end) of plan tensor `tensor`, written by
/// `rank` into its file of the tensor's group.
struct PlanSlice {
  int tensor = 0;
  int64_t begin = 0, end = 0;
};

constexpr int kGroups = 3;
const char *groupFileStem(int group); ///< "model", "optimizer", "trainer"
/// The file of `group` that `rank` writes ("model.rank3.safetensors").
std::string groupFileName(int group, int rank);

struct Plan {
  std::vector<PlanTensor> tensors;
  /// Per rank, per group: the slices it writes, in the order of the file.
  /// Every element of every tensor is written by exactly one rank: a range
  /// that one rank holds by that rank, a range that several ranks hold
  /// (an unsharded state) cut evenly among them (small ones whole, by one).
  std::vector<std::vector<std::vector<PlanSlice>>> slices;
};

/// The plan for `program` on `worldSize` ranks (every rank computes the
/// same). Fails when a state's elements are not all held by some rank.
std::string makePlan(const zrt_program &program, int worldSize, Plan &plan);

/// The safetensors header (8-byte length included) of a file holding
/// `slices`, each named as its tensor (a second slice of one tensor gets
/// "@BEGIN"), shaped as the tensor when whole, as whole rows when they
/// are, else flat. `offsets` gets each slice's first byte in the file.
std::string
safetensorsHeader(const Plan &plan, const std::vector<PlanSlice> &slices,
                  const std::vector<std::pair<std::string, std::string>> &meta,
                  std::vector<int64_t> &offsets);

//===----------------------------------------------------------------------===//
// Files (CheckpointFiles.cpp). Every function returns "" or an error that
// names the path.
//===----------------------------------------------------------------------===//

std::string joinPath(const std::string &dir, const std::string &name);
/// mkdir -p.
std::string makeDirectories(const std::string &dir);
/// fsync of a directory, so that the names created in it are durable.
std::string syncDirectory(const std::string &dir);
/// Writes `content` to `path` durably: PATH.tmp, fsync, rename, fsync of
/// the directory. Refuses to replace anything but a regular file.
std::string writeFileDurably(const std::string &path,
                             const std::string &content);
/// Reads a whole small file (at most `limit` bytes).
std::string readSmallFile(const std::string &path, std::string &content,
                          size_t limit);
/// Removes a folder of plain files (the folder's own files, then it);
/// nothing when it does not exist.
std::string removeFolder(const std::string &dir);
/// The entries of a directory (names only, no "." or "..").
std::string listDirectory(const std::string &dir,
                          std::vector<std::string> &names);
bool isDirectory(const std::string &path);
bool exists(const std::string &path);

/// The bytes of the buffer a rank saves and verifies through:
/// ZEROC_CHECKPOINT_BUFFER (bytes, or with a K, M or G suffix), 16 MiB by
/// default.
size_t bufferBytes();

/// The peak resident set of this process since resetPeakResident() (Linux:
/// /proc/self/status VmHWM after writing 5 to /proc/self/clear_refs), and
/// the current one (VmRSS); -1 where unknown.
void resetPeakResident();
int64_t peakResidentBytes();
int64_t residentBytes();

/// The test hook ZEROC_TEST_CRASH=POINT[@RANK] (rank 0 by default): this
/// process kills itself (SIGKILL) when it reaches POINT of a save, to
/// check what an interrupted save leaves behind.
void crashPoint(const char *point);
/// ZEROC_TEST_FAIL=POINT[@RANK]: an injected I/O error at POINT ("" when
/// not set), to check that a failed save leaves nothing behind.
std::string failPoint(const char *point);

} // namespace zeroc::rt::ckpt

namespace zeroc::rt {

/// Collective: --init DIR, the weights of a checkpoint (CheckpointLoad.cpp):
/// every parameter and master from the checkpoint's master where it has one,
/// else from its parameter, converted to the program's dtypes (as --init of
/// its export would). `info` gets the log and note lines.
std::string initializeFromCheckpoint(const zrt_program &program,
                                     const std::string &dir,
                                     CheckpointInfo &info);

/// Whether --init `path` is a Hugging Face checkpoint (HfCheckpoint.cpp):
/// a model.safetensors.index.json, or a folder holding one or a
/// model.safetensors (any other folder is a zeroc checkpoint).
bool isHuggingFaceCheckpoint(const std::string &path);

/// The tensors of --init `path` (HfCheckpoint.cpp): a safetensors file, or
/// a sharded Hugging Face checkpoint (its model.safetensors.index.json, or
/// the folder holding it) read as one file.
std::string readInitFile(const std::string &path, safetensors::File &file);

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_CHECKPOINT_H
