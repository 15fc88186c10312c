//===- Data.cpp - token files and the global batch of a step --------------===//
//
// A token file is mapped read-only: raw little-endian uint16 ids (nanoGPT's
// .bin, whatever the extension) or, with --data-format=text, bytes
// (vocabulary 256). With L tokens in the file, block T = seq_len and global
// batch G = world_size * batch_per_rank, sequence i of step s starts at
//
//   ((s * G + i) * T) mod (L - T - 1)
//
// and its targets are the next T tokens; rank r takes sequences
// r*batch_per_rank ... (r+1)*batch_per_rank - 1. Every world size and ZeRO
// stage therefore trains on the same global batches.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc::rt {

TokenFile::~TokenFile() {
  if (bytes && mappedBytes)
    munmap(const_cast<uint8_t *>(bytes), mappedBytes);
}

std::string TokenFile::open(const std::string &filePath, DataFormat fileFormat,
                            int64_t seqLen) {
  path = filePath;
  format = fileFormat;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return path + ": cannot open the token file: " + std::strerror(errno);
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return path + ": not a regular file";
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (format == DataFormat::Bin && size % 2 != 0) {
    ::close(fd);
    return path + ": " + std::to_string(size) +
           " bytes is not a whole number of uint16 tokens (use "
           "--data-format=text for a text file)";
  }
  tokens = static_cast<int64_t>(format == DataFormat::Bin ? size / 2 : size);
  if (tokens < seqLen + 2) {
    ::close(fd);
    return path + ": " + std::to_string(tokens) +
           " tokens is too short: sequences of " + std::to_string(seqLen) +
           " tokens need at least " + std::to_string(seqLen + 2);
  }
  void *mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED)
    return path + ": cannot map the token file: " + std::strerror(errno);
  bytes = static_cast<const uint8_t *>(mapped);
  mappedBytes = size;
  return "";
}

std::string TokenFile::validate(int64_t vocab) const {
  int64_t limit = format == DataFormat::Bin ? 65536 : 256;
  if (vocab >= limit)
    return ""; // no id of the file's type can be out of range
  // Each rank scans its share; the lowest bad index wins.
  int rank = worldRank(), ranks = worldSize();
  int64_t begin =
      tokens / ranks * rank + std::min<int64_t>(rank, tokens % ranks);
  int64_t end = begin + tokens / ranks + (rank < tokens % ranks ? 1 : 0);
  std::atomic<int64_t> lowest{INT64_MAX};
  parallelChunks(end - begin, [&](int64_t from, int64_t to) {
    for (int64_t i = begin + from; i < begin + to; ++i)
      if (token(i) >= vocab) {
        int64_t seen = lowest.load();
        while (i < seen && !lowest.compare_exchange_weak(seen, i)) {
        }
        return; // the rest of this chunk is past i
      }
  });
  int64_t first = lowest.load(), global = first;
  MPI_Allreduce(&first, &global, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (global == INT64_MAX)
    return "";
  int64_t offset = format == DataFormat::Bin ? 2 * global : global;
  return path + ": token id " + std::to_string(token(global)) +
         " at byte offset " + std::to_string(offset) + " (token " +
         std::to_string(global) +
         ") is out of range: the model's "
         "vocabulary has " +
         std::to_string(vocab) + " ids (0.." + std::to_string(vocab - 1) + ")" +
         textHint();
}

std::string TokenFile::textHint() const {
  if (format != DataFormat::Bin)
    return "";
  // Text in the first 4 KiB: printable ASCII, tabs, line ends and UTF-8.
  size_t look = std::min<size_t>(mappedBytes, 4096), texty = 0;
  for (size_t i = 0; i < look; ++i) {
    uint8_t b = bytes[i];
    texty += (b >= 32 && b != 127) || b == '\n' || b == '\r' || b == '\t';
  }
  if (look == 0 || texty < look)
    return "";
  return "; the file looks like text: pass --data-format=text to read it as "
         "bytes (or tokenize it into a uint16 .bin)";
}

int64_t sequenceStart(int64_t step, int64_t globalBatch, int64_t index,
                      int64_t seqLen, int64_t numTokens,
                      int64_t sequenceOffset) {
  using u128 = unsigned __int128;
  using i128 = __int128;
  // Never negative: the offset only moves a resumed run's first sequence
  // to where the checkpoint's run stopped.
  u128 sequence = static_cast<u128>(static_cast<i128>(step) * globalBatch +
                                    index + sequenceOffset);
  u128 span = static_cast<u128>(numTokens - seqLen - 1);
  return static_cast<int64_t>((sequence * static_cast<u128>(seqLen)) % span);
}

void TokenFile::fillBatch(int64_t step, int64_t worldSize, int64_t rank,
                          int64_t batchPerRank, int64_t seqLen,
                          zrt_dtype idDtype, void *tokensOut, void *targetsOut,
                          int64_t sequenceOffset) const {
  int64_t globalBatch = worldSize * batchPerRank;
  for (int64_t j = 0; j < batchPerRank; ++j) {
    int64_t start = sequenceStart(step, globalBatch, rank * batchPerRank + j,
                                  seqLen, tokens, sequenceOffset);
    for (int64_t t = 0; t < seqLen; ++t) {
      int64_t at = j * seqLen + t;
      int64_t input = token(start + t), target = token(start + t + 1);
      if (idDtype == ZRT_I64) {
        static_cast<int64_t *>(tokensOut)[at] = input;
        static_cast<int64_t *>(targetsOut)[at] = target;
      } else {
        static_cast<int32_t *>(tokensOut)[at] = static_cast<int32_t>(input);
        static_cast<int32_t *>(targetsOut)[at] = static_cast<int32_t>(target);
      }
    }
  }
}

} // namespace zeroc::rt
