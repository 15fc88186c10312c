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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
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

/// Elements of a statically shaped tensor or memref (or of the value of a
/// collective in flight), else 0.
static int64_t numElements(Type type) {
  if (auto future = dyn_cast<FutureType>(type))
    type = future.getValueType();
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements();
}

static int64_t bytesOf(Type type) {
  if (auto future = dyn_cast<FutureType>(type))
    type = future.getValueType();
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  return numElements(type) * elementBytes(shaped.getElementType());
}

/// Persistent bytes of a declaration of `type`: every rank stores it whole
/// (a rank's shard is a slice of a sharded train.buffer, counted there).
static int64_t storageBytes(RankedTensorType type) {
  if (!type.hasStaticShape())
    return 0;
  return type.getNumElements() * elementBytes(type.getElementType());
}

/// A module attribute's value, or `fallback` when it is absent.
static int64_t moduleInt(IntegerAttr attr, int64_t fallback) {
  return attr ? attr.getInt() : fallback;
}

//===----------------------------------------------------------------------===//
// Transient memory: the running sum of the plan's allocations
//===----------------------------------------------------------------------===//

namespace {

enum Category : unsigned { Gathered = 0, Buckets = 1, Activations = 2 };
constexpr unsigned kCategories = 3;

Category reportCategory(memref::AllocOp alloc) {
  auto attr = dyn_cast_or_null<MemoryCategoryAttr>(
      trainDialect(alloc).getCategoryAttrHelper().getAttr(alloc));
  if (!attr)
    return Activations;
  switch (attr.getValue()) {
  case MemoryCategory::gathered_parameters:
    return Gathered;
  case MemoryCategory::gradient_buckets:
    return Buckets;
  default:
    return Activations;
  }
}

/// The step's transient memory is what its memref.alloc / memref.dealloc
/// hold at each point, in program order: the same allocations the back
/// ends print, so report and executable cannot differ.
void computeTransient(func::FuncOp step, MemoryReport &report) {
  llvm::DenseMap<Value, std::pair<Category, int64_t>> owned;
  int64_t live[kCategories] = {0, 0, 0};
  int64_t peak[kCategories] = {0, 0, 0};
  int64_t combinedPeak = 0;
  for (Operation &op : step.getBody().front()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      Category category = reportCategory(alloc);
      int64_t bytes = bytesOf(alloc.getType());
      owned[alloc.getResult()] = {category, bytes};
      live[category] += bytes;
      peak[category] = std::max(peak[category], live[category]);
      combinedPeak =
          std::max(combinedPeak, live[Gathered] + live[Buckets] + live[Activations]);
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      auto it = owned.find(dealloc.getMemref());
      if (it != owned.end())
        live[it->second.first] -= it->second.second;
    }
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
int64_t gridSize(Operation *op, FlatSymbolRefAttr grid,
                 SymbolTableCollection &symbols, int64_t fallback) {
  auto gridOp = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp || gridOp.getShape().size() != 1 ||
      ShapedType::isDynamic(gridOp.getShape()[0]))
    return fallback;
  return gridOp.getShape()[0];
}

/// How many tensors a collective's buffer carries: those a train.pack
/// kernel wrote into what it sends, or those read out of what it received
/// (an unpack kernel, or views); 1 otherwise.
int64_t tensorsOf(CollectiveStartOp start) {
  auto packed = [](Value buffer) -> int64_t {
    for (Operation *user : buffer.getUsers())
      if (auto kernel = dyn_cast<KernelOp>(user))
        if (llvm::is_contained(kernel.getOuts(), buffer))
          if (auto pack = dyn_cast_or_null<PackOp>(kernel.getSingleOp()))
            return pack.getInputs().size();
    return 0;
  };
  if (start.getKind() != CollectiveKind::all_gather) {
    int64_t n = packed(start.getSend());
    return n ? n : 1;
  }
  int64_t views = 0;
  for (Operation *user : start.getRecv().getUsers()) {
    if (auto kernel = dyn_cast<KernelOp>(user))
      if (auto unpack = dyn_cast_or_null<UnpackOp>(kernel.getSingleOp()))
        return unpack.getNumResults();
    views += isa<memref::ReinterpretCastOp>(user);
  }
  return views ? views : 1;
}

void computeCommunication(func::FuncOp step, MemoryReport &report) {
  SymbolTableCollection symbols;
  step.walk([&](CollectiveStartOp start) {
    CollectiveTraffic traffic;
    // Sent per rank = factor * (N - 1) / N * n.
    int64_t factor = 1;
    traffic.op = stringifyCollectiveKind(start.getKind()).str();
    traffic.async = true;
    traffic.ranks =
        gridSize(start, start.getGridAttr(), symbols, report.worldSize);
    if (start.getKind() == CollectiveKind::all_reduce)
      factor = 2;
    Value full = start.getKind() == CollectiveKind::all_gather
                     ? start.getRecv()
                     : start.getSend();
    traffic.bufferElements = numElements(full.getType());
    traffic.payloadElements = start.getPayload();
    traffic.tensors = tensorsOf(start);
    int64_t n = traffic.payloadElements;
    int64_t ranks = std::max<int64_t>(traffic.ranks, 1);
    traffic.elements = roundDiv(factor * (ranks - 1) * n, ranks);
    traffic.elementBytes =
        elementBytes(cast<ShapedType>(full.getType()).getElementType());
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
  report.worldSize = moduleInt(trainDialect(module).getWorldSizeAttrHelper().getAttr(module), 1);
  report.stage = moduleInt(trainDialect(module).getZeroStageAttrHelper().getAttr(module), 0);

  bool sawF32 = false, sawBF16 = false, sawOther = false;
  SmallVector<BufferOp> buffers;
  llvm::StringMap<int64_t> declared;
  // Members of a sharded buffer are stored only as its shard (below).
  llvm::StringSet<> inShardedBuffer;
  for (auto buffer : module.getBody()->getOps<BufferOp>())
    if (buffer.getStorageType() != buffer.getTensorType())
      for (Attribute member : buffer.getMembers())
        inShardedBuffer.insert(cast<FlatSymbolRefAttr>(member).getValue());
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      RankedTensorType type = param.getTensorType();
      report.parameters += numElements(type);
      Type element = type.getElementType();
      sawF32 |= element.isF32();
      sawBF16 |= element.isBF16();
      sawOther |= !element.isF32() && !element.isBF16();
      if (!inShardedBuffer.contains(param.getSymName()))
        report.perRank.parameters += storageBytes(type);
    } else if (auto state = dyn_cast<StateOp>(op)) {
      int64_t bytes = inShardedBuffer.contains(state.getSymName())
                          ? 0
                          : storageBytes(state.getTensorType());
      if (state.getKind() == StateKind::grad)
        report.perRank.gradients += bytes;
      else
        report.perRank.optimizerStates += bytes;
    } else if (auto buffer = dyn_cast<BufferOp>(op)) {
      buffers.push_back(buffer);
    }
    if (auto symbol = dyn_cast<SymbolOpInterface>(op);
        symbol && isa<ParamOp, StateOp>(op))
      declared[symbol.getName()] = numElements(
          isa<ParamOp>(op) ? cast<ParamOp>(op).getTensorType()
                           : cast<StateOp>(op).getTensorType());
  }
  // A flat buffer's members are counted above; its padding (the elements
  // of no member, which the runtime allocates too) here. A sharded buffer
  // is its rank's shard, members and padding together.
  for (BufferOp buffer : buffers) {
    int64_t members = 0;
    bool sharded = buffer.getStorageType() != buffer.getTensorType();
    if (!sharded)
      for (Attribute member : buffer.getMembers())
        members += declared.lookup(cast<FlatSymbolRefAttr>(member).getValue());
    int64_t padding = std::max<int64_t>(
        0, (numElements(buffer.getStorageType()) - members) *
               elementBytes(buffer.getTensorType().getElementType()));
    switch (buffer.getCategory()) {
    case MemoryCategory::parameters:
      report.perRank.parameters += padding;
      break;
    case MemoryCategory::gradients:
      report.perRank.gradients += padding;
      break;
    default:
      report.perRank.optimizerStates += padding;
      break;
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
    if (!trainDialect(func).getStepAttrHelper().isAttrPresent(func))
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
  if (!trainDialect(step).getPlannedAttrHelper().isAttrPresent(step))
    return step.emitError("memory report: @")
           << step.getSymName()
           << " is not planned (train.planned): the report reads the "
              "allocations of the buffer form (run the planning passes: "
              "train-fuse-optimizer, train-fuse-elementwise, train-bufferize, "
              "train-deallocate)";
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
