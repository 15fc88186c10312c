//===- Manifest.cpp - the checkpoint's manifest and its writing plan ------===//
//
// The manifest (manifest.json in a step folder) is the commit record of a
// checkpoint: rank 0 writes it last, once every rank's files are durable.
// It lists every tensor (name, kind, dtype, logical shape), its slices
// (file, element range, byte range, CRC-32C) and every file (size,
// CRC-32C); its last member is the CRC-32C of the text before it, so that
// an edited or damaged manifest is refused. docs/executable.md shows one.
//
// The plan says which rank writes which slice. It derives from the ranges
// that localRange() (zrt_state_range's) gives for every rank and nothing
// else, whichever layout the program uses: a range that
// one rank holds is written by that rank; a range that several ranks hold
// (an unsharded state is held by all) is cut evenly among its holders,
// except that pieces stay at least kMinSliceBytes (a small tensor is
// written whole by one holder, chosen in turn by tensor). So every element
// is written once, the ranks write in parallel, and each rank writes only
// what it holds.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace zeroc::rt::ckpt {

namespace {

constexpr int64_t kMinSliceBytes = int64_t(1) << 20;
constexpr int kVersion = 1;
constexpr const char *kCrcKey = "\n  \"manifest_crc32c\": \"";

} // namespace

const char *kindName(zrt_state_kind kind) {
  switch (kind) {
  case ZRT_STATE_PARAM:
    return "param";
  case ZRT_STATE_MASTER:
    return "master";
  case ZRT_STATE_EXP_AVG:
    return "exp_avg";
  case ZRT_STATE_EXP_AVG_SQ:
    return "exp_avg_sq";
  case ZRT_STATE_MOMENTUM_BUFFER:
    return "momentum_buffer";
  case ZRT_STATE_GRAD:
    return "grad";
  }
  return "?";
}

const char *dtypeName(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return "F32";
  case ZRT_BF16:
    return "BF16";
  case ZRT_I32:
    return "I32";
  case ZRT_I64:
    return "I64";
  }
  return "?";
}

