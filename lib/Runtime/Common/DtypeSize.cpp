//===- DtypeSize.cpp - zrt_dtype_size, for the CPU and CUDA kernels -------===//

#include "zeroc/Runtime/zrt.h"

#include <cstring>

extern "C" size_t zrt_dtype_size(zrt_dtype dtype) {
  // Read as an int: a C caller may pass any int, and in C++ an enum value
  // outside the enumerators' range is undefined behaviour (UBSan's enum
  // check); the switch then rejects what is no dtype.
  int value;
  std::memcpy(&value, &dtype, sizeof value);
  switch (value) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
    return 2;
  case ZRT_I32:
    return 4;
  case ZRT_I64:
    return 8;
  }
  zrt_fail("zrt_dtype_size: unknown dtype %d", value);
}
