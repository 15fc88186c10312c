//===- MemoryReport.cpp - static per-rank memory and traffic --------------===//
//
// Everything here reads types and use-def chains; nothing allocates a tensor.
// The rules are spelled out in docs/memory-report.md.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Support/Format.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace zeroc;
using namespace zeroc::train;

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

/// Bytes of one element of `type` (0 for what has no fixed size).
static int64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  return 0;
}

/// Elements of a statically shaped tensor or memref, else 0.
static int64_t numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements();
}

static int64_t bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  return numElements(type) * elementBytes(shaped.getElementType());
}

/// Real elements rank 0 stores of `numel` split in `shards` chunks:
/// min(ceil(numel / shards), numel). Padding lives on the last ranks only.
static int64_t rankZeroElements(int64_t numel, std::optional<uint64_t> shards) {
  if (!shards || *shards <= 1)
    return numel;
  return std::min(shardElements(numel, static_cast<int64_t>(*shards)), numel);
}

/// Persistent bytes of a declaration of `type` with optional `shards`.
static int64_t storageBytes(RankedTensorType type,
                            std::optional<uint64_t> shards) {
  if (!type.hasStaticShape())
    return 0;
  return rankZeroElements(type.getNumElements(), shards) *
         elementBytes(type.getElementType());
}

