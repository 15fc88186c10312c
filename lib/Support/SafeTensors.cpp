//===- SafeTensors.cpp - read and write safetensors files -----------------===//
//
// A tiny JSON parser reads the header; everything else is byte shuffling.
// No exceptions: each step returns an error message, "" on success.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Support/SafeTensors.h"

#include "zeroc/Support/OutputFile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <utility>

#include <unistd.h>

namespace zeroc::safetensors {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::U16:
    return 2;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::U16:
    return "U16";
  }
  return "?";
}

bool parseDType(const std::string &name, DType &dtype) {
  for (DType candidate : {DType::F32, DType::BF16, DType::F64, DType::I32,
                          DType::I64, DType::U16})
    if (name == dtypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  return false;
}

int64_t Tensor::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

const Tensor *File::find(const std::string &name) const {
  for (const Tensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

uint16_t floatToBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // stays a (quiet) NaN
  uint32_t lsb = (bits >> 16) & 1;
  bits += 0x7FFF + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

float bf16BitsToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

//===----------------------------------------------------------------------===//
// Little-endian bytes
//===----------------------------------------------------------------------===//

namespace {

uint64_t loadLE(const uint8_t *bytes, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

void storeLE(uint8_t *bytes, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}

} // namespace

std::vector<double> toDoubles(const Tensor &tensor) {
  size_t size = dtypeSize(tensor.dtype);
  size_t count = tensor.bytes.size() / size;
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t raw = loadLE(tensor.bytes.data() + i * size, size);
    switch (tensor.dtype) {
    case DType::F32: {
      uint32_t bits = static_cast<uint32_t>(raw);
      float value;
      std::memcpy(&value, &bits, 4);
      values[i] = value;
      break;
    }
    case DType::BF16:
      values[i] = bf16BitsToFloat(static_cast<uint16_t>(raw));
      break;
    case DType::F64: {
      double value;
      std::memcpy(&value, &raw, 8);
      values[i] = value;
      break;
    }
    case DType::I32:
      values[i] = static_cast<int32_t>(static_cast<uint32_t>(raw));
      break;
    case DType::I64:
      values[i] = static_cast<double>(static_cast<int64_t>(raw));
      break;
    case DType::U16:
      values[i] = static_cast<uint16_t>(raw);
      break;
    }
  }
  return values;
}

Tensor fromDoubles(const std::string &name, DType dtype,
                   const std::vector<int64_t> &shape,
                   const std::vector<double> &values) {
  Tensor tensor;
  tensor.name = name;
  tensor.dtype = dtype;
  tensor.shape = shape;
  size_t size = dtypeSize(dtype);
  tensor.bytes.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t raw = 0;
    double value = values[i];
    switch (dtype) {
    case DType::F32: {
      float narrow = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &narrow, 4);
      raw = bits;
      break;
    }
    case DType::BF16:
      raw = floatToBF16Bits(static_cast<float>(value));
      break;
    case DType::F64:
      std::memcpy(&raw, &value, 8);
      break;
    case DType::I32:
      raw = static_cast<uint32_t>(static_cast<int32_t>(value));
      break;
    case DType::I64:
      raw = static_cast<uint64_t>(static_cast<int64_t>(value));
      break;
    case DType::U16:
      raw = static_cast<uint16_t>(value);
      break;
    }
    storeLE(tensor.bytes.data() + i * size, raw, size);
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// A tiny JSON parser (enough for safetensors headers)
//===----------------------------------------------------------------------===//

namespace {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false; // written without fraction or exponent
  int64_t integer = 0;    // valid when isInteger
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;
};

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text(text) {}

  /// Parses the whole text as one value; returns "" or an error.
  std::string parseDocument(Json &value) {
    skipSpace();
    if (std::string error = parseValue(value, 0); !error.empty())
      return error;
    skipSpace();
    if (pos != text.size())
      return errorAt("unexpected trailing characters");
    return "";
  }

private:
  const std::string &text;
  size_t pos = 0;

  std::string errorAt(const std::string &what) const {
    return "invalid JSON header at byte " + std::to_string(pos) + ": " + what;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(const char *word) {
    size_t length = std::strlen(word);
    if (text.compare(pos, length, word) != 0)
      return false;
    pos += length;
    return true;
  }

  std::string parseValue(Json &value, int depth) {
    if (depth > 64)
      return errorAt("nesting too deep");
    if (pos >= text.size())
      return errorAt("unexpected end");
    char c = text[pos];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Json::String;
      return parseString(value.string);
    }
    if (consume("true")) {
      value.kind = Json::Bool;
      value.boolean = true;
      return "";
    }
    if (consume("false")) {
      value.kind = Json::Bool;
      return "";
    }
    if (consume("null")) {
      value.kind = Json::Null;
      return "";
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(value);
    return errorAt(std::string("unexpected character '") + c + "'");
  }

  std::string parseObject(Json &value, int depth) {
    value.kind = Json::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return "";
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return errorAt("expected a string key");
      std::string key;
      if (std::string error = parseString(key); !error.empty())
        return error;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return errorAt("expected ':'");
      ++pos;
      skipSpace();
      Json member;
      if (std::string error = parseValue(member, depth + 1); !error.empty())
        return error;
      value.object.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return "";
      }
      return errorAt("expected ',' or '}'");
    }
  }

  std::string parseArray(Json &value, int depth) {
    value.kind = Json::Array;
    ++pos; // '['
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return "";
    }
    while (true) {
      skipSpace();
      Json element;
      if (std::string error = parseValue(element, depth + 1); !error.empty())
        return error;
      value.array.push_back(std::move(element));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return "";
      }
      return errorAt("expected ',' or ']'");
    }
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parseHex4(uint32_t &code) {
    if (pos + 4 > text.size())
      return errorAt("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text[pos++];
      code <<= 4;
      if (h >= '0' && h <= '9')
        code |= h - '0';
      else if (h >= 'a' && h <= 'f')
        code |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        code |= h - 'A' + 10;
      else
        return errorAt("bad hex digit in \\u escape");
    }
    return "";
  }

  std::string parseString(std::string &out) {
    ++pos; // opening quote
    while (true) {
      if (pos >= text.size())
        return errorAt("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return "";
      if (static_cast<unsigned char>(c) < 0x20)
        return errorAt("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return errorAt("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code = 0;
        if (std::string error = parseHex4(code); !error.empty())
          return error;
        if (code >= 0xD800 && code < 0xDC00) { // a surrogate pair
          uint32_t low = 0;
          if (!consume("\\u"))
            return errorAt("unpaired surrogate in \\u escape");
          if (std::string error = parseHex4(low); !error.empty())
            return error;
          if (low < 0xDC00 || low >= 0xE000)
            return errorAt("bad low surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return errorAt(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  std::string parseNumber(Json &value) {
    size_t start = pos;
    if (text[pos] == '-')
      ++pos;
    bool integer = true;
    while (pos < text.size()) {
      char c = text[pos];
      if (c >= '0' && c <= '9') {
        ++pos;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integer = false;
        ++pos;
      } else {
        break;
      }
    }
    std::string spelling = text.substr(start, pos - start);
    if (spelling == "-")
      return errorAt("bad number");
    value.kind = Json::Number;
    char *end = nullptr;
    errno = 0;
    value.number = std::strtod(spelling.c_str(), &end);
    if (*end != '\0')
      return errorAt("bad number '" + spelling + "'");
    if (integer) {
      errno = 0;
      long long parsed = std::strtoll(spelling.c_str(), &end, 10);
      if (errno == ERANGE)
        return errorAt("integer out of range '" + spelling + "'");
      value.isInteger = true;
      value.integer = parsed;
    }
    return "";
  }
};

void writeJsonString(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", u);
      out += escape;
    } else {
      out += c;
    }
  }
  out += '"';
}

/// Reads a non-negative integer array (shape, data_offsets).
std::string readIntegers(const Json &value, const std::string &what,
                         std::vector<int64_t> &out) {
  if (value.kind != Json::Array)
    return what + " must be an array of integers";
  for (const Json &element : value.array) {
    if (element.kind != Json::Number || !element.isInteger ||
        element.integer < 0)
      return what + " must be an array of non-negative integers";
    out.push_back(element.integer);
  }
  return "";
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

std::string parseHeader(const std::string &path, const uint8_t *prefix,
                        size_t prefixSize, uint64_t fileSize, Header &out) {
  out = Header();
  auto fail = [&](const std::string &what) { return path + ": " + what; };
  if (fileSize < 8 || prefixSize < 8)
    return fail("too short for a safetensors file (" +
                std::to_string(fileSize) + " bytes)");
  uint64_t headerSize = loadLE(prefix, 8);
  if (headerSize > fileSize - 8)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the file size " + std::to_string(fileSize));
  if (headerSize > kMaxHeaderBytes)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the format's limit of 100 MB");
  if (headerSize > prefixSize - 8)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the " + std::to_string(prefixSize - 8) +
                " bytes read after the length");
  std::string header(reinterpret_cast<const char *>(prefix + 8), headerSize);
  Json root;
  if (std::string error = JsonParser(header).parseDocument(root);
      !error.empty())
    return fail(error);
  if (root.kind != Json::Object)
    return fail("the header must be a JSON object");
  out.dataStart = 8 + headerSize;
  out.dataSize = fileSize - out.dataStart;
  std::set<std::string> seen;
  bool sawMetadata = false;
  for (const auto &[name, entry] : root.object) {
    if (name == "__metadata__") {
      if (sawMetadata)
        return fail("__metadata__ appears twice in the header");
      sawMetadata = true;
      if (entry.kind != Json::Object)
        return fail("__metadata__ must be an object of strings");
      for (const auto &[key, value] : entry.object) {
        if (value.kind != Json::String)
          return fail("__metadata__ value of '" + key + "' must be a string");
        if (out.metadata.count(key))
          return fail("__metadata__ key '" + key + "' appears twice");
        out.metadata[key] = value.string;
      }
      continue;
    }
    if (!seen.insert(name).second)
      return fail("tensor '" + name + "' appears twice in the header");
    auto failTensor = [&](const std::string &what) {
      return fail("tensor '" + name + "': " + what);
    };
    if (entry.kind != Json::Object)
      return failTensor("header entry must be an object");
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto &[key, value] : entry.object) {
      const Json **slot = key == "dtype"          ? &dtype
                          : key == "shape"        ? &shape
                          : key == "data_offsets" ? &offsets
                                                  : nullptr;
      if (!slot)
        return failTensor("unknown header field '" + key + "'");
      if (*slot)
        return failTensor("header field '" + key + "' appears twice");
      *slot = &value;
    }
    if (!dtype || !shape || !offsets)
      return failTensor("needs dtype, shape and data_offsets");
    HeaderEntry tensor;
    tensor.name = name;
    if (dtype->kind != Json::String)
      return failTensor("dtype must be a string");
    if (!parseDType(dtype->string, tensor.dtype))
      return failTensor("unsupported dtype '" + dtype->string +
                        "' (supported: F32, BF16, F64, I32, I64, U16)");
    if (std::string error = readIntegers(*shape, "shape", tensor.shape);
        !error.empty())
      return failTensor(error);
    std::vector<int64_t> range;
    if (std::string error = readIntegers(*offsets, "data_offsets", range);
        !error.empty())
      return failTensor(error);
    if (range.size() != 2 || range[0] > range[1])
      return failTensor("data_offsets must be [begin, end] with begin <= end");
    tensor.begin = static_cast<uint64_t>(range[0]);
    tensor.end = static_cast<uint64_t>(range[1]);
    if (tensor.end > out.dataSize)
      return failTensor("data_offsets [" + std::to_string(range[0]) + ", " +
                        std::to_string(range[1]) +
                        "] run past the end of the data (" +
                        std::to_string(out.dataSize) + " bytes)");
    // Element count with an overflow guard.
    uint64_t count = 1;
    for (int64_t dim : tensor.shape) {
      if (dim != 0 && count > std::numeric_limits<uint64_t>::max() /
                                  static_cast<uint64_t>(dim))
        return failTensor("shape is too large");
      count *= static_cast<uint64_t>(dim);
    }
    uint64_t bytes = tensor.end - tensor.begin;
    if (count > bytes || count * dtypeSize(tensor.dtype) != bytes)
      return failTensor(
          "data_offsets cover " + std::to_string(bytes) +
          " bytes but the shape and dtype need " +
          (count > bytes ? "more" : std::to_string(count * dtypeSize(tensor.dtype))));
    out.tensors.push_back(std::move(tensor));
  }

  // The format's rule: the tensors' byte ranges, in order of their offsets,
  // follow one another without gap or overlap from the first byte of the
  // data to its last (no two tensors alias, no byte belongs to none).
  std::vector<size_t> order(out.tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const HeaderEntry &x = out.tensors[a], &y = out.tensors[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  auto rangeText = [](const HeaderEntry &t) {
    return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  };
  uint64_t covered = 0;
  const HeaderEntry *previous = nullptr;
  for (size_t index : order) {
    const HeaderEntry &tensor = out.tensors[index];
    if (tensor.begin < covered)
      return fail("tensor '" + tensor.name + "': data_offsets " +
                  rangeText(tensor) + " overlap those of tensor '" +
                  previous->name + "' " + rangeText(*previous) +
                  "; the format forbids overlapping or aliased tensors");
    if (tensor.begin > covered)
      return fail("tensor '" + tensor.name + "': data_offsets " +
                  rangeText(tensor) + " leave bytes [" +
                  std::to_string(covered) + ", " +
                  std::to_string(tensor.begin) +
                  ") of the data to no tensor; the format needs the tensors "
                  "to cover the data without gaps");
    covered = tensor.end;
    previous = &tensor;
  }
  if (covered != out.dataSize)
    return fail("bytes [" + std::to_string(covered) + ", " +
                std::to_string(out.dataSize) + ") of the data" +
                (previous ? " after tensor '" + previous->name + "'" : "") +
                " belong to no tensor; the format needs the tensors to cover "
                "the data exactly");
  return "";
}

std::string parse(const std::string &path, const std::vector<uint8_t> &buffer,
                  File &file) {
  file = File();
  Header header;
  if (std::string error = parseHeader(path, buffer.data(), buffer.size(),
                                      buffer.size(), header);
      !error.empty())
    return error;
  file.metadata = std::move(header.metadata);
  for (HeaderEntry &entry : header.tensors) {
    Tensor tensor;
    tensor.name = std::move(entry.name);
    tensor.dtype = entry.dtype;
    tensor.shape = std::move(entry.shape);
    auto begin = buffer.begin() + header.dataStart + entry.begin;
    tensor.bytes.assign(begin, begin + (entry.end - entry.begin));
    file.tensors.push_back(std::move(tensor));
  }
  return "";
}

std::string readHeader(const std::string &path, Header &header) {
  std::ifstream stream(path, std::ios::binary | std::ios::ate);
  if (!stream)
    return path + ": cannot open: " + std::strerror(errno);
  std::streamoff size = stream.tellg();
  if (size < 0)
    return path + ": cannot tell its size";
  stream.seekg(0);
  std::vector<uint8_t> prefix(8);
  if (size >= 8 && !stream.read(reinterpret_cast<char *>(prefix.data()), 8))
    return path + ": read error";
  uint64_t headerSize = size >= 8 ? loadLE(prefix.data(), 8) : 0;
  if (size >= 8 && headerSize <= static_cast<uint64_t>(size) - 8 &&
      headerSize <= kMaxHeaderBytes) {
    prefix.resize(8 + headerSize);
    if (!stream.read(reinterpret_cast<char *>(prefix.data() + 8),
                     static_cast<std::streamsize>(headerSize)))
      return path + ": read error";
  }
  return parseHeader(path, prefix.data(), prefix.size(),
                     static_cast<uint64_t>(size), header);
}

std::string readFile(const std::string &path, File &file) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return path + ": cannot open: " + std::strerror(errno);
  std::vector<uint8_t> buffer((std::istreambuf_iterator<char>(stream)),
                              std::istreambuf_iterator<char>());
  if (stream.bad())
    return path + ": read error";
  return parse(path, buffer, file);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string serialize(const File &file, std::vector<uint8_t> &buffer) {
  std::string header = "{";
  bool first = true;
  if (!file.metadata.empty()) {
    header += "\"__metadata__\":{";
    bool firstKey = true;
    for (const auto &[key, value] : file.metadata) {
      if (!firstKey)
        header += ',';
      firstKey = false;
      writeJsonString(header, key);
      header += ':';
      writeJsonString(header, value);
    }
    header += '}';
    first = false;
  }
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const Tensor &tensor : file.tensors) {
    if (tensor.name == "__metadata__")
      return "a tensor cannot be called __metadata__";
    if (!seen.insert(tensor.name).second)
      return "tensor '" + tensor.name + "' is written twice";
    uint64_t expected =
        static_cast<uint64_t>(tensor.numElements()) * dtypeSize(tensor.dtype);
    if (tensor.bytes.size() != expected)
      return "tensor '" + tensor.name + "' has " +
             std::to_string(tensor.bytes.size()) +
             " bytes of data but its shape and dtype need " +
             std::to_string(expected);
    if (!first)
      header += ',';
    first = false;
    writeJsonString(header, tensor.name);
    header += ":{\"dtype\":\"";
    header += dtypeName(tensor.dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      if (i)
        header += ',';
      header += std::to_string(tensor.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + tensor.bytes.size()) + "]}";
    offset += tensor.bytes.size();
  }
  header += '}';
  while (header.size() % 8 != 0)
    header += ' ';
  buffer.assign(8, 0);
  storeLE(buffer.data(), header.size(), 8);
  buffer.insert(buffer.end(), header.begin(), header.end());
  for (const Tensor &tensor : file.tensors)
    buffer.insert(buffer.end(), tensor.bytes.begin(), tensor.bytes.end());
  return "";
}

std::string writeFile(const std::string &path, const File &file) {
  std::vector<uint8_t> buffer;
  if (std::string error = serialize(file, buffer); !error.empty())
    return path + ": " + error;
  // A temporary renamed over a regular file or a new path; a device or a
  // FIFO is written in place (OutputFile.h).
  return output::writeFile(path, buffer.data(), buffer.size());
}

} // namespace zeroc::safetensors
