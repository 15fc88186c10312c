//===- Tensor.cpp - the reference evaluator's value type ------------------===//

#include "zeroc/Evaluator/Tensor.h"

#include "zeroc/Support/SafeTensors.h"

#include <cmath>

namespace zeroc::eval {
int safetensorsDType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return static_cast<int>(safetensors::DType::F32);
  case ElementType::BF16:
    return static_cast<int>(safetensors::DType::BF16);
  case ElementType::F64:
    return static_cast<int>(safetensors::DType::F64);
  case ElementType::I32:
    return static_cast<int>(safetensors::DType::I32);
  default:
    return static_cast<int>(safetensors::DType::I64);
  }
}
} // namespace zeroc::eval

namespace zeroc::eval {

bool isFloat(ElementType type) {
  return type == ElementType::F32 || type == ElementType::BF16 ||
         type == ElementType::F64;
}

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F64:
    return "f64";
  case ElementType::I1:
    return "i1";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::Index:
    return "index";
  }
  return "?";
}

double roundToBF16(double value) {
  // The same rounding as the safetensors writer, so that values saved as
  // BF16 read back unchanged.
  return safetensors::bf16BitsToFloat(
      safetensors::floatToBF16Bits(static_cast<float>(value)));
}

double roundTo(double value, ElementType type) {
  switch (type) {
  case ElementType::F32:
    return static_cast<double>(static_cast<float>(value));
  case ElementType::BF16:
    return roundToBF16(value);
  default:
    return value;
  }
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

Tensor::Tensor(std::vector<int64_t> shape, ElementType type)
    : shape(std::move(shape)), type(type),
      data(static_cast<size_t>(eval::numElements(this->shape)), 0.0) {}

void Tensor::round() {
  if (type != ElementType::F32 && type != ElementType::BF16)
    return;
  for (double &value : data)
    value = roundTo(value, type);
}

} // namespace zeroc::eval
