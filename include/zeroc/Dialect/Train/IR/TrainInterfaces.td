//===- TrainInterfaces.td - op interfaces and traits of train -*- tablegen -*-===//
//
// What passes ask of an op, answered by the op itself: how to differentiate
// it (train-autodiff), whether it is elementwise (fusion). A new op declares
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

// Each result element is a function of the operand elements at the same
// position once the operands are broadcast (NumPy rules) to the result
// shape: the ops an elementwise fusion may compute inside one loop. A
// constant (train.fill) and a broadcast (train.broadcast) are elementwise
// in this sense. An elementwise op implements ScalarFormulaOpInterface.
def Train_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::zeroc::train::OpTrait";
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAININTERFACES_TD
