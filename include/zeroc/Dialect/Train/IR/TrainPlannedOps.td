//===- TrainPlannedOps.td - the planned form of a step ------*- tablegen -*-===//
//
// What the planning passes write, between the scheduled per-rank step and
// the back ends (docs/backend.md):
//
//   * train-fuse-elementwise groups elementwise chains into `train.fused`
//     regions (still on tensors);
//   * train-bufferize turns each function into buffers: upstream
//     `memref.alloc` (with its `train.category`), views
//     (`memref.reinterpret_cast`), copies (`memref.copy`), and the ops
//     below: `train.storage` (a parameter's or state's memory),
//     `train.kernel` (what runs, reading `ins` and writing `outs`),
//     `train.collective_start` / `train.collective_wait`, `train.rank`,
//     `train.read_back`;
//   * train-deallocate places every `memref.dealloc`.
//
// A back end prints this form and decides nothing: what is fused, where a
// buffer lives and dies, what is a view and what runs in place are all in
// the IR, and the memory report reads the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINPLANNEDOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINPLANNEDOPS_TD

include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Fusion (tensors)
//===----------------------------------------------------------------------===//

def Train_FusedOp : Train_Op<"fused", [Pure, IsolatedFromAbove,
    SingleBlock, RecursiveMemoryEffects]> {
  let summary = "an elementwise chain computed in one loop";
  let description = [{
    The ops of the body (all `Elementwise`, see the dialect's traits) are
    computed for each element of the result in one loop (one kernel on a
    GPU): no intermediate tensor is materialized. The block's arguments are
    the operands; the body yields the result. Operands broadcast to the
    result's shape as the body's ops broadcast them. `train-fuse-elementwise`
    writes these; the reference evaluator runs the body as it is.

    ```mlir
    %y = train.fused %x, %b : (tensor<12x17x192xf32>, tensor<192xf32>) -> tensor<12x17x192xf32> {
    ^bb0(%a: tensor<12x17x192xf32>, %c: tensor<192xf32>):
      %s = train.add %a, %c : (tensor<12x17x192xf32>, tensor<192xf32>) -> tensor<12x17x192xf32>
      %g = train.gelu %s tanh : tensor<12x17x192xf32>
      train.yield %g : tensor<12x17x192xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Train_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs `:` functional-type($inputs, $result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def Train_YieldOp : Train_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["FusedOp", "KernelOp"]>]> {
  let summary = "the values a train.fused or train.kernel body computes";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def Train_HostMemory : AttrDef<Train_Dialect, "HostMemory"> {
  let mnemonic = "host";
  let summary = "the memory space of host memory";
  let description = [{
    A memref in this memory space lives in host memory: on a GPU, the step
    number, the learning rate and the values a step hands back (loss,
    gradient norm, logits). Every other buffer lives where the back end
    computes (device memory on a GPU).

    ```mlir
    %lr = memref.alloc() : memref<f32, #train.host>
    ```
  }];
}

def Train_MemoryCategory : I32EnumAttr<"MemoryCategory",
    "what a buffer holds, as the memory report splits it", [
    I32EnumAttrCase<"parameters", 0>,
    I32EnumAttrCase<"gradients", 1>,
    I32EnumAttrCase<"optimizer_states", 2>,
    I32EnumAttrCase<"gathered_parameters", 3>,
    I32EnumAttrCase<"gradient_buckets", 4>,
    I32EnumAttrCase<"activations", 5>
  ]> {
  let cppNamespace = "::zeroc::train";
  let genSpecializedAttr = 0;
}

def Train_MemoryCategoryAttr : EnumAttr<Train_Dialect, Train_MemoryCategory,
                                        "category"> {
  let summary = "the memory category of an allocation";
  let description = [{
    On a `memref.alloc` of a planned function, as the discardable attribute
    `train.category`: what the buffer holds, as the memory report and the
    runtimes' allocators count it.

    ```mlir
    %g = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<3168xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Train_CollectiveKind : I32EnumAttr<"CollectiveKind", "a collective", [
    I32EnumAttrCase<"all_reduce", 0>,
    I32EnumAttrCase<"reduce_scatter", 1>,
    I32EnumAttrCase<"all_gather", 2>
  ]> {
  let cppNamespace = "::zeroc::train";
}

def Train_RequestType : TypeDef<Train_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "a collective in flight on buffers";
  let description = [{
    What `train.collective_start` yields and `train.collective_wait`
    consumes: the buffer form of `!train.future`.
  }];
}

def Train_BufferOp : Train_Op<"buffer", [Symbol, HasParent<"mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one contiguous allocation that holds several states";
  let description = [{
    A flat buffer of the planned form: persistent storage of `type` in which
    the `train.param` / `train.state` declarations `members` are laid end to
    end, member i from element `offsets[i]` (its flat elements in order).
    Elements of no member are padding (zero). Members keep their own names,
    shapes and `train.storage`; the buffer's `train.storage` is the whole
    allocation, so a collective runs on it in place. `train-bufferize`
    declares one per gradient bucket of stage 0, whose gradients are then
    computed into it, all-reduced and averaged where they lie (no pack or
    unpack copy). The back ends print it as a `zrt_buffer` whose members
    point into it; checkpoints, `--init` and `--save` see the members as
    the logical tensors they are. Members must not be sharded and belong to
    one buffer at most.

    With `shards = N` the buffer is sharded contiguously, as Megatron's
    distributed optimizer shards its buffers: its numel is a multiple of N
    and rank r stores only its elements `[r * S, (r + 1) * S)`, S = numel /
    N, which may cut members anywhere (the runtime's `zrt_buffer` with
    `shard_numel = S`). `train.read` and `train.write` of the buffer see
    that flat shard (`tensor<S x ...>`), and a member of a sharded buffer is
    read and written only through it. Without `shards` every rank stores the
    whole buffer, and a member's reads and writes are views of it.

    ```mlir
    train.buffer @zero.bucket0.grads : tensor<3168xf32> gradients members [@w.grad, @b.grad] offsets [0, 3072]
    train.buffer @zero.bucket0.exp_avg : tensor<3168xf32> optimizer_states members [@w.exp_avg, @b.exp_avg] offsets [0, 3072] shards = 2
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Train_Flat>:$type,
                       Train_MemoryCategoryAttr:$category,
                       SymbolRefArrayAttr:$members,
                       DenseI64ArrayAttr:$offsets,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$shards);
  let assemblyFormat = [{
    $sym_name `:` $type $category `members` $members `offsets` $offsets
    (`shards` `=` $shards^)? attr-dict
  }];
  let extraClassDeclaration = [{
    mlir::RankedTensorType getTensorType() {
      return llvm::cast<mlir::RankedTensorType>(getType());
    }
    /// What train.read, train.write and train.storage see: the whole
    /// buffer, or with `shards = N` this rank's numel / N elements.
    mlir::RankedTensorType getStorageType() {
      mlir::RankedTensorType type = getTensorType();
      std::optional<uint64_t> n = getShards();
      if (!n || *n <= 1)
        return type;
      return mlir::RankedTensorType::get(
          {type.getNumElements() / static_cast<int64_t>(*n)},
          type.getElementType());
    }
  }];
  let hasVerifier = 1;
}

def Train_StorageOp : Train_Op<"storage", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the memory of a parameter, optimizer state or flat buffer";
  let description = [{
    The buffer in which this rank keeps the `train.param` or `train.state`
    named `name` (its storage type: the whole tensor, or its flat shard),
    or the whole of the `train.buffer` named `name`.
    Reads and in-place updates use it directly; `memref.copy` into it is a
    write.

    ```mlir
    %w = train.storage @transformer.wte.weight : memref<65x48xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Train_KernelOp : Train_Op<"kernel", [IsolatedFromAbove, SingleBlock,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "a computation on buffers";
  let description = [{
    Runs its body, a tensor computation (one op, or a fused elementwise
    chain), on the buffers `ins`, and stores what the body yields into
    `outs`, in order. The block's arguments stand for `ins`: a memref
    operand gives a tensor of its shape and element type; a host scalar
    memref (`#train.host`) is read on the host. An `outs` buffer may be
    one of `ins` (the update runs in place). What the body computes is
    the op's own semantics; where it reads and writes is the kernel's.

    ```mlir
    train.kernel ins(%x, %w : memref<204x48xf32>, memref<144x48xf32>) outs(%y : memref<204x144xf32>) {
    ^bb0(%a: tensor<204x48xf32>, %b: tensor<144x48xf32>):
      %c = train.matmul %a, %b transpose_rhs : (tensor<204x48xf32>, tensor<144x48xf32>) -> tensor<204x144xf32>
      train.yield %c : tensor<204x144xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyStaticShapeMemRef>:$ins,
                       Variadic<AnyStaticShapeMemRef>:$outs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` ($ins^ `:` type($ins))? `)` `outs` `(` $outs `:` type($outs) `)`
    attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// The op the body runs when it is one op (not a fused chain), else
    /// null.
    ::mlir::Operation *getSingleOp();
  }];
  let hasVerifier = 1;
}

def Train_CollectiveStartOp : Train_Op<"collective_start", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "starts a collective from one buffer into another";
  let description = [{
    Starts `kind` over every rank of the 1-D grid: all-reduce (sum) of
    `send` into `recv`, reduce-scatter (sum; rank r receives its r-th part),
    or all-gather (every rank's `send`, in rank order). `send` and `recv`
    may be the same buffer, or `send` the rank's slot of `recv` (an
    all-gather), which the runtimes run in place. Neither buffer may be
    touched until `train.collective_wait` on the request. `payload` is the
    number of elements of the full buffer that are not padding (what the
    memory report counts as traffic).

    ```mlir
    %r = train.collective_start all_reduce %b, %b on @dp payload = 3120 : memref<3168xf32>, memref<3168xf32>
    train.collective_wait %r
    ```
  }];
  let arguments = (ins Train_CollectiveKind:$kind,
                       AnyStaticShapeMemRef:$send, AnyStaticShapeMemRef:$recv,
                       FlatSymbolRefAttr:$grid, I64Attr:$payload);
  let results = (outs Train_RequestType:$request);
  let assemblyFormat = [{
    $kind $send `,` $recv `on` $grid `payload` `=` $payload attr-dict `:`
    type($send) `,` type($recv)
  }];
  let hasVerifier = 1;
}

def Train_CollectiveWaitOp : Train_Op<"collective_wait", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "waits for a collective started on buffers";
  let description = [{
    After it, the collective's `recv` buffer holds its result and both
    buffers may be used again (on a GPU: the compute stream waits for the
    communication stream; the host does not block).
  }];
  let arguments = (ins Train_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
  let hasVerifier = 1;
}

def Train_RankOp : Train_Op<"rank", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "this rank's index in the grid";
  let description = [{
    For the views of a rank's own slot of a buffer:

    ```mlir
    %r = train.rank on @dp
    %off = arith.muli %r, %c792 : index
    %mine = memref.reinterpret_cast %b to offset: [%off], sizes: [792], strides: [1] : memref<3168xf32> to memref<792xf32, strided<[1], offset: ?>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$grid);
  let results = (outs Index:$rank);
  let assemblyFormat = "`on` $grid attr-dict";
}

def Train_ReadBackOp : Train_Op<"read_back", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "copies a step's result to host memory as f32";
  let description = [{
    `host[i] = src[i]` converted to f32: the values an entry point hands
    back (the loss, the gradient norm, the logits). On a GPU this waits for
    them: the step's one host synchronization.

    ```mlir
    train.read_back %loss, %out : memref<f32>, memref<f32, #train.host>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source,
                       AnyStaticShapeMemRef:$host);
  let assemblyFormat = "$source `,` $host attr-dict `:` type($source) `,` type($host)";
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINPLANNEDOPS_TD
