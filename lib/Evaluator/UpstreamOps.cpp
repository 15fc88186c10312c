//===- UpstreamOps.cpp - the few upstream ops train IR uses ---------------===//
//
// func.call, arith.constant (scalars, dense and splat tensors), and the
// scalar glue that turns a process index into data: integer/float
// arithmetic and casts, tensor.splat, tensor.from_elements, tensor.extract.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace zeroc::eval {

namespace {

using Operands = ArrayRef<const Tensor *>;
using Results = std::vector<Tensor>;

LogicalResult evalConstant(arith::ConstantOp op, Operands, Results &out,
                           RankContext &) {
  Tensor &result = out[0];
  Attribute value = op.getValue();
  bool boolean = result.type == ElementType::I1;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    int64_t i = 0;
    if (isa<FloatType>(dense.getElementType())) {
      for (const APFloat &element : dense.getValues<APFloat>())
        result.data[i++] = element.convertToDouble();
    } else {
      for (const APInt &element : dense.getValues<APInt>())
        result.data[i++] = boolean
                               ? element.getZExtValue()
                               : static_cast<double>(element.getSExtValue());
    }
    return success();
  }
  if (auto number = dyn_cast<FloatAttr>(value)) {
    result.data[0] = number.getValueAsDouble();
    return success();
  }
  if (auto number = dyn_cast<IntegerAttr>(value)) {
    result.data[0] =
        boolean ? number.getValue().getZExtValue()
                : static_cast<double>(number.getValue().getSExtValue());
    return success();
  }
  return op.emitOpError("constant ")
         << value << " is not supported by the reference evaluator (scalars "
         << "and dense tensors are)";
}

/// An elementwise op on operands of the result's shape.
LocalHandler elementwise(double (*fn)(double, double)) {
  return [fn](Operation *, Operands in, Results &out, RankContext &) {
    for (int64_t i = 0; i < out[0].numElements(); ++i)
      out[0].data[i] = fn(in[0]->data[i], in[1]->data[i]);
    return success();
  };
}

/// A conversion: copies the values (the interpreter rounds to the result
/// type), applying `fn` to each.
LocalHandler conversion(double (*fn)(double)) {
  return [fn](Operation *, Operands in, Results &out, RankContext &) {
    for (int64_t i = 0; i < out[0].numElements(); ++i)
      out[0].data[i] = fn(in[0]->data[i]);
    return success();
  };
}

LogicalResult evalSplat(tensor::SplatOp op, Operands in, Results &out,
                        RankContext &) {
  if (op->getNumOperands() != 1)
    return op.emitOpError("dynamic sizes are not supported");
  std::fill(out[0].data.begin(), out[0].data.end(), in[0]->data[0]);
  return success();
}

LogicalResult evalFromElements(tensor::FromElementsOp, Operands in,
                               Results &out, RankContext &) {
  for (size_t i = 0; i < in.size(); ++i)
    out[0].data[i] = in[i]->data[0];
  return success();
}

LogicalResult evalExtract(tensor::ExtractOp op, Operands in, Results &out,
                          RankContext &) {
  const Tensor &source = *in[0];
  std::vector<int64_t> index;
  for (size_t d = 1; d < in.size(); ++d) {
    double i = in[d]->data[0];
    if (i < 0 || i >= static_cast<double>(source.shape[d - 1]))
      return op.emitOpError("index ")
             << formatValue(i) << " is out of range for dimension " << d - 1
             << " of size " << source.shape[d - 1];
    index.push_back(static_cast<int64_t>(i));
  }
  out[0].data[0] = source.data[ravel(index, source.shape)];
  return success();
}

LogicalResult evalCall(func::CallOp op, ArrayRef<const RankValues *> in,
                       std::vector<RankValues> &out, Interpreter &interp) {
  auto callee = interp.symbols().lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!callee)
    return op.emitOpError("no func.func named ") << op.getCalleeAttr();
  std::vector<RankValues> args;
  for (const RankValues *values : in)
    args.push_back(*values);
  FailureOr<std::vector<RankValues>> results = interp.call(callee, args);
  if (failed(results))
    return failure();
  out = std::move(*results);
  return success();
}

} // namespace

void registerUpstreamOps(OpRegistry &registry) {
  registry.add<arith::ConstantOp>(evalConstant);
  registry.addGlobal<func::CallOp>(evalCall);
  registry.add<tensor::SplatOp>(evalSplat);
  registry.add<tensor::FromElementsOp>(evalFromElements);
  registry.add<tensor::ExtractOp>(evalExtract);

  auto add = [](double a, double b) { return a + b; };
  auto sub = [](double a, double b) { return a - b; };
  auto mul = [](double a, double b) { return a * b; };
  auto div = [](double a, double b) { return a / b; };
  registry.addNamed("arith.addf", elementwise(add));
  registry.addNamed("arith.subf", elementwise(sub));
  registry.addNamed("arith.mulf", elementwise(mul));
  registry.addNamed("arith.divf", elementwise(div));
  registry.addNamed("arith.addi", elementwise(add));
  registry.addNamed("arith.subi", elementwise(sub));
  registry.addNamed("arith.muli", elementwise(mul));

  auto same = [](double x) { return x; };
  auto truncate = [](double x) { return std::trunc(x); };
  for (StringRef name :
       {"arith.index_cast", "arith.index_castui", "arith.sitofp",
        "arith.uitofp", "arith.extf", "arith.truncf"})
    registry.addNamed(name, conversion(same));
  registry.addNamed("arith.fptosi", conversion(truncate));
}

} // namespace zeroc::eval
