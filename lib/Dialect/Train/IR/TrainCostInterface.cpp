//===- TrainCostInterface.cpp - the cost interface's definitions ----------===//

#include "zeroc/Dialect/Train/IR/TrainCostInterface.h"

#include "zeroc/Dialect/Train/IR/TrainCostInterface.cpp.inc"
