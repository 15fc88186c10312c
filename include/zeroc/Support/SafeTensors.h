//===- SafeTensors.h - read and write safetensors files ---------*- C++ -*-===//
//
// The safetensors format (https://github.com/huggingface/safetensors):
//
//   8 bytes   little-endian u64 N, the length of the header
//   N bytes   UTF-8 JSON object:
//               {"NAME": {"dtype": "F32", "shape": [2, 3],
//                         "data_offsets": [BEGIN, END]}, ...,
//                "__metadata__": {"key": "value", ...}}
//   rest      the tensors' raw little-endian data; offsets are relative to
//             the first byte after the header
//
// Plain C++17 without MLIR or LLVM: the runtime links this too. Nothing
// throws; every function that can fail returns an error message (empty on
// success) that names the file and, where there is one, the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_SAFETENSORS_H
#define ZEROC_SUPPORT_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zeroc::safetensors {

/// The element types zeroc reads and writes.
enum class DType { F32, BF16, F64, I32, I64, U16 };

/// Bytes per element of `dtype`.
size_t dtypeSize(DType dtype);
/// The header spelling of `dtype` ("F32", "BF16", ...).
const char *dtypeName(DType dtype);
/// Parses a header spelling; false if it is not one zeroc supports.
bool parseDType(const std::string &name, DType &dtype);

/// One tensor: its raw little-endian bytes.
struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
};

/// The contents of a file: tensors in header order (writing keeps the given
/// order) and the string-to-string `__metadata__` map.
struct File {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or null.
  const Tensor *find(const std::string &name) const;
};

/// The format's limit on the header's length (as the reference
/// implementation's MAX_HEADER_SIZE).
inline constexpr uint64_t kMaxHeaderBytes = 100000000;

/// One tensor of a header: where its bytes are, relative to the first byte
/// after the header.
struct HeaderEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// A parsed and checked header: tensors in header order, the metadata, and
/// where the data starts and how long it is.
struct Header {
  std::vector<HeaderEntry> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t dataStart = 0, dataSize = 0;
};

/// Parses and checks the header of a file of `fileSize` bytes, from its
/// first `prefixSize` bytes (at least 8 + the header's length). Checks the
/// format's rules: the length, the JSON, each entry's dtype, shape and
/// data_offsets (the byte count of shape times dtype), and that the
/// tensors' byte ranges, in order of their offsets, cover the data exactly:
/// contiguous, without gap, overlap or alias, to its last byte. Errors name
/// the file and the tensor.
std::string parseHeader(const std::string &path, const uint8_t *prefix,
                        size_t prefixSize, uint64_t fileSize, Header &header);

/// Reads and checks only the header of `path` (for readers that then read
/// the byte ranges they need).
std::string readHeader(const std::string &path, Header &header);

/// Reads `path` into `file`. Returns "" or an error message.
std::string readFile(const std::string &path, File &file);

/// Parses an in-memory file; `path` only names it in error messages.
std::string parse(const std::string &path, const std::vector<uint8_t> &buffer,
                  File &file);

/// Writes `file` to `path` atomically: to a temporary file in the same
/// directory, then renamed over `path`; a device or a FIFO at `path` is
/// written in place instead (zeroc/Support/OutputFile.h). Returns "" or an
/// error message.
std::string writeFile(const std::string &path, const File &file);

/// Serializes `file` (header padded with spaces to a multiple of 8 bytes,
/// as the reference implementation does). Returns "" or an error message.
std::string serialize(const File &file, std::vector<uint8_t> &buffer);

/// Converts `tensor`'s elements to doubles (every supported dtype converts
/// exactly; I64 values beyond 2^53 round).
std::vector<double> toDoubles(const Tensor &tensor);

/// Builds a tensor from doubles, converting each to `dtype`: F32 by a
/// (float) cast, BF16 by rounding the f32 value to nearest even, integers
/// by truncation toward zero.
Tensor fromDoubles(const std::string &name, DType dtype,
                   const std::vector<int64_t> &shape,
                   const std::vector<double> &values);

/// Rounds an f32 value to bf16 (round to nearest, ties to even; NaN stays
/// NaN) and returns its 16 bits.
uint16_t floatToBF16Bits(float value);
/// The f32 value of bf16 bits.
float bf16BitsToFloat(uint16_t bits);

} // namespace zeroc::safetensors

#endif // ZEROC_SUPPORT_SAFETENSORS_H
