//===- MathEmitter.cpp - train.tril/triu and train.constant as code ------===//
//
// The ops of TrainMathOps.td that are not elementwise (the others join the
// fused loops through their scalar formulas). They need no runtime kernel:
//
//   - train.tril / train.triu: a loop (CPU) or a generated grid-stride
//     kernel (CUDA) that copies element i of the input where its column
//     minus its row is within the diagonal and writes 0 elsewhere;
//   - train.constant: its elements as a static array of their bit patterns
//     (exact for -inf and NaN, bf16 as its 16 bits), copied into the
//     kernel's output buffer where it runs: a loop on the CPU, and on CUDA a
//     generated kernel reading a __device__ array.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

namespace {

/// The unsigned type of an element's bits.
const char *bitsType(Type elementType) {
  switch (elementType.getIntOrFloatBitWidth()) {
  case 16:
    return "uint16_t";
  case 32:
    return "uint32_t";
  default:
    return "uint64_t";
  }
}

/// The bit pattern of each element of `value`, as C literals.
std::string bitPatterns(DenseIntOrFPElementsAttr value) {
  SmallVector<std::string> items;
  auto push = [&](const APInt &bits) {
    items.push_back(std::to_string(bits.getZExtValue()) + "u");
  };
  if (isa<FloatType>(value.getElementType())) {
    for (const APFloat &element : value.getValues<APFloat>())
      push(element.bitcastToAPInt());
  } else {
    for (const APInt &element : value.getValues<APInt>())
      push(element);
  }
  return llvm::join(items, ", ");
}

/// The grid of a generated kernel over `n` elements (as emitFusedKernel).
int64_t blocksFor(int64_t n) {
  return std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 8192));
}

} // namespace

LogicalResult FunctionEmitter::emitMathOp(Operation *op) {
  auto triangle = [&](Value input, Value result, int64_t diagonal,
                      bool lower) -> LogicalResult {
    ArrayRef<int64_t> shape = typeOf(input).getShape();
    int64_t rows = shape[shape.size() - 2], cols = shape.back();
    int64_t n = typeOf(input).getNumElements();
    std::string ct = cType(typeOf(input).getElementType());
    // Column minus row of element i, against the diagonal.
    std::string keep = "(i % " + std::to_string(cols) + " - i / " +
                       std::to_string(cols) + " % " + std::to_string(rows) +
                       (lower ? " <= " : " >= ") + std::to_string(diagonal) +
                       ")";
    if (!cuda) {
      os << (n >= 32768 ? "  #pragma omp parallel for\n" : "")
         << "  for (int64_t i = 0; i < " << n << "; ++i)\n"
         << "    " << ptr(result) << "[i] = " << keep << " ? " << ptr(input)
         << "[i] : (" << ct << ")0;\n";
      return success();
    }
    std::string name = "zc_" + functionName + "_k" +
                       std::to_string(nextKernel++) +
                       (lower ? "_tril" : "_triu");
    // The input may be the output's buffer: no __restrict__.
    kernelOs << "__global__ void " << name << "(int64_t n, " << ct
             << " *out, const " << ct << " *x) {\n"
             << "  ZC_FOR(int64_t, i, n) out[i] = " << keep
             << " ? x[i] : (" << ct << ")0;\n}\n\n";
    os << "  " << name << "<<<" << blocksFor(n) << ", 256, 0, stream>>>(" << n
       << ", " << ptr(result) << ", " << ptr(input) << ");\n"
       << "  zrt_check_launch(\"" << name << "\");\n";
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TrilOp t) {
        return triangle(t.getInput(), t.getResult(), t.getDiagonal(), true);
      })
      .Case([&](TriuOp t) {
        return triangle(t.getInput(), t.getResult(), t.getDiagonal(), false);
      })
      .Case([&](ConstantOp c) {
        auto value = cast<DenseIntOrFPElementsAttr>(c.getValueAttr());
        Type element = value.getElementType();
        int64_t n = typeOf(c.getResult()).getNumElements();
        std::string bits = bitsType(element);
        std::string data = bitPatterns(value);
        if (!cuda) {
          os << "  {\n    static const " << bits << " zc_data[" << n
             << "] = {" << data << "};\n"
             << "    for (int64_t i = 0; i < " << n << "; ++i)\n"
             << "      ((" << bits << " *)" << ptr(c.getResult())
             << ")[i] = zc_data[i];\n  }\n";
          return success();
        }
        std::string name = "zc_" + functionName + "_k" +
                           std::to_string(nextKernel++) + "_constant";
        kernelOs << "__device__ const " << bits << " " << name << "_data["
                 << n << "] = {" << data << "};\n"
                 << "__global__ void " << name << "(int64_t n, " << bits
                 << " *__restrict__ out) {\n"
                 << "  ZC_FOR(int64_t, i, n) out[i] = " << name
                 << "_data[i];\n}\n\n";
        os << "  " << name << "<<<" << blocksFor(n) << ", 256, 0, stream>>>("
           << n << ", (" << bits << " *)" << ptr(c.getResult()) << ");\n"
           << "  zrt_check_launch(\"" << name << "\");\n";
        return success();
      })
      // The generic reductions and gathers: GenericEmitter.cpp, whose
      // default is the error for an op with no lowering.
      .Default([&](Operation *other) { return emitGenericOp(other); });
}

} // namespace zeroc::cpp
