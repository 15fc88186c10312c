//===- TrainGradOps.td - derivative helpers of the train dialect -*- tablegen -*-===//
//
// Ops that `train-autodiff` writes for derivatives that are not themselves
// a composition of forward ops. Each takes the result's cotangent first.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD

def Train_EmbeddingGradOp : Train_Op<"embedding_grad", [Pure]> {
  let summary = "scatter-adds row cotangents into a table-shaped gradient";
  let description = [{
    `result[v, :] = sum over i with ids[i] == v of grad[i, :]`, zero for
    rows no id selects. The result has the table's shape `[V, C]`. With
    `padding_idx = p` (train.embedding's), row `p` is zero too.

    ```mlir
    %dwte = train.embedding_grad %dx[%tokens] : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>
    %dpad = train.embedding_grad %dx[%tokens] padding_idx = 0 : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_IndexTensor:$ids,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $ids `]` (`padding_idx` `=` $padding_idx^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_GeluGradOp : Train_Op<"gelu_grad", [Pure,
    SameOperandsAndResultType,
     DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>]> {
  let summary = "cotangent of train.gelu";
  let description = [{
    `result = grad * gelu'(input)` for the given approximation.
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_GeluApproximation:$approximation);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input $approximation attr-dict `:` type($result)
  }];
}

def Train_ReluGradOp : Train_Op<"relu_grad", [Pure,
    SameOperandsAndResultType,
     DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>]> {
  let summary = "cotangent of train.relu";
  let description = [{ `result = input > 0 ? grad : 0`. }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def Train_SoftmaxGradOp : Train_Op<"softmax_grad",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "cotangent of train.softmax, from its output";
  let description = [{
    `result = output * (grad - sum(grad * output, last dimension))`.
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_LayerNormGradOp : Train_Op<"layernorm_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "cotangents of train.layernorm";
  let description = [{
    From the output cotangent, the forward input and weight, gives the
    cotangents of the input, the weight and the bias (the last two summed
    over every leading dimension).

    ```mlir
    %dx, %dw, %db = train.layernorm_grad %dy, %x, %w eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<48xf32>) -> (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>)
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$weight_grad,
                      Train_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `eps` `=` $eps attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_AttentionGradOp : Train_Op<"attention_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "cotangents of train.attention";
  let description = [{
    Recomputes the attention probabilities from `query` and `key` and gives
    the cotangents of query, key and value (each of its operand's type; with
    grouped-query attention a key/value head's cotangent sums over the query
    heads that share it). With `dropout`, the forward op's dropout: the
    same attributes and `step`, so the same mask.

    ```mlir
    %dq, %dk, %dv = train.attention_grad %dy, %q, %k, %v causal scale = 2.500000e-01 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>)
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$query,
                       Train_FloatTensor:$key, Train_FloatTensor:$value,
                       Optional<Train_StepTensor>:$step,
                       UnitAttr:$causal, F64Attr:$scale,
                       OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<I64Attr>:$batch_dim,
                       OptionalAttr<I64Attr>:$ranks,
                       OptionalAttr<I64Attr>:$micro_batch,
                       OptionalAttr<I64Attr>:$micro_batches);
  let results = (outs Train_FloatTensor:$query_grad,
                      Train_FloatTensor:$key_grad,
                      Train_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value (`,` $step^)? (`causal` $causal^)?
    `scale` `=` $scale (`dropout` `=` $dropout^)? (`seed` `=` $seed^)?
    (`batch_dim` `=` $batch_dim^)? (`ranks` `=` $ranks^)?
    (`micro_batch` `=` $micro_batch^)? (`micro_batches` `=` $micro_batches^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_CrossEntropyGradOp : Train_Op<"cross_entropy_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "cotangent of train.cross_entropy with respect to the logits";
  let description = [{
    `result = grad * (softmax(logits) - (1 - e) * onehot(targets) - e / V)
    / positions` on each position that is not ignored and 0 on the ignored
    ones, where `grad` is the loss's scalar cotangent, `e` the
    `label_smoothing` (0 when absent), `V` the vocabulary and `positions`
    the number of positions whose target is not `ignore_index` (all of them
    without it, or `count` when given); the attributes and `count` are
    the forward op's.

    ```mlir
    %dlogits = train.cross_entropy_grad %one, %logits, %targets : (tensor<f32>, tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<12x17x65xf32>
    ```
  }];
  let arguments = (ins Train_ScalarF32Tensor:$grad,
                       Train_FloatTensor:$logits, Train_IndexTensor:$targets,
                       Optional<Train_ScalarF32Tensor>:$count,
                       OptionalAttr<I64Attr>:$ignore_index,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $targets (`count` $count^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// label_smoothing, 0 when absent.
    double getSmoothing() {
      return getLabelSmoothingAttr() ? getLabelSmoothingAttr().getValueAsDouble() : 0.0;
    }
  }];
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD
