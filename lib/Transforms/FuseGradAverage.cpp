//===- FuseGradAverage.cpp - the gradient average into norm and update ---===//
//
// train-zero averages each reduced gradient bucket over the ranks: a
// `train.scale ... by 1/N` over the whole bucket, written to the bucket's
// gradient buffer (or, at stage 1, used as it is), whose only readers are
// the clipping norm's `train.squared_norm` and the `train.adamw_update`s.
// Both can take the constant instead: the squared norm of `c * g` is
// `c^2` times that of `g`, and the update already multiplies each gradient
// by its `grad_scale` (the clipping coefficient) first. So the scale
// disappears, the buffer holds the unscaled sum, each squared norm of it is
// scaled by `c^2` (a 0-d op) and each update's `grad_scale` becomes
// `grad_scale * c` (or `c`). One pass over every gradient fewer per step.
//
// What must change together is found as classes of values and states: a
// scaled value, the states it is written to, their reads, and the
// accumulating adds of such values (stage 2's per-micro-batch reduction)
// are one class; a class is rewritten only if every use of every member is
// a squared norm, an update's gradient, a write or an add within the class,
// every member is produced by a scale by the same constant, an add within
// the class or a read, and each state is private to the step (no other
// function, buffer member or read before the step's first write sees it).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/IntEqClasses.h"

#include <cmath>
#include <map>

namespace zeroc {
#define GEN_PASS_DEF_TRAINFUSEGRADAVERAGE
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

bool isF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Whether `c` is a power of two: scaling by it is exact in every float
/// type (short of overflow and subnormals).
bool isPowerOfTwo(double c) {
  int exponent = 0;
  return std::frexp(std::fabs(c), &exponent) == 0.5;
}

/// Whether `value` is `update`'s gradient and none of its other operands.
bool isUpdateGradient(AdamWUpdateOp update, Value value) {
  return update.getGrad() == value && update.getParam() != value &&
         update.getExpAvg() != value && update.getExpAvgSq() != value &&
         update.getGradScale() != value;
}

/// An add of two operands of the result's type (no broadcast).
bool isPlainAdd(AddOp add) {
  Type type = add.getResult().getType();
  return add.getLhs().getType() == type && add.getRhs().getType() == type;
}

/// What the module says of its symbols, gathered once for every function:
/// the members of buffers, and each symbol's users (by root reference).
struct ModuleFacts {
  SymbolTable symbols;
  DenseSet<Attribute> bufferMembers;
  DenseMap<Attribute, SmallVector<Operation *>> users;
  bool usersKnown = false;

  explicit ModuleFacts(ModuleOp module) : symbols(module) {
    for (auto buffer : module.getOps<BufferOp>())
      for (Attribute member : buffer.getMembers())
        bufferMembers.insert(cast<FlatSymbolRefAttr>(member).getAttr());
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses)
      return;
    usersKnown = true;
    for (const SymbolTable::SymbolUse &use : *uses)
      users[use.getSymbolRef().getRootReference()].push_back(use.getUser());
  }
};

struct FunctionFolder {
  FunctionFolder(Block &block, const ModuleFacts &module)
      : block(block), module(module) {
    for (Operation &op : block) {
      if (auto read = dyn_cast<ReadOp>(op))
        accesses[read.getNameAttr().getAttr()].push_back(&op);
      else if (auto write = dyn_cast<WriteOp>(op))
        accesses[write.getNameAttr().getAttr()].push_back(&op);
    }
  }

  Block &block;
  const ModuleFacts &module;
  // Each state's train.read and train.write ops in this block, in order.
  DenseMap<Attribute, SmallVector<Operation *>> accesses;

  // The nodes, values and state symbols, numbered in order of discovery,
  // and their classes (joined while visiting, numbered once all are).
  llvm::IntEqClasses classes;
  SmallVector<bool> bad;
  SmallVector<Value> nodeValue;     // null for a symbol
  SmallVector<StringAttr> nodeName; // null for a value
  DenseMap<Value, unsigned> valueNode;
  DenseMap<Attribute, unsigned> symbolNode;
  SmallVector<unsigned> worklist;

  void unite(unsigned a, unsigned b) { classes.join(a, b); }
  unsigned newNode(Value value, StringAttr name) {
    unsigned id = bad.size();
    classes.grow(id + 1);
    bad.push_back(false);
    nodeValue.push_back(value);
    nodeName.push_back(name);
    worklist.push_back(id);
    return id;
  }
  unsigned node(Value value) {
    auto [it, inserted] = valueNode.try_emplace(value, 0);
    if (inserted)
      it->second = newNode(value, {});
    return it->second;
  }
  unsigned node(StringAttr name) {
    auto [it, inserted] = symbolNode.try_emplace(name, 0);
    if (inserted)
      it->second = newNode({}, name);
    return it->second;
  }

