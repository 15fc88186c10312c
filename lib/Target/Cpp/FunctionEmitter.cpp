//===- FunctionEmitter.cpp - one planned func.func as C++ or CUDA C++ ----===//
//
// Prints a function in buffer form (train.planned; docs/backend.md). The
// plan says everything: each memref.alloc / memref.dealloc is zrt_alloc /
// zrt_free in its train.category, views (memref.reinterpret_cast) are
// pointer arithmetic, train.storage is the state table's pointer, and each
// train.kernel is the runtime call of its op (zrt.h) or, for a train.fused
// body, one loop: an OpenMP loop on the CPU, a grid-stride __global__
// kernel on CUDA (written before the function, launched on the runtime's
// compute stream) whose parameters are the region's inputs. The printer
// checks what it relies on (updates in place) and decides nothing.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include <type_traits>

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

/// zrt.h's name of a memory category.
const char *categoryName(MemoryCategory category) {
  switch (category) {
  case MemoryCategory::parameters:
    return "ZRT_MEM_PARAMETERS";
  case MemoryCategory::gradients:
    return "ZRT_MEM_GRADIENTS";
  case MemoryCategory::optimizer_states:
    return "ZRT_MEM_OPTIMIZER_STATES";
  case MemoryCategory::gathered_parameters:
    return "ZRT_MEM_GATHERED_PARAMETERS";
  case MemoryCategory::gradient_buckets:
    return "ZRT_MEM_GRADIENT_BUCKETS";
  case MemoryCategory::activations:
    return "ZRT_MEM_ACTIVATIONS";
  }
  return "ZRT_MEM_ACTIVATIONS";
}

namespace {

int64_t numel(Value value) { return shapedTypeOf(value).getNumElements(); }

int64_t bytesOf(Value value) {
  ShapedType type = shapedTypeOf(value);
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

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

const char *categoryOf(memref::AllocOp alloc) {
  auto attr = dyn_cast_or_null<MemoryCategoryAttr>(
      trainDialect(alloc).getCategoryAttrHelper().getAttr(alloc));
  return categoryName(attr ? attr.getValue() : MemoryCategory::activations);
}

/// The runtime's function for each collective (both runtimes).
const char *runtimeStart(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::all_reduce:
    return "zrt_all_reduce_start";
  case CollectiveKind::reduce_scatter:
    return "zrt_reduce_scatter_start";
  case CollectiveKind::all_gather:
    return "zrt_all_gather_start";
  }
  return "";
}

} // namespace

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::string FunctionEmitter::cType(Type elementType) const {
  if (elementType.isF32())
    return "float";
  if (elementType.isBF16())
    return "uint16_t";
  if (elementType.isInteger(32))
    return "int32_t";
  return "int64_t";
}

