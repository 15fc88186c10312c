//===- LlamaEmitter.cpp - the ops of Llama-class models as runtime calls --===//
//
// One case per op of TrainLlamaOps.td (silu and silu_grad are elementwise
// and join the fused loops instead): the train.kernel's call of its zrt.h
// kernel, into the buffers train-bufferize planned. A step-less
// train.dropout (evaluation) is a view of its input (train-bufferize); with
// a step (a host value), the rank's rows of the global batch come from
// zrt_rank (train.dropout's batch_dim and ranks).
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

namespace {

std::string list(ArrayRef<int64_t> values) {
  std::string text = "ZC_LIST(int64_t, ";
  text +=
      values.empty()
          ? "0"
          : llvm::join(llvm::map_range(
                           values, [](int64_t v) { return std::to_string(v); }),
                       ", ");
  return text + ")";
}

std::string literal(double value) {
  return llvm::formatv("{0:e17}", value).str();
}

int64_t rowsOf(Value v) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  return typeOf(v).getNumElements() / (shape.empty() ? 1 : shape.back());
}

} // namespace

LogicalResult FunctionEmitter::emitLlamaOp(Operation *op) {
  auto dt = [&](Value v) { return dtype(typeOf(v).getElementType()); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](RmsNormOp n) {
        os << "  zrt_rmsnorm(" << dt(n.getInput()) << ", " << ptr(n.getInput())
           << ", " << ptr(n.getWeight()) << ", " << ptr(n.getResult()) << ", "
           << rowsOf(n.getInput()) << ", "
           << typeOf(n.getInput()).getShape().back() << ", "
           << literal(n.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](RmsNormGradOp g) {
        os << "  zrt_rmsnorm_grad(" << dt(g.getInput()) << ", "
           << ptr(g.getGrad()) << ", " << ptr(g.getInput()) << ", "
           << ptr(g.getWeight()) << ", " << ptr(g.getInputGrad()) << ", "
           << ptr(g.getWeightGrad()) << ", " << rowsOf(g.getInput()) << ", "
           << typeOf(g.getInput()).getShape().back() << ", "
           << literal(g.getEpsAttr().getValueAsDouble()) << ");\n";
        return success();
      })
      .Case([&](RopeOp r) {
        ArrayRef<int64_t> shape = typeOf(r.getInput()).getShape();
        int64_t d = shape.back(), seq = r.getSeqDim(), period = 1;
        for (size_t k = seq + 1; k + 1 < shape.size(); ++k)
          period *= shape[k]; // rows of d per position
        std::optional<ArrayRef<double>> scaling = r.getScaling();
        os << (scaling ? "  zrt_rope_scaled(" : "  zrt_rope(")
           << dt(r.getInput()) << ", " << ptr(r.getInput()) << ", "
           << ptr(r.getResult()) << ", " << rowsOf(r.getInput()) << ", " << d
           << ", " << shape[seq] << ", " << period << ", "
           << literal(r.getThetaAttr().getValueAsDouble()) << ", "
           << (r.getStyle() == RopeStyle::interleaved ? 0 : 1) << ", "
           << (r.getInverse() ? 1 : 0);
        if (scaling) {
          // linear: [factor]; llama3: [factor, low, high, original].
          bool llama3 = scaling->size() == 4;
          os << ", " << literal((*scaling)[0]) << ", "
             << literal(llama3 ? (*scaling)[1] : 0.0) << ", "
             << literal(llama3 ? (*scaling)[2] : 0.0) << ", "
             << literal(llama3 ? (*scaling)[3] : 0.0);
        }
        os << ");\n";
        return success();
      })
      .Case([&](SliceOp s) {
        RankedTensorType in = typeOf(s.getInput()), out = typeOf(s.getResult());
        os << "  zrt_slice(" << dt(s.getInput()) << ", " << ptr(s.getInput())
           << ", " << ptr(s.getResult()) << ", " << in.getRank() << ", "
           << list(in.getShape()) << ", " << list(s.getOffsets()) << ", "
           << list(s.getStrides()) << ", " << list(out.getShape()) << ");\n";
        return success();
      })
      .Case([&](SliceGradOp s) {
        RankedTensorType in = typeOf(s.getResult()), out = typeOf(s.getGrad());
        os << "  zrt_slice_grad(" << dt(s.getGrad()) << ", " << ptr(s.getGrad())
           << ", " << ptr(s.getResult()) << ", " << in.getRank() << ", "
           << list(in.getShape()) << ", " << list(s.getOffsets()) << ", "
           << list(s.getStrides()) << ", " << list(out.getShape()) << ");\n";
        return success();
      })
      .Case([&](DropoutOp d) -> LogicalResult {
        if (!d.getStep()) // a view of its input (train-bufferize)
          return d.emitOpError("without a step is the identity; "
                               "train-bufferize makes it a view");
        RankedTensorType type = typeOf(d.getInput());
        int64_t n = type.getNumElements(), rows = 1, inner = n;
        std::string offset = "0", globalRows = "1";
        if (auto batchDim = d.getBatchDim()) {
          rows = type.getDimSize(*batchDim);
          inner = 1;
          for (int64_t k = *batchDim + 1; k < type.getRank(); ++k)
            inner *= type.getDimSize(k);
          offset = "(int64_t)zrt_rank(comm) * " + std::to_string(rows);
          globalRows = std::to_string(rows * *d.getRanks());
          // Micro-batch m of K of the rank's batch (train-accumulate).
          if (auto micro = d.getMicroBatch()) {
            int64_t count = *d.getMicroBatches();
            offset = "((int64_t)zrt_rank(comm) * " + std::to_string(count) +
                     " + " + std::to_string(*micro) + ") * " +
                     std::to_string(rows);
            globalRows = std::to_string(rows * *d.getRanks() * count);
          }
        }
        os << "  zrt_dropout(" << dt(d.getInput()) << ", " << ptr(d.getInput())
           << ", " << ptr(d.getResult()) << ", " << n << ", " << inner << ", "
           << rows << ", " << offset << ", " << globalRows << ", "
           << literal(d.getPAttr().getValueAsDouble()) << ", "
           << static_cast<uint64_t>(d.getSeed()) << "ull, " << ptr(d.getStep())
           << "[0]);\n";
        return success();
      })
      // The generic ops of TrainMathOps.td: MathEmitter.cpp.
      .Default([&](Operation *other) { return emitMathOp(other); });
}

} // namespace zeroc::cpp
