//===- Preambles.h - the helpers each flavour of generated source starts with -*- C++ -*-===//

#ifndef ZEROC_LIB_TARGET_CPP_PREAMBLES_H
#define ZEROC_LIB_TARGET_CPP_PREAMBLES_H

namespace zeroc::cpp {

/// Includes and the fused loops' scalar helpers, for the CPU runtime's C++.
const char *cpuPreamble();
/// The same as __device__ functions, for the CUDA runtime's CUDA C++.
const char *cudaPreamble();

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_PREAMBLES_H