std::string FunctionEmitter::dtype(Type elementType) const {
  if (elementType.isF32())
    return "ZRT_F32";
  if (elementType.isBF16())
    return "ZRT_BF16";
  if (elementType.isInteger(32))
    return "ZRT_I32";
  return "ZRT_I64";
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

std::string FunctionEmitter::index(Value value) { return ptr(value); }

//===----------------------------------------------------------------------===//
// Fused elementwise loops
//===----------------------------------------------------------------------===//

std::string FunctionEmitter::loadExpr(Value value, ArrayRef<int64_t> shape,
                                      StringRef index) {
  Operation *def = value.getDefiningOp();
  if (def && isa<FusedOp>(def->getParentOp()))
    return scalarExpr(value, shape, index);
  ShapedType type = shapedTypeOf(value);
  ArrayRef<int64_t> own = type.getShape();
  std::string at;
  if (own == shape) {
    at = index.str();
  } else if (type.getNumElements() == 1) {
    at = "0";
  } else if (shape.drop_front(shape.size() - own.size()) == own) {
    // The operand repeats along the loop's leading dimensions (a bias).
    int64_t period = type.getNumElements();
    if (rowLength && period == rowLength)
      at = "j";
    else if (rowLength && period % rowLength == 0)
      at = "r * " + std::to_string(rowLength) + " % " + std::to_string(period) +
           " + j";
    else
      at = index.str() + " % " + std::to_string(period);
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
  // The op's own formula (ScalarFormulaOpInterface, which the Elementwise
  // trait's verifier requires of every op a fused body holds), with its
  // operands' element expressions for $i and its constants as f32
  // literals for #i.
  Operation *op = value.getDefiningOp();
  return cast<ScalarFormulaOpInterface>(op).getScalarFormula().expand(
      [&](unsigned i) { return loadExpr(op->getOperand(i), shape, index); },
      // INFINITY is already a float; a finite literal takes the f suffix.
      [](double c) { return std::isinf(c) ? literal(c) : literal(c) + "f"; });
}

LogicalResult FunctionEmitter::emitFusedLoop(FusedOp fused, Value out) {
  ShapedType type = shapedTypeOf(out);
  Block &body = fused.getBody().front();
  Value result = cast<YieldOp>(body.getTerminator()).getValues().front();
  int64_t n = type.getNumElements();
  // An operand repeated along the loop's leading dimensions (a bias) read
  // as `x[i % period]` is a gather, and GCC keeps such a loop scalar unless
  // the period is a power of two. Written as rows of the shortest period
  // (when every period is a multiple of it), each row is a unit-stride
  // inner loop that vectorizes.
  ArrayRef<int64_t> shape = type.getShape();
  // The period of an operand loadExpr reads as `x[i % period]`, else 0.
  auto period = [&](BlockArgument arg) -> int64_t {
    ShapedType own = shapedTypeOf(arg);
    if (arg.use_empty() || own.getShape() == shape ||
        own.getNumElements() == 1 ||
        shape.drop_front(shape.size() - own.getRank()) != own.getShape())
      return 0;
    return own.getNumElements();
  };
  int64_t row = 0;
  for (BlockArgument arg : body.getArguments())
    if (int64_t p = period(arg))
      row = row ? std::min(row, p) : p;
  for (BlockArgument arg : body.getArguments())
    if (int64_t p = period(arg); row && p && p % row != 0)
      row = 0;
  if (cuda || row < 8 || n % row != 0 || n == row)
    row = 0;
  rowLength = row;
  std::string expr = scalarExpr(result, shape, "i");
  rowLength = 0;
  std::string store = type.getElementType().isBF16()
                          ? "zrt_f32_to_bf16(" + expr + ")"
                          : expr;
  if (row) {
    os << (n >= 32768 ? "  #pragma omp parallel for\n" : "")
       << "  for (int64_t r = 0; r < " << n / row << "; ++r) {\n"
       << "    #pragma omp simd\n"
       << "    for (int64_t j = 0; j < " << row << "; ++j) {\n"
       << "      const int64_t i = r * " << row << " + j;\n"
       << "      " << ptr(out) << "[i] = " << store << ";\n"
       << "    }\n"
       << "  }\n";
    return success();
  }
  if (!cuda)
    os << (n >= 32768 ? "  #pragma omp parallel for simd\n"
                      : "  #pragma omp simd\n");
  os << "  for (int64_t i = 0; i < " << n << "; ++i)\n"
     << "    " << ptr(out) << "[i] = " << store << ";\n";
  return success();
}

LogicalResult FunctionEmitter::emitFusedKernel(FusedOp fused, Value out) {
  ShapedType type = shapedTypeOf(out);
  Value result = cast<YieldOp>(fused.getBody().front().getTerminator())
                     .getValues()
                     .front();
  Operation *root = result.getDefiningOp();
  std::string name = "zc_" + functionName + "_k" + std::to_string(nextKernel++) +
                     "_" +
                     (root ? root->getName().stripDialect().str()
                           : std::string("copy"));

  kernelParams.clear();
  kernelArgs.clear();
  inKernel = true;
  std::string expr = scalarExpr(result, type.getShape(), "i");
  inKernel = false;
  std::string store = type.getElementType().isBF16()
                          ? "zc_f32_to_bf16(" + expr + ")"
                          : expr;

  // The kernel: one thread per element of a grid-stride loop. In place
  // (an input is the output's buffer, as train-bufferize plans a bucket's
  // averaging) the pointers may alias, so none is __restrict__.
  std::string ct = cType(type.getElementType());
  bool inPlace = llvm::any_of(kernelArgs, [&](const auto &arg) {
    return arg.second == ptr(out);
  });
  const char *restrict = inPlace ? " *" : " *__restrict__ ";
  kernelOs << "/* " << shapeText(RankedTensorType::get(type.getShape(),
                                                      type.getElementType()))
           << " */\n"
           << "__global__ void " << name << "(int64_t n, " << ct << restrict
           << "out";
  for (auto &[value, host] : kernelArgs)
    kernelOs << ", const " << cType(shapedTypeOf(value).getElementType())
             << restrict << kernelParams.lookup(value);
  int64_t n = type.getNumElements();
  const char *index = n < (int64_t{1} << 31) - (int64_t{1} << 24) ? "int32_t"
                                                                : "int64_t";
  kernelOs << ") {\n  ZC_FOR(" << index << ", i, n) out[i] = " << store
           << ";\n}\n\n";

  // The launch: enough blocks of 256 threads for one element each, capped
  // (the loop strides over the rest).
  int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 8192));
  os << "  " << name << "<<<" << blocks << ", 256, 0, stream>>>(" << n << ", "
     << ptr(out);
  for (auto &[value, host] : kernelArgs)
    os << ", " << host;
  os << ");\n  zrt_check_launch(\"" << name << "\");\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult FunctionEmitter::emitKernel(KernelOp kernel) {
  Operation *op = kernel.getSingleOp();
  if (!op)
    return kernel.emitOpError("must run one op (run train-verify-emittable)");
  Block &body = kernel.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), kernel.getIns()))
    alias(arg, ptr(in));
  auto yield = cast<YieldOp>(body.getTerminator());
  for (auto [value, out] : llvm::zip(yield.getValues(), kernel.getOuts()))
    alias(value, ptr(out));

  if (auto fused = dyn_cast<FusedOp>(op)) {
    Block &region = fused.getBody().front();
    for (auto [arg, input] : llvm::zip(region.getArguments(), fused.getInputs()))
      alias(arg, ptr(input));
    // Host memory (a constant learning rate) is written by the host.
    Value out = kernel.getOuts().front();
    bool host = isa_and_nonnull<HostMemoryAttr>(
        cast<MemRefType>(out.getType()).getMemorySpace());
    return cuda && !host ? emitFusedKernel(fused, out)
                         : emitFusedLoop(fused, out);
  }
  if (auto schedule = dyn_cast<LRScheduleOp>(op)) {
    // On the host: it depends on the step alone.
    os << "  " << ptr(schedule.getResult()) << "[0] = zrt_lr_schedule("
       << ptr(schedule.getStep()) << "[0], "
       << literal(schedule.getLrAttr().getValueAsDouble()) << ", "
       << (schedule.getSchedule() == LRSchedule::cosine ? "ZRT_LR_COSINE"
                                                        : "ZRT_LR_CONSTANT")
       << ", "
       << schedule.getWarmup() << ", "
       << literal(schedule.getMinLrAttr().getValueAsDouble()) << ", "
       << schedule.getMaxSteps() << ");\n";
    return success();
  }
  if (isa<AdamWUpdateOp, SGDUpdateOp>(op)) {
    // The runtime updates in place: each state result must be its operand's
    // buffer (train-bufferize copies a state operand that is not).
    unsigned states = isa<AdamWUpdateOp>(op) ? 4 : 3;
    for (unsigned i = 0; i < states; ++i) {
      if (i == 1)
        continue;
      unsigned r = i == 0 ? 0 : i - 1;
      if (kernel.getIns()[i] != kernel.getOuts()[r])
        return kernel.emitOpError("updates operand #")
               << i << " out of place; the runtime's optimizer kernels update "
               << "in place (train-bufferize copies the state first)";
    }
    return emitUpdate(op);
  }
  return emitCall(op);
}

