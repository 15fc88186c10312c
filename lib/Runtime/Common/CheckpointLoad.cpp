//===- CheckpointLoad.cpp - --resume and --init DIR: read, verify, reshard ===//
//
// Every rank, each step agreed on before the next (Services.h's agree), so
// that a problem on any rank stops every rank with its message:
//   1. finds the step folder (DIR itself, or the one DIR/latest names),
//      reads manifest.json and checks it: its own CRC, its structure, and
//      that it is a checkpoint of this program (every state but the
//      gradients, with its kind, dtype and logical shape; nothing more);
//   2. the ranks compare what they found (step, data position, the
//      manifest's CRC): a mixture of checkpoints never starts;
//   3. verifies the files, each by one rank (file i by rank i mod N):
//      sizes, and the CRC-32C of every file and every slice, so that an
//      error names the tensor a damaged byte belongs to;
//   4. reads the elements it holds (localRange) from the slices that
//      overlap them, whatever layout wrote them, through memory-mapped
//      windows of at most the checkpoint buffer; checks that float states
//      are finite.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc::rt {

using namespace ckpt;

namespace {

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' ||
                           text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  return text;
}

/// `text` for a message: bytes outside printable ASCII as \xNN (a NUL
/// would end the message), at most 64 characters then "...".
std::string printable(const std::string &text) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 64)
      return out + "...";
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

/// DIR itself when it holds a manifest, else the folder DIR/latest names.
std::string resolveFolder(const std::string &dir, std::string &folder) {
  if (exists(joinPath(dir, kManifestName))) {
    folder = dir;
    return "";
  }
  std::string latest = joinPath(dir, kLatestName);
  if (exists(latest)) {
    std::string text;
    if (std::string error = readSmallFile(latest, text, 4096); !error.empty())
      return error;
    std::string name = trimmed(text);
    if (parseStepFolder(name) < 0)
      return latest + ": names '" + printable(name) +
             "', not a step folder (step-NNNNNNN): the file was modified or "
             "damaged";
    folder = joinPath(dir, name);
    if (!isDirectory(folder))
      return latest + ": names " + name + ", which does not exist";
    if (!exists(joinPath(folder, kManifestName)))
      return folder + ": not a complete checkpoint (no manifest.json)";
    return "";
  }
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return dir + ": not a checkpoint directory";
  if (exists(joinPath(dir, "state.rank0.safetensors")))
    return dir + ": a checkpoint of the older per-rank format "
                 "(state.rankR.safetensors), which this version does not read";
  std::vector<std::string> names, steps;
  listDirectory(dir, names);
  for (const std::string &name : names)
    if (parseStepFolder(name) >= 0)
      steps.push_back(name);
  std::sort(steps.begin(), steps.end());
  if (!steps.empty())
    return dir + ": no 'latest' file naming its newest checkpoint (it has " +
           steps.back() + "; pass that folder to resume it)";
  if (names.empty())
    return dir + ": empty: no checkpoint was written there";
  return dir + ": not a checkpoint (no manifest.json, no 'latest')";
}

/// The names of the tensors with a slice in `file`, for messages.
std::string tensorsIn(const Manifest &manifest, const std::string &file) {
  std::vector<std::string> names;
  for (const Tensor &tensor : manifest.tensors)
    for (const Slice &slice : tensor.slices)
      if (slice.file == file) {
        names.push_back(tensor.name);
        break;
      }
  std::string text;
  for (size_t i = 0; i < names.size() && i < 3; ++i)
    text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > 3)
    text += " and " + std::to_string(names.size() - 3) + " more";
  return text.empty() ? "no tensor" : text;
}

std::string elementsText(const Slice &slice) {
  return "elements [" + std::to_string(slice.begin) + ", " +
         std::to_string(slice.end) + ")";
}

/// A slice of a file, sorted by its bytes.
struct Located {
  const Tensor *tensor;
  const Slice *slice;
  int64_t byteEnd() const {
    return slice->byteBegin +
           (slice->end - slice->begin) *
               static_cast<int64_t>(zrt_dtype_size(tensor->dtype));
  }
};

std::vector<Located> slicesOf(const Manifest &manifest,
                              const std::string &file) {
  std::vector<Located> located;
  for (const Tensor &tensor : manifest.tensors)
    for (const Slice &slice : tensor.slices)
      if (slice.file == file)
        located.push_back({&tensor, &slice});
  std::sort(located.begin(), located.end(),
            [](const Located &a, const Located &b) {
              return a.slice->byteBegin < b.slice->byteBegin;
            });
  return located;
}

