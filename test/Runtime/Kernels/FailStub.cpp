//===- FailStub.cpp - zrt_fail for the kernel test and benchmark binaries -===//
//
// The runtime's real zrt_fail (lib/Runtime/Cpu) aborts every MPI rank; these
// binaries link the kernels alone, so a failure prints and exits 1.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Runtime/zrt.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

extern "C" void zrt_fail(const char *format, ...) {
  std::fflush(stdout);
  std::fputs("zrt_fail: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::exit(1);
}
