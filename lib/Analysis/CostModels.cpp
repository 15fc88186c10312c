//===- CostModels.cpp - what each op costs (TrainCostOpInterface) ---------===//
//
// One function per op: the work one execution does on one rank, read off
// the op's (per-rank) types. The performance model (PerfModel.cpp) turns
// these into time; docs/performance-model.md lists the rules. A new op adds
// its `costOf` here and one line to registerCostModels.
//
// Conventions:
//   - bytes are what a kernel reads and writes through device memory: each
//     operand once at its own size (a broadcast bias counts its own
//     elements), each result once;
//   - `flops` are the products' multiply-adds (2 each) of a GEMM or of
//     attention's two (forward) or five (backward) products; `vectorFlops`
//     the elementwise arithmetic of everything else, at a few operations
//     per element (a transcendental counts as several);
//   - causal attention computes the visible (lower) triangle only, as the
//     CPU kernel and the fused (flash) kernels do (the CUDA runtime's
//     default cuBLASLt path computes the whole products); its products run
//     at the machine's attention efficiency (OpCost::attention); with
//     grouped-query attention its FLOPs are the query heads' (every query
//     head computes its own scores) and its bytes the operands' own, so key
//     and value count at their (fewer) heads;
//   - elementwise chains are costed as the C++ and CUDA backends emit them:
//     an elementwise op whose only user is an elementwise op of the same
//     shape is computed inside its user's loop (no bytes of its own), and
//     the loop at the end of the chain reads the chain's inputs once.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Analysis/CostModels.h"

#include "zeroc/Dialect/Train/IR/TrainCostInterface.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc {

namespace {

/// The tensor `value` holds; a collective in flight (!train.future) costs as
/// the tensor it will hold. Null for any other type (it costs nothing).
RankedTensorType costedTensorType(Value value) {
  if (auto future = dyn_cast<FutureType>(value.getType()))
    return future.getValueType();
  return dyn_cast<RankedTensorType>(value.getType());
}

double numel(Value value) {
  RankedTensorType type = costedTensorType(value);
  return type ? static_cast<double>(type.getNumElements()) : 0.0;
}

unsigned elementBits(Value value) {
  RankedTensorType type = costedTensorType(value);
  if (!type)
    return 32;
  return type.getElementType().getIntOrFloatBitWidth();
}

double bytesOf(Value value) {
  return numel(value) * static_cast<double>(elementBits(value)) / 8.0;
}

double bytesOf(ValueRange values) {
  double total = 0;
  for (Value value : values)
    total += bytesOf(value);
  return total;
}

/// A kernel that reads every operand and writes every result once, with
/// `vectorFlopsPerElement` of the largest of them.
OpCost streaming(Operation *op, double vectorFlopsPerElement) {
  OpCost cost =
      OpCost::memory(bytesOf(op->getOperands()) + bytesOf(op->getResults()));
  double elements = 0;
  for (Value value : op->getOperands())
    elements = std::max(elements, numel(value));
  for (Value value : op->getResults())
    elements = std::max(elements, numel(value));
  cost.vectorFlops = vectorFlopsPerElement * elements;
  return cost;
}

//===----------------------------------------------------------------------===//
// Elementwise chains
//===----------------------------------------------------------------------===//

/// The ops a fused loop computes: the dialect's Elementwise trait, not a
/// list of ops here.
bool isElementwise(Operation *op) { return train::isElementwise(op); }

/// Arithmetic per element of one elementwise op.
double elementwiseFlops(Operation *op) {
  if (isa<GeluOp>(op))
    return 20;
  if (isa<GeluGradOp>(op))
    return 30;
  if (isa<SiluOp>(op)) // an exponential, an add and a division, a product
    return 10;
  if (isa<SiluGradOp>(op)) // the sigmoid again, then four products and sums
    return 15;
  if (isa<SqrtOp, DivOp, RsqrtOp>(op))
    return 4;
  if (isa<ExpOp, LogOp, TanhOp, ErfOp, PowOp>(op)) // a transcendental
    return 10;
  if (isa<FillOp, BroadcastOp, CastOp>(op))
    return 0;
  return 1;
}

/// Computed inside its user's loop (the backends' fusion rule): a fill used
/// only by elementwise ops, or an elementwise op whose one user is an
/// elementwise op of the same shape in the same block.
bool isInlined(Operation *op) {
  if (!isElementwise(op))
    return false;
  if (isa<FillOp>(op))
    return !op->getResult(0).use_empty() &&
           llvm::all_of(op->getUsers(),
                        [](Operation *user) { return isElementwise(user); });
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return false;
  Operation *user = *result.getUsers().begin();
  return user->getBlock() == op->getBlock() && isElementwise(user) &&
         typeOf(user->getResult(0)).getShape() == typeOf(result).getShape();
}

/// The loop of an elementwise root: it writes its result and reads the
/// chain's inputs (the operands not computed inside the loop), each once.
OpCost elementwise(Operation *op) {
  if (isInlined(op))
    return OpCost::none();
  double elements = numel(op->getResult(0));
  OpCost cost = OpCost::memory(bytesOf(op->getResult(0)));
  llvm::SmallPtrSet<Value, 8> read;
  llvm::SmallVector<Operation *> chain = {op};
  while (!chain.empty()) {
    Operation *member = chain.pop_back_val();
    cost.vectorFlops += elementwiseFlops(member) * elements;
    for (Value operand : member->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && isInlined(producer)) {
        chain.push_back(producer);
        continue;
      }
      if (read.insert(operand).second)
        cost.bytes += bytesOf(operand);
    }
  }
  return cost;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The ranks of the 1-D grid `grid` names (0 when it cannot be found: the
/// model's world size then).
int64_t gridRanks(Operation *op, FlatSymbolRefAttr grid) {
  if (!grid)
    return 0;
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp || gridOp.getShape().size() != 1 || gridOp.getShape()[0] < 1)
    return 0;
  return gridOp.getShape()[0];
}

OpCost collective(Operation *op, CostCollective kind, Value buffer,
                  FlatSymbolRefAttr grid, bool asynchronous) {
  OpCost cost;
  cost.engine = CostEngine::Collective;
  cost.collective = kind;
  cost.asynchronous = asynchronous;
  cost.elements = static_cast<int64_t>(numel(buffer));
  cost.elementBytes = elementBits(buffer) / 8;
  cost.ranks = gridRanks(op, grid);
  return cost;
}

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

// Declarations and views: nothing runs.
OpCost costOf(ParamOp) { return OpCost::none(); }
OpCost costOf(StateOp) { return OpCost::none(); }
OpCost costOf(OptimizerOp) { return OpCost::none(); }
OpCost costOf(ReadOp) { return OpCost::none(); }
OpCost costOf(ReshapeOp) { return OpCost::none(); }
OpCost costOf(ReleaseOp) { return OpCost::none(); }
/// On the host: depends on the step alone.
OpCost costOf(LRScheduleOp) { return OpCost::none(); }

/// A copy into the state, except where an optimizer update computed the
/// value in place on the state it read (the backends elide that write).
OpCost costOf(WriteOp write) {
  Operation *producer = write.getValue().getDefiningOp();
  if (producer && isa<AdamWUpdateOp, SGDUpdateOp>(producer)) {
    unsigned result = cast<OpResult>(write.getValue()).getResultNumber();
    unsigned operand = result == 0 ? 0 : result + 1; // the grad is #1
    if (operand < producer->getNumOperands()) {
      auto read = producer->getOperand(operand).getDefiningOp<ReadOp>();
      if (read && read.getName() == write.getName() &&
          producer->getOperand(operand).hasOneUse())
        return OpCost::none();
    }
  }
  return OpCost::memory(2 * bytesOf(write.getValue()));
}

/// A product's FLOPs, every operand read and the result written once (a
/// train.matmul_bias's bias is preset into the output: no FLOPs of its own).
template <typename MatmulLike> OpCost gemmCost(MatmulLike mm) {
  RankedTensorType lhs = typeOf(mm.getLhs()), rhs = typeOf(mm.getRhs());
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  double m = a[a.size() - (mm.getTransposeLhs() ? 1 : 2)];
  double k = a[a.size() - (mm.getTransposeLhs() ? 2 : 1)];
  double n = b[b.size() - (mm.getTransposeRhs() ? 2 : 1)];
  double batch = numel(mm.getLhs()) / (m * k);
  return OpCost::gemm(2 * batch * m * n * k,
                      bytesOf(mm->getOperands()) + bytesOf(mm.getResult()),
                      elementBits(mm.getLhs()));
}

OpCost costOf(MatmulOp mm) { return gemmCost(mm); }
OpCost costOf(MatmulBiasOp mm) { return gemmCost(mm); }

/// The fraction of scores a causal kernel computes: the lower triangle.
double visibleFraction(int64_t t, int64_t s, bool causal) {
  if (!causal || t <= 0 || s <= 0)
    return 1.0;
  double visible = 0;
  // Row i sees min(i + 1, s) keys.
  int64_t full = std::min(t, s);
  visible += static_cast<double>(full) * (full + 1) / 2;
  visible += static_cast<double>(t - full) * s;
  return visible / (static_cast<double>(t) * s);
}

/// FLOPs from the query's shape [B, H, T, D] (H query heads), bytes from
/// each operand's own type (key and value [B, Hkv, S, D]).
OpCost costOf(AttentionOp a) {
  ArrayRef<int64_t> q = typeOf(a.getQuery()).getShape();
  int64_t s = typeOf(a.getKey()).getShape()[2];
  double bh = static_cast<double>(q[0]) * q[1], t = q[2], d = q[3];
  double scores = bh * t * s * visibleFraction(q[2], s, a.getCausal());
  OpCost cost = OpCost::gemm(4 * scores * d,
                             bytesOf(a->getOperands()) + bytesOf(a.getResult()),
                             elementBits(a.getQuery()));
  cost.vectorFlops = 10 * scores; // scale, max, exp, sum, normalize
  // A dropout of the probabilities (with a step): a Philox word each, as
  // train.dropout counts it.
  if (a.getDropoutAttr() && a.getStep())
    cost.vectorFlops += 40 * scores;
  cost.attention = true;
  return cost;
}

OpCost costOf(AttentionGradOp a) {
  ArrayRef<int64_t> q = typeOf(a.getQuery()).getShape();
  int64_t s = typeOf(a.getKey()).getShape()[2];
  double bh = static_cast<double>(q[0]) * q[1], t = q[2], d = q[3];
  double scores = bh * t * s * visibleFraction(q[2], s, a.getCausal());
  // P recomputed (Q K^T), dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q.
  OpCost cost = OpCost::gemm(
      10 * scores * d, bytesOf(a->getOperands()) + bytesOf(a->getResults()),
      elementBits(a.getQuery()));
  cost.vectorFlops = 15 * scores;
  if (a.getDropoutAttr() && a.getStep())
    cost.vectorFlops += 40 * scores; // the dropout mask, recomputed
  cost.attention = true;
  return cost;
}

OpCost costOf(EmbeddingOp e) {
  // The ids, the rows gathered and the result.
  return OpCost::memory(bytesOf(e.getIds()) + 2 * bytesOf(e.getResult()));
}

OpCost costOf(EmbeddingGradOp e) {
  // Zero the table, read the cotangents and ids, add each row in.
  OpCost cost = OpCost::memory(bytesOf(e.getResult()) + bytesOf(e.getIds()) +
                               3 * bytesOf(e.getGrad()));
  cost.vectorFlops = numel(e.getGrad());
  return cost;
}

OpCost costOf(LayerNormOp ln) {
  // Mean and variance, then the normalized rows.
  OpCost cost = streaming(ln, 8);
  cost.bytes += bytesOf(ln.getInput());
  return cost;
}

OpCost costOf(LayerNormGradOp g) {
  // The statistics are recomputed from the input.
  OpCost cost = streaming(g, 12);
  cost.bytes += bytesOf(g.getInput());
  return cost;
}

//===----------------------------------------------------------------------===//
// Llama-class ops (TrainLlamaOps.td), as the runtimes' kernels run them
// (lib/Runtime/Cuda/KernelsLlama.cu; silu and silu_grad join the fused
// elementwise loops above)
//===----------------------------------------------------------------------===//

OpCost costOf(RmsNormOp n) {
  // One pass for the sum of squares, one for x * rrms * weight (as
  // layernorm: the input is read twice).
  OpCost cost = streaming(n, 4);
  cost.bytes += bytesOf(n.getInput());
  return cost;
}

OpCost costOf(RmsNormGradOp g) {
  // Three passes over the rows: 1/rms from x; the weight's cotangent from
  // dy and x (column sums); dx from dy, x and the weight. Beyond reading
  // each operand and writing each result once, x is read twice more and dy
  // once more.
  OpCost cost = streaming(g, 12);
  cost.bytes += 2 * bytesOf(g.getInput()) + bytesOf(g.getGrad());
  return cost;
}

/// Reads x, writes the rotated pairs; each pair computes its angle (an
/// exponential, a sine and a cosine in double) and four products.
OpCost costOf(RopeOp r) { return streaming(r, 12); }

/// Reads the elements it keeps (not the whole input) and writes them.
OpCost costOf(SliceOp s) {
  OpCost cost = OpCost::memory(2 * bytesOf(s.getResult()));
  return cost;
}

/// Zeroes the whole result, then writes each cotangent element into it.
OpCost costOf(SliceGradOp s) {
  return OpCost::memory(bytesOf(s.getResult()) + 2 * bytesOf(s.getGrad()));
}

/// Without a step (evaluation, sampling) a view of its input. With one,
/// reads x and writes y; each element draws its own Philox-4x32-10 word (ten
/// rounds of products and xors, about 40 integer operations).
OpCost costOf(DropoutOp d) {
  if (!d.getStep())
    return OpCost::none();
  return OpCost::memory(bytesOf(d.getInput()) + bytesOf(d.getResult()),
                        40 * numel(d.getInput()));
}

OpCost costOf(SoftmaxOp s) { return streaming(s, 10); }
OpCost costOf(SoftmaxGradOp s) { return streaming(s, 4); }
OpCost costOf(CausalMaskOp c) { return streaming(c, 1); }
OpCost costOf(TransposeOp t) { return streaming(t, 0); }
OpCost costOf(SplitOp s) { return streaming(s, 0); }
OpCost costOf(ConcatOp c) { return streaming(c, 0); }
OpCost costOf(SumOp s) { return streaming(s, 1); }
OpCost costOf(MeanOp m) { return streaming(m, 1); }
// Label smoothing adds a sum over the row (forward) or a subtraction
// (gradient) per element; ignored positions are not known statically.
OpCost costOf(CrossEntropyOp ce) {
  return streaming(ce, ce.getLabelSmoothingAttr() ? 11 : 10);
}
OpCost costOf(CrossEntropyGradOp ce) {
  return streaming(ce, ce.getLabelSmoothingAttr() ? 11 : 10);
}
OpCost costOf(CountTargetsOp c) { return streaming(c, 1); }
OpCost costOf(SquaredNormOp s) { return streaming(s, 2); }
// The generic reductions and gathers (TrainGenericOps.td).
OpCost costOf(AmaxOp r) { return streaming(r, 1); }
OpCost costOf(AmaxGradOp r) { return streaming(r, 3); }
OpCost costOf(VarOp r) { return streaming(r, 4); }
OpCost costOf(LogSoftmaxOp s) { return streaming(s, 10); }
OpCost costOf(GatherOp g) { return streaming(g, 0); }
OpCost costOf(GatherGradOp g) { return streaming(g, 1); }
OpCost costOf(ClipCoefOp c) { return streaming(c, 4); }

OpCost costOf(AddOp op) { return elementwise(op); }
OpCost costOf(SubOp op) { return elementwise(op); }
OpCost costOf(MulOp op) { return elementwise(op); }
OpCost costOf(DivOp op) { return elementwise(op); }
OpCost costOf(ScaleOp op) { return elementwise(op); }
OpCost costOf(GeluOp op) { return elementwise(op); }
OpCost costOf(GeluGradOp op) { return elementwise(op); }
OpCost costOf(ReluOp op) { return elementwise(op); }
OpCost costOf(ReluGradOp op) { return elementwise(op); }
OpCost costOf(SqrtOp op) { return elementwise(op); }
OpCost costOf(CastOp op) { return elementwise(op); }
OpCost costOf(BroadcastOp op) { return elementwise(op); }
OpCost costOf(FillOp op) { return elementwise(op); }
OpCost costOf(SiluOp op) { return elementwise(op); }
OpCost costOf(SiluGradOp op) { return elementwise(op); }

// TrainMathOps.td.
OpCost costOf(ExpOp op) { return elementwise(op); }
OpCost costOf(LogOp op) { return elementwise(op); }
OpCost costOf(TanhOp op) { return elementwise(op); }
OpCost costOf(NegOp op) { return elementwise(op); }
OpCost costOf(RsqrtOp op) { return elementwise(op); }
OpCost costOf(ErfOp op) { return elementwise(op); }
OpCost costOf(PowOp op) { return elementwise(op); }
OpCost costOf(CompareOp op) { return elementwise(op); }
OpCost costOf(SelectOp op) { return elementwise(op); }
/// A kernel of its own (position-dependent, not fused): reads and writes
/// every element once, an index comparison each.
OpCost costOf(TrilOp op) { return streaming(op, 1); }
OpCost costOf(TriuOp op) { return streaming(op, 1); }
/// Its array in the executable copied into its buffer where it runs.
OpCost costOf(ConstantOp op) { return OpCost::memory(2 * bytesOf(op.getResult())); }

/// Reads param, grad, exp_avg, exp_avg_sq; writes the three states.
OpCost costOf(AdamWUpdateOp u) {
  OpCost cost = streaming(u, 15);
  return cost;
}
OpCost costOf(SGDUpdateOp u) { return streaming(u, 4); }

/// Copies the inputs into the flat buffer, end to end.
OpCost costOf(PackOp p) {
  return OpCost::memory(bytesOf(p.getInputs()) + bytesOf(p.getResult()));
}

/// The results are views of the buffer (the tensors end to end).
OpCost costOf(UnpackOp) { return OpCost::none(); }

OpCost costOf(AllReduceStartOp s) {
  return collective(s, CostCollective::AllReduce, s.getInput(), s.getGridAttr(),
                    true);
}
OpCost costOf(ReduceScatterStartOp s) {
  OpCost cost = collective(s, CostCollective::ReduceScatter, s.getInput(),
                           s.getGridAttr(), true);
  if (!cost.ranks && numel(s.getResult()) > 0)
    cost.ranks =
        static_cast<int64_t>(numel(s.getInput()) / numel(s.getResult()));
  return cost;
}
OpCost costOf(AllGatherStartOp s) {
  OpCost cost = collective(s, CostCollective::AllGather, s.getResult(),
                           s.getGridAttr(), true);
  if (!cost.ranks && numel(s.getInput()) > 0)
    cost.ranks =
        static_cast<int64_t>(numel(s.getResult()) / numel(s.getInput()));
  return cost;
}

OpCost costOf(WaitOp) {
  OpCost cost;
  cost.engine = CostEngine::Wait;
  return cost;
}

// Upstream shard collectives (before train-schedule): synchronous.
OpCost costOf(shard::AllReduceOp c) {
  return collective(c, CostCollective::AllReduce, c.getInput(), c.getGridAttr(),
                    false);
}
OpCost costOf(shard::ReduceScatterOp c) {
  return collective(c, CostCollective::ReduceScatter, c.getInput(),
                    c.getGridAttr(), false);
}
OpCost costOf(shard::AllGatherOp c) {
  return collective(c, CostCollective::AllGather, c.getResult(),
                    c.getGridAttr(), false);
}
/// This rank's slice of a replicated tensor: a view.
OpCost costOf(shard::AllSliceOp) { return OpCost::none(); }

/// The external model of `Op`: its `costOf`.
template <typename Op>
struct CostModel
    : public TrainCostOpInterface::ExternalModel<CostModel<Op>, Op> {
  OpCost getCost(Operation *op) const { return costOf(cast<Op>(op)); }
};

template <typename... Ops> void attach(MLIRContext *context) {
  (Ops::template attachInterface<CostModel<Ops>>(*context), ...);
}

} // namespace

void registerCostModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, TrainDialect *) {
    attach<ParamOp, StateOp, OptimizerOp, ReadOp, WriteOp, ReshapeOp, ReleaseOp,
           LRScheduleOp, MatmulOp, MatmulBiasOp, AttentionOp, AttentionGradOp, EmbeddingOp,
           EmbeddingGradOp, LayerNormOp, LayerNormGradOp, SoftmaxOp,
           SoftmaxGradOp, CausalMaskOp, TransposeOp, SplitOp, ConcatOp, SumOp,
           MeanOp, CrossEntropyOp, CrossEntropyGradOp, CountTargetsOp,
           SquaredNormOp,
           ClipCoefOp, AddOp, SubOp, MulOp, DivOp, ScaleOp, GeluOp, GeluGradOp,
           ReluOp, ReluGradOp, SqrtOp, CastOp, BroadcastOp, FillOp,
           AdamWUpdateOp, SGDUpdateOp, PackOp, UnpackOp, AllReduceStartOp,
           ReduceScatterStartOp, AllGatherStartOp, WaitOp, RmsNormOp,
           RmsNormGradOp, SiluOp, SiluGradOp, RopeOp, SliceOp, SliceGradOp,
           DropoutOp>(context);
    attach<ExpOp, LogOp, TanhOp, NegOp, RsqrtOp, ErfOp, PowOp, CompareOp, SelectOp,
           TrilOp, TriuOp, ConstantOp>(context);
    attach<AmaxOp, AmaxGradOp, VarOp, LogSoftmaxOp, GatherOp, GatherGradOp>(
        context);
  });
  registry.addExtension(+[](MLIRContext *context, shard::ShardDialect *) {
    attach<shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp,
           shard::AllSliceOp>(context);
  });
}

void ensureCostModels(MLIRContext &context) {
  std::optional<RegisteredOperationName> matmul =
      RegisteredOperationName::lookup(MatmulOp::getOperationName(), &context);
  if (matmul && matmul->hasInterface<TrainCostOpInterface>())
    return;
  DialectRegistry registry;
  registerCostModels(registry);
  context.appendDialectRegistry(registry);
}

} // namespace zeroc