/// Size, file CRC and every slice's CRC, in one pass of pread.
std::string verifyFile(const std::string &folder, const Manifest &manifest,
                       const FileRecord &file) {
  std::string path = joinPath(folder, file.name);
  std::vector<Located> slices = slicesOf(manifest, file.name);
  for (size_t i = 1; i < slices.size(); ++i)
    if (slices[i].slice->byteBegin < slices[i - 1].byteEnd())
      return path + ": the manifest's slices of '" +
             slices[i - 1].tensor->name + "' and '" + slices[i].tensor->name +
             "' overlap";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return path + ": cannot open: " + std::strerror(errno) + " (it holds " +
           tensorsIn(manifest, file.name) + ")";
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return path + ": not a regular file";
  }
  int64_t size = static_cast<int64_t>(info.st_size);
  if (size != file.bytes) {
    ::close(fd);
    std::string what = path + ": " + std::to_string(size) +
                       " bytes, the manifest says " +
                       std::to_string(file.bytes);
    if (size > file.bytes)
      return what + " (the file was replaced or appended to)";
    for (const Located &located : slices)
      if (located.byteEnd() > size)
        return what + ": truncated in tensor '" + located.tensor->name + "' (" +
               elementsText(*located.slice) + ")";
    return what + ": truncated in the safetensors header";
  }
  size_t chunk =
      std::max<size_t>(1, std::min(bufferBytes(), static_cast<size_t>(size)));
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[chunk]); // uninitialized
  // One CRC pass: the file cut at every slice's bounds into regions, each
  // region's CRC a slice's (or the header's), the file's combined from them.
  std::vector<int64_t> cuts = {0, size};
  for (const Located &located : slices) {
    cuts.push_back(located.slice->byteBegin);
    cuts.push_back(located.byteEnd());
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<int> owner(cuts.size(), -1); // the slice a region is
  for (size_t i = 0; i < slices.size(); ++i)
    if (slices[i].byteEnd() > slices[i].slice->byteBegin)
      owner[static_cast<size_t>(std::lower_bound(cuts.begin(), cuts.end(),
                                                 slices[i].slice->byteBegin) -
                                cuts.begin())] = static_cast<int>(i);
  uint32_t crc = 0, regionCrc = 0;
  std::vector<uint32_t> sliceCrcs(slices.size(), 0);
  size_t region = 0;
  for (int64_t at = 0; at < size;) {
    size_t want = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(chunk), size - at));
    ssize_t got = ::pread(fd, buffer.get(), want, at);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      int error = got < 0 ? errno : EIO;
      ::close(fd);
      return path + ": read error at byte " + std::to_string(at) + ": " +
             std::strerror(error);
    }
    int64_t end = at + got;
    for (int64_t pos = at; pos < end;) {
      int64_t regionEnd = cuts[region + 1];
      int64_t take = std::min(end, regionEnd) - pos;
      regionCrc = crc32c(regionCrc, buffer.get() + (pos - at),
                         static_cast<size_t>(take));
      pos += take;
      if (pos == regionEnd) {
        if (owner[region] >= 0)
          sliceCrcs[static_cast<size_t>(owner[region])] = regionCrc;
        crc = crc32cCombine(crc, regionCrc,
                            static_cast<uint64_t>(regionEnd - cuts[region]));
        regionCrc = 0;
        ++region;
      }
    }
    at = end;
  }
  ::close(fd);
  for (size_t i = 0; i < slices.size(); ++i)
    if (sliceCrcs[i] != slices[i].slice->crc)
      return path + ": checksum mismatch in tensor '" + slices[i].tensor->name +
             "' (" + elementsText(*slices[i].slice) + ", bytes [" +
             std::to_string(slices[i].slice->byteBegin) + ", " +
             std::to_string(slices[i].byteEnd()) + "): crc32c " +
             crcHex(sliceCrcs[i]) + ", the manifest says " +
             crcHex(slices[i].slice->crc) + ")";
  if (crc != file.crc)
    return path +
           ": checksum mismatch in the safetensors header, which "
           "describes " +
           tensorsIn(manifest, file.name) + " (crc32c " + crcHex(crc) +
           " of the file, the manifest says " + crcHex(file.crc) +
           "; every tensor's data is intact)";
  return "";
}

