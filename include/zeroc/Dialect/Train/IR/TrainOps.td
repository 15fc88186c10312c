//===- TrainOps.td - operations of the train dialect -------*- tablegen -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINOPS_TD

include "zeroc/Dialect/Train/IR/TrainDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "zeroc/Dialect/Train/IR/TrainInterfaces.td"
include "zeroc/Dialect/Train/IR/TrainTypes.td"

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

def Train_ParamOp : Train_Op<"param", [Symbol, HasParent<"mlir::ModuleOp">]> {
  let summary = "a trainable parameter of the model";
  let description = [{
    Declares a trainable parameter as a module-level symbol. Its name is the
    PyTorch state-dict name (`@transformer.h.0.attn.c_attn.weight`), its type
    the tensor shape and element type, `init` how it is initialized
    (`zeros`, `ones`, or `normal` with mean 0 and standard deviation `std`),
    and `decay` marks it for weight decay.

    A parameter is always stored whole: ZeRO's sharded storage is a
    `train.buffer` with `shards` whose members are parameters, never a
    parameter sharded on its own.

    ```mlir
    train.param @transformer.wte.weight : tensor<65x48xf32> init = normal std = 2.000000e-02 decay
    train.param @transformer.ln_f.bias : tensor<48xf32> init = zeros
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<Train_FloatTensor>:$type,
    Train_InitKind:$init,
    OptionalAttr<F64Attr>:$std,
    UnitAttr:$weight_decay
  );
  let assemblyFormat = [{
    $sym_name `:` $type `init` `=` $init (`std` `=` $std^)?
    (`decay` $weight_decay^)? attr-dict
  }];
  let extraClassDeclaration = [{
    mlir::RankedTensorType getTensorType() {
      return llvm::cast<mlir::RankedTensorType>(getType());
    }
    /// What train.read and train.write see: the declared type (as
    /// train.state's and train.buffer's getStorageType).
    mlir::RankedTensorType getStorageType() { return getTensorType(); }
  }];
  let hasVerifier = 1;
}

def Train_OptimizerOp : Train_Op<"optimizer", [HasParent<"mlir::ModuleOp">]> {
  let summary = "the model's optimizer, clipping and learning-rate schedule";
  let description = [{
    Configures how parameters are updated. `sgd` takes `momentum`; `adamw`
    takes `beta1`, `beta2` and `eps` and follows torch.optim.AdamW (decoupled
    weight decay, bias correction, eps added after the square root).
    `weight_decay` applies to parameters declared with `decay`. A positive
    `grad_clip` clips the global gradient norm as
    torch.nn.utils.clip_grad_norm_. The schedule is `constant`, or `cosine`:
    linear warmup over `warmup` steps, then cosine decay from `lr` to `min_lr`
    reached at `max_steps`.

    ```mlir
    train.optimizer adamw lr = 6.000000e-04 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08
        weight_decay = 0.1 grad_clip = 1.0 schedule = cosine warmup = 10
        min_lr = 6.0e-05 max_steps = 1000
    ```
  }];
  let arguments = (ins
    Train_OptimizerKind:$kind,
    F64Attr:$lr,
    OptionalAttr<F64Attr>:$beta1,
    OptionalAttr<F64Attr>:$beta2,
    OptionalAttr<F64Attr>:$eps,
    OptionalAttr<F64Attr>:$momentum,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
    DefaultValuedAttr<F64Attr, "0.0">:$grad_clip,
    DefaultValuedAttr<Train_LRSchedule, "::zeroc::train::LRSchedule::constant">:$schedule,
    DefaultValuedAttr<I64Attr, "0">:$warmup,
    DefaultValuedAttr<F64Attr, "0.0">:$min_lr,
    OptionalAttr<I64Attr>:$max_steps
  );
  let assemblyFormat = [{
    $kind `lr` `=` $lr (`beta1` `=` $beta1^)? (`beta2` `=` $beta2^)?
    (`eps` `=` $eps^)? (`momentum` `=` $momentum^)?
    (`weight_decay` `=` $weight_decay^)? (`grad_clip` `=` $grad_clip^)?
    (`schedule` `=` $schedule^)? (`warmup` `=` $warmup^)?
    (`min_lr` `=` $min_lr^)? (`max_steps` `=` $max_steps^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The state each parameter keeps besides its gradient and its fp32
    /// master: AdamW's two moments, SGD's momentum buffer.
    ::llvm::SmallVector<::zeroc::train::StateKind> getMomentKinds();
  }];
  let hasVerifier = 1;
}

def Train_ReadOp : Train_Op<"read", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "reads the current value of a parameter or optimizer state";
  let description = [{
    Yields the value of the `train.param` or `train.state` named by `name`. The result type
    must equal the parameter's declared type. A `train.buffer` reads as the whole
    buffer, or this rank's shard of a sharded one (its storage type).

    ```mlir
    %wte = train.read @transformer.wte.weight : tensor<65x48xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Train_StateOp : Train_Op<"state", [Symbol, HasParent<"mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "optimizer state that belongs to a parameter";
  let description = [{
    Declares persistent, non-trainable state for the parameter `of`: its
    fp32 `master` copy (mixed precision), AdamW's `exp_avg` and
    `exp_avg_sq`, SGD's `momentum_buffer` (the names of PyTorch's optimizer
    state), or its gradient buffer `grad` (the ZeRO passes keep the
    gradient there between its reduction and the update). A master copy
    starts as the parameter's initial value, every other kind as zeros. The
    type has the parameter's shape; it is f32 except for `grad`, which has
    the parameter's element type. As a train.param, it is stored whole
    (sharded states are members of a sharded `train.buffer`). Passes declare
    these; models do not.

    ```mlir
    train.state @transformer.wte.weight.exp_avg : tensor<65x48xf32> exp_avg of @transformer.wte.weight
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<Train_FloatTensor>:$type,
    Train_StateKind:$kind,
    FlatSymbolRefAttr:$of
  );
  let assemblyFormat = [{
    $sym_name `:` $type $kind `of` $of attr-dict
  }];
  let extraClassDeclaration = [{
    mlir::RankedTensorType getTensorType() {
      return llvm::cast<mlir::RankedTensorType>(getType());
    }
    /// What train.read and train.write see: the declared type.
    mlir::RankedTensorType getStorageType() { return getTensorType(); }
  }];
  let hasVerifier = 1;
}

def Train_WriteOp : Train_Op<"write", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "replaces the value of a parameter or optimizer state";
  let description = [{
    Stores `value` into the `train.param` or `train.state` named by `name`;
    later `train.read`s of that symbol see it. The value's type must equal
    the declared (storage) type. A write of a `train.buffer` replaces the
    elements of its members that this rank stores.

    ```mlir
    train.write %new to @transformer.wte.weight : tensor<65x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `to` $name attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Forward computation
//===----------------------------------------------------------------------===//

def Train_EmbeddingOp : Train_Op<"embedding", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "gathers rows of a table by integer ids";
  let description = [{
    `result[i..., :] = table[ids[i...], :]`: a table of shape `[V, C]` and
    ids of shape `[d...]` give a result of shape `[d..., C]`.

    `padding_idx = p` (in `[0, V)`), as torch.nn.Embedding's: row `p` is
    read as any other, but gets no gradient (its cotangent is zero).

    ```mlir
    %x = train.embedding %wte[%tokens] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
    %p = train.embedding %wte[%tokens] padding_idx = 0 : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$table, Train_IndexTensor:$ids,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` (`padding_idx` `=` $padding_idx^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_MatmulOp : Train_Op<"matmul", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    Multiplies the last two dimensions of `lhs` by the last two of `rhs`,
    each optionally transposed first. Leading (batch) dimensions of `rhs`
    either equal those of `lhs` or are absent, in which case the rank-2
    `rhs` is shared by every batch element (a linear layer's weight). A
    `[B, T, C]` activation times an nn.Linear weight `[N, C]` is
    `transpose_rhs` and gives `[B, T, N]`.

    ```mlir
    %y = train.matmul %x, %w transpose_rhs : (tensor<12x17x48xf32>, tensor<144x48xf32>) -> tensor<12x17x144xf32>
    ```
  }];
  let arguments = (ins
    Train_FloatTensor:$lhs,
    Train_FloatTensor:$rhs,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs
  );
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_MatmulBiasOp : Train_Op<"matmul_bias", [Pure, InferTypeOpAdaptor]> {
  let summary = "a matrix product with a bias added to each row";
  let description = [{
    `train.matmul` of `lhs` and `rhs` (same operands, transposes and result
    shape) plus `bias`, a vector of the result's last dimension added to
    every row: a linear layer. It is a planning form, made by
    `train-fuse-matmul-bias` from a `train.matmul` whose only use is a
    `train.add` of such a vector, after autodiff (it has no adjoint). The
    back ends compute it as one GEMM whose output is preset to the bias
    (the CPU runtime's `zrt_matmul_bias`: `beta = 1`), so no separate pass
    adds the bias. The bias joins the f32 sum of each output element, so
    the result may differ from the separate add's `(x w) + b` in the last
    bits; the reference evaluator computes the separate ops' rounding.

    ```mlir
    %y = train.matmul_bias %x, %w, %b transpose_rhs : (tensor<4x16x8xf32>, tensor<12x8xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
    ```
  }];
  let arguments = (ins
    Train_FloatTensor:$lhs,
    Train_FloatTensor:$rhs,
    Train_FloatTensor:$bias,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs
  );
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $bias (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Train_BroadcastBinaryOp<string mnemonic, string formula>
    : Train_Op<mnemonic, [Pure, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, InferTypeOpAdaptor,
                          DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "elementwise " # formula # " with NumPy broadcasting";
  let description = [{
    Computes `result = lhs }] # formula # [{ rhs` elementwise. Operands
    broadcast as NumPy does (see the dialect description): shapes are
    aligned at their last dimension; aligned dimensions are equal or one of
    them is 1. Both operands and the result share one element type.
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_AddOp : Train_BroadcastBinaryOp<"add", "+">;
def Train_SubOp : Train_BroadcastBinaryOp<"sub", "-">;
def Train_MulOp : Train_BroadcastBinaryOp<"mul", "*">;
def Train_DivOp : Train_BroadcastBinaryOp<"div", "/">;

def Train_ScaleOp : Train_Op<"scale", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "multiplies every element by a constant";
  let description = [{
    ```mlir
    %y = train.scale %x by 2.500000e-01 : tensor<12x3x17x17xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F64Attr:$factor);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
}

def Train_GeluOp : Train_Op<"gelu", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `tanh`: GPT-2's approximation
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`; `erf`: the exact
    `0.5 x (1 + erf(x / sqrt(2)))` of PyTorch's nn.GELU().

    ```mlir
    %y = train.gelu %x tanh : tensor<12x17x192xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                       Train_GeluApproximation:$approximation);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input $approximation attr-dict `:` type($result)";
}

def Train_ReluOp : Train_Op<"relu", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "max(x, 0)";
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_LayerNormOp : Train_Op<"layernorm", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias`, with the biased variance
    of the last dimension, as torch.nn.LayerNorm. `weight` and `bias` have
    the shape of that dimension.

    ```mlir
    %y = train.layernorm %x, %w, %b eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Train_FloatTensor:$bias, F64Attr:$eps);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `eps` `=` $eps attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_SoftmaxOp : Train_Op<"softmax", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "softmax over the last dimension";
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_CausalMaskOp : Train_Op<"causal_mask",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<InferTypeOpInterface>,
     DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "sets entries above the diagonal to -infinity (or zero)";
  let description = [{
    On the last two dimensions `[T, S]`, `result[..., i, j] = -inf` where
    `j > i` and `input[..., i, j]` elsewhere: the mask of causal attention
    scores before `train.softmax`. With `zero` the masked entries become 0
    instead, which is the mask's derivative.

    ```mlir
    %s = train.causal_mask %scores : tensor<12x3x17x17xf32>
    %d = train.causal_mask %dscores zero : tensor<12x3x17x17xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, UnitAttr:$zero);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input (`zero` $zero^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_AttentionOp : Train_Op<"attention", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "multi-head scaled dot-product attention";
  let description = [{
    With `query` of shape `[B, H, T, D]` and `key` and `value` of shape
    `[B, Hkv, S, D]`, computes `softmax(mask(scale * query @ key^T)) @
    value`, where `mask` is `train.causal_mask` when `causal` is set. GPT-2
    uses `scale = 1/sqrt(D)`. With fewer key/value heads than query heads
    (grouped-query attention, H a multiple of Hkv), query head h attends
    with key/value head `h / (H / Hkv)`, without repeating them in memory.

    With `dropout = p` (and `seed`), the probabilities go through
    `train.dropout` before the product with `value`: the op is
    `dropout(softmax(...)) @ value`, where the dropout is exactly the
    `train.dropout %probs[, %step] p seed [batch_dim ranks [micro_batch
    micro_batches]]` of the `[B, H, T, S]` probabilities tensor (the same
    Philox mask, element by element, as that op draws), and the same
    attributes and `step` operand mean what they mean there; `batch_dim`
    is a dimension of that probabilities tensor. Without `step` the
    dropout is the identity.

    ```mlir
    %y = train.attention %q, %k, %v causal scale = 2.500000e-01 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
    %z = train.attention %q, %k, %v, %step causal scale = 2.500000e-01 dropout = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : (tensor<6x3x17x16xf32>, tensor<6x3x17x16xf32>, tensor<6x3x17x16xf32>, tensor<i64>) -> tensor<6x3x17x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$query, Train_FloatTensor:$key,
                       Train_FloatTensor:$value,
                       Optional<Train_StepTensor>:$step, UnitAttr:$causal,
                       F64Attr:$scale, OptionalAttr<F64Attr>:$dropout,
                       OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<I64Attr>:$batch_dim,
                       OptionalAttr<I64Attr>:$ranks,
                       OptionalAttr<I64Attr>:$micro_batch,
                       OptionalAttr<I64Attr>:$micro_batches);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $step^)? (`causal` $causal^)? `scale` `=`
    $scale (`dropout` `=` $dropout^)? (`seed` `=` $seed^)?
    (`batch_dim` `=` $batch_dim^)? (`ranks` `=` $ranks^)?
    (`micro_batch` `=` $micro_batch^)? (`micro_batches` `=` $micro_batches^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_ReshapeOp : Train_Op<"reshape", [Pure, DeclareOpInterfaceMethods<Train_AdjointOpInterface>,
    DeclareOpInterfaceMethods<Train_BufferViewOpInterface>]> {
  let summary = "reinterprets a tensor with another shape, row-major";
  let description = [{
    ```mlir
    %y = train.reshape %x : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_TransposeOp : Train_Op<"transpose", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "permutes dimensions";
  let description = [{
    `result` dimension `i` is `input` dimension `permutation[i]`.

    ```mlir
    %y = train.transpose %x [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x3x17x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_SplitOp : Train_Op<"split", [Pure, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "splits a tensor into equal parts along one dimension";
  let description = [{
    ```mlir
    %q, %k, %v = train.split %qkv dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Variadic<Train_FloatTensor>:$results);
  let assemblyFormat = [{
    $input `dim` `=` $dim attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Train_ConcatOp : Train_Op<"concat", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    ```mlir
    %qkv = train.concat %q, %k, %v dim = 2 : tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32> -> tensor<12x17x144xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dim attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_CrossEntropyOp : Train_Op<"cross_entropy", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "mean cross-entropy of logits against integer targets";
  let description = [{
    Logits `[d..., V]` and targets `[d...]` with values in `[0, V)` give the
    mean over the `d...` positions of each position's loss, as
    torch.nn.functional.cross_entropy with reduction='mean'. The loss is an
    f32 scalar whatever the logits' element type.

    A position's loss is `(1 - e) * (lse - logits[target]) + e * mean_c(lse
    - logits[c])`, where `lse = logsumexp(logits)` and `e` is
    `label_smoothing` (in [0, 1), 0 when absent). With `ignore_index = k`,
    the positions whose target is `k` (which may lie outside `[0, V)`, as
    PyTorch's -100) count for nothing: the mean is over the other
    positions only, and when there is none the loss is NaN (0 / 0, as
    PyTorch 1.13 gives) and the gradient 0.

    With `count` (a data-parallel program's, written by `train-zero` where
    ranks or micro-batches hold different numbers of ignored positions),
    the sum of the counted positions' losses is divided by `count` instead
    of by their number: `count` is the global number of counted positions
    over the number of parts the global batch is cut into, so that the
    parts' losses averaged are the global batch's mean (see
    `train.count_targets`). A part with no counted position then gives 0.

    ```mlir
    %loss = train.cross_entropy %logits, %targets : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
    %loss = train.cross_entropy %logits, %targets {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64} : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits, Train_IndexTensor:$targets,
                       Optional<Train_ScalarF32Tensor>:$count,
                       OptionalAttr<I64Attr>:$ignore_index,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Train_ScalarF32Tensor:$loss);
  let assemblyFormat = [{
    $logits `,` $targets (`count` $count^)? attr-dict `:`
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

def Train_CountTargetsOp : Train_Op<"count_targets", [Pure]> {
  let summary = "the number of targets not equal to ignore_index, as f32";
  let description = [{
    The number of elements of `targets` that are not `ignore_index`, as an
    f32 scalar (exact up to 2^24). `train-zero` adds these up over a
    rank's micro-batches and over the ranks to give `train.cross_entropy`
    with `ignore_index` its global `count`.

    ```mlir
    %n = train.count_targets %targets ignore_index = 0 : tensor<12x17xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_IndexTensor:$targets, I64Attr:$ignore_index);
  let results = (outs Train_ScalarF32Tensor:$count);
  let assemblyFormat = [{
    $targets `ignore_index` `=` $ignore_index attr-dict `:` type($targets)
    `->` type($count)
  }];
}

class Train_ReductionOp<string mnemonic, string what>
    : Train_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = what # " over the listed dimensions, which are removed";
  let description = [{
    ```mlir
    %y = train.}] # mnemonic # [{ %x dims = [0, 1] : tensor<12x17x48xf32> -> tensor<48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_SumOp : Train_ReductionOp<"sum", "sum">;
def Train_MeanOp : Train_ReductionOp<"mean", "arithmetic mean">;

def Train_BroadcastOp : Train_Op<"broadcast", [Pure, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "broadcasts a tensor to a larger shape, NumPy style";
  let description = [{
    Repeats `input` along the result's extra leading dimensions and along
    its size-1 dimensions, by the dialect's broadcasting rule.

    ```mlir
    %y = train.broadcast %x : tensor<17x1xf32> -> tensor<12x17x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_FillOp : Train_Op<"fill", [Pure, ConstantLike, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>]> {
  let summary = "a tensor with every element equal to a constant";
  let description = [{
    ```mlir
    %one = train.fill 1.0 : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Train_SqrtOp : Train_Op<"sqrt", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "elementwise square root";
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_CastOp : Train_Op<"cast", [Pure, Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "converts between f32 and bf16";
  let description = [{
    Rounds to nearest even when narrowing.

    ```mlir
    %y = train.cast %x : tensor<48xf32> to tensor<48xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

include "zeroc/Dialect/Train/IR/TrainGradOps.td"
include "zeroc/Dialect/Train/IR/TrainOptimizerOps.td"
include "zeroc/Dialect/Train/IR/TrainDistributedOps.td"
include "zeroc/Dialect/Train/IR/TrainPlannedOps.td"
include "zeroc/Dialect/Train/IR/TrainLlamaOps.td"
include "zeroc/Dialect/Train/IR/TrainMathOps.td"
include "zeroc/Dialect/Train/IR/TrainGenericOps.td"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINOPS_TD