bool parseDtype(const std::string &name, zrt_dtype &dtype) {
  for (zrt_dtype candidate : {ZRT_F32, ZRT_BF16, ZRT_I32, ZRT_I64})
    if (name == dtypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  return false;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string stepFolderName(int64_t step) {
  char text[32];
  std::snprintf(text, sizeof text, "step-%07" PRId64, step);
  return text;
}

int64_t parseStepFolder(const std::string &name, const char *suffix) {
  std::string rest = name;
  size_t length = std::strlen(suffix);
  if (length) {
    if (rest.size() <= length ||
        rest.compare(rest.size() - length, length, suffix) != 0)
      return -1;
    rest = rest.substr(0, rest.size() - length);
  }
  if (rest.size() < 6 || rest.compare(0, 5, "step-") != 0)
    return -1;
  int64_t step = 0;
  for (size_t i = 5; i < rest.size(); ++i) {
    if (rest[i] < '0' || rest[i] > '9' || step > INT64_MAX / 10)
      return -1;
    step = step * 10 + (rest[i] - '0');
  }
  return step;
}

const Tensor *Manifest::find(const std::string &name) const {
  for (const Tensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

const FileRecord *Manifest::findFile(const std::string &name) const {
  for (const FileRecord &file : files)
    if (file.name == name)
      return &file;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string serializeManifest(const Manifest &m) {
  auto integers = [](const std::vector<int64_t> &values) {
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i)
      text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
  };
  std::string text = "{\n";
  text += "  \"format\": \"zeroc-checkpoint\",\n";
  text += "  \"version\": " + std::to_string(kVersion) + ",\n";
  text += "  \"model\": " + jsonQuote(m.model) + ",\n";
  text += "  \"step\": " + std::to_string(m.step) + ",\n";
  text += "  \"data_position\": " + std::to_string(m.dataPosition) + ",\n";
  text += "  \"global_batch\": " + std::to_string(m.globalBatch) + ",\n";
  text += "  \"seq_len\": " + std::to_string(m.seqLen) + ",\n";
  text += "  \"seed\": " + std::to_string(m.seed) + ",\n";
  text += "  \"world_size\": " + std::to_string(m.worldSize) + ",\n";
  text += "  \"zero_stage\": " + std::to_string(m.zeroStage) + ",\n";
  text += "  \"aliases\": {";
  for (size_t i = 0; i < m.aliases.size(); ++i)
    text += (i ? ", " : "") + jsonQuote(m.aliases[i].first) + ": " +
            jsonQuote(m.aliases[i].second);
  text += "},\n  \"files\": [";
  for (size_t i = 0; i < m.files.size(); ++i) {
    const FileRecord &file = m.files[i];
    text += std::string(i ? "," : "") +
            "\n    {\"name\": " + jsonQuote(file.name) +
            ", \"bytes\": " + std::to_string(file.bytes) + ", \"crc32c\": \"" +
            crcHex(file.crc) + "\"}";
  }
  text += "\n  ],\n  \"tensors\": [";
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const Tensor &tensor = m.tensors[i];
    size_t size = zrt_dtype_size(tensor.dtype);
    text += std::string(i ? "," : "") +
            "\n    {\"name\": " + jsonQuote(tensor.name) +
            ", \"kind\": " + jsonQuote(tensor.kind);
    if (!tensor.of.empty())
      text += ", \"of\": " + jsonQuote(tensor.of);
    text += ", \"dtype\": \"" + std::string(dtypeName(tensor.dtype)) +
            "\", \"shape\": " + integers(tensor.shape) + ", \"slices\": [";
    for (size_t j = 0; j < tensor.slices.size(); ++j) {
      const Slice &slice = tensor.slices[j];
      int64_t byteEnd = slice.byteBegin +
                        (slice.end - slice.begin) * static_cast<int64_t>(size);
      text += std::string(j ? "," : "") +
              "\n      {\"file\": " + jsonQuote(slice.file) +
              ", \"elements\": " + integers({slice.begin, slice.end}) +
              ", \"bytes\": " + integers({slice.byteBegin, byteEnd}) +
              ", \"crc32c\": \"" + crcHex(slice.crc) + "\"}";
    }
    text += "]}";
  }
  // The CRC covers the text up to and including the newline before its
  // own line.
  text += "\n  ],\n";
  uint32_t crc = crc32c(0, text.data(), text.size());
  return text + "  \"manifest_crc32c\": \"" + crcHex(crc) + "\"\n}\n";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

bool isHex8(const std::string &text) {
  if (text.size() != 8)
    return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

uint32_t hexValue(const std::string &text) {
  return static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 16));
}

/// Field readers: each fails with "field 'KEY' ...".
std::string getInteger(const Json &object, const char *key, int64_t &out,
                       int64_t minimum = 0) {
  const Json *value = object.get(key);
  if (!value)
    return std::string("has no '") + key + "'";
  if (value->kind != Json::Number || !value->isInteger ||
      value->integer < minimum)
    return std::string("'") + key +
           "' is not an integer >= " + std::to_string(minimum);
  out = value->integer;
  return "";
}

std::string getString(const Json &object, const char *key, std::string &out,
                      bool optional = false) {
  const Json *value = object.get(key);
  if (!value) {
    if (optional)
      return "";
    return std::string("has no '") + key + "'";
  }
  if (value->kind != Json::String)
    return std::string("'") + key + "' is not a string";
  out = value->string;
  return "";
}

std::string getCrc(const Json &object, uint32_t &out) {
  std::string text;
  if (std::string error = getString(object, "crc32c", text); !error.empty())
    return error;
  if (!isHex8(text))
    return "'crc32c' is not 8 lowercase hex digits";
  out = hexValue(text);
  return "";
}

std::string getPair(const Json &object, const char *key, int64_t &first,
                    int64_t &second) {
  const Json *value = object.get(key);
  if (!value)
    return std::string("has no '") + key + "'";
  if (value->kind != Json::Array || value->array.size() != 2 ||
      value->array[0].kind != Json::Number || !value->array[0].isInteger ||
      value->array[1].kind != Json::Number || !value->array[1].isInteger ||
      value->array[0].integer < 0 ||
      value->array[1].integer < value->array[0].integer)
    return std::string("'") + key +
           "' is not [BEGIN, END] with 0 <= BEGIN <= END";
  first = value->array[0].integer;
  second = value->array[1].integer;
  return "";
}

} // namespace

std::string parseManifest(const std::string &path, const std::string &text,
                          Manifest &m) {
  m = Manifest();
  auto fail = [&](const std::string &what) { return path + ": " + what; };

  // The CRC line: the last member, on its own line.
  size_t at = text.rfind(kCrcKey);
  if (at == std::string::npos)
    return fail("not a zeroc checkpoint manifest (no manifest_crc32c line at "
                "the end)");
  std::string body = text.substr(0, at + 1);
  std::string tail = text.substr(at + std::strlen(kCrcKey));
  if (tail.size() != 8 + 4 || !isHex8(tail.substr(0, 8)) ||
      tail.substr(8) != "\"\n}\n")
    return fail("the manifest_crc32c line is malformed: the manifest was "
                "modified or damaged");
  uint32_t stored = hexValue(tail.substr(0, 8));
  uint32_t actual = crc32c(0, body.data(), body.size());
  if (stored != actual)
    return fail("checksum mismatch (manifest_crc32c " + crcHex(stored) +
                ", the text's " + crcHex(actual) +
                "): the manifest was modified or damaged");
  m.crc = stored;

  Json root;
  if (std::string error = parseJson(text, root); !error.empty())
    return fail(error);
  if (root.kind != Json::Object)
    return fail("the manifest is not a JSON object");
  std::string format;
  getString(root, "format", format);
  if (format != "zeroc-checkpoint")
    return fail("not a zeroc checkpoint manifest (format '" + format + "')");
  int64_t version = 0;
  if (std::string error = getInteger(root, "version", version); !error.empty())
    return fail("the manifest " + error);
  if (version != kVersion)
    return fail("manifest version " + std::to_string(version) +
                ", this executable reads version " + std::to_string(kVersion));
  std::string error;
  if (error.empty())
    error = getString(root, "model", m.model);
  if (error.empty())
    error = getInteger(root, "step", m.step);
  if (error.empty())
    error = getInteger(root, "data_position", m.dataPosition);
  if (error.empty())
    error = getInteger(root, "global_batch", m.globalBatch, 1);
  if (error.empty())
    error = getInteger(root, "seq_len", m.seqLen, 1);
  if (error.empty())
    error = getInteger(root, "world_size", m.worldSize, 1);
  if (error.empty())
    error = getInteger(root, "zero_stage", m.zeroStage);
  if (error.empty()) {
    const Json *seed = root.get("seed");
    if (!seed || seed->kind != Json::Number || !seed->isUnsigned)
      error = "'seed' is not a non-negative integer";
    else
      m.seed = seed->unsignedInteger;
  }
  if (!error.empty())
    return fail("the manifest " + error);

  if (const Json *aliases = root.get("aliases")) {
    if (aliases->kind != Json::Object)
      return fail("'aliases' is not an object");
    for (const auto &[name, target] : aliases->object) {
      if (target.kind != Json::String)
        return fail("alias '" + name + "' is not a string");
      m.aliases.emplace_back(name, target.string);
    }
  }

  const Json *files = root.get("files");
  std::map<std::string, size_t> fileIndex;
  if (!files || files->kind != Json::Array)
    return fail("the manifest has no 'files' array");
  for (const Json &entry : files->array) {
    FileRecord file;
    std::string problem = entry.kind == Json::Object ? "" : "is not an object";
    if (problem.empty())
      problem = getString(entry, "name", file.name);
    if (problem.empty())
      problem = getInteger(entry, "bytes", file.bytes);
    if (problem.empty())
      problem = getCrc(entry, file.crc);
    if (problem.empty() &&
        (file.name.empty() || file.name.find('/') != std::string::npos ||
         file.name[0] == '.'))
      problem = "has a name that is not a plain file name";
    if (problem.empty() && fileIndex.count(file.name))
      problem = "is listed twice";
    if (!problem.empty())
      return fail("file entry '" + file.name + "' " + problem);
    fileIndex[file.name] = m.files.size();
    m.files.push_back(file);
  }

  const Json *tensors = root.get("tensors");
  if (!tensors || tensors->kind != Json::Array)
    return fail("the manifest has no 'tensors' array");
  std::set<std::string> names;
  for (const Json &entry : tensors->array) {
    Tensor tensor;
    std::string dtype;
    std::string problem = entry.kind == Json::Object ? "" : "is not an object";
    if (problem.empty())
      problem = getString(entry, "name", tensor.name);
    if (problem.empty())
      problem = getString(entry, "kind", tensor.kind);
    if (problem.empty())
      problem = getString(entry, "of", tensor.of, /*optional=*/true);
    if (problem.empty())
      problem = getString(entry, "dtype", dtype);
    if (problem.empty() && !parseDtype(dtype, tensor.dtype))
      problem = "has dtype '" + dtype + "' (F32, BF16, I32 or I64)";
    const Json *shape = entry.get("shape");
    if (problem.empty() && (!shape || shape->kind != Json::Array))
      problem = "has no 'shape' array";
    if (problem.empty()) {
      tensor.numel = 1;
      for (const Json &dim : shape->array) {
        if (dim.kind != Json::Number || !dim.isInteger || dim.integer < 0 ||
            (dim.integer > 0 && tensor.numel > INT64_MAX / 8 / dim.integer)) {
          problem = "has a shape that is not a list of sizes";
          break;
        }
        tensor.shape.push_back(dim.integer);
        tensor.numel *= dim.integer;
      }
    }
    if (problem.empty() && !names.insert(tensor.name).second)
      problem = "is listed twice";
    const Json *slices = entry.get("slices");
    if (problem.empty() && (!slices || slices->kind != Json::Array))
      problem = "has no 'slices' array";
    if (!problem.empty())
      return fail("tensor '" + tensor.name + "' " + problem);

    int64_t size = static_cast<int64_t>(zrt_dtype_size(tensor.dtype));
    int64_t next = 0;
    for (const Json &item : slices->array) {
      Slice slice;
      int64_t byteEnd = 0;
      problem = item.kind == Json::Object ? "" : "is not an object";
      if (problem.empty())
        problem = getString(item, "file", slice.file);
      if (problem.empty())
        problem = getPair(item, "elements", slice.begin, slice.end);
      if (problem.empty())
        problem = getPair(item, "bytes", slice.byteBegin, byteEnd);
      if (problem.empty())
        problem = getCrc(item, slice.crc);
      auto found =
          problem.empty() ? fileIndex.find(slice.file) : fileIndex.end();
      const FileRecord *file =
          found == fileIndex.end() ? nullptr : &m.files[found->second];
      if (problem.empty() && !file)
        problem = "is in '" + slice.file + "', which 'files' does not list";
      if (problem.empty() && slice.begin != next)
        problem = "starts at element " + std::to_string(slice.begin) +
                  ", expected " + std::to_string(next) +
                  " (the slices must cover the tensor in order)";
      if (problem.empty() && slice.end > tensor.numel)
        problem = "ends at element " + std::to_string(slice.end) +
                  " past the tensor's " + std::to_string(tensor.numel);
      if (problem.empty() &&
          byteEnd - slice.byteBegin != (slice.end - slice.begin) * size)
        problem = "has " + std::to_string(byteEnd - slice.byteBegin) +
                  " bytes for " + std::to_string(slice.end - slice.begin) +
                  " " + dtype + " elements";
      if (problem.empty() && (slice.byteBegin < 8 || byteEnd > file->bytes))
        problem = "has bytes [" + std::to_string(slice.byteBegin) + ", " +
                  std::to_string(byteEnd) + ") outside the " +
                  std::to_string(file->bytes) + " bytes of '" + slice.file +
                  "'";
      if (!problem.empty())
        return fail("tensor '" + tensor.name + "': a slice " + problem);
      next = slice.end;
      tensor.slices.push_back(slice);
    }
    if (next != tensor.numel)
      return fail("tensor '" + tensor.name +
                  "': the slices cover elements [0, " + std::to_string(next) +
                  ") of " + std::to_string(tensor.numel) + " (shape " +
                  formatShape(tensor.shape) + ")");
    m.tensors.push_back(std::move(tensor));
  }
  return "";
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

const char *groupFileStem(int group) {
  static const char *const stems[kGroups] = {"model", "optimizer", "trainer"};
  return group >= 0 && group < kGroups ? stems[group] : "?";
}

std::string groupFileName(int group, int rank) {
  if (group == 2)
    return kTrainerFile;
  return std::string(groupFileStem(group)) + ".rank" + std::to_string(rank) +
         ".safetensors";
}

std::string makePlan(const zrt_program &program, int worldSize, Plan &plan) {
  plan = Plan();
  plan.slices.assign(static_cast<size_t>(worldSize),
                     std::vector<std::vector<PlanSlice>>(kGroups));
  auto add = [&](int rank, int tensor, int64_t begin, int64_t end) {
    std::vector<PlanSlice> &list =
        plan.slices[static_cast<size_t>(rank)]
                   [static_cast<size_t>(plan.tensors[tensor].group)];
    if (!list.empty() && list.back().tensor == tensor &&
        list.back().end == begin) {
      list.back().end = end;
      return;
    }
    list.push_back({tensor, begin, end});
  };

  for (int s = 0; s < program.num_states; ++s) {
    const zrt_state &state = program.states[s];
    if (state.kind == ZRT_STATE_GRAD)
      continue;
    PlanTensor tensor;
    tensor.name = state.name;
    tensor.kind = kindName(state.kind);
    tensor.of = state.of ? state.of : "";
    tensor.dtype = state.dtype;
    tensor.shape.assign(state.shape, state.shape + state.rank);
    tensor.numel = state.numel;
    tensor.state = s;
    tensor.group = state.kind == ZRT_STATE_PARAM ? 0 : 1;
    int index = static_cast<int>(plan.tensors.size());
    plan.tensors.push_back(tensor);

    // Who holds what: a sweep over the ranges' boundaries.
    struct Held {
      int64_t begin, end;
      int rank;
    };
    std::vector<Held> held;
    std::vector<int64_t> cuts = {0, state.numel};
    for (int r = 0; r < worldSize; ++r) {
      StateRange range = localRange(program, state, r, worldSize);
      if (range.count <= 0)
        continue;
      held.push_back({range.offset, range.offset + range.count, r});
      cuts.push_back(range.offset);
      cuts.push_back(range.offset + range.count);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::sort(held.begin(), held.end(),
              [](const Held &a, const Held &b) { return a.begin < b.begin; });
    std::set<std::pair<int64_t, int>> active; // (end, rank)
    std::set<int> holders;
    size_t next = 0;
    int64_t size = static_cast<int64_t>(zrt_dtype_size(state.dtype));
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      int64_t a = cuts[c], b = cuts[c + 1];
      if (a >= state.numel)
        break;
      while (!active.empty() && active.begin()->first <= a) {
        holders.erase(active.begin()->second);
        active.erase(active.begin());
      }
      while (next < held.size() && held[next].begin <= a) {
        if (held[next].end > a) {
          active.insert({held[next].end, held[next].rank});
          holders.insert(held[next].rank);
        }
        ++next;
      }
      if (holders.empty())
        return "the program '" +
               std::string(program.model ? program.model : "model") +
               "' is malformed: elements [" + std::to_string(a) + ", " +
               std::to_string(b) + ") of state '" + state.name +
               "' are held by no rank";
      std::vector<int> who(holders.begin(), holders.end());
      int64_t count = static_cast<int64_t>(who.size());
      int64_t parts = std::min<int64_t>(
          count, std::max<int64_t>(1, (b - a) * size / kMinSliceBytes));
      for (int64_t i = 0; i < parts; ++i) {
        int writer = parts == count
                         ? who[static_cast<size_t>(i)]
                         : who[static_cast<size_t>((i + index) % count)];
        int64_t from = a + (b - a) * i / parts,
                to = a + (b - a) * (i + 1) / parts;
        if (from < to)
          add(writer, index, from, to);
      }
    }
  }

  // The trainer's values, written by rank 0.
  for (const char *name :
       {"trainer.step", "trainer.data_position", "trainer.seed"}) {
    PlanTensor tensor;
    tensor.name = name;
    tensor.kind = "trainer";
    tensor.dtype = ZRT_I64;
    tensor.numel = 1;
    tensor.group = 2;
    int index = static_cast<int>(plan.tensors.size());
    plan.tensors.push_back(tensor);
    add(0, index, 0, 1);
  }
  return "";
}

std::string
safetensorsHeader(const Plan &plan, const std::vector<PlanSlice> &slices,
                  const std::vector<std::pair<std::string, std::string>> &meta,
                  std::vector<int64_t> &offsets) {
  std::string header = "{\"__metadata__\":{";
  for (size_t i = 0; i < meta.size(); ++i)
    header += (i ? "," : "") + jsonQuote(meta[i].first) + ":" +
              jsonQuote(meta[i].second);
  header += "}";
  std::set<std::string> used;
  std::vector<int64_t> dataOffsets;
  int64_t offset = 0;
  for (const PlanSlice &slice : slices) {
    const PlanTensor &tensor = plan.tensors[static_cast<size_t>(slice.tensor)];
    std::string name = tensor.name;
    if (!used.insert(name).second) {
      name += "@" + std::to_string(slice.begin);
      used.insert(name);
    }
    int64_t count = slice.end - slice.begin;
    std::vector<int64_t> shape;
    int64_t row = tensor.shape.empty() || tensor.shape[0] == 0
                      ? 0
                      : tensor.numel / tensor.shape[0];
    if (count == tensor.numel) {
      shape = tensor.shape;
    } else if (row > 0 && slice.begin % row == 0 && slice.end % row == 0) {
      shape = tensor.shape;
      shape[0] = count / row;
    } else {
      shape = {count};
    }
    int64_t bytes = count * static_cast<int64_t>(zrt_dtype_size(tensor.dtype));
    header += "," + jsonQuote(name) + ":{\"dtype\":\"" +
              dtypeName(tensor.dtype) + "\",\"shape\":[";
    for (size_t d = 0; d < shape.size(); ++d)
      header += (d ? "," : "") + std::to_string(shape[d]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    dataOffsets.push_back(offset);
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0)
    header += ' ';
  std::string out(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xFF);
  out += header;
  offsets.clear();
  for (int64_t begin : dataOffsets)
    offsets.push_back(static_cast<int64_t>(out.size()) + begin);
  return out;
}

} // namespace zeroc::rt::ckpt
