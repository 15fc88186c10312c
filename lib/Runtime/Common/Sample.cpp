//===- Sample.cpp - text generation with the program's @logits ------------===//
//
// Every rank runs the logits entry point on the same context (it may hold
// collectives, e.g. stage 3's parameter gathers); rank 0 draws the next
// token with temperature and broadcasts it. The logits land in host memory
// (on a GPU the program copies them there); the context goes to the program
// through an IdBuffer (device memory on a GPU).
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include "zeroc/Support/Random.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace zeroc::rt {

std::string sampleText(const zrt_program &program, zrt_comm *comm,
                       const Options &options) {
  int64_t seqLen = program.seq_len, vocab = program.vocab;
  std::vector<int64_t> context;
  for (unsigned char c : options.prompt)
    context.push_back(c % vocab);
  std::vector<float> logits(static_cast<size_t>(seqLen * vocab));
  IdBuffer ids(static_cast<size_t>(seqLen) * zrt_dtype_size(program.id_dtype));
  std::string text = options.prompt;
  uint64_t key = zeroc::random::streamKey("sample", options.seed), counter = 0;
  for (int64_t n = 0; n < options.sample; ++n) {
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
    int64_t next = 0;
    if (zrt_rank(comm) == 0) {
      // With an empty prompt, the first token follows a zero token.
      const float *row = logits.data() + (used ? used - 1 : 0) * vocab;
      double top = row[0];
      for (int64_t v = 1; v < vocab; ++v)
        top = std::max(top, static_cast<double>(row[v]));
      std::vector<double> p(vocab);
      double total = 0;
      for (int64_t v = 0; v < vocab; ++v)
        total += p[v] = std::exp((row[v] - top) / options.temperature);
      double u = static_cast<double>(zeroc::random::draw(key, counter++) >> 11) *
                 0x1.0p-53 * total;
      for (next = 0; next + 1 < vocab && u >= p[next]; ++next)
        u -= p[next];
    }
    MPI_Bcast(&next, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    context.push_back(next);
    text.push_back(static_cast<char>(next));
  }
  return text;
}

} // namespace zeroc::rt
