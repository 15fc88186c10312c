# The CPU kernels of zrt.h (docs/runtime-kernels.md): plain C++17, OpenMP and
# OpenBLAS (cblas_sgemm), no MLIR. Included from this folder's CMakeLists.txt;
# the static library's objects also go into libzeroc_rt_cpu.a.

find_package(OpenMP REQUIRED COMPONENTS CXX)

# Debian's libopenblas-dev: cblas.h in the multiarch include dir, libopenblas.
find_path(ZEROC_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas openblas-pthread x86_64-linux-gnu/openblas-pthread)
find_library(ZEROC_OPENBLAS_LIBRARY NAMES openblas)
if(NOT ZEROC_CBLAS_INCLUDE_DIR OR NOT ZEROC_OPENBLAS_LIBRARY)
  message(FATAL_ERROR "zeroc_rt_cpu_kernels needs OpenBLAS (cblas.h and "
    "libopenblas; Debian: libopenblas-dev, installed by scripts/setup.sh)")
endif()

add_library(zeroc_rt_cpu_kernels STATIC
  KernelsAttention.cpp
  KernelsCommon.cpp
  KernelsGeneric.cpp
  KernelsLlama.cpp
  KernelsLoss.cpp
  KernelsMatmul.cpp
  KernelsNorm.cpp
  KernelsOptimizer.cpp
  KernelsShape.cpp
  $<TARGET_OBJECTS:zeroc_rt_common>
  ../Common/StepGuard.cpp
)
set_target_properties(zeroc_rt_cpu_kernels PROPERTIES
  POSITION_INDEPENDENT_CODE ON)
# -fno-math-errno: sqrt needs no errno branch, so AdamW's loop vectorizes
# (nothing here reads errno). No -ffast-math: -inf masks and NaNs must keep
# their IEEE meaning.
target_compile_options(zeroc_rt_cpu_kernels PRIVATE
  ${ZEROC_WARNING_FLAGS} -O3 -fno-math-errno)
target_include_directories(zeroc_rt_cpu_kernels PRIVATE
  ${ZEROC_CBLAS_INCLUDE_DIR})
target_link_libraries(zeroc_rt_cpu_kernels PUBLIC
  OpenMP::OpenMP_CXX ${ZEROC_OPENBLAS_LIBRARY})
