//===- PerfModel.cpp - simulate a compiled step on a machine --------------===//
//
// The train.step function is read in program order, as the back end emits
// it. Each op's TrainCostOpInterface figures (CostModels.cpp) become time:
//
//   compute op:  overhead + max(flops / (GEMM peak * GEMM efficiency),
//                               vector flops / vector rate,
//                               bytes / (bandwidth * memory efficiency))
//                (attention kernels: the attention efficiency, if the
//                machine gives one, in place of the GEMM efficiency)
//   collective:  collectiveTime() on the communication stream, from
//                max(its input is ready, the stream is free)
//   train.wait:  the compute stream stalls until its collective is done
//
// On a machine without asynchronous progress (the CPU runtime's MPI), a
// collective only advances while its rank waits: the collectives started
// and not yet done run, in order, when the compute stream reaches a wait.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Analysis/PerfModel.h"

#include "zeroc/Analysis/CostModels.h"
#include "zeroc/Analysis/MemoryReport.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainStepPhases.h"
#include "zeroc/Pipeline/Pipeline.h"
#include "zeroc/Transforms/Passes.h"
#include "zeroc/Support/Format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>

#ifndef ZEROC_MACHINES_DIR
#define ZEROC_MACHINES_DIR "share/zeroc/machines"
#endif

using namespace mlir;
using namespace zeroc::train;

namespace zeroc {

//===----------------------------------------------------------------------===//
// Machine files
//===----------------------------------------------------------------------===//

namespace {

/// One field of a machine file: its key, whether it must be there, how to
/// store its value (already converted to SI units) and its range.
struct Field {
  const char *key;
  bool required;
  /// Multiplies the value as written (TFLOP/s, GB/s, GiB, us) into SI.
  double scale;
  enum Kind { Positive, Fraction, NonNegative, Count, Bool, Text } kind;
  std::function<void(Machine &, double, llvm::StringRef)> store;
};

const std::vector<Field> &machineFields() {
  static const std::vector<Field> fields = {
      {"name", true, 1, Field::Text,
       [](Machine &m, double, llvm::StringRef s) { m.name = s.str(); }},
      {"description", false, 1, Field::Text,
       [](Machine &m, double, llvm::StringRef s) { m.description = s.str(); }},
      {"peak_tflops_fp32", true, 1e12, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.peakFlopsF32 = v; }},
      {"peak_tflops_bf16", true, 1e12, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.peakFlopsBF16 = v; }},
      {"vector_tflops", true, 1e12, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.vectorFlops = v; }},
      {"gemm_efficiency", true, 1, Field::Fraction,
       [](Machine &m, double v, llvm::StringRef) { m.gemmEfficiency = v; }},
      {"attention_efficiency", false, 1, Field::Fraction,
       [](Machine &m, double v, llvm::StringRef) {
         m.attentionEfficiency = v;
       }},
      {"memory_gbps", true, 1e9, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.memoryBandwidth = v; }},
      {"memory_efficiency", true, 1, Field::Fraction,
       [](Machine &m, double v, llvm::StringRef) { m.memoryEfficiency = v; }},
      {"memory_gib", true, 1024.0 * 1024.0 * 1024.0, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.memoryBytes = v; }},
      {"devices_per_node", true, 1, Field::Count,
       [](Machine &m, double v, llvm::StringRef) {
         m.devicesPerNode = static_cast<int64_t>(v);
       }},
      {"nodes", false, 1, Field::NonNegative,
       [](Machine &m, double v, llvm::StringRef) {
         m.nodes = static_cast<int64_t>(v);
       }},
      {"intra_node_gbps", true, 1e9, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.intraBandwidth = v; }},
      {"intra_node_latency_us", true, 1e-6, Field::NonNegative,
       [](Machine &m, double v, llvm::StringRef) { m.intraLatency = v; }},
      {"inter_node_gbps", true, 1e9, Field::Positive,
       [](Machine &m, double v, llvm::StringRef) { m.interBandwidth = v; }},
      {"inter_node_latency_us", true, 1e-6, Field::NonNegative,
       [](Machine &m, double v, llvm::StringRef) { m.interLatency = v; }},
      {"kernel_overhead_us", false, 1e-6, Field::NonNegative,
       [](Machine &m, double v, llvm::StringRef) { m.kernelOverhead = v; }},
      {"step_overhead_us", false, 1e-6, Field::NonNegative,
       [](Machine &m, double v, llvm::StringRef) { m.stepOverhead = v; }},
      {"async_progress", true, 1, Field::Bool,
       [](Machine &m, double v, llvm::StringRef) { m.asyncProgress = v != 0; }},
  };
  return fields;
}

