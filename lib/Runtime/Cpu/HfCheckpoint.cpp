//===- HfCheckpoint.cpp - --init from a sharded Hugging Face checkpoint ---===//
//
// Hugging Face saves large models as shards, model-0000K-of-0000N.safetensors,
// with model.safetensors.index.json mapping every tensor to its shard:
//
//   {"metadata": {"total_size": 16060522496},
//    "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors", ...}}
//
// readInitFile reads such a checkpoint, given the index file or the folder
// holding it, as one safetensors file: each shard once, every tensor the
// index names taken from its shard (a tensor missing from its shard, or a
// shard holding a tensor the index does not give it, is an error naming
// both). Rotary tables that old checkpoints carry as tensors
// (`*.rotary_emb.inv_freq`) are dropped: zeroc computes them. Anything else
// is read as a single safetensors file.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace zeroc::rt {

namespace {

namespace st = zeroc::safetensors;

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

/// A minimal JSON reader for the index: objects, arrays, strings, numbers,
/// true/false/null; only `weight_map`'s string values are kept.
class IndexParser {
public:
  IndexParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  std::string parse(std::map<std::string, std::string> &weightMap) {
    skipSpace();
    if (!consume('{'))
      return fail("expected a JSON object");
    bool found = false;
    if (!peek('}')) {
      do {
        std::string key;
        if (std::string error = parseString(key); !error.empty())
          return error;
        skipSpace();
        if (!consume(':'))
          return fail("expected ':' after \"" + key + "\"");
        if (key == "weight_map") {
          found = true;
          if (std::string error = parseMap(weightMap); !error.empty())
            return error;
        } else if (std::string error = skipValue(0); !error.empty()) {
          return error;
        }
        skipSpace();
      } while (consume(','));
    }
    if (!consume('}'))
      return fail("expected ',' or '}'");
    if (!found)
      return path +
             ": no \"weight_map\" (is it a model.safetensors.index.json?)";
    return "";
  }

private:
  std::string fail(const std::string &what) const {
    return path + ": invalid index at byte " + std::to_string(pos) + ": " +
           what;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\r' || text[pos] == '\t'))
      ++pos;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    ++pos;
    return true;
  }
  std::string parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || text[pos] != '"')
      return fail("expected a string");
    ++pos;
    out.clear();
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char e = text[pos++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return fail("truncated \\u escape");
        unsigned code = std::stoul(text.substr(pos, 4), nullptr, 16);
        pos += 4;
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        out += e;
        break; // \" \\ \/
      }
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return "";
  }
  std::string parseMap(std::map<std::string, std::string> &map) {
    if (!consume('{'))
      return fail("\"weight_map\" must be an object");
    if (consume('}'))
      return "";
    do {
      std::string key, value;
      if (std::string error = parseString(key); !error.empty())
        return error;
      if (!consume(':'))
        return fail("expected ':' after \"" + key + "\"");
      if (std::string error = parseString(value); !error.empty())
        return fail("the shard of \"" + key + "\" must be a file name");
      if (!map.emplace(key, value).second)
        return fail("\"" + key + "\" is listed twice");
    } while (consume(','));
    if (!consume('}'))
      return fail("expected ',' or '}' in \"weight_map\"");
    return "";
  }
  std::string skipValue(int depth) {
    if (depth > 64)
      return fail("nested too deeply");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end");
    char c = text[pos];
    if (c == '"') {
      std::string ignored;
      return parseString(ignored);
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++pos;
      if (consume(close))
        return "";
      do {
        if (c == '{') {
          std::string key;
          if (std::string error = parseString(key); !error.empty())
            return error;
          if (!consume(':'))
            return fail("expected ':'");
        }
        if (std::string error = skipValue(depth + 1); !error.empty())
          return error;
      } while (consume(','));
      if (!consume(close))
        return fail(std::string("expected ',' or '") + close + "'");
      return "";
    }
    size_t start = pos;
    while (pos < text.size() && text[pos] != ',' && text[pos] != '}' &&
           text[pos] != ']' && text[pos] != ' ' && text[pos] != '\n')
      ++pos;
    if (pos == start)
      return fail("expected a value");
    return "";
  }

  const std::string &text;
  const std::string &path;
  size_t pos = 0;
};

bool isRotaryTable(const std::string &name) {
  return endsWith(name, "rotary_emb.inv_freq");
}

} // namespace

std::string readInitFile(const std::string &path, safetensors::File &file) {
  std::string index = path;
  if (isDirectory(path)) {
    std::string dir = path.back() == '/' ? path : path + "/";
    index = dir + "model.safetensors.index.json";
    std::ifstream probe(index);
    if (!probe) {
      std::string single = dir + "model.safetensors";
      if (std::ifstream(single))
        return readInitFile(single, file);
      return path + ": a folder without model.safetensors.index.json or "
                    "model.safetensors";
    }
  }
  if (!endsWith(index, ".json")) {
    std::string error = st::readFile(path, file);
    return error;
  }

  std::ifstream in(index, std::ios::binary);
  if (!in)
    return index + ": cannot open it";
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  std::map<std::string, std::string> weightMap;
  if (std::string error = IndexParser(json, index).parse(weightMap);
      !error.empty())
    return error;
  if (weightMap.empty())
    return index + ": \"weight_map\" lists no tensor";

  std::string dir;
  if (size_t slash = index.rfind('/'); slash != std::string::npos)
    dir = index.substr(0, slash + 1);
  std::set<std::string> shards;
  for (const auto &[name, shard] : weightMap) {
    if (shard.empty() || shard.find('/') != std::string::npos)
      return index + ": the shard of '" + name + "' ('" + shard +
             "') must be a file name beside the index";
    shards.insert(shard);
  }

  file.tensors.clear();
  file.metadata.clear();
  std::set<std::string> seen;
  for (const std::string &shard : shards) {
    st::File part;
    if (std::string error = st::readFile(dir + shard, part); !error.empty())
      return error;
    for (st::Tensor &tensor : part.tensors) {
      auto it = weightMap.find(tensor.name);
      if (it == weightMap.end())
        return dir + shard + ": tensor '" + tensor.name + "' is not in " +
               index;
      if (it->second != shard)
        return dir + shard + ": tensor '" + tensor.name + "' belongs to " +
               it->second + " by " + index;
      seen.insert(tensor.name);
      if (!isRotaryTable(tensor.name))
        file.tensors.push_back(std::move(tensor));
    }
  }
  for (const auto &[name, shard] : weightMap)
    if (!seen.count(name))
      return dir + shard + ": no tensor '" + name + "', which " + index +
             " puts there";
  return "";
}

} // namespace zeroc::rt