static int64_t moduleInt(ModuleOp module, StringRef name, int64_t fallback) {
  if (auto attr = module->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return fallback;
}

//===----------------------------------------------------------------------===//
// Transient memory: a liveness sweep in program order
//===----------------------------------------------------------------------===//

namespace {

enum Category : unsigned { Gathered = 0, Buckets = 1, Activations = 2 };
constexpr unsigned kCategories = 3;

/// A tensor that owns memory: live over [def, end] (op indices, inclusive).
struct Buffer {
  int64_t bytes;
  size_t def;
  size_t end;
  Category category;
};

bool isGatherCollective(Operation *op) {
  return isa<AllGatherStartOp, shard::AllGatherOp>(op);
}

bool isGradientCollective(Operation *op) {
  return isa<AllReduceStartOp, ReduceScatterStartOp, shard::AllReduceOp,
             shard::ReduceScatterOp>(op);
}

/// The category of a buffer `op` defines.
Category categoryOf(Operation *op, Value result) {
  if (isa<PackOp>(op)) {
    for (Operation *user : result.getUsers()) {
      if (isGatherCollective(user))
        return Gathered;
      if (isGradientCollective(user))
        return Buckets;
    }
    return Activations;
  }
  if (isGatherCollective(op))
    return Gathered;
  if (isGradientCollective(op))
    return Buckets;
  // Tensors unpacked (copied) out of a collective's result belong with it.
  if (auto unpack = dyn_cast<UnpackOp>(op)) {
    Value source = unpack.getInput();
    if (auto wait = source.getDefiningOp<WaitOp>())
      source = wait.getFuture();
    if (Operation *producer = source.getDefiningOp())
      if (isGatherCollective(producer))
        return Gathered;
  }
  return Activations;
}

/// Views own no memory: they keep their source's buffer alive. A
/// train.unpack with shards > 1 copies (each tensor is spread over every
/// rank's chunk) and ends its input's life.
bool isView(Operation *op) {
  if (auto unpack = dyn_cast<UnpackOp>(op))
    return unpack.getShards() == 1;
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return !dropout.getStep(); // evaluation: the identity
  return isa<ReadOp, ReshapeOp, WaitOp, shard::AllSliceOp>(op);
}

/// The value a view reads; null for train.read (its source is persistent).
Value viewSource(Operation *op) {
  if (auto unpack = dyn_cast<UnpackOp>(op))
    return unpack.getInput();
  if (auto slice = dyn_cast<shard::AllSliceOp>(op))
    return slice.getInput();
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return reshape.getInput();
  if (auto wait = dyn_cast<WaitOp>(op))
    return wait.getFuture();
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getInput();
  return nullptr;
}

/// The input of a train.*_start op, or null.
Value startInput(Operation *op) {
  if (auto start = dyn_cast<AllReduceStartOp>(op))
    return start.getInput();
  if (auto start = dyn_cast<ReduceScatterStartOp>(op))
    return start.getInput();
  if (auto start = dyn_cast<AllGatherStartOp>(op))
    return start.getInput();
  return nullptr;
}

/// Elementwise ops, which the backends fuse into loops.
bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ScaleOp, GeluOp, ReluOp, SqrtOp,
             CastOp, GeluGradOp, ReluGradOp, FillOp, BroadcastOp, SiluOp,
             SiluGradOp>(op);
}

bool hasEffects(Operation *op) {
  return isa<WriteOp, AllReduceStartOp, ReduceScatterStartOp,
             AllGatherStartOp, WaitOp, ReleaseOp>(op);
}

/// The elementwise ops the backends compute inside their user's loop, as
/// the C++/CUDA emitter's plan decides (lib/Target/Cpp/FunctionEmitter.cpp):
/// a fill whose users are all elementwise, and an elementwise op whose one
/// use is an elementwise op of the same shape, with no op with effects in
/// between. They own no buffer, and what they read is read where the loop
/// that computes them runs.
llvm::DenseSet<Operation *> fusedElementwise(Block &body) {
  llvm::DenseSet<Operation *> inlined;
  for (Operation &op : body) {
    if (!isElementwise(&op))
      continue;
    if (isa<FillOp>(op)) {
      if (llvm::all_of(op.getUsers(),
                       [](Operation *user) { return isElementwise(user); }))
        inlined.insert(&op);
      continue;
    }
    Value result = op.getResult(0);
    if (!result.hasOneUse())
      continue;
    Operation *user = *result.getUsers().begin();
    if (user->getBlock() != &body || !isElementwise(user) ||
        cast<ShapedType>(user->getResult(0).getType()).getShape() !=
            cast<ShapedType>(result.getType()).getShape())
      continue;
    bool crossesEffects = false;
    for (Operation *between = op.getNextNode(); between != user;
         between = between->getNextNode())
      crossesEffects |= hasEffects(between);
    if (!crossesEffects)
      inlined.insert(&op);
  }
  return inlined;
}

/// The results of optimizer updates that the backends compute in place, on
/// the state they read, as the emitter's plan decides: a state operand (not
/// the gradient) read by `train.read` for this op alone, whose result is
/// written back to the same state. They own no buffer.
llvm::DenseSet<Value> inPlaceUpdates(Block &body) {
  llvm::DenseSet<Value> inPlace;
  for (Operation &op : body) {
    if (!isa<AdamWUpdateOp, SGDUpdateOp>(op))
      continue;
    unsigned stateOperands = isa<AdamWUpdateOp>(op) ? 4 : 3;
    for (unsigned i = 0; i < stateOperands; ++i) {
      if (i == 1)
        continue; // the gradient
      Value result = op.getResult(i == 0 ? 0 : i - 1);
      auto read = op.getOperand(i).getDefiningOp<ReadOp>();
      if (!read || !op.getOperand(i).hasOneUse())
        continue;
      for (Operation *user : result.getUsers())
        if (auto write = dyn_cast<WriteOp>(user);
            write && write.getName() == read.getName())
          inPlace.insert(result);
    }
  }
  return inPlace;
}

void computeTransient(func::FuncOp step, MemoryReport &report) {
  Block &body = step.getBody().front();
  llvm::DenseSet<Operation *> inlined = fusedElementwise(body);
  llvm::DenseSet<Value> inPlace = inPlaceUpdates(body);
  llvm::DenseMap<Operation *, size_t> position;
  size_t count = 0;
  for (Operation &op : body)
    position[&op] = count++;
  // Where an op's work happens: a fused op's in the loop of its last user
  // in the chain.
  auto effective = [&](Operation *op) {
    while (inlined.contains(op) && !isa<FillOp>(op))
      op = *op->getResult(0).getUsers().begin();
    return position.lookup(op);
  };
  std::vector<Buffer> buffers;
  // Value -> index into `buffers`; absent: no transient memory behind it
  // (function arguments, train.read views of persistent state, non-tensors).
  llvm::DenseMap<Value, size_t> owner;

  auto touch = [&](Value value, size_t index) {
    auto it = owner.find(value);
    if (it != owner.end())
      buffers[it->second].end = std::max(buffers[it->second].end, index);
  };

  size_t index = 0;
  for (Operation &op : body) {
    // Every use, including those inside the op's regions, keeps the used
    // buffer alive through this op.
    // train.release of a gathered buffer ends the life of the tensors
    // unpacked from it (the buffer itself dies at the unpack).
    if (auto release = dyn_cast<ReleaseOp>(op)) {
      for (Operation *user : release.getBuffer().getUsers())
        if (auto unpack = dyn_cast<UnpackOp>(user); unpack && !isView(unpack))
          for (Value result : unpack.getResults())
            touch(result, index);
      ++index;
      continue;
    }
    size_t at = effective(&op);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        touch(operand, at);
    });
    // The input of an asynchronous collective lives until its wait.
    if (auto wait = dyn_cast<WaitOp>(op))
      if (Operation *start = wait.getFuture().getDefiningOp())
        if (Value input = startInput(start))
          touch(input, index);

    for (Value result : op.getResults()) {
      // The learning rate is a host scalar, not a buffer.
      if (!isa<ShapedType>(result.getType()) || inlined.contains(&op) ||
          inPlace.contains(result) || isa<LRScheduleOp>(op))
        continue;
      if (isView(&op)) {
        if (Value source = viewSource(&op)) {
          auto it = owner.find(source);
          if (it != owner.end())
            owner[result] = it->second;
        }
        continue;
      }
      owner[result] = buffers.size();
      buffers.push_back(
          {bytesOf(result.getType()), index, index, categoryOf(&op, result)});
    }
    ++index;
  }

  // Sweep: +bytes at def, -bytes after end; the peak of each running sum.
  size_t points = index + 1;
  std::vector<int64_t> delta[kCategories];
  for (auto &d : delta)
    d.assign(points, 0);
  for (const Buffer &buffer : buffers) {
    delta[buffer.category][buffer.def] += buffer.bytes;
    delta[buffer.category][buffer.end + 1] -= buffer.bytes;
  }
  int64_t live[kCategories] = {0, 0, 0};
  int64_t peak[kCategories] = {0, 0, 0};
  int64_t combinedPeak = 0;
  for (size_t point = 0; point < points; ++point) {
    int64_t total = 0;
    for (unsigned c = 0; c < kCategories; ++c) {
      live[c] += delta[c][point];
      peak[c] = std::max(peak[c], live[c]);
      total += live[c];
    }
    combinedPeak = std::max(combinedPeak, total);
  }
  report.transient.gatheredParameters = peak[Gathered];
  report.transient.gradientBuckets = peak[Buckets];
  report.transient.activations = peak[Activations];
  report.transient.peak = combinedPeak;
}

//===----------------------------------------------------------------------===//
// Communication: ring formulas on the payload
//===----------------------------------------------------------------------===//

/// round(numerator / denominator) for non-negative values.
int64_t roundDiv(int64_t numerator, int64_t denominator) {
  return (2 * numerator + denominator) / (2 * denominator);
}

/// The size of the 1-D grid `grid`, or `fallback`.
int64_t trainGroupSize(Operation *op, FlatSymbolRefAttr grid,
                       SymbolTableCollection &symbols, int64_t fallback) {
  auto gridOp = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp || gridOp.getShape().size() != 1 ||
      ShapedType::isDynamic(gridOp.getShape()[0]))
    return fallback;
  return gridOp.getShape()[0];
}

/// The process group of an upstream collective: the grid's sizes along
/// `grid_axes` (as upstream defines it), or `fallback` if unknown.
template <typename ShardOp>
int64_t shardGroupSize(ShardOp op, SymbolTableCollection &symbols,
                       int64_t fallback) {
  auto gridOp =
      symbols.lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  if (!gridOp)
    return fallback;
  int64_t size = shard::collectiveProcessGroupSize(op.getGridAxes(), gridOp);
  return ShapedType::isDynamic(size) ? fallback : size;
}

/// Payload of a buffer that may come from train.pack: the real numel of the
/// packed tensors, and how many there are.
void payloadFromProducer(Value buffer, CollectiveTraffic &traffic) {
  traffic.bufferElements = numElements(buffer.getType());
  traffic.payloadElements = traffic.bufferElements;
  traffic.tensors = 1;
  if (auto pack = buffer.getDefiningOp<PackOp>()) {
    int64_t real = 0;
    for (Value input : pack.getInputs())
      real += numElements(input.getType());
    traffic.payloadElements = real;
    traffic.tensors = pack.getInputs().size();
  }
}

