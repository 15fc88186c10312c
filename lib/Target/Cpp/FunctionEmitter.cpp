//===- FunctionEmitter.cpp - one func.func as a C++ or CUDA C++ function --===//
//
// Every tensor value is a flat row-major buffer (device memory for CUDA).
// Owned buffers come from zrt_alloc (counted in the memory category the static report uses) at
// their definition and go back to zrt_free right after their last use;
// train.read, train.reshape, shards=1 train.unpack, shard.all_slice and
// train.wait results are views of another buffer. Elementwise ops whose
// single user is an elementwise op of the same shape are computed inside
// that user's loop, so a chain becomes one loop: an OpenMP loop for the
// CPU, a grid-stride __global__ kernel for CUDA whose parameters are the
// chain's inputs.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"
#include "RuntimeAbi.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

int64_t numel(Value value) { return typeOf(value).getNumElements(); }

/// A constant array argument: a pointer into an initializer list, which
/// lives until the end of the call's full expression.
std::string ints(ArrayRef<int64_t> values, StringRef type = "int64_t") {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "ZC_LIST(" << type << ", ";
  llvm::interleaveComma(values, os);
  if (values.empty())
    os << "0";
  os << ")";
  return text;
}

std::string shapeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A double as a C literal that round-trips.
std::string literal(double value) {
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  return llvm::formatv("{0:e17}", value).str();
}

bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ScaleOp, GeluOp, ReluOp, SqrtOp,
             CastOp, GeluGradOp, ReluGradOp, FillOp, BroadcastOp, SiluOp,
             SiluGradOp>(op);
}

/// The runtime's function for each collective (both runtimes).
const char *runtimeStart(Collective kind) {
  switch (kind) {
  case Collective::AllReduce:
    return "zrt_all_reduce_start";
  case Collective::ReduceScatter:
    return "zrt_reduce_scatter_start";
  case Collective::AllGather:
    return "zrt_all_gather_start";
  }
  return "";
}

bool hasEffects(Operation *op) {
  return isa<WriteOp, AllReduceStartOp, ReduceScatterStartOp,
             AllGatherStartOp, WaitOp, ReleaseOp>(op);
}

} // namespace

//===----------------------------------------------------------------------===//
// Planning: fusion, liveness, copies
//===----------------------------------------------------------------------===//

bool FunctionEmitter::isFusable(Operation *op) const {
  return isElementwise(op);
}

