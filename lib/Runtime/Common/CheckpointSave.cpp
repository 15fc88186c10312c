//===- CheckpointSave.cpp - --save: every rank writes its slices ----------===//
//
// The protocol (every rank calls saveCheckpoint at the same step):
//   1. rank 0 makes an empty DIR/step-NNNNNNN.partial;
//   2. every rank writes its files there (Manifest.cpp's plan: the slices
//      of the elements it holds, each element written by exactly one rank),
//      through a bounded staging buffer, computing each file's and slice's
//      CRC-32C as it goes, then fsyncs them;
//   3. rank 0 gathers the sizes and checksums (a few integers per slice),
//      writes manifest.json last (temporary, fsync, rename, fsync of the
//      folder), renames the folder to DIR/step-NNNNNNN, fsyncs DIR, points
//      DIR/latest at it (the same way) and removes what --keep-last drops.
// A process killed anywhere leaves DIR/latest naming the previous complete
// checkpoint; a failure on any rank is agreed on, every rank removes what
// it wrote, and every rank exits naming it. No rank ever holds more than
// its own storage and the staging buffer (ZEROC_CHECKPOINT_BUFFER bytes,
// 16 MiB by default).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc::rt {

using namespace ckpt;

namespace {

/// True on every rank when any rank has an error (a collective).
bool anyFailed(const std::string &error) {
  int mine = error.empty() ? 0 : 1, any = mine;
  if (worldSize() > 1)
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any != 0;
}

std::string writeAll(int fd, const std::string &path, const void *data,
                     size_t size) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return path +
             ": write error: " + std::strerror(written < 0 ? errno : ENOSPC);
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return "";
}

struct Written {
  bool present = false;
  int64_t headerBytes = 0, fileBytes = 0;
  uint32_t crc = 0;
  std::vector<uint32_t> sliceCrcs;
};

/// Writes one of this rank's files: the header, then each slice's bytes
/// through `staging`.
std::string
writeFile(const zrt_program &program, const Plan &plan,
          const std::vector<PlanSlice> &slices, const std::string &path,
          const std::vector<std::pair<std::string, std::string>> &meta,
          const int64_t trainer[3], uint8_t *staging, size_t stagingBytes,
          Written &out) {
  int rank = worldRank(), ranks = worldSize();
  std::vector<int64_t> offsets;
  std::string header = safetensorsHeader(plan, slices, meta, offsets);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return path + ": cannot create: " + std::strerror(errno);
  out = Written();
  out.present = true;
  out.headerBytes = static_cast<int64_t>(header.size());
  std::string error = writeAll(fd, path, header.data(), header.size());
  if (std::string injected = failPoint("write");
      error.empty() && !injected.empty())
    error = path + ": " + injected;
  uint32_t crc = crc32c(0, header.data(), header.size());
  int64_t total = static_cast<int64_t>(header.size());
  for (const PlanSlice &slice : slices) {
    if (!error.empty())
      break;
    const PlanTensor &tensor = plan.tensors[static_cast<size_t>(slice.tensor)];
    size_t size = zrt_dtype_size(tensor.dtype);
    size_t bytes = static_cast<size_t>(slice.end - slice.begin) * size;
    uint32_t sliceCrc = 0;
    if (tensor.state < 0) { // a trainer value: one int64
      int index = tensor.name == "trainer.step"            ? 0
                  : tensor.name == "trainer.data_position" ? 1
                                                           : 2;
      uint8_t value[8];
      for (int b = 0; b < 8; ++b)
        value[b] = static_cast<uint8_t>(static_cast<uint64_t>(trainer[index]) >>
                                        (8 * b));
      sliceCrc = crc32c(0, value, 8);
      error = writeAll(fd, path, value, 8);
    } else {
      const zrt_state &state = program.states[tensor.state];
      StateRange range = localRange(program, state, rank, ranks);
      if (slice.begin < range.offset ||
          slice.end > range.offset + range.count) {
        error = path + ": internal error: rank " + std::to_string(rank) +
                " was asked to write elements [" + std::to_string(slice.begin) +
                ", " + std::to_string(slice.end) + ") of '" + tensor.name +
                "', which it does not hold";
        break;
      }
      size_t from = static_cast<size_t>(slice.begin - range.offset) * size;
      for (size_t done = 0; done < bytes && error.empty();) {
        size_t chunk = std::min(bytes - done, stagingBytes);
        stateToHost(state, from + done, chunk, staging);
        sliceCrc = crc32c(sliceCrc, staging, chunk);
        error = writeAll(fd, path, staging, chunk);
        done += chunk;
        crashPoint("write");
      }
    }
    out.sliceCrcs.push_back(sliceCrc);
    crc = crc32cCombine(crc, sliceCrc, bytes); // the file's, without a pass
    total += static_cast<int64_t>(bytes);
  }
  if (error.empty() && ::fsync(fd) != 0)
    error = path + ": fsync failed: " + std::strerror(errno);
  if (::close(fd) != 0 && error.empty())
    error = path + ": close failed: " + std::strerror(errno);
  out.fileBytes = total;
  out.crc = crc;
  return error;
}