LogicalResult FunctionEmitter::emitUpdate(Operation *op) {
  Value grad = op->getOperand(1);
  int64_t n = numel(grad);
  auto ranges = op->getAttrOfType<DenseI64ArrayAttr>("decay_ranges");
  if (ranges) {
    // A rank's shard of a sharded flat buffer: the segments that take
    // weight decay, in the buffer's logical indices; the shard starts at
    // rank * n (at 0 when every rank updates the whole buffer).
    ArrayRef<int64_t> r = ranges.asArrayRef();
    SmallVector<std::string> begins, ends, flags;
    for (size_t k = 0; k + 1 < r.size(); k += 2) {
      begins.push_back(std::to_string(r[k]));
      ends.push_back(std::to_string(r[k + 1]));
      flags.push_back("1");
    }
    // A zero-length array is not C++: one unused entry when there is none.
    auto list = [](ArrayRef<std::string> items) {
      return items.empty() ? std::string("0") : llvm::join(items, ", ");
    };
    os << "  {\n"
       << "    static const int64_t zc_begin[] = {" << list(begins) << "};\n"
       << "    static const int64_t zc_end[] = {" << list(ends) << "};\n"
       << "    static const uint8_t zc_decay[] = {" << list(flags) << "};\n";
  }
  std::string segments =
      ranges ? std::string(op->hasAttr("replicated")
                               ? ", (int64_t)0, "
                               : ", (int64_t)zrt_rank(comm) * " +
                                     std::to_string(n) + ", ") +
                   std::to_string(ranges.size() / 2) +
                   ", zc_begin, zc_end, zc_decay"
             : "";
  StringRef close = ranges ? "  }\n" : "";
  if (auto a = dyn_cast<AdamWUpdateOp>(op)) {
    // grad_scale (train-fuse-optimizer's clipping coefficient) is read by
    // the kernel, where it lives (device memory on a GPU).
    std::string scale =
        a.getGradScale() ? ptr(a.getGradScale()) : std::string("nullptr");
    os << "  " << (ranges ? "  zrt_adamw_buffer(" : "zrt_adamw(")
       << ptr(a.getParam()) << ", " << ptr(grad) << ", " << scale << ", "
       << ptr(a.getExpAvg()) << ", " << ptr(a.getExpAvgSq()) << ", " << n
       << segments << ", " << ptr(a.getLr()) << "[0], " << ptr(a.getStep())
       << "[0], "
       << literal(a.getBeta1Attr().getValueAsDouble()) << ", "
       << literal(a.getBeta2Attr().getValueAsDouble()) << ", "
       << literal(a.getEpsAttr().getValueAsDouble()) << ", "
       << literal(a.getWeightDecayAttr().getValueAsDouble()) << ");\n"
       << close;
    return success();
  }
  auto s = cast<SGDUpdateOp>(op);
  os << "  " << (ranges ? "  zrt_sgd_buffer(" : "zrt_sgd(") << ptr(s.getParam())
     << ", " << ptr(grad) << ", " << ptr(s.getMomentumBuffer()) << ", " << n
     << segments << ", " << ptr(s.getLr()) << "[0], "
     << literal(s.getMomentumAttr().getValueAsDouble()) << ", "
     << literal(s.getWeightDecayAttr().getValueAsDouble()) << ");\n" << close;
  return success();
}