llvm::Error machineError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

} // namespace

llvm::Expected<Machine> parseMachine(llvm::StringRef text,
                                     llvm::StringRef fileName) {
  Machine machine;
  llvm::StringMap<unsigned> seen; // key -> line
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    unsigned lineNumber = index + 1;
    std::string where = (fileName + ":" + llvm::Twine(lineNumber)).str();
    llvm::StringRef line = rawLine.split('#').first.trim();
    if (line.empty())
      continue;
    auto [key, value] = line.split('=');
    key = key.trim();
    value = value.trim();
    if (!line.contains('='))
      return machineError(where + ": expected 'field = value', got '" + line +
                          "'");
    const Field *field = nullptr;
    for (const Field &candidate : machineFields())
      if (key == candidate.key)
        field = &candidate;
    if (!field) {
      std::string known;
      for (const Field &candidate : machineFields())
        known += (known.empty() ? "" : ", ") + std::string(candidate.key);
      return machineError(where + ": unknown field '" + key +
                          "' (the fields are " + known + ")");
    }
    if (auto it = seen.find(key); it != seen.end())
      return machineError(where + ": field '" + key +
                          "' is set twice (first on line " +
                          llvm::Twine(it->second) + ")");
    seen[key] = lineNumber;
    if (value.empty())
      return machineError(where + ": field '" + key + "' has no value");
    double number = 0;
    switch (field->kind) {
    case Field::Text:
      break;
    case Field::Bool:
      if (value == "yes" || value == "true" || value == "1")
        number = 1;
      else if (value == "no" || value == "false" || value == "0")
        number = 0;
      else
        return machineError(where + ": field '" + key +
                            "' must be yes or no, got '" + value + "'");
      break;
    default: {
      if (value.getAsDouble(number) || !std::isfinite(number))
        return machineError(where + ": field '" + key +
                            "' must be a number, got '" + value + "'");
      bool ok = true;
      const char *range = "";
      switch (field->kind) {
      case Field::Positive:
        ok = number > 0;
        range = "positive";
        break;
      case Field::Fraction:
        ok = number > 0 && number <= 1;
        range = "in (0, 1]";
        break;
      case Field::NonNegative:
        ok = number >= 0;
        range = "zero or more";
        break;
      case Field::Count:
        ok = number >= 1 && number == std::floor(number);
        range = "a whole number, 1 or more";
        break;
      default:
        break;
      }
      if (field->kind == Field::NonNegative &&
          llvm::StringRef(field->key) == "nodes" &&
          number != std::floor(number)) {
        ok = false;
        range = "a whole number (0: as many as needed)";
      }
      if (!ok)
        return machineError(where + ": field '" + key + "' must be " + range +
                            ", got " + value);
      number *= field->scale;
      break;
    }
    }
    field->store(machine, number, value);
  }
  for (const Field &field : machineFields())
    if (field.required && !seen.count(field.key))
      return machineError(fileName + ": missing field '" + field.key + "'");
  return machine;
}

std::string machinePresetDirectory() { return ZEROC_MACHINES_DIR; }

std::vector<std::string> machinePresets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(ZEROC_MACHINES_DIR, ec), end;
       !ec && it != end; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (path.ends_with(".machine"))
      names.push_back(llvm::sys::path::stem(path).str());
  }
  llvm::sort(names);
  return names;
}

