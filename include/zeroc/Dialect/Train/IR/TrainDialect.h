//===- TrainDialect.h - the train dialect -----------------------*- C++ -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.h.inc"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_H