  void visitValue(unsigned id, Value value);
  void visitSymbol(unsigned id, StringAttr name);
  bool privateState(StringAttr name);
  void run();
};

void FunctionFolder::visitValue(unsigned id, Value value) {
  if (!isFloatTensor(value)) {
    bad[id] = true;
    return;
  }
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &block) {
    bad[id] = true;
  } else if (auto scale = dyn_cast<ScaleOp>(def)) {
    // A source of the class: its factor is checked per class. A shard that
    // a reduce-scatter left in its send buffer and that is written to a
    // state (stages 2 and 3) keeps its scale: that scale is what moves it
    // into the state's storage, and without it a copy would (no pass fewer).
    // The shard may be a view of the receive buffer (an unpack's member).
    Value shard = scale.getInput();
    while (auto view = shard.getDefiningOp<BufferViewOpInterface>()) {
      if (isa<WaitOp>(view.getOperation()))
        break;
      shard = view.getViewSource();
    }
    auto wait = shard.getDefiningOp<WaitOp>();
    if (wait && wait->getOperand(0).getDefiningOp<ReduceScatterStartOp>() &&
        llvm::any_of(value.getUsers(),
                     [](Operation *user) { return isa<WriteOp>(user); }))
      bad[id] = true;
  } else if (auto add = dyn_cast<AddOp>(def)) {
    if (isPlainAdd(add)) {
      unite(id, node(add.getLhs()));
      unite(id, node(add.getRhs()));
    } else {
      bad[id] = true;
    }
  } else if (auto read = dyn_cast<ReadOp>(def)) {
    unite(id, node(read.getNameAttr().getAttr()));
  } else if (auto cast = dyn_cast<CastOp>(def)) {
    unite(id, node(cast.getInput()));
  } else {
    bad[id] = true;
  }
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user->getBlock() != &block) {
      bad[id] = true;
    } else if (isa<SquaredNormOp>(user)) {
    } else if (auto update = dyn_cast<AdamWUpdateOp>(user)) {
      if (!isUpdateGradient(update, value))
        bad[id] = true;
    } else if (auto write = dyn_cast<WriteOp>(user)) {
      unite(id, node(write.getNameAttr().getAttr()));
    } else if (auto cast = dyn_cast<CastOp>(user)) {
      // bf16 gradients widened for the update (mixed precision).
      unite(id, node(cast.getResult()));
    } else if (auto add = dyn_cast<AddOp>(user)) {
      if (isPlainAdd(add))
        unite(id, node(add.getResult()));
      else
        bad[id] = true;
    } else {
      bad[id] = true;
    }
  }
}

/// Whether every access to the state `name` is a train.read or train.write
/// in this block, the first of them a write (what the step leaves there is
/// then only ever read by the step itself, after it wrote it), and no other
/// symbol aliases it: not a member of a buffer, and if a buffer, one whose
/// members nothing reads or writes.
bool FunctionFolder::privateState(StringAttr name) {
  Operation *decl = module.symbols.lookup(name);
  if (!decl || !module.usersKnown || module.bufferMembers.contains(name))
    return false;
  for (Operation *user : module.users.lookup(name))
    if (!isa<ReadOp, WriteOp>(user) || user->getBlock() != &block)
      return false;
  if (auto buffer = dyn_cast<BufferOp>(decl)) {
    // Nothing but the buffer's own member list names a member.
    for (Attribute member : buffer.getMembers())
      for (Operation *user :
           module.users.lookup(cast<FlatSymbolRefAttr>(member).getAttr()))
        if (user != decl)
          return false;
  } else if (!isa<StateOp>(decl)) {
    return false; // a parameter: read by forward, saved, gathered
  }
  auto it = accesses.find(name);
  return it != accesses.end() && isa<WriteOp>(it->second.front());
}

void FunctionFolder::visitSymbol(unsigned id, StringAttr name) {
  if (!privateState(name)) {
    bad[id] = true;
    return;
  }
  for (Operation *op : accesses.lookup(name)) {
    if (auto read = dyn_cast<ReadOp>(op))
      unite(id, node(read.getResult()));
    else
      unite(id, node(cast<WriteOp>(op).getValue()));
  }
}

