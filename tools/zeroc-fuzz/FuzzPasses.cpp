//===- FuzzPasses.cpp - one pass at a time, at any stage ------------------===//
//
// Input: one byte that picks one of zeroc's passes and pass pipelines
// (kPasses, modulo their count: each with its default options, some again
// with others), then MLIR text. A module that verifies goes through that
// pass alone, whatever stage
// the IR is at: a pass given IR from another stage of the pipeline must
// reject it with a diagnostic, never crash (the pipeline target only ever
// feeds a pass what the pass before it wrote). The pass manager verifies
// what the pass leaves. Dialects load lazily, as in zeroc-opt, so that a
// pass creating ops of a dialect it does not declare is found too.
//
// ZEROC_FUZZ_LIST_PASSES=1 prints the list instead (test/Fuzz/passes.test
// compares its names with zeroc-opt's passes, so that a new pass is fuzzed
// too).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>

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
    // seeds' bytes keep naming the same passes above).
    "train-data-parallel{world-size=3}",
    "train-batch-size{global-batch=8}",
    "train-mixed-precision{precision=fp32}",
    "train-remat{policy=full}", "train-remat{policy=selective}",
    "train-accumulate{micro-batches=2}",
    "train-assign-buckets{bucket-bytes=256}",
    "train-shard-states{stage=2 world-size=2}",
    "train-schedule{max-in-flight=1}",
    "train-zero{stage=3 world-size=2 bucket-bytes=256}",
    "train-partition{stage=1 world-size=4}",
    "train-pipeline{stage=2 world-size=3}",
};
constexpr size_t kPassCount = std::size(kPasses);

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
  const char *pass = kPasses[data[0] % kPassCount];
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::fuzz::parseAfterConfigByte(ctx, data, size);
  if (!module)
    return 0;
  mlir::PassManager pm(&ctx);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (mlir::failed(mlir::parsePassPipeline(pass, pm, os))) {
    // A name in kPasses that zeroc no longer registers: the list is stale.
    std::fprintf(stderr, "zeroc-fuzz-passes: no pass '%s': %s\n", pass,
                 errors.c_str());
    std::abort();
  }
  (void)pm.run(*module);
  return 0;
}