llvm::Expected<Machine> loadMachine(llvm::StringRef nameOrPath) {
  std::string path = nameOrPath.str();
  bool isPath = nameOrPath.contains('/') || nameOrPath.ends_with(".machine") ||
                llvm::sys::fs::exists(nameOrPath);
  if (!isPath) {
    llvm::SmallString<256> preset(ZEROC_MACHINES_DIR);
    llvm::sys::path::append(preset, nameOrPath + ".machine");
    if (!llvm::sys::fs::exists(preset)) {
      std::string names;
      for (const std::string &name : machinePresets())
        names += (names.empty() ? "" : ", ") + name;
      return machineError("unknown machine '" + nameOrPath +
                          "': not a file, and not a preset (" + names + ")");
    }
    path = preset.str().str();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return machineError("cannot read machine file '" + path +
                        "': " + buffer.getError().message());
  return parseMachine((*buffer)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {

/// How `ranks` ranks sit on the machine: ranks per node and nodes.
struct Placement {
  int64_t perNode = 1;
  int64_t nodes = 1;
  /// Ranks per device (above 1 when the machine has too few devices).
  double oversubscription = 1;
};

Placement place(const Machine &machine, int64_t ranks) {
  Placement p;
  int64_t g = std::max<int64_t>(machine.devicesPerNode, 1);
  ranks = std::max<int64_t>(ranks, 1);
  if (machine.nodes > 0 && ranks > g * machine.nodes) {
    p.nodes = machine.nodes;
    p.perNode = (ranks + p.nodes - 1) / p.nodes;
    p.oversubscription =
        static_cast<double>(ranks) / static_cast<double>(g * machine.nodes);
    return p;
  }
  p.perNode = std::min(ranks, g);
  p.nodes = (ranks + p.perNode - 1) / p.perNode;
  return p;
}

} // namespace

CollectiveTime collectiveTime(const Machine &machine, CostCollective kind,
                              double bufferBytes, int64_t ranks) {
  CollectiveTime result;
  if (ranks <= 1) {
    // One rank: a copy of the buffer.
    result.algorithm = "copy";
    result.seconds =
        2 * bufferBytes / (machine.memoryBandwidth * machine.memoryEfficiency);
    return result;
  }
  Placement p = place(machine, ranks);
  double n = static_cast<double>(ranks);
  bool allReduce = kind == CostCollective::AllReduce;
  bool acrossNodes = p.nodes > 1;
  double bandwidth =
      acrossNodes ? std::min(machine.intraBandwidth, machine.interBandwidth)
                  : machine.intraBandwidth;
  double latency = acrossNodes ? machine.interLatency : machine.intraLatency;
  double steps = (allReduce ? 2 : 1) * (n - 1);
  double fraction = (allReduce ? 2 : 1) * (n - 1) / n;
  result.seconds = steps * latency + fraction * bufferBytes / bandwidth;
  result.algorithm = "ring";
  if (allReduce && acrossNodes) {
    // A chain within each node, a binary tree over the nodes; reduce up,
    // broadcast down, pipelined.
    double depth = std::ceil(std::log2(static_cast<double>(p.nodes)));
    double tree =
        2 * (depth * machine.interLatency +
             static_cast<double>(p.perNode - 1) * machine.intraLatency) +
        2 * bufferBytes / bandwidth;
    if (tree < result.seconds) {
      result.seconds = tree;
      result.algorithm = "tree";
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The simulation
//===----------------------------------------------------------------------===//

namespace {

int64_t moduleInt(ModuleOp module, llvm::StringRef name, int64_t fallback) {
  auto attr = module->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : fallback;
}

/// Bytes one rank sends for a collective of `elements` (ring accounting, as
/// the runtimes count it: all-reduce round(2(N-1)n/N), the others
/// round((N-1)n/N)).
double ringBytesSent(const OpCost &cost, int64_t ranks) {
  if (ranks <= 1)
    return 0;
  int64_t factor = cost.collective == CostCollective::AllReduce ? 2 : 1;
  int64_t numerator = factor * (ranks - 1) * cost.elements;
  int64_t elements = (2 * numerator + ranks) / (2 * ranks);
  return static_cast<double>(elements) * static_cast<double>(cost.elementBytes);
}

/// The values of `block` that hold this rank's shard of something: the
/// results of reduce-scatters and slices, and what is computed from them
/// (until an all-gather rebuilds the whole). A scalar (a norm) is not a
/// shard.
llvm::DenseSet<Value> shardedValues(Block &block) {
  llvm::DenseSet<Value> sharded;
  auto isScalar = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return !type || type.getRank() == 0;
  };
  for (Operation &op : block) {
    if (isa<AllGatherStartOp, shard::AllGatherOp, ReduceScatterStartOp>(op))
      continue;
    if (auto wait = dyn_cast<WaitOp>(op)) {
      if (wait.getFuture().getDefiningOp<ReduceScatterStartOp>())
        sharded.insert(wait.getResult());
      continue;
    }
    if (isa<shard::ReduceScatterOp, shard::AllSliceOp>(op)) {
      sharded.insert(op.getResult(0));
      continue;
    }
    bool fromShard = llvm::any_of(op.getOperands(),
                                  [&](Value v) { return sharded.contains(v); });
    if (!fromShard)
      continue;
    for (Value result : op.getResults())
      if (!isScalar(result))
        sharded.insert(result);
  }
  return sharded;
}

/// Rank 0's persistent bytes on `ranks` ranks: a parameter or state in no
/// sharded buffer keeps all of its elements. A
/// flat buffer is laid out again for `ranks` as train-zero would: its
/// members end to end, from stage 1 padded to `ranks` shards of
/// ceil(members / ranks) elements; a sharded buffer keeps one shard (its
/// members are counted there, not as themselves), a replicated one all of
/// them.
int64_t modelStateBytes(ModuleOp module, int64_t ranks) {
  int64_t total = 0;
  auto bytesOf = [](Type element) {
    return static_cast<int64_t>(element.getIntOrFloatBitWidth() / 8);
  };
  auto add = [&](RankedTensorType type) {
    total += type.getNumElements() * bytesOf(type.getElementType());
  };
  llvm::StringMap<int64_t> declared;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto param = dyn_cast<ParamOp>(op))
      declared[param.getSymName()] = param.getTensorType().getNumElements();
    else if (auto state = dyn_cast<StateOp>(op))
      declared[state.getSymName()] = state.getTensorType().getNumElements();
  }
  // Stage 0's buffers (gradients only) are not padded.
  auto stage = trainDialect(module).getZeroStageAttrHelper().getAttr(module);
  bool padded = !stage || stage.getInt() != 0;
  llvm::StringSet<> inShardedBuffer;
  for (auto buffer : module.getBody()->getOps<BufferOp>()) {
    bool sharded = buffer.getStorageType() != buffer.getTensorType();
    int64_t members = 0;
    for (Attribute member : buffer.getMembers()) {
      StringRef name = cast<FlatSymbolRefAttr>(member).getValue();
      members += declared.lookup(name);
      if (sharded)
        inShardedBuffer.insert(name);
    }
    int64_t shard = (members + ranks - 1) / ranks;
    int64_t stored = sharded ? shard : padded ? shard * ranks - members : 0;
    total += stored * bytesOf(buffer.getTensorType().getElementType());
  }
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      if (!inShardedBuffer.contains(param.getSymName()))
        add(param.getTensorType());
    } else if (auto state = dyn_cast<StateOp>(op)) {
      if (!inShardedBuffer.contains(state.getSymName()))
        add(state.getTensorType());
    }
  }
  return total;
}

double computeSeconds(const Machine &machine, const OpCost &cost) {
  double efficiency = cost.attention && machine.attentionEfficiency > 0
                          ? machine.attentionEfficiency
                          : machine.gemmEfficiency;
  double gemm =
      cost.flops > 0
          ? cost.flops / (machine.gemmPeak(cost.elementBits) * efficiency)
          : 0;
  double vector =
      cost.vectorFlops > 0 ? cost.vectorFlops / machine.vectorFlops : 0;
  double memory =
      cost.bytes > 0
          ? cost.bytes / (machine.memoryBandwidth * machine.memoryEfficiency)
          : 0;
  return std::max({gemm, vector, memory}) +
         (cost.launches ? machine.kernelOverhead : 0);
}

} // namespace

FailureOr<PerfPrediction> simulateStep(ModuleOp module, const Machine &machine,
                                       const SimulateOptions &options) {
  ensureCostModels(*module.getContext());
  func::FuncOp step;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("train.step")) {
      if (step)
        return module.emitError("performance model: more than one func.func "
                                "is marked train.step");
      step = func;
    }
  if (!step)
    return module.emitError("performance model: no func.func is marked "
                            "train.step (run the training pipeline first)");
  if (step.isExternal() || !step.getBody().hasOneBlock())
    return step.emitError("performance model: the train.step function must "
                          "have one block");

  PerfPrediction prediction;
  prediction.machine = machine.name;
  int64_t compiledRanks = moduleInt(module, "train.world_size", 1);
  int64_t ranksNow = options.worldSize > 0 ? options.worldSize : compiledRanks;
  if (ranksNow != compiledRanks && compiledRanks < 2)
    return module.emitError("performance model: a schedule compiled for one "
                            "rank has no shards or collectives to derive ")
           << ranksNow << " ranks from; compile it for 2 or more";
  prediction.worldSize = ranksNow;
  prediction.stage = moduleInt(module, "train.zero_stage", 0);
  Block &block = step.getBody().front();
  // Deriving another world size: what is this rank's shard.
  double shardScale =
      static_cast<double>(compiledRanks) / static_cast<double>(ranksNow);
  llvm::DenseSet<Value> sharded;
  if (ranksNow != compiledRanks)
    sharded = shardedValues(block);
  auto onShards = [&](Operation &op) {
    for (Value v : op.getOperands())
      if (sharded.contains(v))
        return true;
    for (Value v : op.getResults())
      if (sharded.contains(v))
        return true;
    return false;
  };
  if (block.getNumArguments() > 0)
    if (auto tokens =
            dyn_cast<RankedTensorType>(block.getArgument(0).getType());
        tokens && tokens.getRank() >= 1) {
      prediction.batchPerRank = tokens.getDimSize(0);
      prediction.seqLen =
          tokens.getNumElements() / std::max<int64_t>(tokens.getDimSize(0), 1);
    }
  prediction.tokensPerStep =
      prediction.batchPerRank * prediction.seqLen * prediction.worldSize;

  Placement placement = place(machine, prediction.worldSize);
  llvm::DenseMap<Operation *, StepPhase> phases = stepPhases(block);

  // The two streams: when each is next free.
  double compute = 0, comm = 0;
  // A started collective: when its input was ready and how long it takes.
  struct InFlight {
    Operation *start;
    double ready;
    double seconds;
    size_t recordIndex;
  };
  std::deque<InFlight> queued; // without asynchronous progress
  llvm::DenseMap<Value, double> done;
  double bf16Flops = 0, f32Flops = 0;

  auto record = [&](Operation *op, const OpCost &cost, double start,
                    double end) -> size_t {
    if (!options.keepOps)
      return 0;
    SimulatedOp simulated;
    simulated.op = op;
    simulated.kind = op->getName().stripDialect().str();
    simulated.engine = cost.engine;
    simulated.phase = stepPhaseName(phases.lookup(op)).str();
    simulated.start = start;
    simulated.end = end;
    simulated.cost = cost;
    prediction.ops.push_back(std::move(simulated));
    return prediction.ops.size() - 1;
  };
  auto runOnComm = [&](const InFlight &c) {
    double start = std::max(c.ready, comm);
    comm = start + c.seconds;
    done[c.start->getResult(0)] = comm;
    prediction.commSeconds += c.seconds;
    if (options.keepOps) {
      prediction.ops[c.recordIndex].start = start;
      prediction.ops[c.recordIndex].end = comm;
    }
  };

  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>())
      continue;
    auto costOp = dyn_cast<TrainCostOpInterface>(&op);
    if (!costOp)
      return op.emitOpError("has no cost model (TrainCostOpInterface): the "
                            "performance model cannot time it; add one in "
                            "lib/Analysis/CostModels.cpp");
    OpCost cost = costOp.getCost();
    if (shardScale != 1 && cost.engine != CostEngine::Collective &&
        onShards(op)) {
      cost.flops *= shardScale;
      cost.vectorFlops *= shardScale;
      cost.bytes *= shardScale;
    }
    if (cost.engine == CostEngine::Collective &&
        (cost.ranks == 0 || cost.ranks == compiledRanks))
      cost.ranks = ranksNow;
    switch (cost.engine) {
    case CostEngine::None:
      break;
    case CostEngine::Gemm:
    case CostEngine::Memory: {
      double seconds =
          computeSeconds(machine, cost) * placement.oversubscription;
      record(&op, cost, compute, compute + seconds);
      compute += seconds;
      prediction.computeSeconds += seconds;
      (cost.engine == CostEngine::Gemm ? prediction.gemmSeconds
                                       : prediction.memorySeconds) += seconds;
      prediction.secondsByKind[op.getName().stripDialect().str()] += seconds;
      // Recomputation (train-remat's clones) takes time but is not the
      // model's work: MFU leaves it out, as PaLM defines it.
      if (!op.hasAttr("train.recomputed"))
        prediction.modelFlops += cost.flops;
      (cost.elementBits <= 16 ? bf16Flops : f32Flops) += cost.flops;
      break;
    }
    case CostEngine::Collective: {
      int64_t ranks = cost.ranks > 0 ? cost.ranks : prediction.worldSize;
      double bufferBytes = static_cast<double>(cost.elements) *
                           static_cast<double>(cost.elementBytes);
      CollectiveTime time =
          collectiveTime(machine, cost.collective, bufferBytes, ranks);
      ++prediction.collectives;
      double sent = ringBytesSent(cost, ranks);
      prediction.bytesSent += sent;
      size_t index = record(&op, cost, compute, compute);
      if (options.keepOps) {
        prediction.ops[index].bytesSent = sent;
        prediction.ops[index].algorithm = time.algorithm;
      }
      InFlight flight{&op, compute, time.seconds, index};
      if (!cost.asynchronous) {
        // Blocking: started and waited for here.
        while (!queued.empty()) {
          runOnComm(queued.front());
          queued.pop_front();
        }
        runOnComm(flight);
        double wait = std::max(0.0, comm - compute);
        prediction.exposedCommSeconds += wait;
        prediction.exposedByPhase[stepPhaseName(phases.lookup(&op)).str()] +=
            wait;
        compute = std::max(compute, comm);
      } else if (machine.asyncProgress) {
        runOnComm(flight);
      } else {
        queued.push_back(flight);
      }
      break;
    }
    case CostEngine::Wait: {
      if (op.getNumOperands() < 1)
        return op.emitOpError("is a wait without a collective to wait for");
      Value future = op.getOperand(0);
      // Without asynchronous progress the collectives in flight run now,
      // in the order they started, until this one is done.
      while (!done.count(future) && !queued.empty()) {
        InFlight next = queued.front();
        queued.pop_front();
        next.ready = std::max(next.ready, compute);
        runOnComm(next);
      }
      auto it = done.find(future);
      if (it == done.end())
        return op.emitOpError("waits for a value that no collective of the "
                              "step started");
      double wait = std::max(0.0, it->second - compute);
      record(&op, cost, compute, compute + wait);
      prediction.exposedCommSeconds += wait;
      prediction.exposedByPhase[stepPhaseName(phases.lookup(&op)).str()] +=
          wait;
      compute += wait;
      break;
    }
    }
  }
  while (!queued.empty()) {
    InFlight next = queued.front();
    queued.pop_front();
    next.ready = std::max(next.ready, compute);
    runOnComm(next);
  }

  prediction.stepSeconds = std::max(compute, comm) + machine.stepOverhead;
  prediction.overlap = prediction.commSeconds > 0
                           ? std::max(0.0, 1.0 - prediction.exposedCommSeconds /
                                                     prediction.commSeconds)
                           : 1.0;
  if (prediction.stepSeconds > 0) {
    prediction.tokensPerSecond =
        static_cast<double>(prediction.tokensPerStep) / prediction.stepSeconds;
    prediction.tokensPerSecondPerDevice =
        prediction.tokensPerSecond / static_cast<double>(prediction.worldSize);
    double peak = machine.gemmPeak(bf16Flops > f32Flops ? 16 : 32);
    prediction.mfu = prediction.modelFlops / (prediction.stepSeconds * peak);
  }

  // The memory report reads the planned buffer form (the allocations the
  // back ends print): plan a copy of the program, scheduled first when it is
  // not (the back ends take only collectives in flight).
  OwningOpRef<ModuleOp> planned = module.clone();
  PassManager planning(module.getContext());
  planning.addPass(createTrainSchedule());
  buildPlanningPipeline(planning);
  if (failed(planning.run(*planned)))
    return failure();
  FailureOr<MemoryReport> report = computeMemoryReport(*planned);
  if (failed(report))
    return failure();
  prediction.precision = report->precision;
  prediction.modelStateBytes = ranksNow == compiledRanks
                                   ? report->perRank.modelStates
                                   : modelStateBytes(module, ranksNow);
  prediction.peakMemoryBytes =
      prediction.modelStateBytes + report->transient.peak;
  prediction.fits =
      static_cast<double>(prediction.peakMemoryBytes) <= machine.memoryBytes;
  return prediction;
}