LogicalResult FunctionEmitter::emitCall(Operation *op) {
  auto dt = [&](Value v) { return dtype(shapedTypeOf(v).getElementType()); };
  auto rowsOf = [&](Value v) {
    ArrayRef<int64_t> shape = shapedTypeOf(v).getShape();
    return numel(v) / (shape.empty() ? 1 : shape.back());
  };
  auto lastDim = [&](Value v) { return shapedTypeOf(v).getShape().back(); };
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
  // train.cross_entropy and its gradient with ignore_index or
  // label_smoothing call the _ex kernels, whose extra arguments follow the
  // shape: has_ignore_index, ignore_index, label_smoothing, count.
  auto isExtendedCrossEntropy = [](auto ce) {
    return ce.getIgnoreIndexAttr() || ce.getLabelSmoothingAttr();
  };
  // zrt_attention_dropout's trailing arguments for train.attention(_grad)
  // with a dropout and a step (zrt_dropout's, for the [B, H, T, S]
  // probabilities), or "" (no dropout: evaluation's is the identity).
  auto attentionDropoutArgs = [&](auto a) -> std::string {
    if (!a.getDropoutAttr() || !a.getStep())
      return "";
    ArrayRef<int64_t> q = shapedTypeOf(a.getQuery()).getShape();
    int64_t shape[4] = {q[0], q[1], q[2],
                        shapedTypeOf(a.getKey()).getDimSize(2)};
    int64_t rows = 1, inner = shape[0] * shape[1] * shape[2] * shape[3];
    std::string offset = "0", globalRows = "1";
    if (auto batchDim = a.getBatchDim()) {
      rows = shape[*batchDim];
      inner = 1;
      for (int64_t k = *batchDim + 1; k < 4; ++k)
        inner *= shape[k];
      offset = "(int64_t)zrt_rank(comm) * " + std::to_string(rows);
      globalRows = std::to_string(rows * *a.getRanks());
      // Micro-batch m of K of the rank's batch (train-accumulate).
      if (auto micro = a.getMicroBatch()) {
        int64_t count = *a.getMicroBatches();
        offset = "((int64_t)zrt_rank(comm) * " + std::to_string(count) +
                 " + " + std::to_string(*micro) + ") * " +
                 std::to_string(rows);
        globalRows = std::to_string(rows * *a.getRanks() * count);
      }
    }
    return ", " + std::to_string(inner) + ", " + std::to_string(rows) + ", " +
           offset + ", " + globalRows + ", " +
           literal(a.getDropoutAttr().getValueAsDouble()) + ", " +
           std::to_string(static_cast<uint64_t>(*a.getSeed())) + "ull, " +
           ptr(a.getStep()) + "[0]";
  };
  auto printCrossEntropyExArgs = [&](auto ce) {
    os << ", " << (ce.getIgnoreIndexAttr() ? 1 : 0) << ", "
       << ce.getIgnoreIndex().value_or(0) << "LL, "
       << literal(ce.getSmoothing()) << ", "
       << (ce.getCount() ? ptr(ce.getCount()) : std::string("nullptr"));
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<MatmulOp, MatmulBiasOp>([&](auto mm) {
        ArrayRef<int64_t> a = shapedTypeOf(mm.getLhs()).getShape();
        ArrayRef<int64_t> b = shapedTypeOf(mm.getRhs()).getShape();
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
        // train.matmul_bias: the output preset to the bias, then the
        // product added (zrt_matmul_bias).
        constexpr bool hasBias =
            std::is_same_v<decltype(mm), MatmulBiasOp>;
        os << (hasBias ? "  zrt_matmul_bias(" : "  zrt_matmul(")
           << dt(mm.getLhs()) << ", " << ptr(mm.getLhs()) << ", "
           << ptr(mm.getRhs()) << ", ";
        if constexpr (hasBias)
          os << ptr(mm.getBias()) << ", ";
        os << ptr(mm.getResult()) << ", " << batch << ", " << m << ", " << n
           << ", " << k << ", "
           << (mm.getTransposeLhs() ? "ZRT_TRANS" : "ZRT_NO_TRANS") << ", "
           << (mm.getTransposeRhs() ? "ZRT_TRANS" : "ZRT_NO_TRANS") << ", "
           << m * k << ", " << strideB << ", " << m * n << ");\n";
        return success();
      })
      .Case([&](LayerNormOp ln) {
        os << "  zrt_layernorm(" << dt(ln.getInput()) << ", " << ptr(ln.getInput())
           << ", " << ptr(ln.getWeight()) << ", " << ptr(ln.getBias()) << ", "
           << ptr(ln.getResult()) << ", " << rowsOf(ln.getInput()) << ", "
           << lastDim(ln.getInput()) << ", "
           << literal(ln.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](LayerNormGradOp g) {
        os << "  zrt_layernorm_grad(" << dt(g.getInput()) << ", " << ptr(g.getGrad())
           << ", " << ptr(g.getInput()) << ", " << ptr(g.getWeight()) << ", "
           << ptr(g.getInputGrad()) << ", " << ptr(g.getWeightGrad()) << ", "
           << ptr(g.getBiasGrad()) << ", " << rowsOf(g.getInput()) << ", "
           << lastDim(g.getInput()) << ", "
           << literal(g.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](SoftmaxOp s) {
        os << "  zrt_softmax(" << dt(s.getInput()) << ", " << ptr(s.getInput())
           << ", " << ptr(s.getResult()) << ", " << rowsOf(s.getInput()) << ", "
           << lastDim(s.getInput()) << ");\n";
        return success();
      })
      .Case([&](SoftmaxGradOp s) {
        os << "  zrt_softmax_grad(" << dt(s.getGrad()) << ", " << ptr(s.getGrad())
           << ", " << ptr(s.getOutput()) << ", " << ptr(s.getResult()) << ", "
           << rowsOf(s.getGrad()) << ", " << lastDim(s.getGrad()) << ");\n";
        return success();
      })
      .Case([&](CausalMaskOp c) {
        ArrayRef<int64_t> shape = shapedTypeOf(c.getInput()).getShape();
        int64_t t = shape[shape.size() - 2], s = shape.back();
        os << "  zrt_causal_mask(" << dt(c.getInput()) << ", " << ptr(c.getInput())
           << ", " << ptr(c.getResult()) << ", " << numel(c.getInput()) / (t * s)
           << ", " << t << ", " << s << ", " << (c.getZero() ? "ZRT_MASK_ZERO" : "ZRT_MASK_NEG_INF") << ");\n";
        return success();
      })
      .Case([&](AttentionOp a) {
        ArrayRef<int64_t> q = shapedTypeOf(a.getQuery()).getShape();
        ArrayRef<int64_t> k = shapedTypeOf(a.getKey()).getShape();
        // Grouped-query attention: `group` query heads per key/value head.
        int64_t group = q[1] / k[1];
        std::string dropout = attentionDropoutArgs(a);
        os << "  zrt_attention" << (dropout.empty() ? "(" : "_dropout(")
           << dt(a.getQuery()) << ", " << ptr(a.getQuery())
           << ", " << ptr(a.getKey()) << ", " << ptr(a.getValue()) << ", "
           << ptr(a.getResult()) << ", " << q[0] * q[1] << ", " << group << ", "
           << q[2] << ", " << k[2] << ", " << q[3] << ", "
           << literal(a.getScaleAttr().getValueAsDouble()) << ", "
           << (a.getCausal() ? "ZRT_ATTENTION_CAUSAL" : "ZRT_ATTENTION_FULL")
           << dropout << ");\n";
        return success();
      })
      .Case([&](AttentionGradOp a) {
        ArrayRef<int64_t> q = shapedTypeOf(a.getQuery()).getShape();
        ArrayRef<int64_t> k = shapedTypeOf(a.getKey()).getShape();
        int64_t group = q[1] / k[1];
        std::string dropout = attentionDropoutArgs(a);
        os << "  zrt_attention" << (dropout.empty() ? "_grad(" : "_dropout_grad(")
           << dt(a.getQuery()) << ", " << ptr(a.getGrad())
           << ", " << ptr(a.getQuery()) << ", " << ptr(a.getKey()) << ", "
           << ptr(a.getValue()) << ", " << ptr(a.getQueryGrad()) << ", "
           << ptr(a.getKeyGrad()) << ", " << ptr(a.getValueGrad()) << ", "
           << q[0] * q[1] << ", " << group << ", " << q[2] << ", " << k[2]
           << ", " << q[3] << ", "
           << literal(a.getScaleAttr().getValueAsDouble()) << ", "
           << (a.getCausal() ? "ZRT_ATTENTION_CAUSAL" : "ZRT_ATTENTION_FULL")
           << dropout << ");\n";
        return success();
      })
      .Case([&](CrossEntropyOp ce) {
        bool ex = isExtendedCrossEntropy(ce);
        os << "  zrt_cross_entropy" << (ex ? "_ex(" : "(")
           << dt(ce.getLogits()) << ", " << ptr(ce.getLogits()) << ", "
           << ptr(ce.getTargets()) << ", " << dt(ce.getTargets()) << ", "
           << rowsOf(ce.getLogits()) << ", " << lastDim(ce.getLogits());
        if (ex)
          printCrossEntropyExArgs(ce);
        os << ", " << ptr(ce.getLoss()) << ");\n";
        return success();
      })
      .Case([&](CrossEntropyGradOp ce) {
        bool ex = isExtendedCrossEntropy(ce);
        os << "  zrt_cross_entropy_grad" << (ex ? "_ex(" : "(")
           << dt(ce.getLogits()) << ", " << ptr(ce.getGrad()) << ", "
           << ptr(ce.getLogits()) << ", " << ptr(ce.getTargets()) << ", "
           << dt(ce.getTargets()) << ", " << ptr(ce.getResult()) << ", "
           << rowsOf(ce.getLogits()) << ", " << lastDim(ce.getLogits());
        if (ex)
          printCrossEntropyExArgs(ce);
        os << ");\n";
        return success();
      })
      .Case([&](CountTargetsOp c) {
        os << "  zrt_count_targets(" << ptr(c.getTargets()) << ", "
           << dt(c.getTargets()) << ", "
           << shapedTypeOf(c.getTargets()).getNumElements() << ", "
           << c.getIgnoreIndex() << "LL, " << ptr(c.getCount()) << ");\n";
        return success();
      })
      .Case([&](EmbeddingOp e) {
        ArrayRef<int64_t> table = shapedTypeOf(e.getTable()).getShape();
        os << "  zrt_embedding(" << dt(e.getTable()) << ", " << ptr(e.getTable())
           << ", " << ptr(e.getIds()) << ", " << dt(e.getIds()) << ", "
           << ptr(e.getResult()) << ", " << numel(e.getIds()) << ", " << table[0]
           << ", " << table[1] << ");\n";
        return success();
      })
      .Case([&](EmbeddingGradOp e) {
        ArrayRef<int64_t> table = shapedTypeOf(e.getResult()).getShape();
        os << "  zrt_embedding_grad(" << dt(e.getGrad()) << ", " << ptr(e.getGrad())
           << ", " << ptr(e.getIds()) << ", " << dt(e.getIds()) << ", "
           << ptr(e.getResult()) << ", " << numel(e.getIds()) << ", " << table[0]
           << ", " << table[1] << ", "
           << (e.getPaddingIdx() ? static_cast<int64_t>(*e.getPaddingIdx()) : -1)
           << ");\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> shape = shapedTypeOf(t.getInput()).getShape();
        os << "  zrt_transpose(" << dt(t.getInput()) << ", " << ptr(t.getInput())
           << ", " << ptr(t.getResult()) << ", " << shape.size()
           << ", " << ints(shape) << ", "
           << ints(t.getPermutation()) << ");\n";
        return success();
      })
      .Case<SumOp, MeanOp>([&](auto r) {
        ArrayRef<int64_t> shape = shapedTypeOf(r.getInput()).getShape();
        SmallVector<int64_t> flags(shape.size(), 0);
        int64_t count = 1;
        for (int64_t d : r.getDims()) {
          flags[d] = 1;
          count *= shape[d];
        }
        double scale = isa<MeanOp>(r.getOperation()) ? 1.0 / count : 1.0;
        os << "  zrt_reduce_sum(" << dt(r.getInput()) << ", " << ptr(r.getInput())
           << ", " << ptr(r.getResult()) << ", " << shape.size()
           << ", " << ints(shape) << ", "
           << ints(flags, "uint8_t") << ", " << literal(scale) << ");\n";
        return success();
      })
      .Case([&](SplitOp s) {
        ArrayRef<int64_t> shape = shapedTypeOf(s.getInput()).getShape();
        int64_t dim = s.getDim(), outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (size_t d = dim + 1; d < shape.size(); ++d)
          inner *= shape[d];
        SmallVector<int64_t> sizes;
        for (Value r : s.getResults()) {
          sizes.push_back(shapedTypeOf(r).getShape()[dim]);
        }
        os << "  zrt_split(" << dt(s.getInput()) << ", " << ptr(s.getInput()) << ", "
           << s.getNumResults() << ", " << pointerList(s.getResults(), false)
           << ", " << ints(sizes) << ", " << outer << ", " << inner
           << ");\n";
        return success();
      })
      .Case([&](ConcatOp c) {
        ArrayRef<int64_t> shape = shapedTypeOf(c.getResult()).getShape();
        int64_t dim = c.getDim(), outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d)
          outer *= shape[d];
        for (size_t d = dim + 1; d < shape.size(); ++d)
          inner *= shape[d];
        SmallVector<int64_t> sizes;
        for (Value v : c.getInputs())
          sizes.push_back(shapedTypeOf(v).getShape()[dim]);
        os << "  zrt_concat(" << dt(c.getResult()) << ", " << c.getInputs().size()
           << ", " << pointerList(c.getInputs(), true) << ", "
           << ints(sizes) << ", " << ptr(c.getResult()) << ", " << outer << ", "
           << inner << ");\n";
        return success();
      })
      .Case([&](PackOp p) {
        os << "  zrt_pack(" << dt(p.getResult()) << ", " << p.getInputs().size()
           << ", " << pointerList(p.getInputs(), true) << ", "
           << numels(p.getInputs()) << ", " << ptr(p.getResult()) << ");\n";
        return success();
      })
      .Case([&](UnpackOp u) {
        os << "  zrt_unpack(" << dt(u.getInput()) << ", " << ptr(u.getInput())
           << ", " << u.getNumResults() << ", " << pointerList(u.getResults(), false)
           << ", " << numels(u.getResults()) << ");\n";
        return success();
      })
      .Case([&](SquaredNormOp s) {
        os << "  zrt_squared_norm(" << dt(s.getInput()) << ", "
           << ptr(s.getInput()) << ", " << numel(s.getInput()) << ", "
           << ptr(s.getResult()) << ");\n";
        return success();
      })
      .Case([&](ClipCoefOp c) {
        os << "  zrt_clip_coef(" << ptr(c.getSquaredNorm()) << ", "
           << literal(c.getMaxNormAttr().getValueAsDouble()) << ", "
           << ptr(c.getResult()) << ");\n";
        return success();
      })
      // The Llama ops' calls are in LlamaEmitter.cpp.
      .Default([&](Operation *other) { return emitLlamaOp(other); });
}

//===----------------------------------------------------------------------===//
// The plan's ops
//===----------------------------------------------------------------------===//

LogicalResult FunctionEmitter::emitOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](memref::AllocOp alloc) {
        std::string ct = cType(alloc.getType().getElementType());
        os << "  " << ct << " *" << var(alloc.getResult()) << " = (" << ct
           << " *)zrt_alloc(" << bytesOf(alloc.getResult()) << ", "
           << categoryOf(alloc) << "); /* "
           << shapeText(RankedTensorType::get(alloc.getType().getShape(),
                                              alloc.getType().getElementType()))
           << " */\n";
        return success();
      })
      .Case([&](memref::DeallocOp dealloc) -> LogicalResult {
        auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
        if (!alloc)
          return dealloc.emitOpError("frees a buffer that no memref.alloc made");
        os << "  zrt_free(" << ptr(alloc.getResult()) << ", "
           << bytesOf(alloc.getResult()) << ", " << categoryOf(alloc) << ");\n";
        return success();
      })
      .Case([&](memref::ReinterpretCastOp view) {
        std::string base = ptr(view.getSource());
        std::string offset;
        if (!view.getOffsets().empty())
          offset = index(view.getOffsets().front());
        else if (int64_t k = view.getStaticOffsets().front())
          offset = std::to_string(k);
        alias(view.getResult(),
              offset.empty() ? base : "(" + base + " + " + offset + ")");
        return success();
      })
      .Case([&](arith::ConstantOp constant) -> LogicalResult {
        auto value = dyn_cast<IntegerAttr>(constant.getValue());
        if (!value)
          return constant.emitOpError("is not an index constant");
        alias(constant.getResult(), std::to_string(value.getInt()));
        return success();
      })
      .Case([&](arith::MulIOp mul) {
        alias(mul.getResult(),
              "(" + index(mul.getLhs()) + " * " + index(mul.getRhs()) + ")");
        return success();
      })
      .Case([&](arith::AddIOp add) {
        alias(add.getResult(),
              "(" + index(add.getLhs()) + " + " + index(add.getRhs()) + ")");
        return success();
      })
      .Case([&](RankOp rank) {
        // A local, read once: an expression calling zrt_rank would be
        // evaluated per element inside the loops that index a rank's slot
        // (an opaque call the compiler cannot hoist, which also keeps the
        // loop from vectorizing).
        os << "  const int64_t " << var(rank.getRank())
           << " = (int64_t)zrt_rank(comm);\n";
        return success();
      })
      .Case([&](StorageOp storage) {
        std::string ct =
            cType(cast<MemRefType>(storage.getType()).getElementType());
        // A flat buffer's storage is the runtime's zrt_buffer; a member's
        // is its state's pointer into it.
        auto buffer = states.buffers.find(storage.getName());
        alias(storage.getBuffer(),
              buffer != states.buffers.end()
                  ? "((" + ct + " *)B[" + std::to_string(buffer->second) +
                        "].data)"
                  : "((" + ct + " *)S[" +
                        std::to_string(states.index.lookup(storage.getName())) +
                        "].data)");
        return success();
      })
      .Case([&](memref::CopyOp copy) {
        os << "  zrt_copy(" << ptr(copy.getTarget()) << ", "
           << ptr(copy.getSource()) << ", " << bytesOf(copy.getSource())
           << ");\n";
        return success();
      })
      .Case([&](ReadBackOp read) {
        os << "  zrt_read_f32(" << ptr(read.getHost()) << ", "
           << ptr(read.getSource()) << ", "
           << dtype(shapedTypeOf(read.getSource()).getElementType()) << ", "
           << numel(read.getSource()) << ");\n";
        return success();
      })
      .Case([&](CollectiveStartOp start) {
        int64_t count = start.getKind() == CollectiveKind::reduce_scatter
                            ? numel(start.getRecv())
                            : numel(start.getSend());
        os << "  zrt_request *" << var(start.getRequest()) << " = "
           << runtimeStart(start.getKind()) << "(comm, " << ptr(start.getSend())
           << ", " << ptr(start.getRecv()) << ", " << count << ", "
           << dtype(shapedTypeOf(start.getSend()).getElementType()) << ", "
           << (cuda ? "stream" : "NULL") << ");\n";
        return success();
      })
      .Case([&](CollectiveWaitOp wait) {
        os << "  zrt_wait(" << ptr(wait.getRequest()) << ");\n";
        return success();
      })
      .Case([&](KernelOp kernel) { return emitKernel(kernel); })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError("is not part of the buffer form the ")
               << (cuda ? "CUDA" : "C++") << " backend prints";
      });
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

