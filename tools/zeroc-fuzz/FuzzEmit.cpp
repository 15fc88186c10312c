//===- FuzzEmit.cpp - the source emitters and the memory report -----------===//
//
// Input: one byte (bit 0: the CUDA emitter instead of the C++ one), then
// MLIR text, meant to be a per-rank program (what `zeroc --emit=mlir`
// writes; the seeds are). A module that verifies goes straight to the
// memory report and the source emitter, as `zeroc --no-pipeline` does.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Target/Cpp.h"

#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static zeroc::fuzz::Context context;
  mlir::MLIRContext &ctx = context.get();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::fuzz::parseAfterConfigByte(ctx, data, size);
  if (!module)
    return 0;
  if (mlir::FailureOr<zeroc::MemoryReport> report =
          zeroc::computeMemoryReport(*module);
      mlir::succeeded(report)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    report->toJSON(os);
    report->toTable(os);
  }
  std::string source;
  llvm::raw_string_ostream os(source);
  (void)zeroc::translateToSource(*module, os,
                                 (data[0] & 1) ? zeroc::SourceTarget::Cuda
                                               : zeroc::SourceTarget::Cpu);
  return 0;
}
