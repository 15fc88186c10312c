//===- TrainTypes.td - types of the train dialect ----------*- tablegen -*-===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINTYPES_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINTYPES_TD

include "zeroc/Dialect/Train/IR/TrainDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Train_FutureType : TypeDef<Train_Dialect, "Future"> {
  let mnemonic = "future";
  let summary = "the value of a collective in flight";
  let description = [{
    What a `train.*_start` op yields: the collective's result, which is
    only available through `train.wait`. Asynchrony is a type, not a
    convention (as IREE's `!stream.timepoint`): nothing but a wait can read
    a future, so no pass or backend can use a collective's result before it
    is complete.

    ```mlir
    %f = train.all_reduce_start %b on @dp : tensor<3168xf32> -> !train.future<tensor<3168xf32>>
    %r = train.wait %f : !train.future<tensor<3168xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$valueType),
      [{ return $_get(valueType.getContext(), valueType); }]>
  ];
  let assemblyFormat = "`<` $valueType `>`";
  let genVerifyDecl = 1;
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINTYPES_TD