/// Rank 0, after `latest` names the new checkpoint: removes stale
/// .partial and .old folders and, with keepLast > 0, every complete
/// checkpoint older than the keepLast newest up to `step`. Returns
/// warnings (a failed removal does not fail the save).
std::string prune(const std::string &dir, int64_t step, int64_t keepLast) {
  std::vector<std::string> names;
  if (std::string error = listDirectory(dir, names); !error.empty())
    return error;
  std::string warnings;
  auto remove = [&](const std::string &name) {
    if (std::string error = removeFolder(joinPath(dir, name)); !error.empty())
      warnings += (warnings.empty() ? "" : "; ") + error;
  };
  std::vector<std::pair<int64_t, std::string>> complete;
  for (const std::string &name : names) {
    if (parseStepFolder(name, ".partial") >= 0 ||
        parseStepFolder(name, ".old") >= 0) {
      remove(name);
      continue;
    }
    int64_t at = parseStepFolder(name);
    std::string path = joinPath(dir, name);
    if (at >= 0 && at <= step && isDirectory(path) &&
        exists(joinPath(path, kManifestName)))
      complete.push_back({at, name});
  }
  if (keepLast <= 0)
    return warnings;
  std::sort(complete.rbegin(), complete.rend());
  for (size_t i = static_cast<size_t>(keepLast); i < complete.size(); ++i)
    remove(complete[i].second);
  return warnings;
}

std::string mb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes / 1e6);
  return text;
}

} // namespace

std::string probeCheckpointDirectory(const std::string &dir) {
  // The folders this probe creates (deepest last): removed again after it,
  // so that a run which fails before its first save leaves no empty --save
  // folder behind; the first save creates them for good.
  std::vector<std::string> created;
  for (std::string at = dir; !at.empty() && at != "/" && at != "." &&
                             !exists(at);) {
    created.insert(created.begin(), at);
    size_t slash = at.find_last_of('/');
    at = slash == std::string::npos ? "" : at.substr(0, slash);
  }
  std::string probe =
      joinPath(dir, ".zeroc-probe.rank" + std::to_string(worldRank()));
  std::string error = makeDirectories(dir);
  if (error.empty()) {
    if (FILE *file = std::fopen(probe.c_str(), "wb")) {
      std::fclose(file);
      std::remove(probe.c_str());
    } else {
      error = dir + ": the checkpoint directory is not writable: " +
              std::strerror(errno);
    }
  }
  // Every rank has probed before any removes what it created (a collective
  // on every rank, whatever its result): otherwise one rank's rmdir could
  // pull the folder from under another's mkdir or fopen.
  anyFailed(error);
  for (auto it = created.rbegin(); it != created.rend(); ++it)
    ::rmdir(it->c_str()); // fails, harmlessly, where another rank removed it
  return error;
}