void FunctionEmitter::plan(Block &block) {
  llvm::DenseMap<Operation *, unsigned> position;
  unsigned index = 0;
  for (Operation &op : block)
    position[&op] = index++;

  // Elementwise producers computed inside their user's loop.
  for (Operation &op : block) {
    if (!isFusable(&op))
      continue;
    if (isa<FillOp>(op)) {
      if (llvm::all_of(op.getUsers(), [&](Operation *u) { return isFusable(u); }))
        inlined.insert(&op);
      continue;
    }
    Value result = op.getResult(0);
    if (!result.hasOneUse())
      continue;
    Operation *user = *result.getUsers().begin();
    if (user->getBlock() != &block || !isFusable(user) ||
        typeOf(user->getResult(0)).getShape() != typeOf(result).getShape())
      continue;
    bool crossesEffects = false;
    for (Operation *between = op.getNextNode(); between != user;
         between = between->getNextNode())
      crossesEffects |= hasEffects(between);
    if (!crossesEffects)
      inlined.insert(&op);
  }

  // Where each op's work actually happens: inlined ops run in their root.
  auto effective = [&](Operation *op) {
    while (inlined.contains(op) && !isa<FillOp>(op))
      op = *op->getResult(0).getUsers().begin();
    return position.lookup(op);
  };

  // Updates computed in place on the optimizer state they read, when the
  // result goes back to the same state: the write becomes redundant.
  for (Operation &op : block) {
    if (!isa<AdamWUpdateOp, SGDUpdateOp>(op))
      continue;
    unsigned stateOperands = isa<AdamWUpdateOp>(op) ? 4 : 3;
    for (unsigned i = 0; i < stateOperands; ++i) {
      if (i == 1)
        continue; // the gradient
      unsigned resultIndex = i == 0 ? 0 : i - 1;
      auto read = op.getOperand(i).getDefiningOp<ReadOp>();
      if (!read || !op.getOperand(i).hasOneUse())
        continue;
      for (Operation *user : op.getResult(resultIndex).getUsers())
        if (auto write = dyn_cast<WriteOp>(user);
            write && write.getName() == read.getName()) {
          elided.insert(write);
          inPlaceSource[op.getResult(resultIndex)] = op.getOperand(i);
        }
    }
  }

  // Last use of every value, at the effective position of its users; the
  // input of an asynchronous collective lives until the wait; the release
  // of a gathered buffer ends the life of the tensors unpacked from it.
  llvm::DenseMap<Value, unsigned> lastUse;
  auto use = [&](Value v, unsigned at) {
    auto [it, inserted] = lastUse.try_emplace(v, at);
    if (!inserted)
      it->second = std::max(it->second, at);
  };
  for (Operation &op : block) {
    unsigned at = effective(&op);
    if (auto release = dyn_cast<ReleaseOp>(op)) {
      for (Operation *user : release.getBuffer().getUsers())
        if (auto unpack = dyn_cast<UnpackOp>(user))
          for (Value result : unpack.getResults())
            use(result, at);
      continue;
    }
    for (Value operand : op.getOperands())
      use(operand, at);
    if (auto wait = dyn_cast<WaitOp>(op))
      use(wait.getFuture().getDefiningOp()->getOperand(0), at);
  }

  // The learning rate is returned to the runtime at the end of the step.
  for (Operation &op : block)
    if (auto schedule = dyn_cast<LRScheduleOp>(op))
      use(schedule.getResult(), position.lookup(block.getTerminator()));

  // A read must copy when its state is written while the read is live.
  for (Operation &op : block) {
    auto read = dyn_cast<ReadOp>(op);
    if (!read)
      continue;
    unsigned end = lastUse.lookup(read.getResult());
    for (Operation *next = read->getNextNode(); next; next = next->getNextNode()) {
      if (position.lookup(next) >= end)
        break;
      if (auto write = dyn_cast<WriteOp>(next);
          write && write.getName() == read.getName() && !elided.contains(write))
        copyingReads.insert(read);
    }
  }

  // Views keep their source alive; owned buffers die after their last use.
  auto sourceOf = [&](Value v) -> Value {
    if (Value source = inPlaceSource.lookup(v))
      return source;
    Operation *def = v.getDefiningOp();
    if (!def)
      return nullptr;
    if (auto reshape = dyn_cast<ReshapeOp>(def))
      return reshape.getInput();
    if (auto unpack = dyn_cast<UnpackOp>(def); unpack && unpack.getShards() == 1)
      return unpack.getInput();
    if (isa<shard::AllSliceOp>(def))
      return def->getOperand(0);
    if (auto wait = dyn_cast<WaitOp>(def))
      return wait.getFuture();
    if (auto dropout = dyn_cast<DropoutOp>(def); dropout && !dropout.getStep())
      return dropout.getInput(); // evaluation: the identity
    return nullptr;
  };
  SmallVector<Value> values;
  for (Operation &op : block)
    for (Value result : op.getResults())
      values.push_back(result);
  for (Value value : llvm::reverse(values)) {
    Value source = sourceOf(value);
    if (source && lastUse.count(value))
      use(source, lastUse.lookup(value));
  }
  SmallVector<Operation *> byPosition;
  for (Operation &op : block)
    byPosition.push_back(&op);
  for (Value value : values) {
    Operation *def = value.getDefiningOp();
    bool owns = !sourceOf(value) && !inlined.contains(def) &&
                isa<RankedTensorType>(value.getType()) && !isHostScalar(value) &&
                !(isa<ReadOp>(def) && !copyingReads.contains(def));
    if (!owns)
      continue;
    unsigned end = lastUse.count(value) ? lastUse.lookup(value) : position.lookup(def);
    deaths[byPosition[end]].push_back(value);
  }
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::string FunctionEmitter::cType(Type elementType) const {
  return dtypeRowOr64(elementType).cType;
}

std::string FunctionEmitter::dtype(Type elementType) const {
  return dtypeRowOr64(elementType).enumerator;
}

std::string FunctionEmitter::var(Value value) {
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  std::string name = "v" + std::to_string(nextName++);
  names[value] = name;
  return name;
}

std::string FunctionEmitter::ptr(Value value) {
  auto it = exprs.find(value);
  if (it != exprs.end())
    return it->second;
  return var(value);
}

void FunctionEmitter::define(Value value, Category category) {
  RankedTensorType type = typeOf(value);
  std::string ct = cType(type.getElementType());
  int64_t bytes = type.getNumElements() *
                  static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
  categories[value] = category;
  os << "  " << ct << " *" << var(value) << " = (" << ct << " *)zrt_alloc("
     << bytes << ", " << memCategoryName(static_cast<zrt_mem_category>(category))
     << "); /* " << shapeText(type) << " */\n";
}

void FunctionEmitter::alias(Value view, StringRef expr) {
  exprs[view] = expr.str();
}

void FunctionEmitter::freeDead(Operation *op) {
  auto it = deaths.find(op);
  if (it == deaths.end())
    return;
  for (Value value : it->second) {
    RankedTensorType type = typeOf(value);
    int64_t bytes = type.getNumElements() *
                    static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
    Category category = categories.count(value) ? categories.lookup(value)
                                                : Category::Activations;
    os << "  zrt_free(" << var(value) << ", " << bytes << ", "
       << memCategoryName(static_cast<zrt_mem_category>(category)) << ");\n";
  }
}

//===----------------------------------------------------------------------===//
// Elementwise loops
//===----------------------------------------------------------------------===//

std::string FunctionEmitter::loadExpr(Value value, ArrayRef<int64_t> shape,
                                      StringRef index) {
  Operation *def = value.getDefiningOp();
  if (def && inlined.contains(def))
    return scalarExpr(value, shape, index);
  RankedTensorType type = typeOf(value);
  ArrayRef<int64_t> own = type.getShape();
  std::string at;
  if (own == shape) {
    at = index.str();
  } else if (type.getNumElements() == 1) {
    at = "0";
  } else if (shape.drop_front(shape.size() - own.size()) == own) {
    // The operand repeats along the loop's leading dimensions (a bias).
    at = index.str() + " % " + std::to_string(type.getNumElements());
  } else {
    // NumPy broadcasting: sum over the loop's dimensions of the loop
    // coordinate times this operand's stride (0 where it is broadcast).
    size_t lead = shape.size() - own.size();
    int64_t loopStride = 1, ownStride = 1;
    SmallVector<std::string> terms;
    for (size_t d = shape.size(); d-- > 0;) {
      bool present = d >= lead && own[d - lead] != 1;
      if (present) {
        std::string coord = "(" + index.str() + " / " + std::to_string(loopStride) +
                            " % " + std::to_string(shape[d]) + ")";
        terms.push_back(ownStride == 1 ? coord
                                       : coord + " * " + std::to_string(ownStride));
      }
      if (d >= lead)
        ownStride *= own[d - lead];
      loopStride *= shape[d];
    }
    at = terms.empty() ? "0" : llvm::join(terms, " + ");
  }
  std::string base = ptr(value);
  if (inKernel) {
    auto [it, added] = kernelParams.try_emplace(
        value, "p" + std::to_string(kernelParams.size()));
    if (added)
      kernelArgs.push_back({value, base});
    base = it->second;
  }
  std::string load = base + "[" + at + "]";
  if (type.getElementType().isBF16())
    return (cuda ? "zc_bf16_to_f32(" : "zrt_bf16_to_f32(") + load + ")";
  return load;
}

std::string FunctionEmitter::scalarExpr(Value value, ArrayRef<int64_t> shape,
                                        StringRef index) {
  Operation *op = value.getDefiningOp();
  auto arg = [&](unsigned i) { return loadExpr(op->getOperand(i), shape, index); };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](AddOp) { return "(" + arg(0) + " + " + arg(1) + ")"; })
      .Case([&](SubOp) { return "(" + arg(0) + " - " + arg(1) + ")"; })
      .Case([&](MulOp) { return "(" + arg(0) + " * " + arg(1) + ")"; })
      .Case([&](DivOp) { return "(" + arg(0) + " / " + arg(1) + ")"; })
      .Case([&](ScaleOp s) {
        return "(" + arg(0) + " * " +
               literal(s.getFactorAttr().getValueAsDouble()) + "f)";
      })
      .Case([&](GeluOp g) {
        return std::string(g.getApproximation() == GeluApproximation::tanh
                               ? "zc_gelu_tanh("
                               : "zc_gelu_erf(") +
               arg(0) + ")";
      })
      .Case([&](GeluGradOp g) {
        return std::string(g.getApproximation() == GeluApproximation::tanh
                               ? "zc_gelu_tanh_grad("
                               : "zc_gelu_erf_grad(") +
               arg(0) + ", " + arg(1) + ")";
      })
      .Case([&](ReluOp) { return "zc_relu(" + arg(0) + ")"; })
      .Case([&](ReluGradOp) {
        return "zc_relu_grad(" + arg(0) + ", " + arg(1) + ")";
      })
      .Case([&](SqrtOp) { return "sqrtf(" + arg(0) + ")"; })
      .Case([&](SiluOp) { return "zc_silu(" + arg(0) + ")"; })
      .Case([&](SiluGradOp) {
        return "zc_silu_grad(" + arg(0) + ", " + arg(1) + ")";
      })
      .Case([&](CastOp) { return arg(0); })
      .Case([&](BroadcastOp) { return arg(0); })
      .Case([&](FillOp f) {
        return "(" + literal(f.getValueAttr().getValueAsDouble()) + "f)";
      })
      .Default([&](Operation *) { return std::string("0.0f"); });
}

