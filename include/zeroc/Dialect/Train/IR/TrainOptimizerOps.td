//===- TrainOptimizerOps.td - optimizer math of the train dialect -*- tablegen -*-===//
//
// What `train-optimizer` expands a train.optimizer into. Update ops are
// elementwise over same-shaped f32 tensors, so they apply unchanged to a
// rank's shard of a parameter (ZeRO stages 1-3).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINOPTIMIZEROPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINOPTIMIZEROPS_TD

def Train_F32Tensor : RankedTensorOf<[F32]>;

def Train_LRScheduleOp : Train_Op<"lr_schedule", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the learning rate at a step";
  let description = [{
    For step `s` (counted from 0): `constant` gives `lr`. `cosine` follows
    nanoGPT: `lr * (s + 1) / (warmup + 1)` while `s < warmup`; `min_lr` once
    `s > max_steps`; in between
    `min_lr + 0.5 * (1 + cos(pi * (s - warmup) / (max_steps - warmup))) * (lr - min_lr)`.

    ```mlir
    %lr = train.lr_schedule %step lr = 6.000000e-04 schedule = cosine warmup = 10 min_lr = 6.000000e-05 max_steps = 100 : tensor<i64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_StepTensor:$step, F64Attr:$lr,
                       Train_LRSchedule:$schedule,
                       DefaultValuedAttr<I64Attr, "0">:$warmup,
                       DefaultValuedAttr<F64Attr, "0.0">:$min_lr,
                       DefaultValuedAttr<I64Attr, "0">:$max_steps);
  let results = (outs Train_ScalarF32Tensor:$result);
  let assemblyFormat = [{
    $step `lr` `=` $lr `schedule` `=` $schedule (`warmup` `=` $warmup^)?
    (`min_lr` `=` $min_lr^)? (`max_steps` `=` $max_steps^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_SquaredNormOp : Train_Op<"squared_norm", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "sum of squares of every element, accumulated in f32";
  let description = [{
    ```mlir
    %n = train.squared_norm %g : tensor<65x48xbf16> -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_ScalarF32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Train_ClipCoefOp : Train_Op<"clip_coef", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gradient scale of global-norm clipping";
  let description = [{
    From the global squared norm `n`, as torch.nn.utils.clip_grad_norm_:
    `min(1, max_norm / (sqrt(n) + 1e-6))`.

    ```mlir
    %c = train.clip_coef %n max_norm = 1.000000e+00 : tensor<f32>
    ```
  }];
  let arguments = (ins Train_ScalarF32Tensor:$squared_norm, F64Attr:$max_norm);
  let results = (outs Train_ScalarF32Tensor:$result);
  let assemblyFormat = [{
    $squared_norm `max_norm` `=` $max_norm attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Train_AdamWUpdateOp : Train_Op<"adamw_update", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_StateUpdateOpInterface,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "one torch.optim.AdamW step on a tensor (or a shard of it)";
  let description = [{
    With `t = step + 1`, as torch.optim.AdamW:
    ```
    param   = param - lr * weight_decay * param
    exp_avg    = beta1 * exp_avg + (1 - beta1) * grad
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad^2
    param   = param - lr * (exp_avg / (1 - beta1^t))
                    / (sqrt(exp_avg_sq / (1 - beta2^t)) + eps)
    ```
    and yields the new param, exp_avg and exp_avg_sq.

    ```mlir
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
    ```

    With `decay_ranges`, the operands are this rank's shard of a flat
    buffer sharded over the ranks (a `train.buffer` with `shards`): element
    i is the buffer's logical element `rank * n + i`, n the operands'
    element count, and it takes weight decay only when that index lies in
    one of the ranges `[decay_ranges[2k], decay_ranges[2k + 1])` (the
    members that take decay); padding, gaps and the other members get none.
    The ranges are sorted and do not overlap. The back ends call the
    runtime's `zrt_adamw_buffer`, whose per-element result is that of
    `zrt_adamw`.

    ```mlir
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 3072] : tensor<1584xf32>
    ```

    With `replicated` as well, the operands are the whole buffer, which
    every rank holds and updates alike (ZeRO stage 0's buckets): element i
    is the buffer's element i on every rank.

    ```mlir
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 3072] replicated : tensor<3168xf32>
    ```

    With `grad_scale` (a scalar, the clipping coefficient that
    `train-fuse-optimizer` folds in), the gradient of element i is
    `grad[i] * grad_scale` rounded to f32, exactly the `train.mul` it
    replaces; the runtime's kernels take it as a pointer to one f32.

    ```mlir
    %p1, %m1, %v1 = train.adamw_update %p, %g, %m, %v, %lr, %step grad_scale %c beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>
    ```
  }];
  let arguments = (ins Train_F32Tensor:$param, Train_F32Tensor:$grad,
                       Train_F32Tensor:$exp_avg, Train_F32Tensor:$exp_avg_sq,
                       Train_ScalarF32Tensor:$lr, Train_StepTensor:$step,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay,
                       OptionalAttr<DenseI64ArrayAttr>:$decay_ranges,
                       UnitAttr:$replicated,
                       Optional<Train_ScalarF32Tensor>:$grad_scale);
  let results = (outs Train_F32Tensor:$new_param,
                      Train_F32Tensor:$new_exp_avg,
                      Train_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step
    (`grad_scale` $grad_scale^)?
    `beta1` `=` $beta1 `beta2` `=` $beta2 `eps` `=` $eps
    `weight_decay` `=` $weight_decay (`decay_ranges` $decay_ranges^)?
    (`replicated` $replicated^)? attr-dict `:` type($param)
  }];
  // Without grad_scale, as the optimizer passes build it.
  let builders = [
    OpBuilder<(ins "mlir::Value":$param, "mlir::Value":$grad,
                   "mlir::Value":$exp_avg, "mlir::Value":$exp_avg_sq,
                   "mlir::Value":$lr, "mlir::Value":$step,
                   "mlir::FloatAttr":$beta1, "mlir::FloatAttr":$beta2,
                   "mlir::FloatAttr":$eps, "mlir::FloatAttr":$weight_decay,
                   "mlir::DenseI64ArrayAttr":$decay_ranges,
                   "mlir::UnitAttr":$replicated), [{
      build($_builder, $_state, param, grad, exp_avg, exp_avg_sq, lr, step,
            beta1, beta2, eps, weight_decay, decay_ranges, replicated,
            mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Train_SGDUpdateOp : Train_Op<"sgd_update", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>, Train_StateUpdateOpInterface,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>]> {
  let summary = "one torch.optim.SGD step with momentum on a tensor";
  let description = [{
    As torch.optim.SGD (no dampening, no Nesterov):
    ```
    d = grad + weight_decay * param
    momentum_buffer = momentum * momentum_buffer + d
    param = param - lr * momentum_buffer
    ```
    The buffer starts at zero, so the first step's buffer is `d`, as in
    PyTorch. Yields the new param and momentum_buffer.

    ```mlir
    %p1, %b1 = train.sgd_update %p, %g, %b, %lr momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<48xf32>
    ```

    `decay_ranges` is as in `train.adamw_update`: the operands are this
    rank's shard of a sharded flat buffer, and only the elements whose
    logical index `rank * n + i` lies in a range take weight decay
    (`zrt_sgd_buffer`); with `replicated`, the whole buffer, index `i`.
  }];
  let arguments = (ins Train_F32Tensor:$param, Train_F32Tensor:$grad,
                       Train_F32Tensor:$momentum_buffer,
                       Train_ScalarF32Tensor:$lr, F64Attr:$momentum,
                       F64Attr:$weight_decay,
                       OptionalAttr<DenseI64ArrayAttr>:$decay_ranges,
                       UnitAttr:$replicated);
  let results = (outs Train_F32Tensor:$new_param,
                      Train_F32Tensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $lr `momentum` `=` $momentum
    `weight_decay` `=` $weight_decay (`decay_ranges` $decay_ranges^)?
    (`replicated` $replicated^)? attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINOPTIMIZEROPS_TD
