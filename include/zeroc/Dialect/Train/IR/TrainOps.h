//===- TrainOps.h - operations of the train dialect -------------*- C++ -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINOPS_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Dialect/Train/IR/TrainEnums.h.inc"
#include "zeroc/Dialect/Train/IR/TrainInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "zeroc/Dialect/Train/IR/TrainOpsTypes.h.inc"
#define GET_ATTRDEF_CLASSES
#include "zeroc/Dialect/Train/IR/TrainAttributes.h.inc"

#define GET_OP_CLASSES
#include "zeroc/Dialect/Train/IR/TrainOps.h.inc"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINOPS_H
