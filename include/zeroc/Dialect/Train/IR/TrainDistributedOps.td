//===- TrainDistributedOps.td - data-parallel ops of the train dialect -*- tablegen -*-===//
//
// What the ZeRO passes write: flat packing of gradient buckets and
// parameter groups (the tensors end to end), and zeroc's own
// side-effecting, asynchronous collectives. Upstream `shard` collectives are Pure and synchronous: CSE
// would merge stage 3's backward re-gather into the forward one, and they
// cannot express "start here, wait there". These ops can.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINDISTRIBUTEDOPS_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINDISTRIBUTEDOPS_TD

def Train_Flat : 1DTensorOf<[F32, BF16]>;

def Train_PackOp : Train_Op<"pack", [Pure, InferTypeOpAdaptor]> {
  let summary = "packs tensors end to end into one flat buffer";
  let description = [{
    Flattens every input (row-major) and lays them end to end: a plain
    concatenation, as a bucket's gradients are packed before its collective
    (a zero-filled input pads the bucket to N equal shards; a bucket buffer
    is cut into contiguous shards).

    ```mlir
    %b = train.pack %g0, %g1 : tensor<65x48xf32>, tensor<48xf32> -> tensor<3168xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_FloatTensor>:$inputs);
  let results = (outs Train_Flat:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_UnpackOp : Train_Op<"unpack", [Pure,
    DeclareOpInterfaceMethods<Train_BufferViewOpInterface>]> {
  let summary = "the inverse of train.pack";
  let description = [{
    Reads tensors of the result types out of a buffer laid out as
    `train.pack` lays it out (end to end, the buffer exactly as long as the
    results together).

    ```mlir
    %g0, %g1 = train.unpack %b : tensor<3168xf32> -> tensor<65x48xf32>, tensor<48xf32>
    %s0, %s1 = train.unpack %seg : tensor<792xf32> -> tensor<780xf32>, tensor<12xf32>
    ```
  }];
  let arguments = (ins Train_Flat:$input);
  let results = (outs Variadic<Train_FloatTensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Train_FlatFuture : Type<
    And<[CPred<"::llvm::isa<::zeroc::train::FutureType>($_self)">,
         CPred<"::llvm::cast<::zeroc::train::FutureType>($_self)"
               ".getValueType().getRank() == 1">]>,
    "future of a 1-D tensor", "::zeroc::train::FutureType">;

class Train_CollectiveStartOp<string mnemonic, string what>
    : Train_Op<mnemonic, [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                          MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "starts an asynchronous " # what # " over a 1-D grid";
  let arguments = (ins Train_Flat:$input, FlatSymbolRefAttr:$grid);
  let results = (outs Train_FlatFuture:$result);
  let assemblyFormat = [{
    $input `on` $grid attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Train_AllReduceStartOp
    : Train_CollectiveStartOp<"all_reduce_start", "all-reduce (sum)"> {
  let description = [{
    Starts summing `input` over every rank of the 1-D `shard.grid`. The
    result is a `!train.future`, read only through `train.wait`, which is
    where a backend blocks until the collective is done; between the two,
    computation overlaps with communication.

    ```mlir
    %f = train.all_reduce_start %b on @dp : tensor<3168xf32> -> !train.future<tensor<3168xf32>>
    %r = train.wait %f : !train.future<tensor<3168xf32>>
    ```
  }];
}

def Train_ReduceScatterStartOp
    : Train_CollectiveStartOp<"reduce_scatter_start", "reduce-scatter (sum)"> {
  let description = [{
    Starts summing `input` over every rank of the 1-D grid of N ranks;
    rank r receives elements `[r*M/N, (r+1)*M/N)` of the sum.

    ```mlir
    %f = train.reduce_scatter_start %b on @dp : tensor<3168xf32> -> !train.future<tensor<792xf32>>
    ```
  }];
}

def Train_AllGatherStartOp
    : Train_CollectiveStartOp<"all_gather_start", "all-gather"> {
  let description = [{
    Starts concatenating every rank's `input`, in rank order, on every rank
    of the 1-D grid of N ranks.

    ```mlir
    %f = train.all_gather_start %seg on @dp : tensor<792xf32> -> !train.future<tensor<3168xf32>>
    ```
  }];
}

def Train_WaitOp : Train_Op<"wait", [MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Train_BufferViewOpInterface>,
    TypesMatchWith<"the result is the future's value", "future", "result",
                   "::llvm::cast<::zeroc::train::FutureType>($_self)"
                   ".getValueType()">]> {
  let summary = "waits for an asynchronous collective and yields its result";
  let description = [{
    Completes the collective that produced `future` and yields its value.
    A backend orders everything after the wait after the collective (on a
    GPU, the compute stream waits for the communication stream; the host
    does not block).
  }];
  let arguments = (ins Train_FlatFuture:$future);
  let results = (outs Train_Flat:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
  let hasVerifier = 1;
}

def Train_ReleaseOp : Train_Op<"release", [MemoryEffects<[MemWrite]>]> {
  let summary = "ends the life of a gathered buffer";
  let description = [{
    Marks the point after which `buffer` (a gathered parameter group in
    ZeRO stage 3) is dead, so a backend frees it there; the memory plan
    counts it live until then. It has effects, so no pass moves or erases
    it.

    ```mlir
    train.release %params : tensor<3168xbf16>
    ```
  }];
  let arguments = (ins Train_Flat:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINDISTRIBUTEDOPS_TD
