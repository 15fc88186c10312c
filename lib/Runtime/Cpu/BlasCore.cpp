//===- BlasCore.cpp - which OpenBLAS kernels the run uses -----------------===//
//
// OpenBLAS picks its kernels once, when the library loads: from the CPU it
// recognizes, or from OPENBLAS_CORETYPE when that is set. The name goes
// into the run's summary (blas_core), so a throughput figure says which
// GEMM kernels produced it: on the AVX-512 machine of docs/benchmarks.md
// OpenBLAS's own pick (Cooperlake) runs the benchmark's GPT-2 about 1.4x
// faster than the AVX2 kernels an OPENBLAS_CORETYPE=Haswell in the
// environment forces.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

extern "C" char *openblas_get_corename(void);

namespace zeroc::rt {

const char *blasCoreName() { return openblas_get_corename(); }

} // namespace zeroc::rt
