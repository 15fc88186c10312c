//===- TrainDialect.td - the train dialect, its enums and type constraints ===//
//
// The `train` dialect describes one data-parallel training step of a model:
// module-level parameter declarations, the optimizer configuration, and a
// forward function from a global batch to a scalar loss.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::zeroc::train";
  let summary = "A GPT-class training step: parameters, forward, loss, optimizer";
  let description = [{
    The `train` dialect is zeroc's input language. A module holds:

    * `train.param` declarations: the trainable parameters, as module-level
      symbols with a shape, an element type, an initializer and a weight
      decay flag;
    * one `train.optimizer` op: SGD or AdamW with its hyper-parameters,
      optional global gradient-norm clipping and a learning-rate schedule;
    * a `func.func` carrying the unit attribute `train.forward`, mapping the
      global batch (token ids and targets) to a scalar loss. The batch
      dimension of its arguments is the global batch: the data-parallel
      passes split it across ranks.

    Tensors are ranked, with f32 or bf16 elements; token ids are i32 or i64.
    Every operand and result of a train op has a static shape whose
    dimensions are all at least 1, with at most 2^48 elements (the
    `ShapeChecked` trait): no pass, backend or evaluator meets an empty,
    dynamic or overflowing tensor.

    Binary elementwise ops (`train.add`, `train.sub`, `train.mul`,
    `train.div`) broadcast as NumPy does: shapes are aligned at their last
    dimension, a missing leading dimension counts as 1, and two aligned
    dimensions must be equal or one of them must be 1. The result has the
    larger of each pair.
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  // The attributes passes put on functions and on the module. Each is
  // declared here (helpers: TrainDialect::get<Name>AttrHelper()) and
  // checked by verifyOperationAttribute: where it may appear and its type.
  let discardableAttrs = (ins
    // func.func: the model's forward function (batch -> loss).
    "::mlir::UnitAttr":$forward,
    // func.func: one training step (train-optimizer's @train_step).
    "::mlir::UnitAttr":$step,
    // func.func: the sampler's @logits (train-logits).
    "::mlir::UnitAttr":$logits,
    // func.func: the parameter (a @symbol) of each gradient result, in order.
    "::mlir::ArrayAttr":$gradients,
    // module: the world size train-data-parallel split the batch for.
    "::mlir::IntegerAttr":$batch_split,
    // module: the world size and ZeRO stage of a partitioned program.
    "::mlir::IntegerAttr":$world_size,
    "::mlir::IntegerAttr":$zero_stage,
    // module: the model's name, for the executable's banner.
    "::mlir::StringAttr":$model,
    // func.func: the function is in buffer form (train-bufferize).
    "::mlir::UnitAttr":$planned,
    // memref.alloc of a planned function: its #train.category<...>.
    "::mlir::Attribute":$category,
    // An op of the train step, a train.kernel's op, a train.fused or a
    // train.collective_*: what --trace records of it (train-trace-sites).
    "::mlir::DictionaryAttr":$trace,
    // An op of @loss_and_grads or the step: a forward op that train-remat
    // cloned to recompute it in backward (not model work for MFU).
    "::mlir::UnitAttr":$recomputed,
    // module: the rematerialization policy train-remat applied (none, full
    // or selective; it refuses to run twice).
    "::mlir::StringAttr":$remat,
    // module: the micro-batches per step a model asks for (the builders'
    // --micro-batches); train-accumulate's and zeroc's default.
    "::mlir::IntegerAttr":$micro_batches,
    // module: the micro-batches per step train-accumulate built (it
    // refuses to run twice).
    "::mlir::IntegerAttr":$grad_accum,
    // An op of @loss_and_grads or the step: the micro-batch (from 0) whose
    // forward or backward it computes (train-accumulate).
    "::mlir::IntegerAttr":$micro_batch,
    // An op of @loss_and_grads or the step: it adds one micro-batch's
    // gradient (or loss) into the step's accumulator (train-accumulate).
    "::mlir::UnitAttr":$accumulate,
    // A 0-d train.sum over the batch of a value of the batch alone, the
    // divisor of a mean written as sum / sum (a masked mean): which such
    // divisor of the forward function it is (from 0). train-data-parallel
    // and train-accumulate mark it when they split the batch;
    // train-reduce-gradients replaces it by the global batch's value over
    // the number of parts (globalizeTargetCounts, ForwardRewrite.h).
    "::mlir::IntegerAttr":$batch_count
  );
  let extraClassDeclaration = [{
    /// The dialect loaded in `context` (every zeroc tool loads it).
    static TrainDialect &get(::mlir::MLIRContext *context);
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

// Operands and results of every train op: static shapes, every dimension at
// least 1, at most 2^48 elements (zeroc::train::ShapeChecked, TrainOps.h).
def Train_ShapeChecked : NativeOpTrait<"ShapeChecked"> {
  let cppNamespace = "::zeroc::train";
}

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, !listconcat(traits, [Train_ShapeChecked])>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Train_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"normal", 2>
  ]> {
  let cppNamespace = "::zeroc::train";
}

def Train_OptimizerKind : I32EnumAttr<"OptimizerKind", "optimizer", [
    I32EnumAttrCase<"sgd", 0>,
    I32EnumAttrCase<"adamw", 1>
  ]> {
  let cppNamespace = "::zeroc::train";
}

def Train_LRSchedule : I32EnumAttr<"LRSchedule", "learning-rate schedule", [
    I32EnumAttrCase<"constant", 0>,
    I32EnumAttrCase<"cosine", 1>
  ]> {
  let cppNamespace = "::zeroc::train";
}

def Train_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula", [
    I32EnumAttrCase<"tanh", 0>,
    I32EnumAttrCase<"erf", 1>
  ]> {
  let cppNamespace = "::zeroc::train";
}

def Train_StateKind : I32EnumAttr<"StateKind", "optimizer state", [
    I32EnumAttrCase<"master", 0>,
    I32EnumAttrCase<"exp_avg", 1>,
    I32EnumAttrCase<"exp_avg_sq", 2>,
    I32EnumAttrCase<"momentum_buffer", 3>,
    I32EnumAttrCase<"grad", 4>
  ]> {
  let cppNamespace = "::zeroc::train";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Train_FloatElement : AnyTypeOf<[F32, BF16]>;
def Train_FloatTensor : RankedTensorOf<[F32, BF16]>;
def Train_IndexTensor : RankedTensorOf<[I32, I64]>;
def Train_FloatOrIndexTensor : RankedTensorOf<[F32, BF16, I32, I64]>;
def Train_ScalarF32Tensor : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
def Train_StepTensor : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINDIALECT_TD