/// Payload of a gathered buffer that may be consumed by train.unpack (after
/// its train.wait when asynchronous).
void payloadFromConsumer(Value gathered, CollectiveTraffic &traffic) {
  traffic.bufferElements = numElements(gathered.getType());
  traffic.payloadElements = traffic.bufferElements;
  traffic.tensors = 1;
  SmallVector<Value> results{gathered};
  for (Operation *user : gathered.getUsers())
    if (auto wait = dyn_cast<WaitOp>(user))
      results.push_back(wait.getResult());
  for (Value result : results)
    for (Operation *user : result.getUsers())
      if (auto unpack = dyn_cast<UnpackOp>(user)) {
        int64_t real = 0;
        for (Value part : unpack.getResults())
          real += numElements(part.getType());
        traffic.payloadElements = real;
        traffic.tensors = unpack.getResults().size();
        return;
      }
}

void computeCommunication(func::FuncOp step, MemoryReport &report) {
  SymbolTableCollection symbols;
  int64_t world = report.worldSize;
  step.walk<WalkOrder::PreOrder>([&](Operation *op) {
    CollectiveTraffic traffic;
    // Sent per rank = factor * (N - 1) / N * n.
    int64_t factor = 1;
    Type buffer;
    if (auto start = dyn_cast<AllReduceStartOp>(op)) {
      traffic.op = "all_reduce";
      traffic.async = true;
      traffic.ranks = trainGroupSize(op, start.getGridAttr(), symbols, world);
      factor = 2;
      payloadFromProducer(start.getInput(), traffic);
      buffer = start.getInput().getType();
    } else if (auto start = dyn_cast<ReduceScatterStartOp>(op)) {
      traffic.op = "reduce_scatter";
      traffic.async = true;
      traffic.ranks = trainGroupSize(op, start.getGridAttr(), symbols, world);
      payloadFromProducer(start.getInput(), traffic);
      buffer = start.getInput().getType();
    } else if (auto start = dyn_cast<AllGatherStartOp>(op)) {
      traffic.op = "all_gather";
      traffic.async = true;
      traffic.ranks = trainGroupSize(op, start.getGridAttr(), symbols, world);
      payloadFromConsumer(start.getResult(), traffic);
      buffer = start.getResult().getType();
    } else if (auto collective = dyn_cast<shard::AllReduceOp>(op)) {
      traffic.op = "all_reduce";
      traffic.ranks = shardGroupSize(collective, symbols, world);
      factor = 2;
      payloadFromProducer(collective.getInput(), traffic);
      buffer = collective.getInput().getType();
    } else if (auto collective = dyn_cast<shard::ReduceScatterOp>(op)) {
      traffic.op = "reduce_scatter";
      traffic.ranks = shardGroupSize(collective, symbols, world);
      payloadFromProducer(collective.getInput(), traffic);
      buffer = collective.getInput().getType();
    } else if (auto collective = dyn_cast<shard::AllGatherOp>(op)) {
      traffic.op = "all_gather";
      traffic.ranks = shardGroupSize(collective, symbols, world);
      payloadFromConsumer(collective.getResult(), traffic);
      buffer = collective.getResult().getType();
    } else {
      return;
    }
    int64_t n = traffic.payloadElements;
    int64_t ranks = std::max<int64_t>(traffic.ranks, 1);
    traffic.elements = roundDiv(factor * (ranks - 1) * n, ranks);
    traffic.elementBytes =
        elementBytes(cast<ShapedType>(buffer).getElementType());
    traffic.bytes = traffic.elements * traffic.elementBytes;
    report.commElements += traffic.elements;
    report.commBytes += traffic.bytes;
    report.collectives.push_back(std::move(traffic));
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

FailureOr<MemoryReport> zeroc::computeMemoryReport(ModuleOp module) {
  MemoryReport report;
  report.worldSize = moduleInt(module, "train.world_size", 1);
  report.stage = moduleInt(module, "train.zero_stage", 0);

  bool sawF32 = false, sawBF16 = false, sawOther = false;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      RankedTensorType type = param.getTensorType();
      report.parameters += numElements(type);
      Type element = type.getElementType();
      sawF32 |= element.isF32();
      sawBF16 |= element.isBF16();
      sawOther |= !element.isF32() && !element.isBF16();
      report.perRank.parameters += storageBytes(type, param.getShards());
    } else if (auto state = dyn_cast<StateOp>(op)) {
      int64_t bytes = storageBytes(state.getTensorType(), state.getShards());
      if (state.getKind() == StateKind::grad)
        report.perRank.gradients += bytes;
      else
        report.perRank.optimizerStates += bytes;
    }
  }
  report.perRank.modelStates = report.perRank.parameters +
                               report.perRank.gradients +
                               report.perRank.optimizerStates;
  if (sawOther || (sawF32 && sawBF16))
    report.precision = "mixed";
  else if (sawBF16)
    report.precision = "bf16";
  else if (sawF32)
    report.precision = "fp32";
  else
    report.precision = "none";

  func::FuncOp step;
  for (auto func : module.getBody()->getOps<func::FuncOp>()) {
    if (!func->hasAttr("train.step"))
      continue;
    if (step) {
      InFlightDiagnostic diag = module.emitError(
          "memory report: more than one func.func is marked train.step");
      diag.attachNote(step.getLoc()) << "the first is @" << step.getSymName();
      diag.attachNote(func.getLoc()) << "another is @" << func.getSymName();
      return failure();
    }
    step = func;
  }
  if (!step)
    return module.emitError("memory report: no func.func is marked "
                            "train.step (run the training pipeline first)");
  if (step.isExternal() || !step.getBody().hasOneBlock())
    return step.emitError("memory report: the train.step function must have "
                          "one block");
  report.stepFunction = step.getSymName().str();

  computeTransient(step, report);
  computeCommunication(step, report);
  return report;
}

void MemoryReport::toJSON(llvm::raw_ostream &os) const {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("parameters", parameters);
    json.attribute("world_size", worldSize);
    json.attribute("stage", stage);
    json.attribute("precision", precision);
    json.attribute("step_function", stepFunction);
    json.attributeObject("per_rank_bytes", [&] {
      json.attribute("parameters", perRank.parameters);
      json.attribute("gradients", perRank.gradients);
      json.attribute("optimizer_states", perRank.optimizerStates);
      json.attribute("model_states", perRank.modelStates);
    });
    json.attributeObject("transient_bytes", [&] {
      json.attribute("gathered_parameters", transient.gatheredParameters);
      json.attribute("gradient_buckets", transient.gradientBuckets);
      json.attribute("activations", transient.activations);
      json.attribute("peak", transient.peak);
    });
    json.attribute("peak_bytes_per_rank", perRank.modelStates + transient.peak);
    json.attributeObject("communication_per_rank_per_step", [&] {
      json.attribute("elements", commElements);
      json.attribute("bytes", commBytes);
      for (StringRef kind : {"all_reduce", "reduce_scatter", "all_gather"}) {
        int64_t count = 0, elements = 0, bytes = 0;
        for (const CollectiveTraffic &c : collectives)
          if (c.op == kind) {
            ++count;
            elements += c.elements;
            bytes += c.bytes;
          }
        json.attributeObject(kind, [&] {
          json.attribute("count", count);
          json.attribute("elements", elements);
          json.attribute("bytes", bytes);
        });
      }
    });
    // One collective a line: the per-bucket size list.
    json.attributeArray("collectives", [&] {
      for (const CollectiveTraffic &c : collectives)
        json.rawValue([&](llvm::raw_ostream &line) {
          llvm::json::OStream item(line);
          item.object([&] {
            item.attribute("op", c.op);
            item.attribute("elements", c.elements);
            item.attribute("bytes", c.bytes);
            item.attribute("tensors", c.tensors);
            item.attribute("payload_elements", c.payloadElements);
            item.attribute("buffer_elements", c.bufferElements);
            item.attribute("ranks", c.ranks);
            item.attribute("async", c.async);
          });
        });
    });
  });
  os << "\n";
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

