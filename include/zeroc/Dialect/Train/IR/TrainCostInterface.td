//===- TrainCostInterface.td - what an op costs to run ---*- tablegen -*-===//
//
// The performance model (lib/Analysis/PerfModel.cpp) simulates a compiled
// training step op by op. What one op costs (its floating-point operations,
// the bytes it moves through memory, which engine runs it) is taught here,
// once per op: each op's implementation is an external model in
// lib/Analysis/CostModels.cpp, so a new op adds its cost there and the
// simulator needs no change.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_TD
#define ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_TD

include "mlir/IR/OpBase.td"

def TrainCostOpInterface : OpInterface<"TrainCostOpInterface"> {
  let description = [{
    The work one execution of the op does on one rank, read off its types:
    the engine that runs it (a GEMM, a memory-bound kernel, a collective, a
    wait for a collective, or nothing: views and declarations), its
    floating-point operations and the bytes it reads and writes. The
    performance model turns these into time with a machine description
    (docs/performance-model.md).
  }];
  let cppNamespace = "::zeroc::train";
  let methods = [
    InterfaceMethod<
      "What one execution of the op costs on one rank.",
      "::zeroc::train::OpCost", "getCost", (ins)>,
  ];
}

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_TD
