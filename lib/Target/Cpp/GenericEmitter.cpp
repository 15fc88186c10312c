//===- GenericEmitter.cpp - the generic reductions and gathers as calls ---===//
//
// One case per op of TrainGenericOps.td: the train.kernel's call of its
// zrt.h kernel (docs/runtime-kernels.md), into the buffers train-bufferize
// planned. The same calls serve the C++ (CPU) and CUDA back ends.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

namespace {

/// A constant array argument (the preambles' ZC_LIST).
std::string list(ArrayRef<int64_t> values, StringRef type = "int64_t") {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "ZC_LIST(" << type << ", ";
  llvm::interleaveComma(values, os);
  if (values.empty())
    os << "0";
  os << ")";
  return text;
}

/// The reduced flags of a reduction of `shape` over `dims`.
SmallVector<int64_t> reducedFlags(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> dims) {
  SmallVector<int64_t> flags(shape.size(), 0);
  for (int64_t d : dims)
    flags[d] = 1;
  return flags;
}

int64_t rowsOf(Value v) {
  ArrayRef<int64_t> shape = shapedTypeOf(v).getShape();
  return shapedTypeOf(v).getNumElements() / (shape.empty() ? 1 : shape.back());
}

} // namespace

LogicalResult FunctionEmitter::emitGenericOp(Operation *op) {
  auto dt = [&](Value v) { return dtype(shapedTypeOf(v).getElementType()); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AmaxOp r) {
        ArrayRef<int64_t> shape = shapedTypeOf(r.getInput()).getShape();
        os << "  zrt_reduce_max(" << dt(r.getInput()) << ", "
           << ptr(r.getInput()) << ", " << ptr(r.getResult()) << ", "
           << shape.size() << ", " << list(shape) << ", "
           << list(reducedFlags(shape, r.getDims()), "uint8_t") << ");\n";
        return success();
      })
      .Case([&](AmaxGradOp r) {
        ArrayRef<int64_t> shape = shapedTypeOf(r.getInput()).getShape();
        os << "  zrt_reduce_max_grad(" << dt(r.getInput()) << ", "
           << ptr(r.getGrad()) << ", " << ptr(r.getInput()) << ", "
           << ptr(r.getOutput()) << ", " << ptr(r.getResult()) << ", "
           << shape.size() << ", " << list(shape) << ", "
           << list(reducedFlags(shape, r.getDims()), "uint8_t") << ");\n";
        return success();
      })
      .Case([&](VarOp r) {
        ArrayRef<int64_t> shape = shapedTypeOf(r.getInput()).getShape();
        os << "  zrt_reduce_var(" << dt(r.getInput()) << ", "
           << ptr(r.getInput()) << ", " << ptr(r.getResult()) << ", "
           << shape.size() << ", " << list(shape) << ", "
           << list(reducedFlags(shape, r.getDims()), "uint8_t") << ", "
           << r.getCorrection() << ");\n";
        return success();
      })
      .Case([&](LogSoftmaxOp s) {
        os << "  zrt_log_softmax(" << dt(s.getInput()) << ", "
           << ptr(s.getInput()) << ", " << ptr(s.getResult()) << ", "
           << rowsOf(s.getInput()) << ", "
           << shapedTypeOf(s.getInput()).getShape().back() << ");\n";
        return success();
      })
      .Case([&](GatherOp g) {
        ArrayRef<int64_t> shape = shapedTypeOf(g.getInput()).getShape();
        os << "  zrt_gather(" << dt(g.getInput()) << ", " << ptr(g.getInput())
           << ", " << ptr(g.getIndex()) << ", " << dt(g.getIndex()) << ", "
           << ptr(g.getResult()) << ", " << shape.size() << ", " << list(shape)
           << ", " << list(shapedTypeOf(g.getIndex()).getShape()) << ", "
           << g.getDim() << ");\n";
        return success();
      })
      .Case([&](GatherGradOp g) {
        ArrayRef<int64_t> shape = shapedTypeOf(g.getResult()).getShape();
        os << "  zrt_gather_grad(" << dt(g.getGrad()) << ", "
           << ptr(g.getGrad()) << ", " << ptr(g.getIndex()) << ", "
           << dt(g.getIndex()) << ", " << ptr(g.getResult()) << ", "
           << shape.size() << ", " << list(shape) << ", "
           << list(shapedTypeOf(g.getIndex()).getShape()) << ", " << g.getDim()
           << ");\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError("has no lowering in zeroc's ")
               << (cuda ? "CUDA" : "C++ (CPU)") << " backend";
      });
}

} // namespace zeroc::cpp
