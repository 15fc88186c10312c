//===- TrainLlamaOps.td - the ops of Llama-class models ----*- tablegen -*-===//
//
// RMSNorm, SiLU, rotary position embeddings, static slices and dropout: what
// Llama 3, Mistral, Qwen, llama2.c and minGPT-style GPTs need beyond GPT-2's
// ops (grouped-query attention is train.attention with fewer key/value
// heads), and the derivative helpers train-autodiff writes for them. Each
// op's shape rule is one function of TrainLlamaShapes.h, shared by its
// verifier and its builder.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINLLAMAOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINLLAMAOPS_TD

def Train_RopeStyle : I32EnumAttr<"RopeStyle",
    "how rotary embeddings pair the features of a head", [
    I32EnumAttrCase<"interleaved", 0>,
    I32EnumAttrCase<"rotate_half", 1>
  ]> {
  let cppNamespace = "::zeroc::train";
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def Train_RmsNormOp : Train_Op<"rmsnorm", [Pure,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `x * rsqrt(mean(x^2, last dimension) + eps) * weight`, as Llama's
    RMSNorm (Hugging Face's `LlamaRMSNorm`); `weight` has the shape of the
    last dimension. The statistics are computed in f32 (or wider) whatever
    the element type.

    ```mlir
    %y = train.rmsnorm %x, %w eps = 1.000000e-05 : (tensor<4x16x64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       F64Attr:$eps);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `eps` `=` $eps attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Value":$input, "mlir::Value":$weight,
                   "double":$eps)>
  ];
  let hasVerifier = 1;
}

def Train_SiluOp : Train_Op<"silu", [Pure, SameOperandsAndResultType,
    Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "sigmoid linear unit, x * sigmoid(x)";
  let description = [{
    torch.nn.functional.silu. A SwiGLU MLP is `train.mul` of `train.silu`
    of one projection and another projection; backends fuse the chain.

    ```mlir
    %y = train.silu %x : tensor<4x16x176xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_RopeOp : Train_Op<"rope", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "rotary position embeddings";
  let description = [{
    Rotates pairs of features of the last dimension (the head dimension D,
    which must be even) by the angle `p * theta^(-2i/D)`, where `p` in
    `0 .. T-1` is the index along `seq_dim` and `i` in `0 .. D/2-1` the
    pair. `interleaved` pairs features `2i` and `2i+1` (Meta's reference
    code, llama2.c); `rotate_half` pairs `i` and `i + D/2` (Hugging Face,
    GPT-NeoX):

    ```
    interleaved:  y[2i]   = x[2i] cos - x[2i+1] sin,  y[2i+1]   = x[2i+1] cos + x[2i] sin
    rotate_half:  y[i]    = x[i]  cos - x[i+D/2] sin, y[i+D/2]  = x[i+D/2] cos + x[i] sin
    ```

    `inverse` rotates by the opposite angle: the transpose of the rotation,
    which is its derivative. Angles are computed in double precision from
    their definition; no table of cosines is stored.

    `scaling` (optional) changes each pair's inverse frequency
    `f = theta^(-2i/D)` as Hugging Face's `rope_scaling` does:
    `[factor]` is `linear` scaling (`f / factor`), `[factor,
    low_freq_factor, high_freq_factor, original_max_position_embeddings]`
    is Llama 3.1's `llama3` scaling (zeroc/Support/Rope.h): pairs of
    wavelength `2 pi / f` shorter than `original / high_freq_factor` keep
    `f`, longer than `original / low_freq_factor` get `f / factor`, and
    those between a blend of the two.

    ```mlir
    %q = train.rope %x theta = 5.000000e+05 seq_dim = 2 rotate_half : tensor<4x8x16x8xf32>
    %dx = train.rope %dq theta = 5.000000e+05 seq_dim = 2 rotate_half inverse : tensor<4x8x16x8xf32>
    %s = train.rope %x theta = 5.000000e+05 seq_dim = 1 rotate_half scaling = [3.200000e+01, 1.000000e+00, 4.000000e+00, 8.192000e+03] : tensor<4x16x8x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F64Attr:$theta,
                       I64Attr:$seq_dim, Train_RopeStyle:$style,
                       UnitAttr:$inverse,
                       OptionalAttr<DenseF64ArrayAttr>:$scaling);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `theta` `=` $theta `seq_dim` `=` $seq_dim $style
    (`inverse` $inverse^)? (`scaling` `=` $scaling^)? attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

def Train_SliceOp : Train_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<Train_AdjointOpInterface>]> {
  let summary = "a static strided slice";
  let description = [{
    `result[i...] = input[offsets + i * strides ...]`: along each dimension
    d, the result's size (from its type) elements starting at `offsets[d]`,
    `strides[d]` apart, all within the input. PyTorch's `x[:, :t, :]`,
    `x[..., ::2]` and `x[..., :d//2]` are slices; an integer index is a
    slice of size 1 and a `train.reshape`. Token ids (i32, i64) slice too:
    `train-accumulate` cuts the rank's batch into micro-batches so.

    ```mlir
    %p = train.slice %pos offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x32x48xf32> -> tensor<1x17x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatOrIndexTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Train_FloatOrIndexTensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `strides` `=` $strides attr-dict `:`
    type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Value":$input, "llvm::ArrayRef<int64_t>":$offsets,
                   "llvm::ArrayRef<int64_t>":$sizes,
                   "llvm::ArrayRef<int64_t>":$strides)>
  ];
  let hasVerifier = 1;
}

def Train_DropoutOp : Train_Op<"dropout", [Pure,
    AllTypesMatch<["input", "result"]>, DeclareOpInterfaceMethods<Train_AdjointOpInterface>,
    DeclareOpInterfaceMethods<Train_BufferViewOpInterface>]> {
  let summary = "dropout with a counter-based mask";
  let description = [{
    Without `step` the op is the identity: this is how the model's forward
    function, evaluation (`@forward`) and sampling (`@logits`) see it.
    `train-optimizer` passes the training step's `%step` to every dropout
    of `@train_step`; with it, each element is zeroed with probability `p`
    and the others are scaled by `1 / (1 - p)`, as torch.nn.Dropout.

    Whether element `e` is kept depends only on (`seed`, step, the
    element's position in the global batch): the position is its row-major
    index in the tensor the op would see on one rank. With `batch_dim` and
    `ranks` (written by `train-data-parallel`), the input is rank r's part
    of a batch split over `ranks` ranks along `batch_dim`: its local index
    `i` there is global index `r * size + i`, and the global tensor has
    `size * ranks` there. The mask is therefore the same for every world
    size and ZeRO stage. With `micro_batch = m` and `micro_batches = K`
    as well (written by `train-accumulate`), the input is micro-batch `m`
    of the `K` that rank r's batch is cut into along `batch_dim`: its
    local index `i` is global index `(r * K + m) * size + i` of a global
    tensor of `size * ranks * K`, so gradient accumulation draws the masks
    of the unsplit program too. The generator is Philox-4x32-10
    (include/zeroc/Support/Random.h): key `seed`, counter
    `(position / 4, step)`, word `position % 4`; the element is dropped
    when that word's top 24 bits, as a fraction of 2^24, are below `p`.

    Dropout is linear in its input for a fixed mask, so its derivative is
    the same op on the cotangent, which recomputes the mask.

    ```mlir
    %y = train.dropout %x p = 1.000000e-01 seed = 3 : tensor<8x16x48xf32>
    %z = train.dropout %x, %step p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : tensor<4x16x48xf32>
    %w = train.dropout %x, %step p = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 4 : tensor<1x16x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                       Optional<Train_StepTensor>:$step,
                       F64Attr:$p, I64Attr:$seed,
                       OptionalAttr<I64Attr>:$batch_dim,
                       OptionalAttr<I64Attr>:$ranks,
                       OptionalAttr<I64Attr>:$micro_batch,
                       OptionalAttr<I64Attr>:$micro_batches);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $step^)? `p` `=` $p `seed` `=` $seed
    (`batch_dim` `=` $batch_dim^)? (`ranks` `=` $ranks^)?
    (`micro_batch` `=` $micro_batch^)? (`micro_batches` `=` $micro_batches^)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Derivative helpers
//===----------------------------------------------------------------------===//

def Train_RmsNormGradOp : Train_Op<"rmsnorm_grad", [Pure]> {
  let summary = "cotangents of train.rmsnorm";
  let description = [{
    From the output cotangent, the forward input and weight: the
    cotangents of the input and of the weight (summed over every leading
    dimension).

    ```mlir
    %dx, %dw = train.rmsnorm_grad %dy, %x, %w eps = 1.000000e-05 : (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<64xf32>) -> (tensor<4x16x64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `eps` `=` $eps attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "mlir::Value":$grad, "mlir::Value":$input,
                   "mlir::Value":$weight, "mlir::FloatAttr":$eps)>
  ];
  let hasVerifier = 1;
}

def Train_SiluGradOp : Train_Op<"silu_grad", [Pure, SameOperandsAndResultType,
    Train_Elementwise, DeclareOpInterfaceMethods<Train_ScalarFormulaOpInterface>]> {
  let summary = "cotangent of train.silu";
  let description = [{
    `result = grad * s * (1 + x * (1 - s))` with `s = sigmoid(input)`.
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def Train_SliceGradOp : Train_Op<"slice_grad", [Pure]> {
  let summary = "cotangent of train.slice: scatters into zeros";
  let description = [{
    A tensor of the sliced input's type (the result type), zero except at
    the positions the slice read, which hold `grad`:
    `result[offsets + i * strides ...] = grad[i...]`.

    ```mlir
    %dpos = train.slice_grad %dp offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x17x48xf32> -> tensor<1x32x48xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `offsets` `=` $offsets `strides` `=` $strides attr-dict `:`
    type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINLLAMAOPS_TD