LogicalResult FunctionEmitter::emit(func::FuncOp func, StringRef name,
                                    Kind kind) {
  if (!trainDialect(func).getPlannedAttrHelper().isAttrPresent(func))
    return func.emitError("the ")
           << (cuda ? "CUDA" : "C++")
           << " backend prints functions in buffer form (train.planned); run "
              "the planning passes (--train-planning)";
  Block &block = func.getBody().front();
  functionName = name.str();
  bool isStep = kind == Kind::Step;
  bool isGather = kind == Kind::GatherParams;
  unsigned inputs = isGather ? 0 : isStep ? 3 : kind == Kind::Forward ? 2 : 1;
  unsigned outputs = isGather ? 0 : isStep ? 3 : 1;
  if (block.getNumArguments() != inputs + outputs)
    return func.emitError("the ")
           << (cuda ? "CUDA" : "C++") << " backend expects the arguments "
           << (isGather                ? "()"
               : kind == Kind::Logits ? "(tokens, logits)"
               : isStep ? "(tokens, targets, step, loss, grad_norm, lr)"
                        : "(tokens, targets, loss)")
           << " of a planned entry point";
  os << "static void " << name << "(zrt_comm *comm";
  if (isGather)
    os << ") {\n";
  else if (kind == Kind::Logits)
    os << ", const void *tokens, float *logits) {\n";
  else
    os << ", const void *tokens, const void *targets, "
       << (isStep ? "int64_t step, float *loss, float *grad_norm, float *lr"
                  : "float *loss")
       << ") {\n";
  os << "  (void)comm; /* for programs without collectives */\n";
  if (cuda)
    os << "  cudaStream_t stream = (cudaStream_t)zrt_compute_stream();\n";
  auto bindInput = [&](unsigned i, StringRef from) {
    std::string ct = cType(shapedTypeOf(block.getArgument(i)).getElementType());
    alias(block.getArgument(i), "((const " + ct + " *)" + from.str() + ")");
  };
  if (!isGather)
    bindInput(0, "tokens");
  if (!isGather && kind != Kind::Logits)
    bindInput(1, "targets");
  if (isStep) {
    os << "  const int64_t step_arg[1] = {step};\n";
    alias(block.getArgument(2), "step_arg");
  }
  static const char *const stepOutputs[] = {"loss", "grad_norm", "lr"};
  for (unsigned i = 0; i < outputs; ++i)
    alias(block.getArgument(inputs + i),
          kind == Kind::Logits ? "logits"
          : isStep             ? stepOutputs[i]
                               : "loss");
  for (Operation &op : block) {
    TraceHook::Scope traced(traceHook, bodyText, &op, isStep);
    if (failed(emitOp(&op)))
      return failure();
  }
  os << "}\n\n";
  out << kernelText << bodyText;
  return success();
}

} // namespace zeroc::cpp
