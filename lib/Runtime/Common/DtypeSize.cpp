//===- DtypeSize.cpp - zrt_dtype_size, from zrt.h's dtype table -----------===//

#include "zeroc/Runtime/zrt.h"

#include <cstring>

extern "C" size_t zrt_dtype_size(zrt_dtype dtype) {
  // Read as an int: a C caller may pass any int, and in C++ an enum value
  // outside the enumerators' range is undefined behaviour (UBSan's enum
  // check); the switch then rejects what is no dtype.
  int value;
  std::memcpy(&value, &dtype, sizeof value);
  switch (value) {
#define ZRT_DTYPE_SIZE_(e, value, ctype, bytes, name, is_float)                \
  case e:                                                                      \
    static_assert(sizeof(ctype) == bytes, "zrt.h's dtype table");              \
    return bytes;
    ZRT_DTYPES(ZRT_DTYPE_SIZE_)
#undef ZRT_DTYPE_SIZE_
  }
  zrt_fail("zrt_dtype_size: unknown dtype %d", value);
}

// The table's values are 0, 1, 2, ... in order (zrt_dtype_valid relies on
// it).
namespace {
constexpr int kTableValues[] = {
#define ZRT_DTYPE_VALUE_(e, value, ctype, bytes, name, is_float) value,
    ZRT_DTYPES(ZRT_DTYPE_VALUE_)
#undef ZRT_DTYPE_VALUE_
};
constexpr bool valuesInOrder() {
  for (int i = 0; i < static_cast<int>(ZRT_NUM_DTYPES); ++i)
    if (kTableValues[i] != i)
      return false;
  return sizeof kTableValues / sizeof kTableValues[0] ==
         static_cast<size_t>(ZRT_NUM_DTYPES);
}
static_assert(valuesInOrder(), "zrt.h's dtype values must be 0, 1, 2, ...");
} // namespace