//===----------------------------------------------------------------------===//
// Compiling, sweeping
//===----------------------------------------------------------------------===//

FailureOr<PerfPrediction> predictStep(ModuleOp model,
                                      const PipelineOptions &options,
                                      const Machine &machine,
                                      const SimulateOptions &simulate) {
  OwningOpRef<ModuleOp> clone = model.clone();
  PassManager pm(model.getContext());
  buildTrainingPipeline(pm, options);
  if (failed(pm.run(*clone)))
    return failure();
  return simulateStep(*clone, machine, simulate);
}

std::vector<int64_t> defaultSweepSizes() {
  return {8, 16, 32, 64, 128, 256, 512, 1024};
}

FailureOr<std::vector<PerfPrediction>>
sweep(ModuleOp compiled, const Machine &machine,
      llvm::ArrayRef<int64_t> worldSizes) {
  std::vector<PerfPrediction> predictions;
  for (int64_t ranks : worldSizes) {
    SimulateOptions options;
    options.worldSize = ranks;
    FailureOr<PerfPrediction> prediction =
        simulateStep(compiled, machine, options);
    if (failed(prediction))
      return failure();
    predictions.push_back(std::move(*prediction));
  }
  return predictions;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

namespace {

std::string gib(double bytes) {
  return llvm::formatv("{0:f2}", bytes / (1024.0 * 1024.0 * 1024.0)).str();
}

std::string millis(double seconds) {
  return llvm::formatv("{0:f3}", seconds * 1e3).str();
}

const char *engineName(CostEngine engine) {
  switch (engine) {
  case CostEngine::None:
    return "none";
  case CostEngine::Gemm:
    return "gemm";
  case CostEngine::Memory:
    return "memory";
  case CostEngine::Collective:
    return "collective";
  case CostEngine::Wait:
    return "wait";
  }
  return "none";
}

const char *collectiveName(CostCollective kind) {
  switch (kind) {
  case CostCollective::AllReduce:
    return "all_reduce";
  case CostCollective::ReduceScatter:
    return "reduce_scatter";
  case CostCollective::AllGather:
    return "all_gather";
  }
  return "all_reduce";
}

} // namespace

void printPerfTable(llvm::raw_ostream &os,
                    llvm::ArrayRef<PerfPrediction> predictions,
                    const Machine &machine) {
  if (predictions.empty())
    return;
  const PerfPrediction &first = predictions.front();
  os << "zeroc performance model: ZeRO stage " << first.stage << ", "
     << first.precision << ", " << first.batchPerRank << " x " << first.seqLen
     << " tokens per rank\n";
  os << "machine: " << machine.name;
  if (!machine.description.empty())
    os << " (" << machine.description << ")";
  os << ", " << machine.devicesPerNode << " per node\n\n";
  os << llvm::format("%6s %11s %13s %12s %7s %11s %11s %11s %8s %10s %5s\n",
                     "N", "step (ms)", "tokens/s", "tok/s/dev", "MFU",
                     "compute ms", "comm (ms)", "exposed ms", "overlap",
                     "peak GiB", "fits");
  for (const PerfPrediction &p : predictions)
    os << llvm::format(
        "%6lld %11s %13s %12s %6.1f%% %11s %11s %11s %7.1f%% %10s %5s\n",
        static_cast<long long>(p.worldSize), millis(p.stepSeconds).c_str(),
        withCommas(static_cast<int64_t>(std::llround(p.tokensPerSecond)))
            .c_str(),
        withCommas(
            static_cast<int64_t>(std::llround(p.tokensPerSecondPerDevice)))
            .c_str(),
        100 * p.mfu, millis(p.computeSeconds).c_str(),
        millis(p.commSeconds).c_str(), millis(p.exposedCommSeconds).c_str(),
        100 * p.overlap, gib(static_cast<double>(p.peakMemoryBytes)).c_str(),
        p.fits ? "yes" : "no");
  if (predictions.size() != 1)
    return;
  // One configuration: where the time goes.
  os << "\ncompute " << millis(first.computeSeconds) << " ms (GEMM "
     << millis(first.gemmSeconds) << ", memory-bound "
     << millis(first.memorySeconds) << "); " << first.collectives
     << " collectives, " << gib(first.bytesSent) << " GiB sent per rank\n";
  os << "exposed communication:";
  for (const char *phase : {"forward", "backward", "optimizer"}) {
    auto it = first.exposedByPhase.find(phase);
    os << " " << phase << " "
       << millis(it == first.exposedByPhase.end() ? 0 : it->second) << " ms";
  }
  os << "\n\n" << llvm::format("  %-22s %11s %7s\n", "op kind", "ms", "share");
  std::vector<std::pair<std::string, double>> kinds(first.secondsByKind.begin(),
                                                    first.secondsByKind.end());
  llvm::sort(kinds, [](auto &a, auto &b) { return a.second > b.second; });
  for (auto &[kind, seconds] : kinds)
    os << llvm::format(
        "  %-22s %11s %6.1f%%\n", kind.c_str(), millis(seconds).c_str(),
        first.computeSeconds > 0 ? 100 * seconds / first.computeSeconds : 0.0);
}

void printPerfJSON(llvm::raw_ostream &os,
                   llvm::ArrayRef<PerfPrediction> predictions,
                   const Machine &machine) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attributeObject("machine", [&] {
      json.attribute("name", machine.name);
      json.attribute("description", machine.description);
      json.attribute("devices_per_node", machine.devicesPerNode);
    });
    json.attributeArray("predictions", [&] {
      for (const PerfPrediction &p : predictions)
        json.object([&] {
          json.attribute("world_size", p.worldSize);
          json.attribute("stage", p.stage);
          json.attribute("precision", p.precision);
          json.attribute("batch_per_rank", p.batchPerRank);
          json.attribute("seq_len", p.seqLen);
          json.attribute("tokens_per_step", p.tokensPerStep);
          json.attribute("step_seconds", p.stepSeconds);
          json.attribute("compute_seconds", p.computeSeconds);
          json.attribute("gemm_seconds", p.gemmSeconds);
          json.attribute("memory_bound_seconds", p.memorySeconds);
          json.attribute("comm_seconds", p.commSeconds);
          json.attribute("exposed_comm_seconds", p.exposedCommSeconds);
          json.attributeObject("exposed_comm_seconds_by_phase", [&] {
            for (const char *phase : {"forward", "backward", "optimizer"}) {
              auto it = p.exposedByPhase.find(phase);
              json.attribute(phase,
                             it == p.exposedByPhase.end() ? 0.0 : it->second);
            }
          });
          json.attribute("overlap", p.overlap);
          json.attribute("collectives", p.collectives);
          json.attribute("bytes_sent", p.bytesSent);
          json.attribute("model_flops", p.modelFlops);
          json.attribute("tokens_per_second", p.tokensPerSecond);
          json.attribute("tokens_per_second_per_device",
                         p.tokensPerSecondPerDevice);
          json.attribute("mfu", p.mfu);
          json.attribute("peak_memory_bytes", p.peakMemoryBytes);
          json.attribute("model_state_bytes", p.modelStateBytes);
          json.attribute("fits", p.fits);
          json.attributeObject("compute_seconds_by_kind", [&] {
            for (auto &[kind, seconds] : p.secondsByKind)
              json.attribute(kind, seconds);
          });
          if (p.ops.empty())
            return;
          json.attributeArray("ops", [&] {
            for (const SimulatedOp &op : p.ops)
              json.rawValue([&](llvm::raw_ostream &line) {
                llvm::json::OStream item(line);
                item.object([&] {
                  item.attribute("kind", op.kind);
                  item.attribute("engine", engineName(op.engine));
                  item.attribute("phase", op.phase);
                  item.attribute("start", op.start);
                  item.attribute("end", op.end);
                  if (op.engine == CostEngine::Collective) {
                    item.attribute("collective",
                                   collectiveName(op.cost.collective));
                    item.attribute("elements", op.cost.elements);
                    item.attribute("bytes_sent", op.bytesSent);
                    item.attribute("algorithm", op.algorithm);
                  } else if (op.engine != CostEngine::Wait) {
                    item.attribute("flops", op.cost.flops);
                    item.attribute("vector_flops", op.cost.vectorFlops);
                    item.attribute("bytes", op.cost.bytes);
                  }
                });
              });
          });
        });
    });
  });
  os << "\n";
}

} // namespace zeroc
