//===- Tensor.h - the reference evaluator's value type ----------*- C++ -*-===//
//
// A Tensor is a shape, an element type and row-major values held as
// doubles, whatever the element type: integers (token ids, the step
// counter, `index` values) are stored exactly up to 2^53. A scalar (an
// `index` or a rank-0 tensor) has an empty shape and one value.
//
// Plain C++17; no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_EVALUATOR_TENSOR_H
#define ZEROC_EVALUATOR_TENSOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc::eval {

enum class ElementType { F32, BF16, F64, I1, I32, I64, Index };

/// True for f32, bf16 and f64.
bool isFloat(ElementType type);
/// The MLIR spelling: "f32", "bf16", "i64", "index", ...
const char *elementTypeName(ElementType type);

/// The safetensors dtype a value of `type` is saved as (i1 and index as
/// I64).
int safetensorsDType(ElementType type);

/// Rounds `value` to bf16: first to f32 (a cast), then the f32 bits to
/// nearest even. NaN stays NaN; overflow gives infinity.
double roundToBF16(double value);

/// Rounds `value` to what `type` can hold: f32 by a (float) cast, bf16 as
/// roundToBF16, f64 and the integer types unchanged.
double roundTo(double value, ElementType type);

/// The number of elements of `shape` (1 for a scalar).
int64_t numElements(const std::vector<int64_t> &shape);

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

/// Formats a shape as `[2, 3]`.
std::string formatShape(const std::vector<int64_t> &shape);

struct Tensor {
  std::vector<int64_t> shape;
  ElementType type = ElementType::F32;
  std::vector<double> data;

  Tensor() = default;
  /// A tensor of zeros.
  Tensor(std::vector<int64_t> shape, ElementType type);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return static_cast<int64_t>(data.size()); }

  /// Rounds every element to the element type (see roundTo).
  void round();
};

} // namespace zeroc::eval

#endif // ZEROC_EVALUATOR_TENSOR_H
