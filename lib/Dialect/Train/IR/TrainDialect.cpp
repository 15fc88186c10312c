//===- TrainDialect.cpp - the train dialect -------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zeroc/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}