/// One copy of loaded elements into a rank's storage.
struct Copy {
  std::string file;
  int64_t source = 0;       ///< byte offset in the file
  zrt_dtype from = ZRT_F32; ///< the checkpoint's dtype
  void *target = nullptr;
  zrt_dtype to = ZRT_F32;
  int64_t count = 0; ///< elements
};

/// Converts `count` elements of `from` at `source` to `to` at `target`
/// (weights of another precision, --init DIR: through f32).
void convert(const uint8_t *source, zrt_dtype from, void *target, zrt_dtype to,
             int64_t count) {
  for (int64_t e = 0; e < count; ++e) {
    float value;
    if (from == ZRT_BF16) {
      uint16_t bits;
      std::memcpy(&bits, source + 2 * e, 2);
      value = zrt_bf16_to_f32(bits);
    } else {
      std::memcpy(&value, source + 4 * e, 4);
    }
    if (to == ZRT_BF16)
      static_cast<uint16_t *>(target)[e] = zrt_f32_to_bf16(value);
    else
      static_cast<float *>(target)[e] = value;
  }
}

/// Performs `copies`, file by file, through memory-mapped windows of at
/// most bufferBytes() (each unmapped once copied), so that reading adds no
/// more than that to the resident set.
std::string performCopies(const std::string &folder, std::vector<Copy> copies,
                          int64_t &bytesRead) {
  std::stable_sort(
      copies.begin(), copies.end(),
      [](const Copy &a, const Copy &b) { return a.file < b.file; });
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t window = std::max<size_t>(8, bufferBytes() / 8 * 8);
  for (size_t i = 0; i < copies.size();) {
    size_t j = i;
    while (j < copies.size() && copies[j].file == copies[i].file)
      ++j;
    std::string path = joinPath(folder, copies[i].file);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return path + ": cannot open: " + std::strerror(errno);
    struct stat info;
    if (::fstat(fd, &info) != 0) {
      ::close(fd);
      return path + ": cannot stat: " + std::strerror(errno);
    }
    size_t length = static_cast<size_t>(info.st_size);
    std::string error;
    for (size_t k = i; k < j && error.empty(); ++k) {
      const Copy &copy = copies[k];
      size_t fromSize = zrt_dtype_size(copy.from),
             toSize = zrt_dtype_size(copy.to);
      size_t span = static_cast<size_t>(copy.count) * fromSize;
      if (static_cast<size_t>(copy.source) + span > length) {
        error = path + ": shorter than the manifest says";
        break;
      }
      for (size_t done = 0; done < span;) {
        size_t piece = std::min(window / fromSize * fromSize, span - done);
        size_t at = static_cast<size_t>(copy.source) + done;
        size_t aligned = at / page * page;
        size_t mapped = piece + (at - aligned);
        void *view = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE, fd,
                            static_cast<off_t>(aligned));
        if (view == MAP_FAILED) {
          error = path + ": cannot map: " + std::strerror(errno);
          break;
        }
        const uint8_t *source =
            static_cast<const uint8_t *>(view) + (at - aligned);
        uint8_t *target =
            static_cast<uint8_t *>(copy.target) + done / fromSize * toSize;
        if (copy.from == copy.to)
          std::memcpy(target, source, piece);
        else
          convert(source, copy.from, target, copy.to,
                  static_cast<int64_t>(piece / fromSize));
        ::munmap(view, mapped);
        done += piece;
      }
      bytesRead += static_cast<int64_t>(span);
    }
    ::close(fd);
    if (!error.empty())
      return error;
    i = j;
  }
  return "";
}

/// The copies that fill [range.offset, +count) of a state (held from
/// `data` on, of `to`) from `tensor`'s slices.
void planCopies(const Tensor &tensor, const StateRange &range, void *data,
                zrt_dtype to, std::vector<Copy> &copies) {
  size_t fromSize = zrt_dtype_size(tensor.dtype), toSize = zrt_dtype_size(to);
  int64_t begin = range.offset, end = range.offset + range.count;
  for (const Slice &slice : tensor.slices) {
    int64_t lo = std::max(begin, slice.begin), hi = std::min(end, slice.end);
    if (lo >= hi)
      continue;
    Copy copy;
    copy.file = slice.file;
    copy.source =
        slice.byteBegin + (lo - slice.begin) * static_cast<int64_t>(fromSize);
    copy.from = tensor.dtype;
    copy.to = to;
    copy.count = hi - lo;
    copy.target =
        static_cast<uint8_t *>(data) + static_cast<size_t>(lo - begin) * toSize;
    copies.push_back(copy);
  }
}

/// The first non-finite element of a state's held range, or -1.
int64_t firstNonFinite(const zrt_state &state, const StateRange &range) {
  if (state.dtype != ZRT_F32 && state.dtype != ZRT_BF16)
    return -1;
  for (int64_t e = 0; e < range.count; ++e) {
    bool finite = state.dtype == ZRT_F32
                      ? std::isfinite(static_cast<const float *>(state.data)[e])
                      : (static_cast<const uint16_t *>(state.data)[e] &
                         0x7F80u) != 0x7F80u;
    if (!finite)
      return range.offset + e;
  }
  return -1;
}

const Slice *sliceHolding(const Tensor &tensor, int64_t element) {
  for (const Slice &slice : tensor.slices)
    if (slice.begin <= element && element < slice.end)
      return &slice;
  return nullptr;
}

enum class Mode { Resume, Weights };

/// The checkpoint's tensor of state `name`: its own name, else the name
/// with a tied parameter's name swapped for its other one (the program's
/// train.tied or the manifest's aliases, either way round), so that a
/// checkpoint of a model that declared the other name of a tied parameter
/// loads too.
const Tensor *findState(const zrt_program &program, const Manifest &manifest,
                        const std::string &name) {
  if (const Tensor *tensor = manifest.find(name))
    return tensor;
  std::vector<std::pair<std::string, std::string>> pairs = manifest.aliases;
  for (int i = 0; i < program.num_tied && program.tied; ++i)
    pairs.emplace_back(program.tied[2 * i], program.tied[2 * i + 1]);
  for (const auto &[alias, target] : pairs)
    for (const auto &[from, to] :
         {std::make_pair(alias, target), std::make_pair(target, alias)})
      if (name == from || name.rfind(from + ".", 0) == 0)
        if (const Tensor *tensor =
                manifest.find(to + name.substr(from.size())))
          return tensor;
  return nullptr;
}

/// Step 1's check of the manifest against the program.
std::string checkProgram(const zrt_program &program, const Manifest &manifest,
                         const std::string &where, Mode mode) {
  std::string model = program.model ? program.model : "model";
  auto describe = [](zrt_dtype dtype, const std::vector<int64_t> &shape) {
    return std::string(dtypeName(dtype)) + " " + formatShape(shape);
  };
  std::set<std::string> wanted;
  if (mode == Mode::Resume && manifest.model != model)
    return "the checkpoint is of model '" + manifest.model +
           "', this executable trains '" + model + "'";
  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &state = program.states[s];
    if (state.kind == ZRT_STATE_GRAD ||
        (mode == Mode::Weights && state.kind != ZRT_STATE_PARAM))
      continue;
    std::vector<int64_t> shape(state.shape, state.shape + state.rank);
    const Tensor *tensor = findState(program, manifest, state.name);
    wanted.insert(tensor ? tensor->name : std::string(state.name));
    if (!tensor)
      return where + ": no tensor '" + state.name + "' (" +
             describe(state.dtype, shape) + ", " + kindName(state.kind) +
             "), which model '" + model + "' has";
    if (tensor->kind != kindName(state.kind))
      return where + ": tensor '" + tensor->name + "' is a " + tensor->kind +
             " in the checkpoint, a " + kindName(state.kind) + " here";
    bool dtypeOk = tensor->dtype == state.dtype ||
                   (mode == Mode::Weights &&
                    (tensor->dtype == ZRT_F32 || tensor->dtype == ZRT_BF16));
    if (!dtypeOk || tensor->shape != shape)
      return where + ": tensor '" + tensor->name + "' is " +
             describe(tensor->dtype, tensor->shape) + " in the checkpoint, " +
             describe(state.dtype, shape) + " in model '" + model + "'";
  }
  for (const Tensor &tensor : manifest.tensors) {
    if (tensor.kind == "trainer") {
      if (tensor.dtype != ZRT_I64 || tensor.numel != 1)
        return where + ": trainer value '" + tensor.name + "' is not one I64";
      continue;
    }
    if (mode == Mode::Weights) {
      if (tensor.kind == "param" && !wanted.count(tensor.name))
        return where + ": tensor '" + tensor.name + "' (" +
               describe(tensor.dtype, tensor.shape) +
               ") is not a parameter "
               "of model '" +
               model + "'";
      if (tensor.kind == "master" &&
          (tensor.dtype != ZRT_F32 || !manifest.find(tensor.of) ||
           manifest.find(tensor.of)->shape != tensor.shape))
        return where + ": tensor '" + tensor.name +
               "' is not an F32 master of a parameter of its shape";
      continue;
    }
    if (!wanted.count(tensor.name))
      return where + ": tensor '" + tensor.name + "' (" + tensor.kind + ", " +
             describe(tensor.dtype, tensor.shape) +
             ") is not a state of model '" + model + "'";
  }
  if (mode == Mode::Resume)
    for (const char *name :
         {"trainer.step", "trainer.data_position", "trainer.seed"})
      if (!manifest.find(name))
        return where + ": no trainer value '" + name + "'";
  return "";
}