LogicalResult FunctionEmitter::emitElementwiseRoot(Operation *op) {
  if (cuda)
    return emitElementwiseKernel(op);
  Value result = op->getResult(0);
  RankedTensorType type = typeOf(result);
  define(result, Category::Activations);
  std::string expr = scalarExpr(result, type.getShape(), "i");
  std::string store = type.getElementType().isBF16()
                          ? "zrt_f32_to_bf16(" + expr + ")"
                          : expr;
  int64_t n = type.getNumElements();
  os << (n >= 32768 ? "  #pragma omp parallel for simd\n" : "  #pragma omp simd\n");
  os << "  for (int64_t i = 0; i < " << n << "; ++i)\n"
     << "    " << var(result) << "[i] = " << store << ";\n";
  return success();
}

LogicalResult FunctionEmitter::emitElementwiseKernel(Operation *op) {
  Value result = op->getResult(0);
  RankedTensorType type = typeOf(result);
  define(result, Category::Activations);
  std::string name = "zc_" + functionName + "_k" + std::to_string(nextKernel++) +
                     "_" + op->getName().stripDialect().str();

  kernelParams.clear();
  kernelArgs.clear();
  inKernel = true;
  std::string expr = scalarExpr(result, type.getShape(), "i");
  inKernel = false;
  std::string store = type.getElementType().isBF16()
                          ? "zc_f32_to_bf16(" + expr + ")"
                          : expr;

  // The kernel: one thread per element of a grid-stride loop.
  std::string ct = cType(type.getElementType());
  kernelOs << "/* " << shapeText(type) << " */\n"
           << "__global__ void " << name << "(int64_t n, " << ct
           << " *__restrict__ out";
  for (auto &[value, host] : kernelArgs)
    kernelOs << ", const " << cType(typeOf(value).getElementType())
             << " *__restrict__ " << kernelParams.lookup(value);
  int64_t n = type.getNumElements();
  const char *index = n < (int64_t{1} << 31) - (int64_t{1} << 24) ? "int32_t"
                                                                : "int64_t";
  kernelOs << ") {\n  ZC_FOR(" << index << ", i, n) out[i] = " << store
           << ";\n}\n\n";

  // The launch: enough blocks of 256 threads for one element each, capped
  // (the loop strides over the rest).
  int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 8192));
  os << "  " << name << "<<<" << blocks << ", 256, 0, stream>>>(" << n << ", "
     << var(result);
  for (auto &[value, host] : kernelArgs)
    os << ", " << host;
  os << ");\n  zrt_check_launch(\"" << name << "\");\n";
  return success();
}

