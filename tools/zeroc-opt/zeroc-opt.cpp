//===- zeroc-opt.cpp - the opt-style driver of zeroc's passes -------------===//
//
// Parses `train` IR (with the upstream dialects zeroc lowers through), runs
// the passes named on the command line and prints the result, as mlir-opt.
//
//===----------------------------------------------------------------------===//

#include "zeroc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zeroc::registerAllDialects(registry);
  zeroc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "zeroc optimizer driver: train dialect passes\n", registry));
}
