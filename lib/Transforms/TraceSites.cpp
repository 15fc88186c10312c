//===- TraceSites.cpp - train-trace-sites: name each op of the step -------===//
//
// Attaches to every op of the train step the site the executable's --trace
// records for it (#train.trace: a name after the op and its layer, the
// op's kind, its phase, its source location, and for collectives their
// number, kind, elements and bytes). The planning passes carry the
// attribute to the train.kernel, train.fused and train.collective_* ops
// they write, and the back ends print it (lib/Target/Cpp/TraceHook.cpp)
// without looking at anything else: naming is decided here, on the tensor
// program, where parameters and layers are visible.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Dialect/Train/IR/TrainStepPhases.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

namespace zeroc {
#define GEN_PASS_DEF_TRAINTRACESITES
#include "zeroc/Transforms/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::train;

namespace {

/// What the executable's --trace records of one op (zrt.h's
/// zrt_trace_site).
struct Site {
  std::string name, kind, phase, location;
  int collective = -1, collectiveKind = -1;
  int64_t elements = 0, bytes = 0;
};

int64_t numel(Value value) {
  Type type = value.getType();
  if (auto future = dyn_cast<FutureType>(type)) // a collective in flight
    return future.getValueType().getNumElements();
  return cast<RankedTensorType>(type).getNumElements();
}

/// The members of each train.buffer, by the buffer's name.
using BufferMembers = llvm::StringMap<SmallVector<StringRef>>;

/// The parameter `value` is read from: through casts, reshapes and the
/// unpacking of a gathered parameter buffer (stage 3: a member's view of
/// it), or "" when it is not one.
StringRef paramOf(Value value, const BufferMembers &buffers) {
  for (int depth = 0; depth < 8 && value; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return "";
    if (auto read = dyn_cast<ReadOp>(def))
      return read.getName();
    if (isa<CastOp, ReshapeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    auto unpack = dyn_cast<UnpackOp>(def);
    if (!unpack)
      return "";
    unsigned index = cast<OpResult>(value).getResultNumber();
    Value gathered = unpack.getInput();
    if (auto wait = gathered.getDefiningOp<WaitOp>())
      gathered = wait.getFuture();
    Operation *gather = gathered.getDefiningOp();
    if (!gather || !isa<AllGatherStartOp, shard::AllGatherOp>(gather))
      return "";
    auto read = gather->getOperand(0).getDefiningOp<ReadOp>();
    auto it = read ? buffers.find(read.getName()) : buffers.end();
    if (it == buffers.end() || index >= it->second.size())
      return "";
    return it->second[index];
  }
  return "";
}

/// "transformer.h.0.attn.c_attn.weight" -> "transformer.h.0.attn.c_attn".
std::string layerOfParam(StringRef param) {
  for (StringRef suffix : {".weight", ".bias"})
    if (param.ends_with(suffix))
      return param.drop_back(suffix.size()).str();
  return param.str();
}

/// The block a layer belongs to: the path up to its first numeric part
/// ("transformer.h.0.attn.c_attn" -> "transformer.h.0"), else the layer.
std::string blockOf(StringRef layer) {
  SmallVector<StringRef> parts;
  layer.split(parts, '.');
  std::string out;
  for (StringRef part : parts) {
    out += (out.empty() ? "" : ".") + part.str();
    unsigned number;
    if (!part.getAsInteger(10, number))
      return out;
  }
  return layer.str();
}

std::string locationOf(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            Twine(file.getLine()) + ":" + Twine(file.getColumn()))
        .str();
  return "";
}

bool isCollective(Operation *op) {
  return isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp,
             shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp>(
      op);
}


/// The site of every op of `block` (the train step's body).
llvm::DenseMap<Operation *, Site> planSites(Block &block) {
  llvm::DenseMap<Operation *, Site> sites;
  llvm::DenseMap<Operation *, StepPhase> phases = stepPhases(block);
  int64_t worldSize = 1;
  if (auto module = block.getParentOp()->getParentOfType<ModuleOp>())
    if (auto size = module->getAttrOfType<IntegerAttr>("train.world_size"))
      worldSize = size.getInt();

  // The layer of each op that reads a parameter, and of every op with the
  // same location (its derivatives).
  llvm::DenseMap<Location, std::string> layerAt;
  llvm::DenseMap<Operation *, std::string> layerOf;
  BufferMembers buffers;
  if (auto module = block.getParentOp()->getParentOfType<ModuleOp>())
    for (auto buffer : module.getOps<BufferOp>())
      for (Attribute member : buffer.getMembers())
        buffers[buffer.getSymName()].push_back(
            cast<FlatSymbolRefAttr>(member).getValue());
  // A parameter's layer; a flat buffer's (the optimizer's per-bucket
  // update reads one): its members' layers, first..last.
  auto layerName = [&](StringRef name) -> std::string {
    auto it = buffers.find(name);
    if (it == buffers.end())
      return layerOfParam(name);
    std::string first, last;
    for (StringRef member : it->second) {
      for (StringRef suffix : {".grad", ".exp_avg_sq", ".exp_avg", ".master",
                               ".momentum_buffer"})
        if (member.ends_with(suffix)) {
          member = member.drop_back(suffix.size());
          break;
        }
      std::string layer = layerOfParam(member);
      if (first.empty())
        first = layer;
      last = layer;
    }
    return first == last ? first : first + ".." + last;
  };
  for (Operation &op : block) {
    if (isa<ReadOp, PackOp, UnpackOp, CastOp, ReshapeOp>(op) ||
        isCollective(&op))
      continue;
    for (Value operand : op.getOperands())
      if (StringRef param = paramOf(operand, buffers); !param.empty()) {
        layerOf[&op] = layerName(param);
        layerAt.try_emplace(op.getLoc(), layerOf[&op]);
        break;
      }
  }
  std::string context;
  auto valueLayer = [&](Value value) -> std::string {
    if (StringRef param = paramOf(value, buffers); !param.empty())
      return layerName(param);
    if (Operation *def = value.getDefiningOp()) {
      if (auto it = layerOf.find(def); it != layerOf.end())
        return it->second;
      if (auto it = layerAt.find(def->getLoc()); it != layerAt.end())
        return it->second;
    }
    // A gradient or shard on its way to a state: the state's parameter.
    for (Operation *user : value.getUsers())
      if (auto write = dyn_cast<WriteOp>(user)) {
        StringRef name = write.getName();
        for (StringRef suffix : {".grad", ".exp_avg_sq", ".exp_avg", ".master",
                                 ".momentum_buffer"})
          if (name.ends_with(suffix))
            return layerOfParam(name.drop_back(suffix.size()));
        return layerOfParam(name);
      }
    return "";
  };
  // "transformer.h.0..transformer.h.1": the blocks `values` belong to.
  auto rangeOf = [&](ValueRange values) -> std::string {
    std::string first, last;
    for (Value value : values) {
      std::string owner = blockOf(valueLayer(value));
      if (owner.empty())
        continue;
      if (first.empty())
        first = owner;
      last = owner;
    }
    return first.empty() ? "" : first == last ? first : first + ".." + last;
  };

  int collectives = 0;
  llvm::DenseMap<Operation *, int> collectiveOf;
  for (Operation &op : block) {
    Site site;
    site.kind = op.getName().stripDialect().str();
    site.phase = stepPhaseName(phases.lookup(&op)).str();
    site.location = locationOf(op.getLoc());
    std::string layer;
    if (auto it = layerOf.find(&op); it != layerOf.end())
      layer = it->second;
    else if (auto it = layerAt.find(op.getLoc()); it != layerAt.end())
      layer = it->second;
    if (!layer.empty())
      context = blockOf(layer);
    else
      layer = context;

    Operation *collective = isCollective(&op) ? &op : nullptr;
    if (auto wait = dyn_cast<WaitOp>(op))
      collective = wait.getFuture().getDefiningOp();
    if (collective && isCollective(collective)) {
      auto [it, added] = collectiveOf.try_emplace(collective, collectives);
      if (added)
        ++collectives;
      site.collective = it->second;
      Value input = collective->getOperand(0),
            result = collective->getResult(0);
      int64_t factor = 1, ranks = worldSize;
      if (isa<AllReduceStartOp, shard::AllReduceOp>(collective)) {
        site.collectiveKind = 0;
        site.elements = numel(input);
        factor = 2;
      } else if (isa<ReduceScatterStartOp, shard::ReduceScatterOp>(
                     collective)) {
        site.collectiveKind = 1;
        site.elements = numel(input);
        ranks = numel(result) ? numel(input) / numel(result) : 1;
      } else {
        site.collectiveKind = 2;
        site.elements = numel(result);
        ranks = numel(input) ? numel(result) / numel(input) : 1;
      }
      if (ranks > 1) {
        int64_t numerator = factor * (ranks - 1) * site.elements;
        site.bytes =
            (2 * numerator + ranks) / (2 * ranks) *
            (cast<RankedTensorType>(input.getType()).getElementTypeBitWidth() /
             8);
      }
      // Named after the blocks its buffer holds.
      static const char *const kinds[] = {"all_reduce", "reduce_scatter",
                                          "all_gather"};
      auto pack = input.getDefiningOp<PackOp>();
      layer = pack ? rangeOf(pack.getInputs()) : "";
      // Stage 3's gather of a flat parameter buffer: its members' blocks.
      if (auto read = input.getDefiningOp<ReadOp>();
          read && buffers.count(read.getName())) {
        std::string first, last;
        for (StringRef member : buffers.lookup(read.getName())) {
          std::string owner = blockOf(layerOfParam(member));
          if (first.empty())
            first = owner;
          last = owner;
        }
        layer = first == last ? first : first + ".." + last;
      }
      site.name = std::string(isa<WaitOp>(op) ? "wait " : "") +
                  kinds[site.collectiveKind];
      if (!layer.empty())
        site.name += " " + layer;
    } else {
      if (auto pack = dyn_cast<PackOp>(op))
        layer = rangeOf(pack.getInputs());
      else if (auto unpack = dyn_cast<UnpackOp>(op))
        layer = rangeOf(unpack.getResults());
      site.name = site.kind + (layer.empty() ? "" : " " + layer);
    }
    sites[&op] = std::move(site);
  }
  return sites;
}

struct TrainTraceSitesPass
    : zeroc::impl::TrainTraceSitesBase<TrainTraceSitesPass> {
  void runOnOperation() override {
    TrainDialect &dialect = TrainDialect::get(&getContext());
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!dialect.getStepAttrHelper().isAttrPresent(func) || func.isExternal())
        continue;
      for (auto &[op, site] : planSites(func.getBody().front())) {
        NamedAttribute fields[] = {
            b.getNamedAttr("name", b.getStringAttr(site.name)),
            b.getNamedAttr("kind", b.getStringAttr(site.kind)),
            b.getNamedAttr("phase", b.getStringAttr(site.phase)),
            b.getNamedAttr("location", b.getStringAttr(site.location)),
            b.getNamedAttr("collective", b.getI64IntegerAttr(site.collective)),
            b.getNamedAttr("collective_kind",
                           b.getI64IntegerAttr(site.collectiveKind)),
            b.getNamedAttr("elements", b.getI64IntegerAttr(site.elements)),
            b.getNamedAttr("bytes", b.getI64IntegerAttr(site.bytes))};
        dialect.getTraceAttrHelper().setAttr(op, b.getDictionaryAttr(fields));
      }
    }
  }
};

} // namespace