/// The master tensor of parameter `param` in the checkpoint, or null.
const Tensor *masterOf(const Manifest &manifest, const std::string &param) {
  for (const Tensor &tensor : manifest.tensors)
    if (tensor.kind == "master" && tensor.of == param)
      return &tensor;
  return nullptr;
}

std::string load(const zrt_program &program, const std::string &flag,
                 const std::string &dir, CheckpointInfo &info, Mode mode) {
  double start = MPI_Wtime();
  int rank = worldRank(), ranks = worldSize();
  auto prefixed = [&](const std::string &error) {
    return error.empty() ? error : flag + " " + dir + ": " + error;
  };
  resetPeakResident();
  int64_t residentBefore = residentBytes();

  // 1. The manifest, checked against the program.
  std::string folder, error, text;
  Manifest manifest;
  error = resolveFolder(dir, folder);
  std::string where = joinPath(folder, kManifestName);
  if (error.empty())
    error = readSmallFile(where, text, size_t(1) << 32);
  if (error.empty())
    error = parseManifest(where, text, manifest);
  text.clear();
  text.shrink_to_fit();
  if (error.empty())
    error = checkProgram(program, manifest, where, mode);
  agree(prefixed(error));

  // 2. Every rank found the same checkpoint.
  int64_t mine[4] = {
      manifest.step, manifest.dataPosition, static_cast<int64_t>(manifest.crc),
      static_cast<int64_t>(crc32c(0, folder.data(), folder.size()))};
  std::vector<int64_t> all(rank == 0 ? 4 * static_cast<size_t>(ranks) : 0);
  MPI_Gather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 1; r < ranks; ++r) {
      const int64_t *theirs = &all[4 * static_cast<size_t>(r)];
      if (std::equal(mine, mine + 4, theirs))
        continue;
      auto show = [](int who, const int64_t *v) {
        return "rank " + std::to_string(who) + ": step " +
               std::to_string(v[0]) + ", data position " +
               std::to_string(v[1]) + ", manifest crc32c " +
               crcHex(static_cast<uint32_t>(v[2]));
      };
      error = "the ranks did not find the same checkpoint (" + show(0, mine) +
              " in " + folder + "; " + show(r, theirs) +
              (mine[3] != theirs[3] ? ", in another folder" : "") +
              "): every rank must read one checkpoint";
      break;
    }
  agree(prefixed(error));

  // 3. Every file, verified by one rank.
  for (size_t f = static_cast<size_t>(rank); f < manifest.files.size();
       f += static_cast<size_t>(ranks))
    if (error.empty())
      error = verifyFile(folder, manifest, manifest.files[f]);
  agree(prefixed(error));

  // 4. This rank's elements.
  std::vector<Copy> copies;
  int64_t trainer[3] = {0, 0, 0};
  if (mode == Mode::Resume) {
    const char *names[3] = {"trainer.step", "trainer.data_position",
                            "trainer.seed"};
    for (int i = 0; i < 3; ++i)
      planCopies(*manifest.find(names[i]), StateRange{0, 1}, &trainer[i],
                 ZRT_I64, copies);
  }
  for (int s = 0; s < program.num_states; ++s) {
    zrt_state &state = program.states[s];
    if (state.kind == ZRT_STATE_GRAD)
      continue;
    StateRange range = localRange(program, state, rank, ranks);
    const Tensor *source = nullptr;
    if (mode == Mode::Resume) {
      source = findState(program, manifest, state.name);
    } else if (state.kind == ZRT_STATE_PARAM ||
               state.kind == ZRT_STATE_MASTER) {
      // The f32 weights: the checkpoint's master where it has one.
      std::string param = state.kind == ZRT_STATE_PARAM
                              ? state.name
                              : (state.of ? state.of : "");
      const Tensor *weights = findState(program, manifest, param);
      source = weights ? masterOf(manifest, weights->name) : nullptr;
      if (!source)
        source = weights;
    }
    if (source && range.count > 0)
      planCopies(*source, range, state.data, state.dtype, copies);
  }
  int64_t bytesRead = 0;
  error = performCopies(folder, std::move(copies), bytesRead);
  std::string trainerPath = joinPath(folder, kTrainerFile);
  if (error.empty() && mode == Mode::Resume) {
    if (trainer[0] != manifest.step)
      error = trainerPath + ": trainer.step is " + std::to_string(trainer[0]) +
              ", the manifest says step " + std::to_string(manifest.step);
    else if (trainer[1] != manifest.dataPosition)
      error = trainerPath + ": trainer.data_position is " +
              std::to_string(trainer[1]) + ", the manifest says " +
              std::to_string(manifest.dataPosition);
    else if (static_cast<uint64_t>(trainer[2]) != manifest.seed)
      error = trainerPath + ": trainer.seed differs from the manifest's";
  }
  for (int s = 0; s < program.num_states && error.empty(); ++s) {
    const zrt_state &state = program.states[s];
    if (state.kind == ZRT_STATE_GRAD)
      continue;
    int64_t bad =
        firstNonFinite(state, localRange(program, state, rank, ranks));
    if (bad < 0)
      continue;
    const Tensor *tensor = findState(program, manifest, state.name);
    const Slice *slice = tensor ? sliceHolding(*tensor, bad) : nullptr;
    error = (slice ? joinPath(folder, slice->file) : where) + ": tensor '" +
            state.name + "' holds a non-finite value at element " +
            std::to_string(bad) +
            " (the run that wrote it diverged, or the file was altered)";
  }
  agree(prefixed(error));

  // The figures, on rank 0.
  int64_t figures[2] = {
      std::max<int64_t>(0, peakResidentBytes() - residentBefore), bytesRead};
  std::vector<int64_t> gathered(rank == 0 ? 2 * static_cast<size_t>(ranks) : 0);
  MPI_Gather(figures, 2, MPI_INT64_T, gathered.data(), 2, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  info.folder = folder;
  if (mode == Mode::Resume) {
    info.step = manifest.step;
    info.dataPosition = manifest.dataPosition;
    info.globalBatch = manifest.globalBatch;
    info.seed = manifest.seed;
  }
  if (rank == 0) {
    double seconds = MPI_Wtime() - start;
    int64_t total = 0;
    std::string peaks;
    for (int r = 0; r < ranks; ++r) {
      peaks += (r ? ", " : "") + std::to_string(gathered[2 * r]);
      total += gathered[2 * r + 1];
    }
    info.log = std::string("{\"checkpoint\": \"") +
               (mode == Mode::Resume ? "loaded" : "weights") +
               "\", \"step\": " + std::to_string(manifest.step) +
               ", \"folder\": " + jsonQuote(folder) +
               ", \"bytes_read\": " + std::to_string(total) +
               ", \"seconds\": " + jsonNumber(std::round(seconds * 1e6) / 1e6) +
               ", \"written_by\": {\"world_size\": " +
               std::to_string(manifest.worldSize) +
               ", \"zero_stage\": " + std::to_string(manifest.zeroStage) + "}" +
               ", \"peak_extra_bytes\": [" + peaks + "]}";
    info.note = std::string(mode == Mode::Resume ? "resumed" : "weights") +
                " from " + folder + " (step " + std::to_string(manifest.step) +
                ", written by " + std::to_string(manifest.worldSize) +
                " rank(s) at ZeRO stage " + std::to_string(manifest.zeroStage) +
                "; " + humanBytes(total) + " read in " +
                jsonNumber(std::round(seconds * 1e3) / 1e3) + " s)";
  }
  return "";
}

} // namespace

std::string loadCheckpoint(const zrt_program &program, const std::string &dir,
                           CheckpointInfo &info) {
  return load(program, "--resume", dir, info, Mode::Resume);
}

std::string initializeFromCheckpoint(const zrt_program &program,
                                     const std::string &dir,
                                     CheckpointInfo &info) {
  return load(program, "--init", dir, info, Mode::Weights);
}

} // namespace zeroc::rt
