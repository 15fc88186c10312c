//===- FuzzParseVerify.cpp - parsing and verifying train IR ---------------===//
//
// Input: MLIR text. Parses it with zeroc's dialects (which verifies it);
// a module that verifies must print, and what it prints must parse and
// verify again (the round trip of every op's assembly format).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static zeroc::fuzz::Context context;
  mlir::MLIRContext &ctx = context.get();
  mlir::OwningOpRef<mlir::ModuleOp> module = zeroc::fuzz::parse(
      ctx, llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!module)
    return 0;
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  mlir::OwningOpRef<mlir::ModuleOp> again = zeroc::fuzz::parse(ctx, printed);
  if (!again) {
    std::fprintf(stderr, "a module that verifies printed as text that does "
                         "not parse or verify:\n%s\n",
                 printed.c_str());
    std::abort();
  }
  return 0;
}
