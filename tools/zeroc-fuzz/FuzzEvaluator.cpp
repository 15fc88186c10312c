//===- FuzzEvaluator.cpp - the reference evaluator ------------------------===//
//
// Input: one byte (bits 0-1: 1 to 4 simulated ranks; bit 2: fp64), then
// MLIR text. A module that verifies is evaluated as `zeroc-run` does: its
// train.step (or train.forward) function, on generated inputs, with the
// parameters from their initializers, within a 1 MiB memory limit (so that
// the evaluator refuses large tensors with a message, as it must, instead
// of spending the fuzzer's time on them).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "zeroc/Evaluator/Evaluator.h"

#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static zeroc::fuzz::Context context;
  mlir::MLIRContext &ctx = context.get();
  uint8_t config = data[0];
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::fuzz::parseAfterConfigByte(ctx, data, size);
  if (!module)
    return 0;
  using namespace zeroc::eval;
  llvm::Expected<mlir::func::FuncOp> entry = findEntry(*module, "");
  if (!entry) {
    llvm::consumeError(entry.takeError());
    return 0;
  }
  Options options;
  options.ranks = 1 + (config & 3);
  options.fp64 = config & 4;
  options.seed = config >> 3;
  options.maxBytes = 1 << 20;
  Evaluator evaluator(*module, options);
  if (mlir::failed(evaluator.initializeState()))
    return 0;
  InputOptions inputOptions;
  llvm::Expected<Inputs> inputs = makeInputs(*entry, options, inputOptions);
  if (!inputs) {
    llvm::consumeError(inputs.takeError());
    return 0;
  }
  for (int64_t step = 0; step < 2; ++step) {
    llvm::Expected<std::vector<RankValues>> args =
        argumentsForStep(*entry, *inputs, options.ranks, step);
    if (!args) {
      llvm::consumeError(args.takeError());
      return 0;
    }
    if (mlir::failed(evaluator.call(*entry, *args)))
      return 0;
  }
  for (const std::string &name : evaluator.stateNames())
    (void)evaluator.logicalState(name);
  return 0;
}
