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
// (`*.rotary_emb.inv_freq`) are dropped: zeroc computes them. A folder
// holding a single model.safetensors is read as that file; anything else
// as a single safetensors file (a folder without either is a zeroc
// checkpoint, Checkpoint.cpp). The index is read with Json.cpp.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <map>
#include <set>

namespace zeroc::rt {

namespace {

namespace st = zeroc::safetensors;

constexpr const char *kIndexName = "model.safetensors.index.json";

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isRotaryTable(const std::string &name) {
  return endsWith(name, "rotary_emb.inv_freq");
}

/// The index's weight_map: tensor name -> shard file name.
std::string readWeightMap(const std::string &index,
                          std::map<std::string, std::string> &weightMap) {
  std::string text;
  if (std::string error = ckpt::readSmallFile(index, text, 256u << 20);
      !error.empty())
    return error;
  ckpt::Json json;
  if (std::string error = ckpt::parseJson(text, json); !error.empty())
    return index + ": " + error;
  const ckpt::Json *map =
      json.kind == ckpt::Json::Object ? json.get("weight_map") : nullptr;
  if (!map)
    return index +
           ": no \"weight_map\" (is it a model.safetensors.index.json?)";
  if (map->kind != ckpt::Json::Object)
    return index + ": \"weight_map\" must be an object";
  for (const auto &[name, shard] : map->object) {
    if (shard.kind != ckpt::Json::String)
      return index + ": the shard of \"" + name + "\" must be a file name";
    weightMap[name] = shard.string;
  }
  if (weightMap.empty())
    return index + ": \"weight_map\" lists no tensor";
  return "";
}

} // namespace

bool isHuggingFaceCheckpoint(const std::string &path) {
  if (ckpt::isDirectory(path))
    return ckpt::exists(ckpt::joinPath(path, kIndexName)) ||
           ckpt::exists(ckpt::joinPath(path, "model.safetensors"));
  return endsWith(path, ".json");
}

std::string readInitFile(const std::string &path, safetensors::File &file) {
  std::string index = path;
  if (ckpt::isDirectory(path)) {
    index = ckpt::joinPath(path, kIndexName);
    if (!ckpt::exists(index)) {
      std::string single = ckpt::joinPath(path, "model.safetensors");
      if (ckpt::exists(single))
        return st::readFile(single, file);
      return path + ": a folder without " + kIndexName +
             " or model.safetensors";
    }
  }
  if (!endsWith(index, ".json"))
    return st::readFile(path, file);

  std::map<std::string, std::string> weightMap;
  if (std::string error = readWeightMap(index, weightMap); !error.empty())
    return error;
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
