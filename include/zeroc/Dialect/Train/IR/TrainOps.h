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
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

namespace zeroc::train {
/// Every train op carries this trait: its operands and results must be
/// tensors of static shape, every dimension at least 1, at most
/// kMaxElements elements (TrainShapes.h). Checked before the op's own
/// verifier, so that no verifier, pass, emitter or evaluator meets an empty,
/// dynamic or overflowing shape.
template <typename ConcreteType>
class ShapeChecked
    : public mlir::OpTrait::TraitBase<ConcreteType, ShapeChecked> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyOperandAndResultShapes(op);
  }
};

/// custom<OneType> (TrainMathOps.td): the one type of train.compare's and
/// train.select's operands and result, written once (TrainMathOps.cpp).
mlir::ParseResult parseOneType(mlir::OpAsmParser &parser, mlir::Type &a,
                               mlir::Type &b, mlir::Type &c);
mlir::ParseResult parseOneType(mlir::OpAsmParser &parser, mlir::Type &a,
                               mlir::Type &b, mlir::Type &c, mlir::Type &d);
void printOneType(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                  mlir::Type a, mlir::Type b, mlir::Type c);
void printOneType(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                  mlir::Type a, mlir::Type b, mlir::Type c, mlir::Type d);
} // namespace zeroc::train

#define GET_OP_CLASSES
#include "zeroc/Dialect/Train/IR/TrainOps.h.inc"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINOPS_H