void FunctionFolder::run() {
  for (Operation &op : block)
    if (auto scale = dyn_cast<ScaleOp>(op);
        scale && isFloatTensor(scale.getResult()) &&
        cast<RankedTensorType>(scale.getResult().getType()).getRank() > 0)
      node(scale.getResult());
  while (!worklist.empty()) {
    unsigned id = worklist.pop_back_val();
    if (nodeValue[id])
      visitValue(id, nodeValue[id]);
    else
      visitSymbol(id, nodeName[id]);
  }
  // Per class: bad if any member is, else its one factor. A class with a
  // member of another type than f32 (bf16 gradients) folds only a power of
  // two: the scale rounded each element to that type, the update's f32
  // product would not.
  classes.compress();
  unsigned numClasses = classes.getNumClasses();
  SmallVector<bool> classBad(numClasses, false), classNarrow(numClasses, false);
  SmallVector<std::optional<double>> classFactor(numClasses);
  for (unsigned id = 0; id < bad.size(); ++id) {
    unsigned root = classes[id];
    if (bad[id])
      classBad[root] = true;
    if (nodeValue[id] && !isF32Tensor(nodeValue[id]))
      classNarrow[root] = true;
    if (!nodeValue[id])
      continue;
    auto scale = nodeValue[id].getDefiningOp<ScaleOp>();
    if (!scale)
      continue;
    double factor = scale.getFactor().convertToDouble();
    std::optional<double> &known = classFactor[root];
    if (!std::isfinite(factor) || factor == 0.0 || (known && *known != factor))
      classBad[root] = true;
    known = factor;
  }
  auto factorOf = [&](Value value) -> std::optional<double> {
    auto it = valueNode.find(value);
    if (it == valueNode.end())
      return std::nullopt;
    unsigned root = classes[it->second];
    std::optional<double> factor = classFactor[root];
    if (classBad[root] ||
        (factor && classNarrow[root] && !isPowerOfTwo(*factor)))
      return std::nullopt;
    return factor;
  };

  OpBuilder builder(block.getParentOp()->getContext());
  SmallVector<SquaredNormOp> norms;
  SmallVector<AdamWUpdateOp> updates;
  SmallVector<ScaleOp> scales;
  for (Operation &op : block) {
    if (auto norm = dyn_cast<SquaredNormOp>(op); norm && factorOf(norm.getInput()))
      norms.push_back(norm);
    if (auto update = dyn_cast<AdamWUpdateOp>(op); update && factorOf(update.getGrad()))
      updates.push_back(update);
    if (auto scale = dyn_cast<ScaleOp>(op); scale && factorOf(scale.getResult()))
      scales.push_back(scale);
  }
  for (SquaredNormOp norm : norms) {
    double c = *factorOf(norm.getInput());
    builder.setInsertionPointAfter(norm);
    auto scaled = ScaleOp::create(builder, norm.getLoc(), norm.getResult(),
                                  builder.getF64FloatAttr(c * c));
    norm.getResult().replaceAllUsesExcept(scaled.getResult(), scaled);
  }
  // One scaled coefficient per (coefficient, factor), next to the
  // coefficient; one constant per factor at the start of the block.
  std::map<std::pair<void *, double>, Value> coefficients;
  for (AdamWUpdateOp update : updates) {
    double c = *factorOf(update.getGrad());
    Value scale = update.getGradScale();
    Value &scaled = coefficients[{scale ? scale.getAsOpaquePointer() : nullptr, c}];
    if (!scaled) {
      if (!scale) {
        builder.setInsertionPointToStart(&block);
        scaled = FillOp::create(builder, update.getLoc(),
                                RankedTensorType::get({}, builder.getF32Type()),
                                builder.getF64FloatAttr(c));
      } else {
        if (Operation *def = scale.getDefiningOp())
          builder.setInsertionPointAfter(def);
        else
          builder.setInsertionPointToStart(&block);
        scaled = ScaleOp::create(builder, update.getLoc(), scale,
                                 builder.getF64FloatAttr(c));
      }
    }
    update.getGradScaleMutable().assign(scaled);
  }
  for (ScaleOp scale : scales) {
    scale.getResult().replaceAllUsesWith(scale.getInput());
    scale->erase();
  }
}

struct TrainFuseGradAveragePass
    : zeroc::impl::TrainFuseGradAverageBase<TrainFuseGradAveragePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The folds add and erase only scales and fills, which name no symbol:
    // the module's facts hold for every function.
    ModuleFacts facts(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      FunctionFolder(func.getBody().front(), facts).run();
    }
  }
};

} // namespace
