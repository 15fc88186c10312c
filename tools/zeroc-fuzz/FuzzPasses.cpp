//===- FuzzPasses.cpp - one pass at a time, at any stage ------------------===//
//
// Input: one byte that picks one of zeroc's passes and pass pipelines
// (kPasses, modulo their count: each with its default options, some again
// with option values drawn from a hash of the text), then MLIR text. A module that verifies goes through that
// pass alone, whatever stage
// the IR is at: a pass given IR from another stage of the pipeline must
// reject it with a diagnostic, never crash (the pipeline target only ever
// feeds a pass what the pass before it wrote). The pass manager verifies
// what the pass leaves. Dialects load lazily, as in zeroc-opt, so that a
// pass creating ops of a dialect it does not declare is found too.
//
// ZEROC_FUZZ_PRINT_PIPELINE=1 prints each input's pipeline, options filled
// in, to stderr (which options a crash ran: scripts/fuzz.sh replay).
// ZEROC_FUZZ_LIST_PASSES=1 prints the list instead (test/Fuzz/passes.test
// compares its names with zeroc-opt's passes, so that a new pass is fuzzed
// too).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

namespace {

/// Every pass and pass pipeline zeroc-opt registers (`--train-*`), as
/// textual pipelines.
const char *const kPasses[] = {
    "train-accumulate",       "train-allocate",
    "train-assign-buckets",   "train-autodiff",
    "train-batch-size",       "train-bufferize",
    "train-bufferize-ops",    "train-data-parallel",
    "train-deallocate",       "train-defer-gathers",
    "train-elide-copies",     "train-emplace",
    "train-entry-abi",        "train-fuse-elementwise",
    "train-fuse-grad-average", "train-fuse-head-split",
    "train-fuse-matmul-bias", "train-fuse-optimizer",
    "train-gather-params",    "train-logits",
    "train-mixed-precision",  "train-optimizer",
    "train-partition",        "train-pipeline",
    "train-planning",         "train-raise",
    "train-reduce-gradients", "train-remat",
    "train-schedule",         "train-shard-optimizer",
    "train-shard-states",     "train-trace-sites",
    "train-verify-emittable", "train-zero",
    // Again with options other than the defaults (appended, so that the
    // seeds' bytes keep naming the same passes above). A {X} is an option
    // value drawn from the input (optionValue): world sizes 1-8, stages
    // 0-3, bucket sizes from 1 byte to 64 MiB, and so on.
    "train-data-parallel{world-size={W}}",
    "train-batch-size{global-batch={G}}",
    "train-mixed-precision{precision={P}}",
    "train-remat{policy=full}", "train-remat{policy=selective}",
    "train-accumulate{micro-batches={M}}",
    "train-assign-buckets{bucket-bytes={B}}",
    "train-shard-states{stage={S} world-size={W}}",
    "train-schedule{max-in-flight={F}}",
    "train-zero{stage={S} world-size={W} bucket-bytes={B}}",
    "train-partition{stage={S} world-size={W}}",
    "train-pipeline{stage={S} world-size={W}}",
};
constexpr size_t kPassCount = std::size(kPasses);

/// The value of placeholder `key` in an input whose text hashes to
/// `hash` (FNV-1a of the MLIR text): the same input always runs the same
/// options, so that a crash replays.
std::string optionValue(char key, uint64_t hash) {
  // Each placeholder reads its own byte of the hash.
  auto pick = [&](unsigned shift, unsigned count) {
    return static_cast<unsigned>((hash >> shift) % count);
  };
  switch (key) {
  case 'W':
    return std::to_string(1 + pick(0, 8));
  case 'S':
    return std::to_string(pick(8, 4));
  case 'G':
    return std::to_string(1 + pick(16, 16));
  case 'M':
    return std::to_string(1 + pick(24, 4));
  case 'F':
    return std::to_string(1 + pick(32, 4));
  case 'P':
    return pick(40, 2) ? "bf16" : "fp32";
  case 'B': {
    const char *sizes[] = {"1", "3", "64", "256", "4096", "65536", "1048576",
                           "67108864"};
    return sizes[pick(48, 8)];
  }
  }
  std::fprintf(stderr, "zeroc-fuzz-passes: no option value {%c}\n", key);
  std::abort();
}

/// `pipeline` with its {X} placeholders replaced.
std::string withOptions(llvm::StringRef pipeline, llvm::StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ull;
  std::string out;
  for (size_t i = 0; i < pipeline.size(); ++i) {
    if (pipeline[i] == '{' && i + 2 < pipeline.size() &&
        pipeline[i + 2] == '}' && llvm::isUpper(pipeline[i + 1])) {
      out += optionValue(pipeline[i + 1], hash);
      i += 2;
    } else {
      out += pipeline[i];
    }
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (std::getenv("ZEROC_FUZZ_LIST_PASSES")) {
    for (const char *pass : kPasses)
      std::printf("%s\n", pass);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static zeroc::fuzz::Context context(/*loadAllDialects=*/false);
  zeroc::fuzz::registerPassesOnce();
  mlir::MLIRContext &ctx = context.get();
  std::string pass = withOptions(
      kPasses[data[0] % kPassCount],
      llvm::StringRef(reinterpret_cast<const char *>(data + 1), size - 1));
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::fuzz::parseAfterConfigByte(ctx, data, size);
  if (!module)
    return 0;
  static const bool printPipeline = std::getenv("ZEROC_FUZZ_PRINT_PIPELINE");
  if (printPipeline)
    std::fprintf(stderr, "zeroc-fuzz-passes: %s\n", pass.c_str());
  mlir::PassManager pm(&ctx);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (mlir::failed(mlir::parsePassPipeline(pass, pm, os))) {
    // A name in kPasses that zeroc no longer registers: the list is stale.
    std::fprintf(stderr, "zeroc-fuzz-passes: no pass '%s': %s\n",
                 pass.c_str(), errors.c_str());
    std::abort();
  }
  (void)pm.run(*module);
  return 0;
}