void FunctionEmitter::emitWait(Value started) {
  // CPU: blocks; CUDA: the compute stream waits, the host does not.
  os << "  zrt_wait(" << var(started) << "_request);\n";
}

bool FunctionEmitter::isHostScalar(Value value) const {
  if (isa_and_nonnull<LRScheduleOp>(value.getDefiningOp()))
    return true;
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getArgNumber() == 2; // the step of a train.step function
}

LogicalResult FunctionEmitter::checkHostScalarUses(Block &block) {
  // The GPU reads the step and the learning rate only through the
  // optimizer updates' scalar arguments; anything else would read host
  // memory from a kernel.
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      if (isHostScalar(operand) &&
          !isa<LRScheduleOp, AdamWUpdateOp, SGDUpdateOp, DropoutOp,
               func::ReturnOp>(op))
        return op.emitOpError("uses the ")
               << (isa<BlockArgument>(operand) ? "step number"
                                               : "learning rate")
               << " as a tensor, which the CUDA backend keeps on the host; "
                  "only the optimizer updates and dropout may read it";
  return success();
}

//===----------------------------------------------------------------------===//
// Other ops
//===----------------------------------------------------------------------===//

LogicalResult FunctionEmitter::emitUpdate(Operation *op) {
  bool adamw = isa<AdamWUpdateOp>(op);
  unsigned stateOperands = adamw ? 4 : 3;
  // Each state result either is its state (computed in place) or gets a
  // fresh copy of the operand to update.
  SmallVector<std::string> targets;
  for (unsigned i = 0; i < stateOperands; ++i) {
    if (i == 1)
      continue;
    unsigned r = i == 0 ? 0 : i - 1;
    Value operand = op->getOperand(i), result = op->getResult(r);
    if (inPlaceSource.count(result)) {
      alias(result, ptr(operand));
    } else {
      define(result, Category::Activations);
      os << "  zrt_copy(" << var(result) << ", " << ptr(operand) << ", "
         << numel(operand) * 4 << ");\n";
    }
    targets.push_back(ptr(result));
  }
  Value grad = op->getOperand(1);
  int64_t n = numel(grad);
  if (auto a = dyn_cast<AdamWUpdateOp>(op)) {
    os << "  zrt_adamw(" << targets[0] << ", " << ptr(grad) << ", " << targets[1]
       << ", " << targets[2] << ", " << n << ", " << ptr(a.getLr()) << "[0], "
       << ptr(a.getStep()) << "[0], " << literal(a.getBeta1Attr().getValueAsDouble())
       << ", " << literal(a.getBeta2Attr().getValueAsDouble()) << ", "
       << literal(a.getEpsAttr().getValueAsDouble()) << ", "
       << literal(a.getWeightDecayAttr().getValueAsDouble()) << ");\n";
  } else {
    auto s = cast<SGDUpdateOp>(op);
    os << "  zrt_sgd(" << targets[0] << ", " << ptr(grad) << ", " << targets[1]
       << ", " << n << ", " << ptr(s.getLr()) << "[0], "
       << literal(s.getMomentumAttr().getValueAsDouble()) << ", "
       << literal(s.getWeightDecayAttr().getValueAsDouble()) << ");\n";
  }
  return success();
}

