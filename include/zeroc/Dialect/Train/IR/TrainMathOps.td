//===- TrainMathOps.td - generic elementwise and mask ops --*- tablegen -*-===//
//
// The elementwise functions, comparisons, selection, triangular masks and
// tensor constants that a functionalized ATen graph uses and GPT-2's ops do
// not cover (issue 31; the agreed syntax is in the issue's ops table): the
// ATen importer maps aten.exp, aten.log, aten.tanh, aten.neg, aten.rsqrt,
// aten.erf,
// aten.pow.Tensor_Scalar, aten.eq/ne/lt/le/gt/ge, aten.where, aten.tril,
// aten.triu and lifted tensor constants one to one onto these. The
// elementwise ones carry a scalar formula (TrainScalarFormulas.cpp), so that
// fusion and both back ends compute them without a kernel of their own.
// Verifiers and type rules: TrainMathOps.cpp; derivatives:
// TrainMathAdjoints.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINMATHOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINMATHOPS_TD

def Train_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "how train.compare compares its operands", [
    I32EnumAttrCase<"eq", 0>,
    I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>,
    I32EnumAttrCase<"ge", 5>
  ]> {
  let cppNamespace = "::zeroc::train";
}

//===----------------------------------------------------------------------===//
// Unary elementwise functions
//===----------------------------------------------------------------------===//

class Train_UnaryMathOp<string mnemonic, string what, string torch>
    : Train_Op<mnemonic, [Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise,
        DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>,
        DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "elementwise " # what;
  let description = [{
    `result = }] # what # [{` elementwise, as `torch.}] # torch # [{`; the
    result has the input's type.

    ```mlir
    %y = train.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_ExpOp : Train_UnaryMathOp<"exp", "exp(x)", "exp">;
def Train_LogOp : Train_UnaryMathOp<"log", "log(x)", "log">;
def Train_TanhOp : Train_UnaryMathOp<"tanh", "tanh(x)", "tanh">;
def Train_NegOp : Train_UnaryMathOp<"neg", "-x", "neg">;
def Train_RsqrtOp : Train_UnaryMathOp<"rsqrt", "1 / sqrt(x)", "rsqrt">;
def Train_ErfOp : Train_UnaryMathOp<"erf", "erf(x)", "erf">;

def Train_PowOp : Train_Op<"pow", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise,
    DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "raises every element to a constant power";
  let description = [{
    `result = x^exponent` elementwise, as `torch.pow(x, exponent)` with a
    Python number (C's `pow`: a negative `x` to a non-integer power is NaN).
    The exponent is finite.

    ```mlir
    %y = train.pow %x by 3.000000e+00 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F64Attr:$exponent);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `by` $exponent attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Comparison and selection
//===----------------------------------------------------------------------===//

def Train_CompareOp : Train_Op<"compare", [Pure, InferTypeOpAdaptor,
    Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "elementwise comparison, as a 1.0 / 0.0 mask";
  let description = [{
    `result = (lhs PREDICATE rhs) ? 1.0 : 0.0` elementwise, where the
    predicate is one of `eq`, `ne`, `lt`, `le`, `gt`, `ge` (IEEE comparison:
    every predicate but `ne` is false where an operand is NaN). The operands
    and the result have one type: the mask is a float tensor of the data's
    element type, ready for `train.select` or `train.mul`. Operands of
    different shapes are broadcast first (`train.broadcast`). A comparison
    has no derivative: gradients do not flow through it.

    ```mlir
    %m = train.compare %a, %b lt : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs,
                       Train_ComparePredicate:$predicate);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs $predicate attr-dict `:`
    custom<OneType>(type($lhs), type($rhs), type($result))
  }];
  let hasVerifier = 1;
}

def Train_SelectOp : Train_Op<"select", [Pure, InferTypeOpAdaptor,
    Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "elementwise choice between two tensors by a mask";
  let description = [{
    `result = (mask != 0) ? on_true : on_false` elementwise, as
    `torch.where(mask, on_true, on_false)` with the boolean mask as a float
    tensor (`train.compare`'s 1.0 / 0.0). The three operands and the result
    have one type; operands of different shapes are broadcast first. The
    gradient goes to `on_true` where the mask is non-zero and to `on_false`
    elsewhere; the mask gets none.

    ```mlir
    %y = train.select %m, %a, %b : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$mask, Train_FloatTensor:$on_true,
                       Train_FloatTensor:$on_false);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $mask `,` $on_true `,` $on_false attr-dict `:`
    custom<OneType>(type($mask), type($on_true), type($on_false),
                    type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Triangular masks
//===----------------------------------------------------------------------===//

class Train_TriangleOp<string mnemonic, string kept, string example>
    : Train_Op<mnemonic, [Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<InferTypeOpInterface>,
        DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "keeps the " # kept # " triangle of the last two dimensions";
  let description = [{
    As `torch.}] # mnemonic # [{(x, diagonal)`: on the last two dimensions
    `[R, C]` of an input of rank >= 2, `result[..., i, j] = x[..., i, j]`
    where }] # kept # [{ and 0 elsewhere. `diagonal = 0` is the main
    diagonal, a positive one lies above it, a negative one below. Not
    elementwise (it depends on the position): the back ends have a kernel for
    it. Its derivative is the same mask applied to the cotangent.

    ```mlir
    %y = train.}] # mnemonic # [{ %x diagonal = }] # example # [{ : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, I64Attr:$diagonal);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `diagonal` `=` $diagonal attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Train_TrilOp : Train_TriangleOp<"tril", "j - i <= diagonal", "0">;
def Train_TriuOp : Train_TriangleOp<"triu", "j - i >= diagonal", "1">;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Train_ConstantOp : Train_Op<"constant", [Pure, ConstantLike,
    InferTypeOpAdaptor]> {
  let summary = "a tensor constant given element by element";
  let description = [{
    A tensor whose elements are those of a `dense<...>` attribute, whose type
    is the result type: f32 or bf16 data (a lifted tensor constant of a
    traced module), or i32 / i64 ids (`torch.arange` positions feeding
    `train.embedding`). A constant with every element equal is better
    written `train.fill`; both are accepted.

    ```mlir
    %c = train.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
    %pos = train.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Train_FloatOrIndexTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINMATHOPS_TD
