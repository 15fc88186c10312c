//===- TrainGenericOps.td - reductions and gathers of ATen -*- tablegen -*-===//
//
// The generic reductions and gathers a functionalized ATen graph uses and
// the fast ops do not cover (issue 31): amax, var with a correction, log_softmax and gather
// along an axis, and the derivative helpers train-autodiff writes for them.
// Their verifiers, type rules and derivatives live in
// lib/Dialect/Train/IR/TrainGenericOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINGENERICOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINGENERICOPS_TD

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def Train_AmaxOp : Train_ReductionOp<"amax", "maximum"> {
  let description = [{
    The largest element over the listed dimensions, which are removed, as
    `torch.amax` (an empty list reduces nothing: the result is the input;
    `keepdim` is a `train.reshape` after). Where several elements tie for
    the maximum, the cotangent is shared evenly among them, as PyTorch's
    derivative of `amax` does (`train.amax_grad`). A NaN input gives a
    NaN maximum.

    ```mlir
    %y = train.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
}

def Train_VarOp : Train_Op<"var", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "variance over the listed dimensions, which are removed";
  let description = [{
    `sum((x - mean(x))^2) / (n - correction)` over the listed dimensions,
    where `n` is the number of elements reduced, as
    `torch.var(x, dims, correction=correction)`: `correction = 1` is the
    unbiased estimator (PyTorch's default), `0` the biased one that
    layer normalization uses. `n - correction` must be positive. The
    statistics are computed in f32 (or wider) whatever the element type.

    ```mlir
    %y = train.var %x dims = [1] correction = 1 : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       I64Attr:$correction);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` `=` $dims `correction` `=` $correction attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_LogSoftmaxOp : Train_Op<"log_softmax", [Pure,
    SameOperandsAndResultType, DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "logarithm of the softmax over the last dimension";
  let description = [{
    `x - max(x) - log(sum(exp(x - max(x))))` over the last dimension, as
    `torch.log_softmax(x, -1)` (another axis is a `train.transpose` before
    and after). Its derivative is `g - softmax(x) * sum(g)`.

    ```mlir
    %y = train.log_softmax %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_GatherOp : Train_Op<"gather", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "picks elements along one dimension by integer indices";
  let description = [{
    `torch.gather(input, dim, index)`: `index` has the input's rank, and
    along every dimension other than `dim` at most the input's size; the
    result has the index's shape and
    `result[i...] = input[i_0, ..., index[i...], ..., i_last]` (the index
    replaces coordinate `dim`). Indices must lie in
    `[0, input.size(dim))`; the back ends fail on any other, naming the
    op. The derivative scatter-adds the cotangent into the input's shape
    (`train.gather_grad`).

    ```mlir
    %y = train.gather %x[%idx] dim = 1 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_IndexTensor:$index,
                       I64Attr:$dim);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $index `]` `dim` `=` $dim attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Derivative helpers
//===----------------------------------------------------------------------===//

def Train_AmaxGradOp : Train_Op<"amax_grad", [Pure]> {
  let summary = "cotangent of train.amax";
  let description = [{
    From the cotangent `grad` of `output = train.amax input dims = [...]`:
    a tensor of the input's type where each element equal to its
    maximum holds `grad / k`, `k` the number of elements of its reduced
    slice that equal the maximum (ties share evenly, as PyTorch), and
    every other element 0.

    ```mlir
    %dx = train.amax_grad %dy, %x, %y dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_FloatTensor:$output, DenseI64ArrayAttr:$dims);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `,` $output `dims` `=` $dims attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_GatherGradOp : Train_Op<"gather_grad", [Pure]> {
  let summary = "cotangent of train.gather: scatter-adds into zeros";
  let description = [{
    A tensor of the gathered input's type (the result type), zero except
    where an index points: `result[i_0, ..., index[i...], ..., i_last] +=
    grad[i...]` for every position `i...` of `index` (`torch.scatter_add`
    on zeros). Duplicate indices add up.

    ```mlir
    %dx = train.gather_grad %dy[%idx] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_IndexTensor:$index,
                       I64Attr:$dim);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $index `]` `dim` `=` $dim attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINGENERICOPS_TD
