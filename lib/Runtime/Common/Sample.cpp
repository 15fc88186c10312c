//===- Sample.cpp - text generation with the program's @logits ------------===//
//
// Every rank runs the logits entry point on the same context (it may hold
// collectives, e.g. stage 3's parameter gathers); rank 0 picks the next
// token and broadcasts it. The logits land in host memory (on a GPU the
// program copies them there); the context goes to the program through an
// IdBuffer (device memory on a GPU).
//
// The next token: with --temperature 0 the argmax of the last position's
// logits (the lowest id among equal ones, as torch.argmax); otherwise a
// draw from the softmax of the logits divided by the temperature, kept to
// the --top-k most likely ids and then to the smallest set of the most
// likely whose probability reaches --top-p (the order of Hugging Face's
// generate: temperature, top-k, top-p), with the random stream of --seed.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include "zeroc/Support/OutputFile.h"
#include "zeroc/Support/Random.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace zeroc::rt {

namespace {

/// The next token from one position's logits `row` (rank 0).
int64_t pickToken(const float *row, int64_t vocab, const Options &options,
                  uint64_t key, uint64_t &counter) {
  if (options.temperature == 0) {
    int64_t best = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (row[v] > row[best])
        best = v;
    return best;
  }
  double top = row[0];
  for (int64_t v = 1; v < vocab; ++v)
    top = std::max(top, static_cast<double>(row[v]));
  std::vector<double> p(vocab);
  for (int64_t v = 0; v < vocab; ++v)
    p[v] = std::exp((row[v] - top) / options.temperature);
  if (options.topK > 0 || options.topP < 1) {
    // The most likely first (the lower id first among equal ones).
    std::vector<int64_t> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    int64_t kept = options.topK > 0 ? std::min(options.topK, vocab) : vocab;
    if (options.topP < 1) {
      double total = 0;
      for (int64_t i = 0; i < kept; ++i)
        total += p[order[i]];
      double mass = 0;
      int64_t within = 0;
      while (within < kept && mass < options.topP * total)
        mass += p[order[within++]];
      kept = std::max<int64_t>(within, 1);
    }
    for (int64_t i = kept; i < vocab; ++i)
      p[order[i]] = 0;
  }
  double total = 0;
  for (int64_t v = 0; v < vocab; ++v)
    total += p[v];
  double u = static_cast<double>(zeroc::random::draw(key, counter++) >> 11) *
             0x1.0p-53 * total;
  int64_t next = 0;
  // The last kept id takes what rounding leaves of u.
  int64_t last = vocab - 1;
  while (last > 0 && p[last] == 0)
    --last;
  for (next = 0; next < last && u >= p[next]; ++next)
    u -= p[next];
  return next;
}

void appendLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// `rows` x `vocab` float32 values as a .npy (version 1.0) file's bytes.
std::string npyBytes(const std::vector<float> &values, int64_t rows,
                     int64_t vocab) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(vocab) +
                       "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  size_t used = 10 + header.size() + 1;
  header.append((64 - used % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  appendLittleEndian(out, header.size(), 2);
  out += header;
  out.append(reinterpret_cast<const char *>(values.data()),
             values.size() * sizeof(float));
  return out;
}

/// The same as a .safetensors file holding one F32 tensor "logits".
std::string safetensorsBytes(const std::vector<float> &values, int64_t rows,
                             int64_t vocab) {
  size_t bytes = values.size() * sizeof(float);
  std::string header = "{\"logits\":{\"dtype\":\"F32\",\"shape\":[" +
                       std::to_string(rows) + "," + std::to_string(vocab) +
                       "],\"data_offsets\":[0," + std::to_string(bytes) +
                       "]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  appendLittleEndian(out, header.size(), 8);
  out += header;
  out.append(reinterpret_cast<const char *>(values.data()), bytes);
  return out;
}

} // namespace

std::string readPrompts(const Options &options,
                        std::vector<std::string> &prompts) {
  prompts.clear();
  if (options.promptsFile.empty()) {
    prompts.push_back(options.prompt);
    return "";
  }
  std::ifstream in(options.promptsFile, std::ios::binary);
  if (!in)
    return "--prompts: cannot read '" + options.promptsFile +
           "': " + std::strerror(errno);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    prompts.push_back(line);
  }
  if (in.bad())
    return "--prompts: cannot read '" + options.promptsFile + "'";
  if (prompts.empty())
    return "--prompts: '" + options.promptsFile +
           "' holds no prompt (one per line)";
  return "";
}

std::string sampleText(const zrt_program &program, zrt_comm *comm,
                       const Options &options,
                       const std::vector<std::string> &prompts,
                       std::string &output) {
  int64_t seqLen = program.seq_len, vocab = program.vocab;
  std::vector<float> logits(static_cast<size_t>(seqLen * vocab));
  std::vector<float> saved; // the last prompt position's logits, per prompt
  IdBuffer ids(static_cast<size_t>(seqLen) * zrt_dtype_size(program.id_dtype));
  uint64_t key = zeroc::random::streamKey("sample", options.seed), counter = 0;
  output.clear();
  for (const std::string &prompt : prompts) {
    std::vector<int64_t> context;
    for (unsigned char c : prompt)
      context.push_back(c % vocab);
    std::string text = prompt;
    for (int64_t n = 0; n < std::max<int64_t>(options.sample, 1); ++n) {
      // The last seq_len tokens, left-aligned: causal attention makes the
      // padding after them irrelevant to the last real position.
      int64_t begin = context.size() > static_cast<size_t>(seqLen)
                          ? static_cast<int64_t>(context.size()) - seqLen
                          : 0;
      int64_t used = static_cast<int64_t>(context.size()) - begin;
      void *host = ids.host();
      for (int64_t i = 0; i < seqLen; ++i) {
        int64_t id = i < used ? context[begin + i] : 0;
        if (program.id_dtype == ZRT_I64)
          static_cast<int64_t *>(host)[i] = id;
        else
          static_cast<int32_t *>(host)[i] = static_cast<int32_t>(id);
      }
      program.logits(comm, ids.upload(), logits.data());
      // With an empty prompt, the first token follows a zero token.
      const float *row = logits.data() + (used ? used - 1 : 0) * vocab;
      if (n == 0 && !options.logitsPath.empty())
        saved.insert(saved.end(), row, row + vocab);
      if (options.sample == 0)
        break;
      int64_t next = 0;
      if (zrt_rank(comm) == 0)
        next = pickToken(row, vocab, options, key, counter);
      MPI_Bcast(&next, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
      context.push_back(next);
      text.push_back(static_cast<char>(next));
    }
    if (options.sample)
      output += text + "\n";
  }
  if (options.logitsPath.empty() || zrt_rank(comm) != 0)
    return "";
  int64_t rows = static_cast<int64_t>(prompts.size());
  const std::string &path = options.logitsPath;
  bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  std::string bytes = npy ? npyBytes(saved, rows, vocab)
                          : safetensorsBytes(saved, rows, vocab);
  if (std::string error =
          zeroc::output::writeFile(path, bytes.data(), bytes.size());
      !error.empty())
    return "--logits: cannot write " + error;
  return "";
}

} // namespace zeroc::rt