LogicalResult FunctionEmitter::emitOp(Operation *op) {
  auto dt = [&](Value v) { return dtype(typeOf(v).getElementType()); };
  auto rowsOf = [&](Value v) {
    ArrayRef<int64_t> shape = typeOf(v).getShape();
    return numel(v) / (shape.empty() ? 1 : shape.back());
  };
  auto lastDim = [&](Value v) { return typeOf(v).getShape().back(); };
  auto stateRef = [&](StringRef name) {
    return "S[" + std::to_string(states.index.lookup(name)) + "].data";
  };
  auto pointerList = [&](ValueRange values, bool constant) {
    std::string text = constant ? "ZC_LIST(const void *, " : "ZC_LIST(void *, ";
    SmallVector<std::string> parts;
    for (Value v : values)
      parts.push_back(ptr(v));
    text += llvm::join(parts, ", ");
    return text + ")";
  };
  auto numels = [&](ValueRange values) {
    SmallVector<int64_t> n;
    for (Value v : values)
      n.push_back(numel(v));
    return ints(n);
  };
  auto startCollective = [&](Collective kind, Value input, Value result,
                             int64_t count, Category category) {
    define(result, category);
    // The same call for both runtimes; on a GPU the collective is ordered
    // with the compute stream's work.
    os << "  zrt_request *" << var(result) << "_request = "
       << runtimeStart(kind) << "(comm, "
       << ptr(input) << ", " << var(result) << ", " << count << ", "
       << dt(input) << ", " << (cuda ? "stream" : "NULL") << ");\n";
  };
  auto collectiveCategory = [&](Operation *start) {
    return isa<AllGatherStartOp, shard::AllGatherOp>(start) ? Category::Gathered
                                                            : Category::Buckets;
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ReadOp read) {
        std::string ct = cType(read.getType().getElementType());
        std::string state = "((" + ct + " *)" + stateRef(read.getName()) + ")";
        if (!copyingReads.contains(read)) {
          alias(read.getResult(), state);
          return success();
        }
        define(read.getResult(), Category::Activations);
        os << "  zrt_copy(" << var(read.getResult()) << ", " << state << ", "
           << numel(read.getResult()) * (read.getType().getElementTypeBitWidth() / 8)
           << "); /* @" << read.getName() << " changes while this copy is live */\n";
        return success();
      })
      .Case([&](WriteOp write) {
        if (elided.contains(write))
          return success();
        os << "  zrt_copy(" << stateRef(write.getName()) << ", "
           << ptr(write.getValue()) << ", "
           << numel(write.getValue()) *
                  (typeOf(write.getValue()).getElementTypeBitWidth() / 8)
           << "); /* -> @" << write.getName() << " */\n";
        return success();
      })
      .Case([&](ReshapeOp reshape) {
        alias(reshape.getResult(), ptr(reshape.getInput()));
        return success();
      })
      .Case([&](MatmulOp mm) {
        ArrayRef<int64_t> a = typeOf(mm.getLhs()).getShape();
        ArrayRef<int64_t> b = typeOf(mm.getRhs()).getShape();
        int64_t m = a[a.size() - (mm.getTransposeLhs() ? 1 : 2)];
        int64_t k = a[a.size() - (mm.getTransposeLhs() ? 2 : 1)];
        int64_t n = b[b.size() - (mm.getTransposeRhs() ? 2 : 1)];
        int64_t batch = numel(mm.getLhs()) / (m * k);
        int64_t strideB = b.size() > 2 ? k * n : 0;
        // A weight shared by the batch: one GEMM over every row at once.
        if (strideB == 0 && !mm.getTransposeLhs()) {
          m *= batch;
          batch = 1;
        }
        define(mm.getResult(), Category::Activations);
        os << "  zrt_matmul(" << dt(mm.getLhs()) << ", " << ptr(mm.getLhs())
           << ", " << ptr(mm.getRhs()) << ", " << var(mm.getResult()) << ", "
           << batch << ", " << m << ", " << n << ", " << k << ", "
           << (mm.getTransposeLhs() ? "ZRT_TRANS" : "ZRT_NO_TRANS") << ", "
           << (mm.getTransposeRhs() ? "ZRT_TRANS" : "ZRT_NO_TRANS") << ", "
           << m * k << ", " << strideB
           << ", " << m * n << ");\n";
        return success();
      })
      .Case([&](LayerNormOp ln) {
        define(ln.getResult(), Category::Activations);
        os << "  zrt_layernorm(" << dt(ln.getInput()) << ", " << ptr(ln.getInput())
           << ", " << ptr(ln.getWeight()) << ", " << ptr(ln.getBias()) << ", "
           << var(ln.getResult()) << ", " << rowsOf(ln.getInput()) << ", "
           << lastDim(ln.getInput()) << ", "
           << literal(ln.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](LayerNormGradOp g) {
        for (Value r : g.getResults())
          define(r, Category::Activations);
        os << "  zrt_layernorm_grad(" << dt(g.getInput()) << ", " << ptr(g.getGrad())
           << ", " << ptr(g.getInput()) << ", " << ptr(g.getWeight()) << ", "
           << var(g.getInputGrad()) << ", " << var(g.getWeightGrad()) << ", "
           << var(g.getBiasGrad()) << ", " << rowsOf(g.getInput()) << ", "
           << lastDim(g.getInput()) << ", "
           << literal(g.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](SoftmaxOp s) {
        define(s.getResult(), Category::Activations);
        os << "  zrt_softmax(" << dt(s.getInput()) << ", " << ptr(s.getInput())
           << ", " << var(s.getResult()) << ", " << rowsOf(s.getInput()) << ", "
           << lastDim(s.getInput()) << ");\n";
        return success();
      })
      .Case([&](SoftmaxGradOp s) {
        define(s.getResult(), Category::Activations);
        os << "  zrt_softmax_grad(" << dt(s.getGrad()) << ", " << ptr(s.getGrad())
           << ", " << ptr(s.getOutput()) << ", " << var(s.getResult()) << ", "
           << rowsOf(s.getGrad()) << ", " << lastDim(s.getGrad()) << ");\n";
        return success();
      })
      .Case([&](CausalMaskOp c) {
        ArrayRef<int64_t> shape = typeOf(c.getInput()).getShape();
        int64_t t = shape[shape.size() - 2], s = shape.back();
        define(c.getResult(), Category::Activations);
        os << "  zrt_causal_mask(" << dt(c.getInput()) << ", " << ptr(c.getInput())
           << ", " << var(c.getResult()) << ", " << numel(c.getInput()) / (t * s)
           << ", " << t << ", " << s << ", "
           << (c.getZero() ? "ZRT_MASK_ZERO" : "ZRT_MASK_NEG_INF") << ");\n";
        return success();
      })
      .Case([&](AttentionOp a) {
        ArrayRef<int64_t> q = typeOf(a.getQuery()).getShape();
        int64_t s = typeOf(a.getKey()).getShape()[2];
        define(a.getResult(), Category::Activations);
        int64_t group = q[1] / typeOf(a.getKey()).getShape()[1];
        os << "  zrt_attention(" << dt(a.getQuery()) << ", " << ptr(a.getQuery())
           << ", " << ptr(a.getKey()) << ", " << ptr(a.getValue()) << ", "
           << var(a.getResult()) << ", " << q[0] * q[1] << ", " << group
           << ", " << q[2] << ", " << s
           << ", " << q[3] << ", " << literal(a.getScaleAttr().getValueAsDouble())
           << ", "
           << (a.getCausal() ? "ZRT_ATTENTION_CAUSAL" : "ZRT_ATTENTION_FULL")
           << ");\n";
        return success();
      })
      .Case([&](AttentionGradOp a) {
        ArrayRef<int64_t> q = typeOf(a.getQuery()).getShape();
        int64_t s = typeOf(a.getKey()).getShape()[2];
        int64_t group = q[1] / typeOf(a.getKey()).getShape()[1];
        for (Value r : a.getResults())
          define(r, Category::Activations);
        os << "  zrt_attention_grad(" << dt(a.getQuery()) << ", " << ptr(a.getGrad())
           << ", " << ptr(a.getQuery()) << ", " << ptr(a.getKey()) << ", "
           << ptr(a.getValue()) << ", " << var(a.getQueryGrad()) << ", "
           << var(a.getKeyGrad()) << ", " << var(a.getValueGrad()) << ", "
           << q[0] * q[1] << ", " << group << ", " << q[2] << ", " << s << ", "
           << q[3] << ", "
           << literal(a.getScaleAttr().getValueAsDouble()) << ", "
           << (a.getCausal() ? "ZRT_ATTENTION_CAUSAL" : "ZRT_ATTENTION_FULL")
           << ");\n";
        return success();
      })
      .Case([&](CrossEntropyOp ce) {
        define(ce.getLoss(), Category::Activations);
        os << "  zrt_cross_entropy(" << dt(ce.getLogits()) << ", "
           << ptr(ce.getLogits()) << ", " << ptr(ce.getTargets()) << ", "
           << dt(ce.getTargets()) << ", " << rowsOf(ce.getLogits()) << ", "
           << lastDim(ce.getLogits()) << ", " << var(ce.getLoss()) << ");\n";
        return success();
      })
      .Case([&](CrossEntropyGradOp ce) {
        define(ce.getResult(), Category::Activations);
        os << "  zrt_cross_entropy_grad(" << dt(ce.getLogits()) << ", "
           << ptr(ce.getGrad()) << ", " << ptr(ce.getLogits()) << ", "
           << ptr(ce.getTargets()) << ", " << dt(ce.getTargets()) << ", "
           << var(ce.getResult()) << ", " << rowsOf(ce.getLogits()) << ", "
           << lastDim(ce.getLogits()) << ");\n";
        return success();
      })
      .Case([&](EmbeddingOp e) {
        ArrayRef<int64_t> table = typeOf(e.getTable()).getShape();
        define(e.getResult(), Category::Activations);
        os << "  zrt_embedding(" << dt(e.getTable()) << ", " << ptr(e.getTable())
           << ", " << ptr(e.getIds()) << ", " << dt(e.getIds()) << ", "
           << var(e.getResult()) << ", " << numel(e.getIds()) << ", " << table[0]
           << ", " << table[1] << ");\n";
        return success();
      })
      .Case([&](EmbeddingGradOp e) {
        ArrayRef<int64_t> table = typeOf(e.getResult()).getShape();
        define(e.getResult(), Category::Activations);
        os << "  zrt_embedding_grad(" << dt(e.getGrad()) << ", " << ptr(e.getGrad())
           << ", " << ptr(e.getIds()) << ", " << dt(e.getIds()) << ", "
           << var(e.getResult()) << ", " << numel(e.getIds()) << ", " << table[0]
           << ", " << table[1] << ");\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> shape = typeOf(t.getInput()).getShape();
        define(t.getResult(), Category::Activations);
        os << "  zrt_transpose(" << dt(t.getInput()) << ", " << ptr(t.getInput())
           << ", " << var(t.getResult()) << ", " << shape.size()
           << ", " << ints(shape) << ", "
           << ints(t.getPermutation()) << ");\n";
        return success();
      })
      .Case<SumOp, MeanOp>([&](auto r) {
        ArrayRef<int64_t> shape = typeOf(r.getInput()).getShape();
        SmallVector<int64_t> flags(shape.size(), 0);
        int64_t count = 1;
        for (int64_t d : r.getDims()) {
          flags[d] = 1;
          count *= shape[d];
        }
        double scale = isa<MeanOp>(r.getOperation()) ? 1.0 / count : 1.0;
        define(r.getResult(), Category::Activations);
        os << "  zrt_reduce_sum(" << dt(r.getInput()) << ", " << ptr(r.getInput())
           << ", " << var(r.getResult()) << ", " << shape.size()
           << ", " << ints(shape) << ", "
           << ints(flags, "uint8_t") << ", " << literal(scale) << ");\n";
        return success();
      })
      .Case([&](SplitOp s) {
        ArrayRef<int64_t> shape = typeOf(s.getInput()).getShape();
        int64_t dim = s.getDim(), outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (size_t d = dim + 1; d < shape.size(); ++d)
          inner *= shape[d];
        SmallVector<int64_t> sizes;
        for (Value r : s.getResults()) {
          define(r, Category::Activations);
          sizes.push_back(typeOf(r).getShape()[dim]);
        }
        os << "  zrt_split(" << dt(s.getInput()) << ", " << ptr(s.getInput()) << ", "
           << s.getNumResults() << ", " << pointerList(s.getResults(), false)
           << ", " << ints(sizes) << ", " << outer << ", " << inner
           << ");\n";
        return success();
      })
      .Case([&](ConcatOp c) {
        ArrayRef<int64_t> shape = typeOf(c.getResult()).getShape();
        int64_t dim = c.getDim(), outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (size_t d = dim + 1; d < shape.size(); ++d)
          inner *= shape[d];
        SmallVector<int64_t> sizes;
        for (Value v : c.getInputs())
          sizes.push_back(typeOf(v).getShape()[dim]);
        define(c.getResult(), Category::Activations);
        os << "  zrt_concat(" << dt(c.getResult()) << ", " << c.getInputs().size()
           << ", " << pointerList(c.getInputs(), true) << ", "
           << ints(sizes) << ", " << var(c.getResult()) << ", " << outer << ", "
           << inner << ");\n";
        return success();
      })
      .Case([&](PackOp p) {
        Category category = Category::Activations;
        for (Operation *user : p.getResult().getUsers())
          if (isa<AllReduceStartOp, ReduceScatterStartOp, AllGatherStartOp,
                  shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp>(
                  user))
            category = collectiveCategory(user);
        define(p.getResult(), category);
        os << "  zrt_pack(" << dt(p.getResult()) << ", " << p.getInputs().size()
           << ", " << pointerList(p.getInputs(), true) << ", "
           << numels(p.getInputs()) << ", " << var(p.getResult()) << ", "
           << p.getShards() << ");\n";
        return success();
      })
      .Case([&](UnpackOp u) {
        if (u.getShards() == 1) {
          int64_t offset = 0;
          for (Value r : u.getResults()) {
            alias(r, "(" + ptr(u.getInput()) + " + " + std::to_string(offset) + ")");
            offset += numel(r);
          }
          return success();
        }
        Category category = categories.count(u.getInput())
                                ? categories.lookup(u.getInput())
                                : Category::Activations;
        Value source = u.getInput();
        while (!categories.count(source) && source.getDefiningOp() &&
               isa<WaitOp>(source.getDefiningOp()))
          source = cast<WaitOp>(source.getDefiningOp()).getFuture();
        if (categories.count(source))
          category = categories.lookup(source);
        for (Value r : u.getResults())
          define(r, category);
        os << "  zrt_unpack(" << dt(u.getInput()) << ", " << ptr(u.getInput())
           << ", " << u.getNumResults() << ", " << pointerList(u.getResults(), false)
           << ", " << numels(u.getResults()) << ", " << u.getShards() << ");\n";
        return success();
      })
      .Case([&](SquaredNormOp s) {
        define(s.getResult(), Category::Activations);
        os << "  zrt_squared_norm(" << dt(s.getInput()) << ", "
           << ptr(s.getInput()) << ", " << numel(s.getInput()) << ", "
           << var(s.getResult()) << ");\n";
        return success();
      })
      .Case([&](ClipCoefOp c) {
        define(c.getResult(), Category::Activations);
        os << "  zrt_clip_coef(" << ptr(c.getSquaredNorm()) << ", "
           << literal(c.getMaxNormAttr().getValueAsDouble()) << ", "
           << var(c.getResult()) << ");\n";
        return success();
      })
      .Case([&](LRScheduleOp l) {
        // On the host: it depends on the step alone.
        os << "  const float " << var(l.getResult()) << "[1] = {zrt_lr_schedule("
           << ptr(l.getStep()) << "[0], " << literal(l.getLrAttr().getValueAsDouble())
           << ", "
           << (l.getSchedule() == LRSchedule::cosine ? "ZRT_LR_COSINE"
                                                     : "ZRT_LR_CONSTANT")
           << ", "
           << l.getWarmup() << ", " << literal(l.getMinLrAttr().getValueAsDouble())
           << ", " << l.getMaxSteps() << ")};\n";
        return success();
      })
      .Case<AdamWUpdateOp, SGDUpdateOp>([&](Operation *u) { return emitUpdate(u); })
      .Case<RmsNormOp, RmsNormGradOp, RopeOp, SliceOp, SliceGradOp, DropoutOp>(
          [&](Operation *l) { return emitLlamaOp(l); })
      .Case([&](AllReduceStartOp s) {
        startCollective(Collective::AllReduce, s.getInput(), s.getResult(),
                        numel(s.getInput()), Category::Buckets);
        return success();
      })
      .Case([&](ReduceScatterStartOp s) {
        startCollective(Collective::ReduceScatter, s.getInput(), s.getResult(),
                        numel(s.getResult()), Category::Buckets);
        return success();
      })
      .Case([&](AllGatherStartOp s) {
        startCollective(Collective::AllGather, s.getInput(), s.getResult(),
                        numel(s.getInput()), Category::Gathered);
        return success();
      })
      .Case([&](WaitOp w) {
        Value started = w.getFuture();
        emitWait(started);
        alias(w.getResult(), ptr(started));
        return success();
      })
      .Case<shard::AllReduceOp, shard::ReduceScatterOp, shard::AllGatherOp>(
          [&](Operation *c) {
            // Not scheduled: a blocking collective (start, then wait).
            Collective kind = isa<shard::AllReduceOp>(c) ? Collective::AllReduce
                              : isa<shard::ReduceScatterOp>(c)
                                  ? Collective::ReduceScatter
                                  : Collective::AllGather;
            Value in = c->getOperand(0), out = c->getResult(0);
            int64_t count = isa<shard::ReduceScatterOp>(c) ? numel(out) : numel(in);
            startCollective(kind, in, out, count, collectiveCategory(c));
            emitWait(out);
            return success();
          })
      .Case([&](shard::AllSliceOp s) {
        int64_t k = numel(s.getResult());
        alias(s.getResult(), "(" + ptr(s.getInput()) + " + (int64_t)zrt_rank(comm) * " +
                  std::to_string(k) + ")");
        return success();
      })
      .Case([&](ReleaseOp r) {
        os << "  /* release " << ptr(r.getBuffer())
           << ": the gathered parameters die here */\n";
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        if (isElementwise(other))
          return emitElementwiseRoot(other);
        return other->emitOpError("has no lowering in zeroc's ")
               << (cuda ? "CUDA" : "C++ (CPU)") << " backend";
      });
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

LogicalResult FunctionEmitter::emit(func::FuncOp func, StringRef name,
                                    Kind kind) {
  Block &block = func.getBody().front();
  functionName = name.str();
  bool isStep = kind == Kind::Step;
  unsigned expected = isStep ? 3 : kind == Kind::Forward ? 2 : 1;
  if (block.getNumArguments() != expected)
    return func.emitError("the C++ backend expects (tokens")
           << (kind == Kind::Logits ? ")"
               : isStep             ? ", targets, step)"
                                    : ", targets)")
           << " arguments";
  if (cuda && isStep && failed(checkHostScalarUses(block)))
    return failure();
  plan(block);
  os << "static void " << name << "(zrt_comm *comm, const void *tokens, ";
  if (kind == Kind::Logits)
    os << "float *logits) {\n";
  else
    os << "const void *targets, "
       << (isStep ? "int64_t step, float *loss, float *grad_norm, float *lr"
                  : "float *loss")
       << ") {\n";
  os << "  (void)comm; /* for programs without collectives */\n";
  if (cuda)
    os << "  cudaStream_t stream = (cudaStream_t)zrt_compute_stream();\n";
  auto bindArg = [&](BlockArgument arg, StringRef from) {
    std::string ct = cType(typeOf(arg).getElementType());
    exprs[arg] = "((const " + ct + " *)" + from.str() + ")";
  };
  bindArg(block.getArgument(0), "tokens");
  if (kind != Kind::Logits)
    bindArg(block.getArgument(1), "targets");
  if (isStep) {
    os << "  const int64_t step_arg[1] = {step};\n";
    exprs[block.getArgument(2)] = "step_arg";
  }
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // The values the host needs: read back (on a GPU, the step's one
      // synchronisation).
      auto readBack = [&](StringRef to, Value value) {
        os << "  zrt_read_f32(" << to << ", " << ptr(value) << ", "
           << dtype(typeOf(value).getElementType()) << ", " << numel(value)
           << ");\n";
      };
      if (kind == Kind::Logits) {
        readBack("logits", ret.getOperand(0));
        freeDead(&op);
        continue;
      }
      readBack("loss", ret.getOperand(0));
      if (isStep) {
        readBack("grad_norm", ret.getOperand(1));
        LRScheduleOp schedule;
        block.walk([&](LRScheduleOp op) { schedule = op; });
        os << "  *lr = " << (schedule ? ptr(schedule.getResult()) + "[0]" : "0.0f")
           << ";\n";
      }
      freeDead(&op);
      continue;
    }
    if (isInlined(&op))
      continue;
    TraceHook::Scope traced(traceHook, bodyText, &op, isStep);
    if (failed(emitOp(&op)))
      return failure();
    freeDead(&op);
  }
  os << "}\n\n";
  out << kernelText << bodyText;
  return success();
}

} // namespace zeroc::cpp
