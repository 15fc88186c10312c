//===- TrainInterfaces.td - op interfaces and traits of train -*- tablegen -*-===//
//
// What passes ask of an op, answered by the op itself: how to differentiate
// it (train-autodiff), whether it is elementwise (fusion), which operands an
// optimizer update updates and which results are views of an operand's
// buffer (bufferization). A new op declares
// these in its ODS and implements them next to its verifier, and the passes
// need no change.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_TD

include "mlir/IR/OpBase.td"

def Train_AdjointOpInterface : OpInterface<"AdjointOpInterface"> {
  let cppNamespace = "::zeroc::train";
  let description = [{
    Reverse-mode differentiation of one op, in the style of Enzyme-MLIR's
    `ReverseAutoDiffOpInterface`: given the cotangents of the op's results
    (held by the `AdjointBuilder` that `train-autodiff` passes in), the op
    builds the cotangents of its active operands and hands each to
    `AdjointBuilder::accumulate`, which sums the contributions of every use.
    An op without this interface has no derivative: `train-autodiff`
    rejects a model whose gradient flows through it.

    Implementations live in lib/Dialect/Train/IR/TrainAdjoints.cpp, one
    function per op.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the cotangents of the operands from those of the results.
        Only called when at least one result has a cotangent.
      }],
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::zeroc::train::AdjointBuilder &":$adjoint)>
  ];
}

def Train_ScalarFormulaOpInterface : OpInterface<"ScalarFormulaOpInterface"> {
  let cppNamespace = "::zeroc::train";
  let description = [{
    How one element of an elementwise op is computed: a C expression over
    its operands' elements, which the back ends print into their fused
    loops (CPU) and kernels (CUDA). In the pattern, `$0`, `$1`, ... stand
    for the operands' elements (as f32) and `#0`, `#1`, ... for the op's
    floating-point constants, printed as f32 literals. The functions a
    pattern calls (`zc_gelu_tanh`, ...) are defined under the same names by
    both preambles (lib/Target/Cpp/Preambles.cpp). Every op with the
    `Elementwise` trait must implement it (the trait's verifier checks), so
    that a fused loop can print every op it holds.

    Implementations live in lib/Dialect/Train/IR/TrainScalarFormulas.cpp,
    one function per op.
  }];
  let methods = [
    InterfaceMethod<[{
        The element's expression and its constants.
      }],
      "::zeroc::train::ScalarFormula", "getScalarFormula", (ins)>
  ];
}

def Train_StateUpdateOpInterface : OpInterface<"StateUpdateOpInterface"> {
  let cppNamespace = "::zeroc::train";
  let description = [{
    An optimizer update (`train.adamw_update`, `train.sgd_update`): operand
    0 is the parameter, operand 1 the gradient, the operands after it one
    optimizer state per further result; result 0 is the new parameter and
    result i > 0 the new value of state operand i + 1. What bufferization
    asks of an update: which operands it may update in place, and which
    result each becomes.
  }];
  let methods = [
    InterfaceMethod<[{
        The operands the update gives a new value of: the parameter, then
        each state.
      }],
      "::llvm::SmallVector<unsigned>", "getUpdatedOperands", (ins), [{}], [{
        ::llvm::SmallVector<unsigned> operands = {0};
        for (unsigned i = 2; i <= $_op->getNumResults(); ++i)
          operands.push_back(i);
        return operands;
      }]>,
    InterfaceMethod<[{
        The result that is the new value of updated operand `operand`.
      }],
      "::mlir::Value", "getUpdatedResult", (ins "unsigned":$operand), [{}], [{
        return $_op->getResult(operand == 0 ? 0 : operand - 1);
      }]>,
    InterfaceMethod<"The weight decay the update applies.",
      "::llvm::APFloat", "getWeightDecay">
  ];
}

def Train_BufferViewOpInterface : OpInterface<"BufferViewOpInterface"> {
  let cppNamespace = "::zeroc::train";
  let description = [{
    An op whose results, once bufferized, are views of one operand's buffer
    (end to end, from its first element), computing nothing:
    `train.reshape`, `train.unpack`, `train.wait` (the buffer its
    collective received into) and evaluation's `train.dropout`.
  }];
  let methods = [
    InterfaceMethod<[{
        The value whose buffer the results view, or null when this op
        computes its results (a dropout with a step).
      }],
      "::mlir::Value", "getViewSource">
  ];
}

// Each result element is a function of the operand elements at the same
// position once the operands are broadcast (NumPy rules) to the result
// shape: the ops an elementwise fusion may compute inside one loop. A
// constant (train.fill) and a broadcast (train.broadcast) are elementwise
// in this sense. An elementwise op implements ScalarFormulaOpInterface.
def Train_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::zeroc::train::OpTrait";
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_TD
