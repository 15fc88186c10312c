//===- DtypeSize.cpp - zrt_dtype_size, for the CPU and CUDA kernels -------===//

#include "zeroc/Runtime/zrt.h"

extern "C" size_t zrt_dtype_size(zrt_dtype dtype) {
  switch (dtype) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
    return 2;
  case ZRT_I32:
    return 4;
  case ZRT_I64:
    return 8;
  }
  zrt_fail("zrt_dtype_size: unknown dtype %d", static_cast<int>(dtype));
}
