//===- TrainCostInterface.h - what an op costs to run -----------*- C++ -*-===//
//
// TrainCostOpInterface (TrainCostInterface.td) and the figures it returns.
// The implementations are external models (lib/Analysis/CostModels.cpp,
// zeroc::registerCostModels); the performance model reads them.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_H
#define ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include <cstdint>

namespace zeroc::train {

/// The part of a machine that runs an op.
enum class CostEngine {
  /// Nothing runs: a view (train.read, train.reshape), a declaration, or an
  /// elementwise op computed inside its user's loop.
  None,
  /// A matrix product (or attention): bound by the GEMM peak of its element
  /// type, or by memory when its operands are thin.
  Gemm,
  /// A memory-bound kernel: elementwise loops, normalizations, copies,
  /// reductions, optimizer updates.
  Memory,
  /// A collective over the data-parallel group, on the communication stream.
  Collective,
  /// Waits on the compute stream until a collective (the op's first operand's
  /// producer) is done.
  Wait,
};

/// The collectives the model times.
enum class CostCollective { AllReduce, ReduceScatter, AllGather };

/// What one execution of an op does on one rank.
struct OpCost {
  CostEngine engine = CostEngine::None;
  /// Floating-point operations of matrix products (a multiply-add counts
  /// 2): what runs at the GEMM peak of `elementBits`.
  double flops = 0;
  /// Other arithmetic (elementwise, reductions, softmax): the vector units.
  double vectorFlops = 0;
  /// Bytes read and written through device memory.
  double bytes = 0;
  /// Bits of the element type the FLOPs run in (16: bf16, 32: f32).
  unsigned elementBits = 32;
  /// Whether the op is one kernel launch or runtime call (the machine's
  /// per-kernel overhead applies); false for fused or free ops.
  bool launches = false;
  /// A fused attention kernel (train.attention, train.attention_grad): its
  /// products run at the machine's attention efficiency, not its GEMM one.
  bool attention = false;

  // Collectives only.
  CostCollective collective = CostCollective::AllReduce;
  /// Synchronous (an upstream shard.* collective: the compute stream waits
  /// for it at once) or started here and waited for by a train.wait.
  bool asynchronous = true;
  /// n: elements of the whole buffer (the all-reduce's and reduce-scatter's
  /// input, the all-gather's output), padding included, as the runtimes pass
  /// it to MPI or NCCL.
  int64_t elements = 0;
  /// Bytes of one element of the buffer.
  int64_t elementBytes = 0;
  /// N: ranks of the group (0: the module's world size).
  int64_t ranks = 0;

  static OpCost none() { return OpCost(); }
  static OpCost memory(double bytes, double vectorFlops = 0) {
    OpCost cost;
    cost.engine = CostEngine::Memory;
    cost.bytes = bytes;
    cost.vectorFlops = vectorFlops;
    cost.launches = true;
    return cost;
  }
  static OpCost gemm(double flops, double bytes, unsigned elementBits) {
    OpCost cost;
    cost.engine = CostEngine::Gemm;
    cost.flops = flops;
    cost.bytes = bytes;
    cost.elementBits = elementBits;
    cost.launches = true;
    return cost;
  }
};

} // namespace zeroc::train

#include "zeroc/Dialect/Train/IR/TrainCostInterface.h.inc"

#endif // ZEROC_DIALECT_TRAIN_IR_TRAINCOSTINTERFACE_H
