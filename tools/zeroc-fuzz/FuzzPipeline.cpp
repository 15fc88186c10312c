//===- FuzzPipeline.cpp - the whole pipeline at a few (stage, N) ----------===//
//
// Input: one byte that picks the ZeRO stage (bits 0-1), the world size
// (bits 2-3: 1, 2, 3 or 4), bf16 mixed precision (bit 4), small buckets
// (bit 5) and the rematerialization policy (bits 6-7: none, full,
// selective, none), then MLIR text.
// A module that verifies goes through zeroc's training pipeline (what
// `zeroc --zero-stage=S --world-size=N` runs); its output must verify (the
// pass manager checks after every pass), and then gets the memory report
// and the C++ and CUDA sources, as `zeroc --emit=...` would.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Pipeline/Pipeline.h"
#include "zeroc/Target/Cpp.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static zeroc::fuzz::Context context;
  zeroc::fuzz::registerPassesOnce();
  mlir::MLIRContext &ctx = context.get();
  uint8_t config = data[0];
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::fuzz::parseAfterConfigByte(ctx, data, size);
  if (!module)
    return 0;
  zeroc::PipelineOptions options;
  options.zeroStage = config & 3;
  options.worldSize = 1 + ((config >> 2) & 3);
  if (config & 16)
    options.precision = "bf16";
  // Small buckets: several per model, as larger models have.
  options.bucketBytes = (config & 32) ? 256 : 25 << 20;
  static const char *const policies[] = {"none", "full", "selective", "none"};
  options.remat = policies[(config >> 6) & 3];
  mlir::PassManager pm(&ctx);
  zeroc::buildTrainingPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 0;
  if (mlir::FailureOr<zeroc::MemoryReport> report =
          zeroc::computeMemoryReport(*module);
      mlir::succeeded(report)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    report->toJSON(os);
    report->toTable(os);
  }
  for (zeroc::SourceTarget target :
       {zeroc::SourceTarget::Cpu, zeroc::SourceTarget::Cuda}) {
    std::string source;
    llvm::raw_string_ostream os(source);
    (void)zeroc::translateToSource(*module, os, target);
  }
  return 0;
}
