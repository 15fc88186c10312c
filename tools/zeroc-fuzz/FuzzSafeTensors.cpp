//===- FuzzSafeTensors.cpp - the safetensors reader -----------------------===//
//
// Input: the bytes of a file. What every reader of weights and checkpoints
// starts with (lib/Support/SafeTensors.cpp): the header's JSON, its entries
// and the format's rules on data_offsets; then every tensor's values.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Support/SafeTensors.h"

#include <cstdlib>

namespace st = zeroc::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> buffer(data, data + size);
  st::File file;
  std::string error = st::parse("fuzz.safetensors", buffer, file);
  st::Header header;
  std::string headerError =
      st::parseHeader("fuzz.safetensors", data, size, size, header);
  // The whole-file reader and the header reader agree.
  if (error.empty() != headerError.empty())
    std::abort();
  if (!error.empty())
    return 0;
  for (const st::Tensor &tensor : file.tensors) {
    std::vector<double> values = st::toDoubles(tensor);
    if (static_cast<int64_t>(values.size()) != tensor.numElements())
      std::abort();
  }
  // What parses serializes, and reads back the same.
  std::vector<uint8_t> again;
  if (!st::serialize(file, again).empty())
    return 0;
  st::File reread;
  if (!st::parse("again.safetensors", again, reread).empty() ||
      reread.tensors.size() != file.tensors.size())
    std::abort();
  return 0;
}
