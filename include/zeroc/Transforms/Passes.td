//===- Passes.td - zeroc's transformations of train IR -----*- tablegen -*-===//

#ifndef ZEROC_TRANSFORMS_PASSES_TD
#define ZEROC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TrainRaise : Pass<"train-raise", "mlir::ModuleOp"> {
  let summary = "Raises written-out attention, norms, activations, rotary embeddings and cross-entropy to the fast ops";
  let description = [{
    Recognises, in every function of the module, the computations that an
    importer of functionalized ATen graphs writes out with the generic ops
    and that the dialect has a fast op for, and replaces each with that op:

    - `attention`: `softmax(mask(s * q @ k^T)) @ v` with `train.matmul`
      (`k` transposed by `transpose_rhs`, or `k^T` a `train.transpose`
      that contracts its input's last axis: `k.transpose(-2, -1)`, or
      einsum's `[B, S, H, D]` to `[B, H, D, S]`), a constant scale
      (`train.scale`, or `train.mul` / `train.div` by a `train.fill`, on
      the scores or on `q` or `k`; the
      product of all of them, 1 when there is none), an optional
      `train.causal_mask`, `train.softmax`, a `train.dropout` only when its
      `p` is 0, and `train.matmul` by `v`, becomes `train.attention` (with
      `causal` when the mask was there). The causal mask may also be
      written with generic ops: a constant mask (fills, `train.constant`,
      `train.tril`/`train.triu`, slices, broadcasts, compares, selects),
      evaluated at compile time, added to the scores (-inf above the
      diagonal, 0 elsewhere) or chosen against a -inf fill by
      `train.select` (masked_fill, torch.where). Key/value heads repeated as
      `repeat_interleave` does (reshape to `[B, Hkv, 1, S, D]`,
      `train.broadcast` to `[B, Hkv, r, S, D]`, reshape to
      `[B, Hkv*r, S, D]`; after `views`, also the `[B, S, Hkv, D]` heads
      of `repeat_interleave(r, dim=2)`, `[:, :, :, None].expand(...)` +
      `reshape` or indexing by `arange(Hkv).repeat_interleave(r)`, on k or
      on k^T) become grouped-query attention; rank-3 (`torch.bmm`)
      attention becomes one head. A `p @ v` done as a bmm
      of merged heads (the `[B, H, T, S]` probabilities reshaped to
      `[B*H, T, S]`, v reshaped to `[B*H, S, D]`) is first done on the
      heads.
    - `norms`: `x * rsqrt(mean(x*x, -1, keepdim) + eps) * w` (also with
      `1 / sqrt(...)` or `/ sqrt(...)`, `pow(x, 2)`) becomes
      `train.rmsnorm`; `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)
      * w (+ b)` becomes `train.layernorm` (a zero bias when there is
      none).
      `train.var` with `correction = 0` is also a LayerNorm's variance;
      `correction = 1` (torch.var's default) is not.
    - `activations`: `x * sigmoid(x)` with `sigmoid(x) = 1 / (1 +
      exp(-x))`, or `x / (1 + exp(-x))`, becomes `train.silu` (SwiGLU's
      `silu(a) * b` raises its `silu(a)`); `0.5 * x * (1 + tanh(sqrt(2/pi)
      * (x + 0.044715 * x^3)))` in any order and grouping of the products
      becomes `train.gelu tanh`; `0.5 * x * (1 + erf(x / sqrt(2)))`
      (`train.erf`) becomes `train.gelu erf`.
    - `rope`: rotary embeddings with constant cos/sin tables:
      `x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin` (Hugging
      Face) becomes `train.rope ... rotate_half`; the pairs (a, b) of x
      viewed `[..., D/2, 2]` rotated to `(a*cos - b*sin, a*sin + b*cos)`
      and stacked back (Meta, llama2.c) become `train.rope ...
      interleaved`. theta and the sequence dimension are fitted from the
      tables, then every table entry is checked against train.rope's
      angles; any other table (an offset, scaled frequencies) stays
      generic.
    - `loss`: `-mean(gather(log_softmax(logits), -1, targets[..., None]))`
      over every position, f32, becomes `train.cross_entropy`; with
      `ignore_index` (each mean a masked one, `sum(where(targets != k, x,
      0)) / sum(targets != k)`, the mask a look-up of the targets in a
      constant vector) and `label_smoothing` (a second term, the mean of
      `-sum(log_softmax, -1)`, weighted e / V against the NLL's 1 - e),
      it gets those attributes. Other weights, a mask of another index or
      another divisor, another axis stay generic.
    - `views` (run after the other families, then `attention` again on
      what is left): chains of `train.reshape`, `train.transpose` and
      `train.broadcast` are brought to one canonical form, so that
      attention is recognised however PyTorch decomposed its views
      (`torch.einsum` runs each contraction as a bmm between rank-5
      permutes and reshapes with size-1 dimensions). A reshape of a
      reshape is one reshape, and a transpose of a transpose one transpose
      (a reshape to its input's type and an identity transpose are
      dropped); a transpose that moves size-1 dimensions is a reshape when
      the other dimensions keep their order, otherwise the transpose of
      the others between a reshape that drops the size-1 dimensions and
      one that restores them; a transpose that keeps each group of
      dimensions a reshape merges whole and in order is done before the
      reshape (transposes act on the finest dimensions), and one of a
      broadcast of the same rank before the broadcast; a batched
      `train.matmul` of `[N, M, K]` by `[N, K, P]` reshaped from values of
      rank 4 or more whose leading dimensions merge to N is done on them
      (with the leading dimensions of the one that has fewer, the other
      reshaped to them). Dimension 0 (the batch) is never dropped nor
      moved.

    ```mlir
    %kt = train.transpose %k [0, 1, 3, 2] : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
    %s = train.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
    %c = train.fill 4.0 : tensor<f32>
    %d = train.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %m = train.causal_mask %d : tensor<2x4x8x8xf32>
    %p = train.softmax %m : tensor<2x4x8x8xf32>
    %y = train.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
    // becomes
    %y = train.attention %q, %k, %v causal scale = 2.500000e-01 : (...) -> tensor<2x4x8x16xf32>
    ```

    ```mlir
    %xc = train.mul %x, %cos : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
    %x1 = train.slice %x offsets = [0, 0, 0, 0] strides = [1, 1, 1, 1] : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %x2 = train.slice %x offsets = [0, 0, 0, 8] strides = [1, 1, 1, 1] : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    %n = train.neg %x2 : tensor<2x4x8x8xf32>
    %r = train.concat %n, %x1 dim = 3 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x16xf32>
    %rs = train.mul %r, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
    %y = train.add %xc, %rs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
    // with %cos, %sin train.constants of cos/sin(p * 10000^(-2i/16)), becomes
    %y = train.rope %x theta = 1.000000e+04 seq_dim = 2 rotate_half : tensor<2x4x8x16xf32>
    ```

    ```mlir
    // einsum("bthd,bshd->bhts", q, k)'s q operand
    %q5 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4x1xf32>
    %qt = train.transpose %q5 [0, 2, 1, 4, 3] : tensor<2x8x4x4x1xf32> -> tensor<2x4x8x1x4xf32>
    %qt2 = train.transpose %qt [0, 1, 2, 4, 3] : tensor<2x4x8x1x4xf32> -> tensor<2x4x8x4x1xf32>
    %q3 = train.reshape %qt2 : tensor<2x4x8x4x1xf32> -> tensor<8x8x4xf32>
    // becomes (views)
    %q4 = train.reshape %qp : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
    %q = train.transpose %q4 [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
    %q3 = train.reshape %q : tensor<2x4x8x4xf32> -> tensor<8x8x4xf32>
    ```

    One pass with one pattern set per family (chosen with `families`)
    rather than one pass per family: the families are independent and
    rewrite disjoint ops, a single greedy rewrite visits the function once
    for all of them (then once for `views` and once more for `attention`),
    and the pipeline has one switch (zeroc's `--raise=false`) while the
    tests still exercise each family alone. Only the patterns run (no
    folding, no constant merging), so a module with nothing to raise is
    left unchanged but for its view chains made canonical (`views`).

    A pattern is raised only when the fast op computes the same thing:
    each matched intermediate has no other use, the reduction is over the
    last axis, the constants are the ones of the formula, and the fast
    op's shape rule accepts the operands. Anything else (a mask that is
    not causal, a normalization over another axis, an unbiased variance, a
    dropout of p > 0 between softmax and `v`, heads repeated with
    `repeat`, or `expand` of `[B, S, 1, Hkv, D]`) stays generic: slower,
    never wrong. Runs first in the pipeline, before `train-data-parallel`
    and `train-autodiff`.
  }];
  let options = [
    ListOption<"families", "families", "std::string",
               "Pattern families to raise: views, attention, norms, "
               "activations, loss, rope (all when empty)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainBatchSize : Pass<"train-batch-size", "mlir::ModuleOp"> {
  let summary = "Sets the forward function's global batch size";
  let description = [{
    Rewrites the function marked `train.forward` for a global batch of
    `global-batch` sequences: every argument's leading (batch) dimension
    becomes `global-batch`, and the types of everything computed from it
    are re-inferred through each op's type rule (a `train.reshape` keeps
    its trailing dimensions and resizes its leading one; a `train.slice`
    that takes the batch whole follows it). The model's own batch size
    (the builders' and the importer's `--batch-size`) is thus a default:
    zeroc's `--micro-batch-size` and `--global-batch-size` compute
    `global-batch` (micro-batch x `--grad-accum` x `--world-size`) and
    run this pass first, so that one model file compiles for any world
    size. `global-batch=0` (the default) leaves the module unchanged, as
    does the model's own size.

    ```mlir
    // global-batch=6 on a model written for 4 sequences:
    func.func @forward(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>) -> tensor<f32>
    %x = train.reshape %y : tensor<4x8x48xf32> -> tensor<4x8x3x16xf32>
    // becomes
    func.func @forward(%tokens: tensor<6x8xi32>, %targets: tensor<6x8xi32>) -> tensor<f32>
    %x = train.reshape %y : tensor<6x8x48xf32> -> tensor<6x8x3x16xf32>
    ```

    Runs before `train-data-parallel` (a module with `train.batch_split`,
    or past it, is refused). Errors: a `global-batch` below 0; arguments
    of the forward function that disagree on their leading dimension; no
    argument with a batch dimension; a reshape of a value whose batch
    dimension is not leading; a slice of part of the batch; an op whose
    result type cannot follow the new batch.
  }];
  let options = [
    Option<"globalBatch", "global-batch", "int64_t", "0",
           "The new global batch size in sequences (0: keep the model's)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainDataParallel : Pass<"train-data-parallel", "mlir::ModuleOp"> {
  let summary = "Splits the forward function's global batch across ranks";
  let description = [{
    Rewrites the function marked `train.forward` into the program of one of
    `world-size` data-parallel ranks: every argument's leading (batch)
    dimension is divided by the world size, and the types of everything
    computed from it follow. The loss becomes the mean over the rank's
    local batch; with equal local batches the average of the ranks' losses
    and gradients is the global one, which is how `train-zero` combines
    them. Runs before `train-autodiff`, and records the world size in the
    module attribute `train.batch_split`. The batch is followed wherever
    it goes, as a factor of one dimension (as Shardy's factor-based
    propagation follows a sharded axis): through transposes, reductions
    over other dimensions, and reshapes that merge it with other
    dimensions (nn.MultiheadAttention's `[T, B, C]` to `[T, B*H, D]` and
    `[T*B, C]`) or split such a dimension again. A `train.slice` that takes
    the batch dimension whole follows the split. Each `train.dropout` of a
    value computed from the batch records where its input sits in the
    global batch (`batch_dim` and `ranks`), so that its mask is the one
    the unsplit program draws.

    ```mlir
    // world-size=4: tensor<12x17xi32> becomes tensor<3x17xi32>, and
    %x = train.reshape %y : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
    // becomes
    %x = train.reshape %y : tensor<3x17x48xf32> -> tensor<3x17x3x16xf32>
    ```

    Errors: a batch that does not divide by the world size (naming the
    argument and both numbers); a reduction that sums over the batch
    dimension (a sum over the global batch is not the average of local
    sums, so the loss must be a mean); an op that mixes the examples of
    the batch (a contraction, softmax or norm along it, a reshape that cuts
    through it, ...), naming the op; a slice of part of the batch; a
    dropout that already records a split, or of a dimension that holds the
    batch after a major factor; an op whose result shape cannot follow the
    split.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", "1",
           "Number of data-parallel ranks">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainMixedPrecision : Pass<"train-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Makes a model's parameters and activations bf16";
  let description = [{
    Rewrites an f32 model to bf16 mixed precision before differentiation:
    every `train.param` and every f32 tensor of the forward function becomes
    bf16, except the loss and what is computed only from it, which stay f32
    (`train.cross_entropy` always yields an f32 loss). `train-optimizer`
    then keeps fp32 master weights and moments. A bf16 model is left as it
    is. With `precision=fp32` the pass only checks that the model is f32:
    it does not widen a bf16 model.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "Target precision: bf16 (mixed precision) or fp32 (check only)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainLogits : Pass<"train-logits", "mlir::ModuleOp"> {
  let summary = "Adds @logits, the model's next-token distribution for sampling";
  let description = [{
    Derives an inference function from the forward function whose loss is a
    `train.cross_entropy`: `@logits(%tokens: tensor<1xTxi32>)` (marked
    `train.logits`) returns the logits the loss was computed from, for one
    sequence. The executable's sampling mode (`--sample`) calls it. Runs
    before `train-data-parallel`, which leaves it alone; in stage 3,
    `train-zero` gathers the parameters it reads.

    Sampling runs without dropout: the `train.dropout` ops of the copy are
    removed. With `required=false` (as the pipeline runs it) a model whose
    loss is not a cross-entropy of logits simply gets no @logits.
  }];
  let options = [
    Option<"required", "required", "bool", "true",
           "Fail when no @logits can be derived">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainAutodiff : Pass<"train-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of the model's forward function";
  let description = [{
    Finds the `func.func` marked `train.forward` (it returns the scalar
    loss) and adds `@loss_and_grads`: the same arguments, results
    `(loss, dloss/dp1, dloss/dp2, ...)` for every `train.param` in
    declaration order, and the attribute `train.gradients = [@p1, @p2, ...]`
    naming the parameter of each gradient result.

    The body is the forward computation followed by its adjoint, built in
    reverse op order. Only values that depend on a parameter get a
    cotangent (token ids and other inputs get none); a value used twice
    accumulates both contributions with `train.add`, so a parameter read
    in two places (GPT-2's token embedding, tied to the lm_head) gets the
    sum. Broadcasting is undone with `train.sum` over the broadcast
    dimensions. A parameter the loss does not depend on gets a zero
    gradient. The forward function is left as it was.

    Example (`y = x * w`, loss = mean):
    ```mlir
    func.func @loss_and_grads(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
        attributes {train.gradients = [@w]} {
      %w = train.read @w : tensor<4xf32>
      %y = train.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %l = train.mean %y dims = [0] : tensor<4xf32> -> tensor<f32>
      %one = train.fill 1.0 : tensor<f32>
      %b = train.broadcast %one : tensor<f32> -> tensor<4xf32>
      %dy = train.scale %b by 0.25 : tensor<4xf32>
      %dw = train.mul %dy, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %l, %dw : tensor<f32>, tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainRemat : Pass<"train-remat", "mlir::ModuleOp"> {
  let summary = "Recomputes forward activations in backward instead of keeping them";
  let description = [{
    Activation rematerialization (checkpointing) of `@loss_and_grads`, after
    `train-autodiff` and before `train-optimizer`: a forward value that
    backward reads is either kept from the forward pass (alive from its
    definition to its last use in backward) or recomputed: the forward ops
    that compute it are cloned, each just before its first use in
    backward, and backward reads the clones. The clones carry the unit
    attribute `train.recomputed`, so CSE does not merge them with the
    forward ops they copy (nor does canonicalization: they stay after the
    whole pipeline); in stage 3, `train-zero` counts their parameter reads
    among backward's, so they read the parameters gathered for backward (no
    extra gather). A recomputed `train.dropout` draws the forward's mask:
    the mask depends only on its seed, the step and the element's position.

    Recomputation acts per transformer block. An op belongs to the block of
    the parameters it reads (the name up to its first numeric part:
    `transformer.h.3` for `transformer.h.3.attn.c_attn.weight`,
    `model.layers.3` for Llama's); an op that reads none belongs to the
    block of the op before it; one that reads a parameter outside every
    block (embeddings, the final norm, the head) is outside blocks, and so
    is what follows it until the next block's parameters. Values computed
    outside blocks, and a block's values that a forward op of another block
    or outside blocks reads (its output, the next block's input), are always
    kept. Within a block, `policy` decides:

    * `none`: keep everything (the pass leaves the module as it is);
    * `full`: keep nothing else: backward recomputes the block's forward
      from the block's input;
    * `selective`: keep the outputs of GEMMs (`train.matmul`) and
      attention (`train.attention`), recompute the cheap ops (elementwise
      ops, norms, softmax, rotary embeddings, dropout, reshapes and
      transposes), as torch.compile's min-cut partitioner does by default.

    The module records the policy in `train.remat`. A clone computes what
    the op it copies computed, from the same operands, so the losses are
    those of `policy=none`: bit for bit in fp32 on the CPU backend. In
    bf16 they may differ slightly (1e-5 relative after a few steps of the
    tiny GPT-2): the backends fuse a clone that has one reader into that
    reader's loop, where the forward op's value was rounded to bf16 in
    memory.

    Example (`full`, the GELU MLP of block `layers.1`, whose input `%x1`
    is kept): backward's reads of the norm's and the GEMM's outputs become
    reads of their clones, computed from the block's input.
    ```mlir
    %n1 = train.rmsnorm %x1, %g1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %m1 = train.matmul %n1, %w1 transpose_rhs : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %a1 = train.gelu %m1 tanh : tensor<2x4xf32>
    ...
    %dm1 = train.gelu_grad %dx2, %m1 tanh : tensor<2x4xf32>
    %dw1 = train.matmul %dm1, %n1 transpose_lhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    // becomes
    %n1_r = train.rmsnorm %x1, %g1 eps = 1.000000e-05 {train.recomputed} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %m1_r = train.matmul %n1_r, %w1 transpose_rhs {train.recomputed} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %dm1 = train.gelu_grad %dx2, %m1_r tanh : tensor<2x4xf32>
    %dw1 = train.matmul %dm1, %n1_r transpose_lhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    ```
    With `selective`, `%m1` is kept and only the norm is recomputed, just
    before `%dw1`.

    Errors: a policy other than none, full or selective; with `full` or
    `selective`: a module that is not differentiated (no
    `@loss_and_grads`) or already past `train-optimizer` or `train-zero`;
    a module already rematerialized (`train.remat` is set); a
    `@loss_and_grads` of more than one block, or whose loss (its first
    result) is not computed in it; a model with no transformer block (no
    parameter read in the forward pass is named `<path>.<N>.<name>`).
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"none\"",
           "What backward recomputes: none, full (each block from its "
           "input) or selective (all but GEMM and attention outputs)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainAccumulate : Pass<"train-accumulate", "mlir::ModuleOp"> {
  let summary = "Gradient accumulation: K micro-batches per step, one update";
  let description = [{
    Runs after `train-autodiff` and `train-remat`, before `train-optimizer`.
    With `micro-batches=K` (K > 1), `@loss_and_grads` becomes the
    accumulation of K micro-batches of the rank's batch: its arguments
    keep the rank's batch (L sequences, after `train-data-parallel`), and
    its body is K copies of the micro-batch program, each fed the
    micro-batch's `train.slice` of every batched argument (rows
    `[m * L/K, (m + 1) * L/K)`), each followed by the adds that accumulate
    its gradients and loss (`train.add` marked `train.accumulate`). The
    optimizer that `train-optimizer` appends then updates once per step.

    The micro-batch program is the forward function with its batch
    divided by K (as `train-data-parallel` divides it by the world size),
    its loss scaled by 1/K, differentiated once by `train-autodiff` and
    rematerialized with the policy the module records (`train.remat`); the
    input's `@loss_and_grads` only shows that the module is at this stage.
    So the loss is the mean over the rank's whole batch and the gradients
    those of one K-times-larger micro-batch, up to the order of the sums.
    Every op of micro-batch m carries `train.micro_batch = m` (CSE never
    merges two micro-batches' ops, and `train-zero` places stage 2 and 3's
    collectives per micro-batch with it); every `train.dropout` records
    `micro_batch = m micro_batches = K`, so that its mask is the unsplit
    program's. `@forward` (evaluation) keeps the rank's batch. The module
    records K in `train.grad_accum`.

    ```mlir
    // micro-batches=2, the rank's batch of 4 sequences:
    func.func @loss_and_grads(%x: tensor<4x8xf32>) -> (tensor<f32>, tensor<8xf32>)
    // becomes
    func.func @loss_and_grads(%x: tensor<4x8xf32>) -> (tensor<f32>, tensor<8xf32>) {
      %x0 = train.slice %x offsets = [0, 0] strides = [1, 1] {train.micro_batch = 0 : i64} : tensor<4x8xf32> -> tensor<2x8xf32>
      ...                                  // micro-batch 0: %l0 (scaled by 0.5), %g0
      %x1 = train.slice %x offsets = [2, 0] strides = [1, 1] {train.micro_batch = 1 : i64} : tensor<4x8xf32> -> tensor<2x8xf32>
      ...                                  // micro-batch 1: %l1, %g1
      %l = train.add %l0, %l1 {train.accumulate, train.micro_batch = 1 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %g = train.add %g0, %g1 {train.accumulate, train.micro_batch = 1 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      return %l, %g : tensor<f32>, tensor<8xf32>
    }
    ```

    `micro-batches=0` (the default) takes the module's
    `train.micro_batches` (the builders' `--micro-batches`), else 1; with
    K = 1 the pass changes nothing.

    Errors: micro-batches below 0; K that does not divide the rank's batch
    (naming K, the batch and the argument); a module that is not
    differentiated (no `@loss_and_grads`) or has no forward function; one
    already past `train-optimizer` or `train-zero` (a step, optimizer
    state, `train.zero_stage`); one already accumulated (`train.grad_accum`
    is set); a `@loss_and_grads` whose arguments are not the forward
    function's.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", "0",
           "Micro-batches per step (0: the module's train.micro_batches, "
           "else 1)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainOptimizer : Pass<"train-optimizer", "mlir::ModuleOp"> {
  let summary = "Expands the model's train.optimizer into the update of a step";
  let description = [{
    Turns `@loss_and_grads` (from `--train-autodiff`) into `@train_step`,
    one complete training step:

    * arguments: the batch, then `%step: tensor<i64>` (counted from 0);
    * results: the loss and the global gradient norm (before clipping);
    * attributes: `train.step`, and `train.gradients` kept from
      `@loss_and_grads` (the parameters in the order their gradients are
      consumed, which `train-zero` relies on);
    * state: the `train.param`s and the `train.state`s this pass declares
      (`exp_avg` and `exp_avg_sq` for AdamW, `momentum_buffer` for SGD, and
      an fp32 `master` copy of every parameter that is not f32).

    Every step-less `train.dropout` of the step (the forward's and, from
    `train-autodiff`, the backward's) gets `%step`: dropout drops in the
    training step only, with the same mask in forward and backward, and
    stays the identity in `@forward` (evaluation).

    After the backward computation it computes the learning rate
    (`train.lr_schedule`), the global squared gradient norm
    (`train.squared_norm` of every gradient, summed), and with a positive
    `grad_clip` scales every gradient by `train.clip_coef` as
    torch.nn.utils.clip_grad_norm_. Each parameter is then updated by
    `train.adamw_update` or `train.sgd_update` in fp32, with weight decay
    only where the parameter is declared with `decay`, and written back
    with `train.write` (a bf16 parameter as the rounded master copy).
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainAssignBuckets : Pass<"train-assign-buckets", "mlir::ModuleOp"> {
  let summary = "Decides which parameters share a gradient bucket, in what order";
  let description = [{
    The first pass of the `train-zero` pipeline. It reads `@train_step` as
    `train-optimizer` writes it (after `train-data-parallel`,
    `train-autodiff` and, optionally, `train-accumulate`) and decides the
    buckets every later pass works on, without changing the step: the
    parameters of `train.gradients` in the order backward produces their
    gradients (the order of the ops that compute what each
    `train.squared_norm` reads; a gradient that is a block argument
    first), cut into groups of about `bucket-bytes` (a group closes once it
    holds at least `bucket-bytes`), and each group cut again wherever the
    element type changes, since a bucket's buffers hold one type.

    It writes the decision as the module attribute `train.buckets`: an
    array of buckets, each the array of its parameters end to end. The
    dialect verifies it (every entry a `train.param`, named once, one
    element type per bucket). `train-shard-states` reads it, declares each
    bucket's `train.buffer`s (whose members and offsets carry the decision
    from then on) and removes the attribute; nothing recomputes it.

    Example (`bucket-bytes=64`; `@w2`'s gradient is computed first):

    ```mlir
    module attributes {train.batch_split = 2 : i64} {
      train.param @w1 : tensor<4x3xf32> init = zeros
      train.param @w2 : tensor<5x4xf32> init = zeros
      func.func @train_step(...) attributes {train.step,
                                             train.gradients = [@w1, @w2]} {
        %g2 = ...   // backward: @w2's gradient, then @w1's
        %g1 = ...
        %lr = train.lr_schedule %step ...
        %n1 = train.squared_norm %g1 ...
        %n2 = train.squared_norm %g2 ...
        ...
      }
    }
    ```

    becomes, the step unchanged (80 bytes close the first bucket):

    ```mlir
    module attributes {train.batch_split = 2 : i64,
                       train.buckets = [[@w2], [@w1]]} {
    ```
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", "26214400",
           "Target size of a gradient bucket (and of a stage-3 gather group)">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainShardStates : Pass<"train-shard-states", "mlir::ModuleOp"> {
  let summary = "Declares each bucket's buffers, sharded as the ZeRO stage says";
  let description = [{
    The second pass of the `train-zero` pipeline (after
    `train-assign-buckets`, whose `train.buckets` it reads and removes). It
    decides what each rank stores, as the ZeRO paper (Rajbhandari et al.,
    SC20) defines its stages, in the one layout of Megatron's distributed
    optimizer: each bucket `k` (one element type) becomes a set of
    `train.buffer @zero.flat<k>.<what>` declarations whose members are the
    usual per-parameter declarations, end to end in the bucket's order:

    * `params` (the parameters themselves): replicated at stages 0-2,
      `shards = N` at stage 3;
    * `grads` (`train.state ... grad`): whole at stages 0-1, `shards = N`
      from stage 2;
    * `master` (bf16 buckets only: the fp32 masters), and the moments
      (`exp_avg`, `exp_avg_sq` for AdamW, `momentum_buffer` for SGD): whole
      at stage 0, `shards = N` from stage 1.

    From stage 1 a bucket is padded at its end to N equal shards; stage 0
    keeps whole buffers. It declares the 1-D grid `shard.grid @dp(shape =
    N)` and records `train.world_size` and `train.zero_stage` on the
    module. The step itself is unchanged: the later passes read the
    buffers (their members and offsets are the bucket decision from now
    on) and the two attributes, never recompute them.

    Example (`stage=2 world-size=2`, one AdamW bucket of 4 + 3 elements):

    ```mlir
    module attributes {train.batch_split = 2 : i64,
                       train.buckets = [[@b, @w]]} {
      train.param @w : tensor<3xf32> init = zeros
      train.param @b : tensor<4xf32> init = zeros
      ...
    ```

    becomes

    ```mlir
    module attributes {train.batch_split = 2 : i64, train.world_size = 2 : i64,
                       train.zero_stage = 2 : i64} {
      shard.grid @dp(shape = 2)
      train.param @w : tensor<3xf32> init = zeros
      train.state @w.grad : tensor<3xf32> grad of @w
      train.state @w.exp_avg : tensor<3xf32> exp_avg of @w
      ...
      train.buffer @zero.flat0.params : tensor<8xf32> <parameters>
          members [@b, @w] offsets [0, 4]
      train.buffer @zero.flat0.grads : tensor<8xf32> <gradients>
          members [@b.grad, @w.grad] offsets [0, 4] shards = 2
      train.buffer @zero.flat0.exp_avg : tensor<8xf32> <optimizer_states>
          members [@b.exp_avg, @w.exp_avg] offsets [0, 4] shards = 2
      ...
    ```
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "0", "ZeRO stage: 0, 1, 2 or 3">,
    Option<"worldSize", "world-size", "int64_t", "1",
           "Number of data-parallel ranks">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::shard::ShardDialect"];
}

def TrainGatherParams : Pass<"train-gather-params", "mlir::ModuleOp"> {
  let summary = "Places stage 3's parameter gathers around their uses";
  let description = [{
    The third pass of the `train-zero` pipeline; it does nothing below
    stage 3 (`train.zero_stage`, which with the parameter buffers it reads
    from `train-shard-states`). At stage 3 a rank stores only its shard of
    each parameter buffer. Before a bucket's first use in forward (in
    `@train_step`, `@forward` and `@logits`), and again before its first
    use in backward, the shard is gathered whole
    (`train.all_gather_start` / `train.wait`, side-effecting, so CSE
    cannot merge two gathers) and the members are views of the gathered
    buffer (`train.unpack`, the padding its last
    result), released (`train.release`) after the bucket's last use in
    that phase; per micro-batch with micro-batches (`train.micro_batch`,
    split at each micro-batch's loss, which `@train_step` still returns:
    run it before `train-reduce-gradients`). `train-optimizer`'s section
    keeps its own reads. A bucket whose last use in forward comes after
    every other bucket's and whose first use in backward comes before
    every other's (the output projection: GPT-2's tied embedding) is
    gathered once for both phases, instead of twice with the two gathers
    live together; a model of one bucket keeps the two gathers.
    `train-schedule` bounds the gathers in flight (`max-in-flight`).

    Example (one bucket `[@b, @w]` of 7 elements on 2 ranks):

    ```mlir
    %w = train.read @w : tensor<3xf32>
    %y = train.mul %x, %w : tensor<3xf32>
    ```

    becomes

    ```mlir
    %s = train.read @zero.flat0.params : tensor<4xf32>
    %f = train.all_gather_start %s on @dp : tensor<4xf32> -> !train.future<tensor<8xf32>>
    %g = train.wait %f : !train.future<tensor<8xf32>> -> tensor<8xf32>
    %b, %w, %pad = train.unpack %g : tensor<8xf32> -> tensor<4xf32>, tensor<3xf32>, tensor<1xf32>
    %y = train.mul %x, %w : tensor<3xf32>
    train.release %g : tensor<8xf32>
    ```
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainReduceGradients : Pass<"train-reduce-gradients", "mlir::ModuleOp"> {
  let summary = "Places the gradient and loss reductions over ranks";
  let description = [{
    The fourth pass of the `train-zero` pipeline. For each bucket (the
    parameter buffers `train-shard-states` declared, `train.zero_stage`
    and `train.world_size`), right after backward has computed the last of
    its gradients (the values `train-optimizer`'s `train.squared_norm`s
    read), the gradients are packed end to end (`train.pack`, the padding
    a zero tail) and averaged over ranks:

    * stage 0: one `shard.all_reduce`, scaled by 1/N and written to the
      bucket's gradient buffer;
    * stage 1: the full local gradients are written to the gradient
      buffer, and one `shard.reduce_scatter` (scaled by 1/N) gives the
      rank's averaged shard, the value `train-shard-optimizer` updates
      with;
    * stages 2-3: the reduce-scatter (scaled by 1/N) is written to the
      sharded gradient buffer; with micro-batches (`train-accumulate`'s
      sums, `train.accumulate`) once per micro-batch, each micro-batch's
      shard added to the buffer's (`train.accumulate`,
      `train.micro_batch`).

    The loss `@train_step` and `@forward` return becomes the mean over
    ranks (an all-reduce of a 1-element tensor, scaled by 1/N), and a
    cross-entropy with `ignore_index` divides by the global batch's token
    count (the counts summed over ranks). `train-optimizer`'s section is
    left to `train-shard-optimizer`, still reading the per-parameter
    gradients.

    Example (stage 2, one bucket `[@b, @w]` of 7 elements on 2 ranks):

    ```mlir
    %gw = ...   // the last gradient of the bucket
    ```

    is followed by

    ```mlir
    %pad = train.fill 0.0 : tensor<1xf32>
    %p = train.pack %gb, %gw, %pad : ... -> tensor<8xf32>
    %r = shard.reduce_scatter %p on @dp mesh_axes = [0] scatter_dim = 0 : tensor<8xf32> -> tensor<4xf32>
    %a = train.scale %r by 5.000000e-01 : tensor<4xf32>
    train.write %a to @zero.flat0.grads : tensor<4xf32>
    ```
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::shard::ShardDialect"];
}

def TrainShardOptimizer : Pass<"train-shard-optimizer", "mlir::ModuleOp"> {
  let summary = "Merges train-optimizer's per-parameter updates into one per bucket shard";
  let description = [{
    The last pass of the `train-zero` pipeline. It consumes the optimizer
    section `train-optimizer` wrote at the end of `@train_step` (from its
    `train.lr_schedule`: the squared norms, the `train.clip_coef`, and per
    parameter a cast, clip, master read, `train.adamw_update` /
    `train.sgd_update` and writes). The `train.lr_schedule`, the
    `train.sqrt` of the gradient norm the step returns and the
    `train.clip_coef` are kept and moved after the reductions; the norm now
    reads the squared norms of each bucket's averaged gradient shard
    (summed over ranks from stage 1, so clipping stays global). The
    per-parameter updates of a bucket merge into one update over the
    rank's shard of the bucket's buffers (at stage 0 the whole buffer,
    `replicated`), whose `decay_ranges` are the members whose own update
    decays; a bf16 bucket updates its fp32 master and rounds it into the
    parameters; at stages 1-2 one `shard.all_gather` rebuilds the
    replicated parameter buffer (from an `shard.all_slice` of it for an
    f32 bucket's master), at stage 3 the shard is the parameters' storage.
    Then nothing reads the per-parameter gradients' micro-batch sums any
    more, and they go.

    Example (stage 2, AdamW, one f32 bucket `[@b, @w]` of 7 elements on 2
    ranks; `@b` takes no weight decay):

    ```mlir
    %lr = train.lr_schedule %step lr = 0.01 schedule = constant ...
    ...
    %u:3 = train.adamw_update %pw, %cw, %mw, %vw, %lr, %step ... weight_decay = 0.1 ...
    train.write %u#0 to @w : tensor<3xf32>
    ```

    becomes

    ```mlir
    %g = train.read @zero.flat0.grads : tensor<4xf32>
    %lr = train.lr_schedule %step lr = 0.01 schedule = constant ...
    %n = train.squared_norm %g : tensor<4xf32> -> tensor<f32>
    ...   // the norm summed over ranks, the clip coefficient
    %p = shard.all_slice ...   // of train.read @zero.flat0.params
    %m = train.read @zero.flat0.exp_avg : tensor<4xf32>
    %v = train.read @zero.flat0.exp_avg_sq : tensor<4xf32>
    %u:3 = train.adamw_update %p, %c, %m, %v, %lr, %step ...
        weight_decay = 0.1 decay_ranges = [4, 7] ...
    %all = shard.all_gather %u#0 on @dp ... : tensor<4xf32> -> tensor<8xf32>
    train.write %all to @zero.flat0.params : tensor<8xf32>
    ```
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::shard::ShardDialect"];
}

def TrainSchedule : Pass<"train-schedule", "mlir::ModuleOp"> {
  let summary = "Makes collectives asynchronous and places them for overlap";
  let description = [{
    Replaces every upstream `shard.all_reduce`, `shard.reduce_scatter` and
    `shard.all_gather` by zeroc's side-effecting
    `train.*_start` / `train.wait` pair and moves the pair apart, so that a
    backend overlaps communication with computation:

    * a collective starts as soon as its input exists (a gradient bucket's
      reduction right after backward produced its last gradient);
    * its wait sits right before the first use of its result;
    * at most `max-in-flight` gradient buckets are in flight: the wait of
      bucket i comes no later than the start of bucket i + max-in-flight,
      which bounds the memory of unreduced buckets (ZeRO stage 2);
    * stage 3's parameter gathers are prefetched one group ahead: the gather
      of group i + 1 starts when group i's gathered parameters arrive, so it
      runs while group i computes;
    * the parameters rebuilt by stage 1-2's all-gathers after the update are
      unpacked and written as late as `max-in-flight` allows: gather i's
      wait, unpack and writes come no later than the start of gather
      i + max-in-flight (the last ones at the end of the step), so each
      gather overlaps the updates that follow it while at most
      max-in-flight gathered buckets are live.

    The resulting order is the same on every rank, as collectives require.
  }];
  let options = [
    Option<"maxInFlight", "max-in-flight", "int64_t", "2",
           "Gradient buckets whose reduction (and stage 1-2 parameter "
           "buckets whose all-gather) may be in flight at once">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainDeferGathers : Pass<"train-defer-gathers", "mlir::ModuleOp"> {
  let summary = "Defers stage 1-2 parameter gathers into the next step's forward";
  let description = [{
    Megatron's `--overlap-param-gather` for ZeRO stages 1-2, run after
    `train-schedule`. At the end of `@train_step` each bucket's updated
    parameter shard is all-gathered into its replicated parameter buffer;
    this pass moves that gather to the top of the next step, where it
    overlaps forward instead of ending the step:

    * the update still ends the step and writes the bucket's updated shard
      to its f32 master buffer (`train.buffer ... shards = N`), where it
      persists until the next step;
    * at the top of the step the shard is read back, cast to the
      parameters' type and its `train.all_gather_start` starts; the
      `train.wait` and the write into the parameter buffer sit right before
      the first op that reads the bucket (its first forward use; with
      gradient accumulation, in the first micro-batch);
    * at most `max-in-flight` gathers are in flight: the first ones start
      at the top of the step, gather i + max-in-flight right after gather i
      is written, as stage 3 prefetches its groups;
    * `@gather_params()` performs every deferred gather at once: the
      executable calls it before anything reads the parameters between
      steps (evaluation, sampling, a checkpoint or `--save`).

    The first step's gathers rewrite the initial parameters with themselves
    (every rank starts from the same parameters and masters). A bucket
    without a master (f32 parameters) has its updated shard only in the
    rank's slot of the replicated parameter buffer, which no tensor-level op
    writes alone: on the tensor form it keeps its gather at the end of the
    step, and the pass defers it when it runs again on the planned form (in
    the planning pipeline, after `train-bufferize` and `cse`): the
    `train.collective_start all_gather` from the rank's slot of the
    buffer's `train.storage` into that storage moves to the top of the step
    under the same bound, its `train.collective_wait` right before the first
    op that uses the bucket's or a member's storage, and `@gather_params`
    (the tensor run's, or a new planned one) gathers it too. Other stages
    are left alone.

    ```mlir
    // before: ... the update, then
    train.write %new to @zero.flat0.master : tensor<13xf32>
    %c = train.cast %new : tensor<13xf32> to tensor<13xbf16>
    %f = train.all_gather_start %c on @dp : tensor<13xbf16> -> !train.future<tensor<26xbf16>>
    %g = train.wait %f : !train.future<tensor<26xbf16>>
    train.write %g to @zero.flat0.params : tensor<26xbf16>
    return ...
    // after: at the top of the step
    %m = train.read @zero.flat0.master : tensor<13xf32>
    %c = train.cast %m : tensor<13xf32> to tensor<13xbf16>
    %f = train.all_gather_start %c on @dp : tensor<13xbf16> -> !train.future<tensor<26xbf16>>
    ...                       // forward up to the bucket's first use
    %g = train.wait %f : !train.future<tensor<26xbf16>>
    train.write %g to @zero.flat0.params : tensor<26xbf16>
    %w2 = train.read @w2 : tensor<5x4xbf16>
    ```
  }];
  let options = [
    Option<"maxInFlight", "max-in-flight", "int64_t", "2",
           "Parameter buckets whose all-gather may be in flight at once">
  ];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::func::FuncDialect"];
}

def TrainTraceSites : Pass<"train-trace-sites", "mlir::ModuleOp"> {
  let summary = "Names each op of the train step for the executable's --trace";
  let description = [{
    Runs before the planning passes on the scheduled program (the driver
    adds it when it writes source or an executable). Every op of the
    `train.step` function gets a `train.trace` dictionary: the site that
    the executable's `--trace` records for it (zrt.h's `zrt_trace_site`):

    * `name`: the op's kind and the layer it belongs to (the parameter it
      reads, or the layer of the op at the same source location, or the
      block of the op before it), a collective's the range of blocks its
      buffer packs (`all_gather transformer.h.0..transformer.h.1`);
    * `kind` (the op's name without the dialect), `phase` (forward,
      backward or optimizer) and `location` (`file:line:column`);
    * for collectives and their waits: `collective` (the number of the
      collective in the step, from 0), `collective_kind` (0 all-reduce, 1
      reduce-scatter, 2 all-gather), `elements` (the whole buffer) and
      `bytes` (what this rank sends, ring accounting); -1 and 0 otherwise.

    `train-fuse-elementwise` gives a `train.fused` region its root's site,
    `train-bufferize` keeps each op's in its `train.kernel` and gives the
    `train.collective_start` and `train.collective_wait` ops their
    collective's and wait's. The back ends print the sites and decide
    nothing (docs/performance-model.md, "Traces").

    ```mlir
    %0 = train.matmul %x, %w : ... {train.trace = {bytes = 0 : i64,
        collective = -1 : i64, collective_kind = -1 : i64, elements = 0 : i64,
        kind = "matmul", location = "gpt2.mlir:57:10",
        name = "matmul transformer.h.0.attn.c_attn", phase = "forward"}}
    ```

    The pass emits no error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainFuseElementwise : Pass<"train-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Groups elementwise chains into train.fused regions";
  let description = [{
    The first planning pass (docs/backend.md). Every op with the
    `Elementwise` trait ends up in exactly one `train.fused` region, which a
    back end computes as one loop (one kernel on a GPU):

    * a producer joins its user's region when its result has that one user,
      in the same block, with the same shape, of the same micro-batch
      (`train.micro_batch`, from `train-accumulate`: a running gradient sum
      is computed in its own micro-batch), and no op that writes memory
      (a `train.write`, a collective) lies between them;
    * a `train.fill` used only by elementwise ops is copied into each
      region that uses it; any other elementwise op starts a region.

    The region's inputs are the values the chain reads from outside, in
    order of first use; the reference evaluator runs the region's body, so
    the pass's output computes exactly what its input did.

    ```mlir
    %s = train.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %g = train.gelu %s tanh : tensor<4x8xf32>
    // becomes
    %g = train.fused %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %0 = train.add %a, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %1 = train.gelu %0 tanh : tensor<4x8xf32>
      train.yield %1 : tensor<4x8xf32>
    }
    ```

    The pass emits no error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainFuseOptimizer : Pass<"train-fuse-optimizer", "mlir::ModuleOp"> {
  let summary = "Folds the gradient-clipping multiply into the AdamW update";
  let description = [{
    A planning pass (docs/backend.md), before `train-fuse-elementwise`.
    Gradient clipping multiplies each gradient by the clipping coefficient
    just before its update reads it. Where a `train.adamw_update`'s
    gradient is a `train.mul` of a tensor of the update's type and a 0-d
    f32 tensor (either order), the multiply has no other use, lies in the
    update's block and no op between them writes memory, the update takes
    the scalar as its `grad_scale` and reads the unscaled gradient; the
    multiply is erased. The update multiplies each gradient by the scalar
    first, rounded to f32 as the multiply's result was, so the results are
    bitwise the same (the reference evaluator and the runtime's
    `zrt_adamw` / `zrt_adamw_buffer` both), and a step makes one pass over
    each gradient fewer (76 kernel calls fewer per step on a 6-layer GPT-2
    at stage 0).

    ```mlir
    %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
    %g1 = train.mul %g, %c : (tensor<48xf32>, tensor<f32>) -> tensor<48xf32>
    %p1, %m1, %v1 = train.adamw_update %p, %g1, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
    // becomes
    %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %c beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
    ```

    Any other multiply is left for `train-fuse-elementwise`. The pass emits
    no error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainFuseGradAverage : Pass<"train-fuse-grad-average", "mlir::ModuleOp"> {
  let summary = "Folds the gradient average over ranks into the clipping norm and the AdamW update";
  let description = [{
    A planning pass (docs/backend.md), after `train-fuse-optimizer` and
    before `train-fuse-elementwise`. `train-zero` averages each reduced
    gradient bucket with a `train.scale` by 1/N over the whole bucket; its
    only readers are the clipping norm's `train.squared_norm`s and the
    `train.adamw_update`s, and both can take the constant instead. So where
    a scaled gradient (rank 1 or more) reaches, directly or through
    `train.write`s and `train.read`s of a state, `train.cast`s (bf16
    gradients widened for the update) and `train.add`s of such values
    (stage 2's per-micro-batch accumulation), nothing but squared norms,
    update gradients, writes, casts and such adds, every one of those
    values is a scale by the same constant `c`, an add or cast of them or
    a read of such a state, and each state is the step's own (read and
    written only in this block, first written, no buffer member, a buffer
    whose members nothing else uses): the scales are erased, so the states
    hold the unscaled sums; each squared norm of them is followed by a 0-d
    `train.scale` by `c * c`, and each update's `grad_scale` becomes a 0-d
    `train.scale` of it by `c` (a `train.fill` of `c` where it had none).
    The update multiplies each gradient by its `grad_scale` first, in f32:
    for `c` a power of two (N = 1, 2, 4, ...) every result is bitwise the
    same (the scalings are exact), otherwise the same up to f32 rounding.
    Where a value of the class is not f32 (bf16 gradients), only a power
    of two is folded: the scale rounded each element to bf16, the update's
    f32 product would not.
    A step makes one pass over every gradient fewer (on a 6-layer GPT-2 at
    stage 0 on 2 ranks: 7 bucket scales of 7 MB, about 1 ms).

    ```mlir
    %r = train.wait %f : !train.future<tensor<64xf32>>
    %a = train.scale %r by 5.000000e-01 : tensor<64xf32>
    train.write %a to @zero.flat0.grads : tensor<64xf32>
    %g = train.read @zero.flat0.grads : tensor<64xf32>
    %n = train.squared_norm %g : tensor<64xf32> -> tensor<f32>
    %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %c beta1 = ... : tensor<64xf32>
    // becomes
    %r = train.wait %f : !train.future<tensor<64xf32>>
    train.write %r to @zero.flat0.grads : tensor<64xf32>
    %g = train.read @zero.flat0.grads : tensor<64xf32>
    %n0 = train.squared_norm %g : tensor<64xf32> -> tensor<f32>
    %n = train.scale %n0 by 2.500000e-01 : tensor<f32>
    %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
    %cs = train.scale %c by 5.000000e-01 : tensor<f32>
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %cs beta1 = ... : tensor<64xf32>
    ```

    Anything else keeps its scale (an SGD update, a gradient read by
    another function or written to a parameter, scales by different
    constants in one class), and so does a reduce-scattered shard written
    to a state (stages 2 and 3): it lies in the collective's send buffer,
    and its scale is what moves it into the state's storage, which a copy
    would do instead. So stages 0 and 1 lose their scales, stages 2 and 3
    keep them. The pass emits no error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainFuseMatmulBias : Pass<"train-fuse-matmul-bias", "mlir::ModuleOp"> {
  let summary = "Folds a linear layer's bias add into its matrix product";
  let description = [{
    A planning pass (docs/backend.md), after `train-fuse-optimizer` and
    before `train-fuse-elementwise`. Where a `train.add` adds a vector of
    the last dimension (a bias) to a `train.matmul` whose only use it is,
    in the same block with no op between them that writes memory, and the
    add's result has the product's type, both become one
    `train.matmul_bias` at the add's place, carrying the product's
    attributes (its trace site). The back ends compute it as one GEMM into
    an output preset to the bias (`zrt_matmul_bias`, sgemm's beta = 1 on the
    CPU) instead of a GEMM that zeroes its output and an add that reads and
    writes it again: on a 6-layer GPT-2 the q/k/v and MLP input layers'
    bias adds disappear (12 generated loops a step); where the sum goes on
    into a residual add, that add stays an elementwise loop without the
    bias.

    ```mlir
    %y0 = train.matmul %x, %w transpose_rhs : (tensor<4x16x8xf32>, tensor<12x8xf32>) -> tensor<4x16x12xf32>
    %y = train.add %y0, %b : (tensor<4x16x12xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
    // becomes
    %y = train.matmul_bias %x, %w, %b transpose_rhs : (tensor<4x16x8xf32>, tensor<12x8xf32>, tensor<12xf32>) -> tensor<4x16x12xf32>
    ```

    The bias joins each output element's f32 sum, so the executable's
    result may differ from the separate add in the last bits (the reference
    evaluator computes the separate ops' rounding). The pass emits no
    error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainFuseHeadSplit : Pass<"train-fuse-head-split", "mlir::ModuleOp"> {
  let summary = "Splits q, k and v into heads with one transpose";
  let description = [{
    A planning pass (docs/backend.md), before `train-fuse-elementwise`.
    Attention's input projection computes q, k and v side by side; the
    model splits them along the last dimension and views and transposes
    each into heads. Where a `train.split` along the last dimension has
    only such uses -- each part reshaped (only its last dimension split;
    optional) and transposed, every part alike, in the split's block --
    the parts become one `train.transpose` of the input viewed with the
    parts as a new dimension before the split one, moved first by the
    permutation, and a `train.unpack` of its flattened result: contiguous
    parts, which the buffer form makes views. One kernel (a copy of the
    whole projection) and all but one transpose fewer per layer; the values
    are the same bits. The reshapes and the unpack keep the split's
    attributes but its trace site; the transpose is traced as the first
    part's.

    ```mlir
    %q, %k, %v = train.split %qkv dim = 2 : tensor<4x128x1152xf32> -> tensor<4x128x384xf32>, tensor<4x128x384xf32>, tensor<4x128x384xf32>
    %q4 = train.reshape %q : tensor<4x128x384xf32> -> tensor<4x128x6x64xf32>
    %qh = train.transpose %q4 [0, 2, 1, 3] : tensor<4x128x6x64xf32> -> tensor<4x6x128x64xf32>
    // ... the same for %k and %v, becomes
    %h = train.reshape %qkv : tensor<4x128x1152xf32> -> tensor<4x128x3x6x64xf32>
    %t = train.transpose %h [2, 0, 3, 1, 4] : tensor<4x128x3x6x64xf32> -> tensor<3x4x6x128x64xf32>
    %f = train.reshape %t : tensor<3x4x6x128x64xf32> -> tensor<589824xf32>
    %qh, %kh, %vh = train.unpack %f : tensor<589824xf32> -> tensor<4x6x128x64xf32>, tensor<4x6x128x64xf32>, tensor<4x6x128x64xf32>
    ```

    Any other split is left alone. The pass emits no error.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainEmplace : Pass<"train-emplace", "mlir::ModuleOp"> {
  let summary = "Decides which producers compute into a slice of a buffer";
  let description = [{
    The first pass of the `train-bufferize` pipeline (docs/backend.md): on
    each function of a scheduled, fused per-rank step still in tensor form,
    which values are computed where they end up instead of into a new
    buffer that is then copied. It decides on the tensor IR and writes each
    decision on the op it concerns; `train-elide-copies` and
    `train-bufferize-ops` read them, nothing recomputes them. Decisions the
    ops already carry (an earlier run, hand-written IR) are replaced, not
    added to: running it twice decides as running it once.

    * `train.into = @bucket` on a `train.pack`: the pack is
      the storage of the replicated gradient `train.buffer` it is written
      to (stage 1), or all-reduced, averaged and written to (stage 0), when
      nothing touches the buffer before that write.
    * `train.emplace = array<i64: i, ...>` on such a pack, or on a pack
      only reduce-scattered (a segment, stages 2-3): its inputs `i` are
      computed into their slots (through the reshapes that lead to them,
      each used only on the way), when a kernel of the function computes
      them and they have no other use.
    * `train.emplace = array<i64: 0>` on a `train.write`: the value is
      already in the storage and the write disappears -- the bucket's own
      write, an update in place, an all-gather in place, or a kernel's
      result whose only use is a write of the whole storage of a buffer,
      parameter or state that nothing else accesses (nor a live read
      reads) from the kernel to the write; an elementwise producer may
      read that storage itself (stage 2's sum of micro-batches, a bf16
      cast of its master).
    * `train.emplace` on `train.adamw_update` / `train.sgd_update`: the
      state operands updated in place on their state's buffer (a
      `train.read` used by the update alone, whose result is written back
      to that state; or stages 1-2's rank slice of the parameter buffer
      that the result is all-gathered into).
    * `train.into = @params` on a `train.all_gather_start` whose result is
      written to a replicated buffer: it receives into that buffer; with
      `train.emplace = array<i64: 0>` its send is computed into the rank's
      slot of it (else the send is an update in place there). Not when a
      read of the buffer is live at the gather.

    ```mlir
    %g = train.matmul %x, %dy transpose_lhs : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<8x4xf32>
    %b = train.pack %g, %h : tensor<8x4xf32>, tensor<4xf32> -> tensor<36xf32>
    %f = train.all_reduce_start %b {grid = @dp} : tensor<36xf32> -> !train.future<tensor<36xf32>>
    %r = train.wait %f : !train.future<tensor<36xf32>> -> tensor<36xf32>
    train.write @grads, %r : tensor<36xf32>
    // becomes
    %b = train.pack %g, %h {train.emplace = array<i64: 0>, train.into = @grads} : ...
    train.write @grads, %r {train.emplace = array<i64: 0>} : tensor<36xf32>
    ```

    The pass emits no errors: an op it cannot place keeps no attribute
    and is copied. Functions already in buffer form are left alone.
  }];
  // It asks every function for train.planned: the dialect must be loaded
  // even when the module holds no train op.
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainElideCopies : Pass<"train-elide-copies", "mlir::ModuleOp"> {
  let summary = "Marks the reads that must copy their state";
  let description = [{
    The second pass of the `train-bufferize` pipeline, after
    `train-emplace`: a `train.read` is its state's buffer unless the state
    (or any member of the same `train.buffer`) is written while the read
    is live -- by a `train.write` that remains (no `train.emplace`) or by
    an update in place (`train.emplace`) through another read -- then it
    gets `train.copy` and `train-bufferize-ops` reads it into a new
    buffer. A read is live until its last use through views; an update in
    place keeps the read it updates alive as long as its result; a
    collective's input until its wait.

    ```mlir
    %w = train.read @w : tensor<4xf32>
    train.write @w, %new : tensor<4xf32>
    %y = train.add %w, %w : ...
    // becomes
    %w = train.read @w {train.copy} : tensor<4xf32>
    ```

    The pass emits no errors. Functions already in buffer form are left
    alone.
  }];
  // It asks every function for train.planned: the dialect must be loaded
  // even when the module holds no train op.
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainBufferizeOps : Pass<"train-bufferize-ops", "mlir::ModuleOp"> {
  let summary = "Rewrites each function of a per-rank step into buffers";
  let description = [{
    The third pass of the `train-bufferize` pipeline (`train-emplace`,
    `train-elide-copies`, `train-bufferize-ops`, `train-allocate`, then
    `train-entry-abi`; docs/backend.md): it executes the decisions the
    first two wrote into the IR and makes none of its own; after it, where
    every value lives is in the IR, and the function is marked
    `train.planned`. Its allocations have no memory category yet
    (`train-allocate`'s).

    * Each tensor argument and result becomes a memref of the same shape in
      device memory; the entry point's signature (host memory, out
      parameters) is `train-entry-abi`'s. `train.lr_schedule` writes a new
      allocation, which `train-entry-abi` makes the learning rate's
      out-parameter.
    * `train.read` is its state's buffer (`train.storage`), or, marked
      `train.copy` (`train-elide-copies`), an allocation and a
      `memref.copy` of it.
    * Views are `memref.reinterpret_cast` of their source's buffer: a
      reshape, a `train.unpack` (at each part's offset), a
      `shard.all_slice` (at the rank's offset, from `train.rank`), a
      `train.wait` (the collective's receive buffer).
    * An optimizer update runs in place on the buffers of the state
      operands `train.emplace` lists; any other state operand is copied
      first and updated in place on the copy.
    * A `train.pack` with `train.into = @b` is the storage of `@b`; one
      with `train.emplace` only (a reduce-scatter's segment) an allocation
      made when its first input is computed. Each input it lists is
      computed into its slot (through its reshapes), any other is copied
      there. A collective of such a pack runs in place (an all-reduce with
      `send == recv`, a reduce-scatter into the rank's slot); an
      all-gather with `train.into = @p` receives into `@p`, and the send
      it lists is computed into the rank's slot of `@p`.
    * A `train.write` with `train.emplace` disappears (its value was
      computed into the storage: a kernel whose result it writes computes
      into the whole storage); any other is a `memref.copy` into the
      state's buffer.
    * Every other op, a `train.fused` region included, becomes a
      `train.kernel` from the buffers of its operands into new
      allocations.
    * Collectives become `train.collective_start` / `train.collective_wait`
      with their payload (the elements that are not padding); `train.release`
      disappears (liveness places the end of the buffer's life).

    ```mlir
    %w = train.read @w : tensor<4x8xf32>
    %y = train.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    // becomes
    %0 = train.storage @w : memref<4x8xf32>
    %1 = memref.alloc() : memref<2x4xf32>
    train.kernel ins(%x, %0 : memref<2x8xf32>, memref<4x8xf32>) outs(%1 : memref<2x4xf32>) {
    ^bb0(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>):
      %c = train.matmul %a, %b transpose_rhs : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
      train.yield %c : tensor<2x4xf32>
    }
    ```

    Errors: a function already in buffer form (`train.planned`); a
    non-tensor argument; a blocking upstream collective ("run
    train-schedule"); an op with memory effects the pass does not know;
    a `train.into` that names no replicated `train.buffer` of the op's
    type; an all-gather with `train.emplace` and no `train.into`; a
    `train.emplace` operand of a pack or all-gather that no kernel
    computes. (A
    `train.*_start` not waited for exactly once becomes a
    `train.collective_start` that `train-verify-emittable` rejects.)
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def TrainAllocate : Pass<"train-allocate", "mlir::ModuleOp"> {
  let summary = "Gives each allocation its memory category";
  let description = [{
    The fourth pass of the `train-bufferize` pipeline, on the buffer form
    `train-bufferize-ops` leaves: each `memref.alloc` without a
    `train.category` gets the one the memory report counts it in, from
    what the allocation is for.

    * The receive buffer of a `train.collective_start`: gathered
      parameters for an all-gather, gradient buckets otherwise.
    * The send buffer of one, when nothing writes it but a `train.kernel`
      running a `train.pack` or writes through its views (a bucket packed
      for the collective, a reduce-scatter segment its gradients are
      computed into): the same.
    * Anything else (a kernel's result, a read's copy, an update's copy,
      even when a collective sends it): activations.

    An allocation that already has a category keeps it.

    ```mlir
    %seg = memref.alloc() : memref<10xf32>
    %mine = memref.reinterpret_cast %seg to offset: [%o], sizes: [5], strides: [1] : ...
    %r = train.collective_start reduce_scatter %seg, %mine on @dp payload = 10 : ...
    // becomes
    %seg = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<10xf32>
    ```

    The pass emits no errors.
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

def TrainEntryABI : Pass<"train-entry-abi", "mlir::ModuleOp"> {
  let summary = "Gives each planned function the entry point's signature";
  let description = [{
    The last pass of the `train-bufferize` pipeline: on each function
    `train-bufferize-ops` put in buffer form, the signature the runtime
    calls (docs/backend.md).

    * The step number (a rank-0 `i64` argument) moves to host memory
      (`memref<i64, #train.host>`).
    * Each result becomes a host out-parameter
      (`memref<..xf32, #train.host>`, appended to the arguments) written by
      `train.read_back` before the return, which then returns nothing.
    * A `train.step` function gets one more out-parameter, the learning
      rate: the buffer a `train.lr_schedule` kernel writes becomes it (its
      allocation disappears), or, when the step has no schedule, a kernel
      writes the constant 0 into it.

    ```mlir
    func.func @train_step(%x: memref<2x8xf32>, %step: memref<i64>) -> memref<f32> attributes {train.planned, train.step} {
      %lr = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
      train.kernel ins(%step : memref<i64>) outs(%lr : memref<f32>) { ... train.lr_schedule ... }
      ...
      return %loss : memref<f32>
    }
    // becomes
    func.func @train_step(%x: memref<2x8xf32>, %step: memref<i64, #train.host>, %out: memref<f32, #train.host>, %lr: memref<f32, #train.host>) attributes {train.planned, train.step} {
      train.kernel ins(%step : memref<i64, #train.host>) outs(%lr : memref<f32, #train.host>) { ... train.lr_schedule ... }
      ...
      train.read_back %loss, %out : memref<f32>, memref<f32, #train.host>
      return
    }
    ```

    Errors: a function not in buffer form (no `train.planned`; "run
    train-bufferize-ops first"); an argument already in host memory (the
    signature is rewritten once); a result that is not a memref; the step
    number or the learning rate used by anything but the schedule, the
    optimizer updates, dropout (the step only) and the return (they live
    in host memory; the error names the kernel's op, or the view).
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::memref::MemRefDialect"];
}

def TrainDeallocate : Pass<"train-deallocate", "mlir::ModuleOp"> {
  let summary = "Frees every buffer of a planned function after its last use";
  let description = [{
    The third planning pass: in each `train.planned` function, every
    `memref.alloc` gets one `memref.dealloc` right after the last op that
    uses it, directly or through a view; the buffers of a collective stay
    alive until its `train.collective_wait`. Deallocations behind the same
    op come in allocation order. The memory report's transient figures are
    the running sum of these allocations.

    ```mlir
    %1 = memref.alloc() {train.category = #train.category<activations>} : memref<2x4xf32>
    train.kernel ins(...) outs(%1 : memref<2x4xf32>) { ... }
    train.kernel ins(%1 : memref<2x4xf32>) outs(%2 : memref<f32>) { ... }
    memref.dealloc %1 : memref<2x4xf32>
    ```

    Errors: a function with deallocations already; an allocation that is
    returned (planned functions hand results back through host
    out-parameters).
  }];
  let dependentDialects = ["zeroc::train::TrainDialect",
                           "mlir::memref::MemRefDialect"];
}

def TrainVerifyEmittable : Pass<"train-verify-emittable", "mlir::ModuleOp"> {
  let summary = "Checks that a module is in the buffer form the back ends print";
  let description = [{
    The last planning pass, the back ends' input contract: nothing is left
    for a back end to decide. In every function with a body:

    * the function is planned (`train.planned`, from `train-bufferize`);
    * its ops are the buffer form's only: `memref.alloc` / `dealloc` /
      `reinterpret_cast` / `copy`, index arithmetic (`arith.constant`,
      `muli`, `addi`), `train.storage`, `train.kernel`,
      `train.collective_start` / `collective_wait`, `train.rank`,
      `train.read_back`, `func.return`;
    * every allocation has a `train.category` and exactly one
      `memref.dealloc`;
    * every collective is waited for exactly once;
    * every kernel runs one op, and an elementwise op only inside a
      `train.fused` region.

    The pass changes nothing. `zeroc` runs it before it emits source, also
    for a module given with `--no-pipeline`.

    Errors: a function not planned ("run train-bufferize"); an op outside
    the buffer form; an allocation without a category, or not freed exactly
    once ("run train-deallocate"); a collective not waited for exactly once;
    a kernel with more than one op, or an elementwise op outside a fused
    region ("run train-fuse-elementwise").
  }];
  let dependentDialects = ["zeroc::train::TrainDialect"];
}

#endif // ZEROC_TRANSFORMS_PASSES_TD