using zeroc::withCommas;

/// Bytes in MiB below one GiB, else in GiB.
static std::string humanBytes(int64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
  std::string out;
  llvm::raw_string_ostream os(out);
  if (static_cast<double>(bytes) < kGiB)
    os << llvm::format("%.2f MiB", static_cast<double>(bytes) / kMiB);
  else
    os << llvm::format("%.2f GiB", static_cast<double>(bytes) / kGiB);
  return out;
}

void MemoryReport::toTable(llvm::raw_ostream &os) const {
  os << "zeroc memory report: ZeRO stage " << stage << ", N = " << worldSize
     << (worldSize == 1 ? " rank" : " ranks") << " (rank 0, @" << stepFunction
     << ")\n";
  os << "model: " << withCommas(parameters) << " parameters (Ψ), "
     << precision << "\n\n";

  auto row = [&](StringRef label, int64_t bytes) {
    os << llvm::format("  %-26s %22s %13s", label.str().c_str(),
                       withCommas(bytes).c_str(), humanBytes(bytes).c_str());
    if (parameters > 0)
      os << llvm::format(" %9.3f",
                         static_cast<double>(bytes) /
                             static_cast<double>(parameters));
    os << "\n";
  };
  auto rule = [&] { os << "  " << std::string(73, '-') << "\n"; };

  os << llvm::format("  %-26s %22s %13s %9s\n", "memory per rank", "bytes",
                     "size", "B/param");
  rule();
  os << "  model states (persistent)\n";
  row("  parameters", perRank.parameters);
  row("  gradients", perRank.gradients);
  row("  optimizer states", perRank.optimizerStates);
  row("  total", perRank.modelStates);
  os << "  transient (peak over the step)\n";
  row("  gathered parameters", transient.gatheredParameters);
  row("  gradient buckets", transient.gradientBuckets);
  row("  activations", transient.activations);
  row("  combined peak", transient.peak);
  rule();
  row("model states + peak", perRank.modelStates + transient.peak);

  os << "\n";
  if (collectives.empty()) {
    os << "  communication per step: none (no collective in @" << stepFunction
       << ")\n";
    return;
  }
  os << llvm::format("  %-26s %22s %13s %9s\n",
                     "communication per step", "elements sent", "size",
                     "calls");
  rule();
  for (StringRef kind : {"all_reduce", "reduce_scatter", "all_gather"}) {
    int64_t count = 0, elements = 0, bytes = 0;
    for (const CollectiveTraffic &c : collectives)
      if (c.op == kind) {
        ++count;
        elements += c.elements;
        bytes += c.bytes;
      }
    if (!count)
      continue;
    os << llvm::format("  %-26s %22s %13s %9lld\n", kind.str().c_str(),
                       withCommas(elements).c_str(), humanBytes(bytes).c_str(),
                       static_cast<long long>(count));
  }
  rule();
  os << llvm::format("  %-26s %22s %13s %9lld\n", "total",
                     withCommas(commElements).c_str(),
                     humanBytes(commBytes).c_str(),
                     static_cast<long long>(collectives.size()));

  // The per-bucket list, unless it is too long to read.
  constexpr size_t kListed = 32;
  os << "\n";
  os << llvm::format("  %-4s %-16s %7s %22s %13s\n", "#", "collective",
                     "tensors", "elements sent", "size");
  size_t shown = std::min(collectives.size(), kListed);
  for (size_t i = 0; i < shown; ++i) {
    const CollectiveTraffic &c = collectives[i];
    os << llvm::format("  %-4zu %-16s %7lld %22s %13s\n", i, c.op.c_str(),
                       static_cast<long long>(c.tensors),
                       withCommas(c.elements).c_str(),
                       humanBytes(c.bytes).c_str());
  }
  if (shown < collectives.size())
    os << "  ... " << collectives.size() - shown
       << " more (the JSON report, --emit=memory-report, lists every one)\n";
}