std::string saveCheckpoint(const zrt_program &program, const std::string &dir,
                           CheckpointInfo &info, int64_t keepLast) {
  double start = MPI_Wtime();
  int rank = worldRank(), ranks = worldSize();
  std::string name = stepFolderName(info.step);
  std::string folder = joinPath(dir, name);
  std::string partial = folder + ".partial";
  auto prefixed = [](const std::string &error) {
    return error.empty() ? error : "--save: " + error;
  };
  resetPeakResident();
  int64_t residentBefore = residentBytes();

  // 1. An empty folder for the new files.
  std::string error;
  if (rank == 0) {
    error = makeDirectories(dir);
    if (error.empty())
      error = removeFolder(partial);
    if (error.empty() && ::mkdir(partial.c_str(), 0777) != 0)
      error = partial + ": cannot create: " + std::strerror(errno);
  }
  agree(prefixed(error));

  // 2. This rank's files.
  Plan plan;
  agree(prefixed(makePlan(program, ranks, plan)));
  std::string model = program.model ? program.model : "model";
  std::vector<std::pair<std::string, std::string>> meta = {
      {"format", "pt"},
      {"producer", "zeroc"},
      {"model", model},
      {"step", std::to_string(info.step)},
      {"checkpoint", "slices of a zeroc checkpoint; see manifest.json"}};
  const int64_t trainer[3] = {info.step, info.dataPosition,
                              static_cast<int64_t>(info.seed)};
  Written written[kGroups];
  std::vector<std::string> mine;
  {
    // The buffer: no larger than the largest slice, left uninitialized (its
    // pages cost memory only as they are used).
    size_t stagingBytes = 8;
    for (const std::vector<PlanSlice> &slices :
         plan.slices[static_cast<size_t>(rank)])
      for (const PlanSlice &slice : slices)
        stagingBytes = std::max(
            stagingBytes,
            static_cast<size_t>(slice.end - slice.begin) *
                zrt_dtype_size(
                    plan.tensors[static_cast<size_t>(slice.tensor)].dtype));
    stagingBytes = std::min(stagingBytes, bufferBytes());
    std::unique_ptr<uint8_t[]> staging(new uint8_t[stagingBytes]);
    for (int g = 0; g < kGroups && error.empty(); ++g) {
      const std::vector<PlanSlice> &slices =
          plan.slices[static_cast<size_t>(rank)][static_cast<size_t>(g)];
      if (slices.empty())
        continue;
      std::string path = joinPath(partial, groupFileName(g, rank));
      mine.push_back(path);
      error = writeFile(program, plan, slices, path, meta, trainer,
                        staging.get(), stagingBytes, written[g]);
    }
  }
  if (error.empty() && !mine.empty())
    error = syncDirectory(partial);
  int64_t peakExtra =
      std::max<int64_t>(0, peakResidentBytes() - residentBefore);
  if (anyFailed(error)) {
    for (const std::string &path : mine)
      ::unlink(path.c_str());
    anyFailed(""); // every rank's files are gone before the folder goes
    if (rank == 0)
      removeFolder(partial);
    agree(prefixed(error));
  }

  // 3. Sizes and checksums to rank 0: [peak, per group: present, header
  // bytes, file bytes, crc, then every slice's crc], padded to the largest.
  size_t maxSlices = 0;
  for (const auto &groups : plan.slices) {
    size_t count = 0;
    for (const auto &slices : groups)
      count += slices.size();
    maxSlices = std::max(maxSlices, count);
  }
  size_t recordSize = 1 + 4 * kGroups + maxSlices;
  if (recordSize * static_cast<size_t>(ranks) > INT_MAX)
    agree(prefixed("the plan has too many slices to gather"));
  std::vector<int64_t> record(recordSize, 0);
  record[0] = peakExtra;
  size_t at = 1 + 4 * kGroups;
  for (int g = 0; g < kGroups; ++g) {
    record[1 + 4 * g] = written[g].present;
    record[2 + 4 * g] = written[g].headerBytes;
    record[3 + 4 * g] = written[g].fileBytes;
    record[4 + 4 * g] = written[g].crc;
    for (uint32_t crc : written[g].sliceCrcs)
      record[at++] = crc;
  }
  std::vector<int64_t> all(rank == 0 ? recordSize * ranks : 0);
  MPI_Gather(record.data(), static_cast<int>(recordSize), MPI_INT64_T,
             all.data(), static_cast<int>(recordSize), MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  crashPoint("gathered");

  // 4. Rank 0: the manifest, last; the folder into place; latest.
  std::vector<int64_t> peaks(static_cast<size_t>(ranks), 0);
  int64_t totalBytes = 0;
  std::string warnings;
  if (rank == 0) {
    Manifest manifest;
    manifest.model = model;
    manifest.step = info.step;
    manifest.dataPosition = info.dataPosition;
    manifest.globalBatch = program.batch_per_rank * ranks;
    manifest.seqLen = program.seq_len;
    manifest.seed = info.seed;
    manifest.worldSize = ranks;
    manifest.zeroStage = program.zero_stage;
    // The names the module ties to a parameter (train.tied).
    for (int t = 0; t < program.num_tied && program.tied; ++t)
      manifest.aliases.push_back({program.tied[2 * t], program.tied[2 * t + 1]});
    for (const PlanTensor &tensor : plan.tensors) {
      Tensor entry;
      entry.name = tensor.name;
      entry.kind = tensor.kind;
      entry.of = tensor.of;
      entry.dtype = tensor.dtype;
      entry.shape = tensor.shape;
      entry.numel = tensor.numel;
      manifest.tensors.push_back(entry);
    }
    for (int r = 0; r < ranks && error.empty(); ++r) {
      const int64_t *row = &all[static_cast<size_t>(r) * recordSize];
      peaks[static_cast<size_t>(r)] = row[0];
      size_t crcAt = 1 + 4 * kGroups;
      for (int g = 0; g < kGroups; ++g) {
        const std::vector<PlanSlice> &slices =
            plan.slices[static_cast<size_t>(r)][static_cast<size_t>(g)];
        if (!row[1 + 4 * g]) {
          if (!slices.empty())
            error = "internal error: rank " + std::to_string(r) +
                    " did not write " + groupFileName(g, r);
          continue;
        }
        FileRecord file;
        file.name = groupFileName(g, r);
        file.bytes = row[3 + 4 * g];
        file.crc = static_cast<uint32_t>(row[4 + 4 * g]);
        manifest.files.push_back(file);
        totalBytes += file.bytes;
        int64_t offset = row[2 + 4 * g];
        for (const PlanSlice &slice : slices) {
          const PlanTensor &tensor =
              plan.tensors[static_cast<size_t>(slice.tensor)];
          Slice entry;
          entry.file = file.name;
          entry.begin = slice.begin;
          entry.end = slice.end;
          entry.byteBegin = offset;
          entry.crc = static_cast<uint32_t>(row[crcAt++]);
          offset += (slice.end - slice.begin) *
                    static_cast<int64_t>(zrt_dtype_size(tensor.dtype));
          manifest.tensors[static_cast<size_t>(slice.tensor)].slices.push_back(
              entry);
        }
        if (offset != file.bytes)
          error = "internal error: " + file.name + " has " +
                  std::to_string(file.bytes) + " bytes, its slices end at " +
                  std::to_string(offset);
      }
    }
    for (Tensor &tensor : manifest.tensors)
      std::sort(
          tensor.slices.begin(), tensor.slices.end(),
          [](const Slice &a, const Slice &b) { return a.begin < b.begin; });
    if (error.empty())
      error = writeFileDurably(joinPath(partial, kManifestName),
                               serializeManifest(manifest));
    crashPoint("manifest");
    // Into place: an older checkpoint of the same step moves aside first.
    std::string old = folder + ".old";
    if (error.empty() && exists(folder)) {
      if (!isDirectory(folder))
        error = folder + ": exists and is not a directory; not replacing it";
      if (error.empty())
        error = removeFolder(old);
      if (error.empty() && ::rename(folder.c_str(), old.c_str()) != 0)
        error = folder +
                ": cannot move the older checkpoint of this step "
                "aside: " +
                std::strerror(errno);
    }
    if (error.empty() && ::rename(partial.c_str(), folder.c_str()) != 0)
      error = folder + ": cannot rename " + partial +
              " into place: " + std::strerror(errno);
    if (error.empty())
      error = syncDirectory(dir);
    crashPoint("renamed");
    if (error.empty())
      error = writeFileDurably(joinPath(dir, kLatestName), name + "\n");
    crashPoint("latest");
    if (error.empty())
      warnings = prune(dir, info.step, keepLast);
    peaks[0] = std::max<int64_t>(0, peakResidentBytes() - residentBefore);
    if (!error.empty() && exists(partial))
      removeFolder(partial); // not renamed: never a checkpoint
  }
  agree(prefixed(error));

  info.folder = folder;
  if (rank == 0) {
    double seconds = MPI_Wtime() - start;
    std::string peakList;
    for (size_t r = 0; r < peaks.size(); ++r)
      peakList += (r ? ", " : "") + std::to_string(peaks[r]);
    info.log =
        "{\"checkpoint\": \"saved\", \"step\": " + std::to_string(info.step) +
        ", \"folder\": " + jsonQuote(folder) +
        ", \"bytes\": " + std::to_string(totalBytes) +
        ", \"seconds\": " + jsonNumber(std::round(seconds * 1e6) / 1e6) +
        ", \"mb_per_s\": " +
        jsonNumber(seconds > 0 ? std::round(totalBytes / seconds / 1e5) / 10
                               : 0) +
        ", \"staging_bytes\": " + std::to_string(bufferBytes()) +
        ", \"peak_extra_bytes\": [" + peakList + "]}";
    info.note = "saved step " + std::to_string(info.step) + " to " + folder +
                " (" + humanBytes(totalBytes) + " in " +
                jsonNumber(std::round(seconds * 1e3) / 1e3) + " s, " +
                mb(seconds > 0 ? totalBytes / seconds : 0) + " MB/s)";
    if (!warnings.empty())
      info.note += "\nzeroc: warning: --keep-last: " + warnings;
  }
  return "";
}

} // namespace zeroc::rt
