# The CUDA kernels of zrt.h (the kernel section, zrt_copy, zrt_read_f32 and
# zrt_dtype_size): CUDA C++17 and cuBLASLt. Included from this folder's
# CMakeLists.txt; the device context they run on (computeStream(), blasLt(),
# zrt_alloc, ...) is Device.cu's, declared in Cuda.h.

add_library(zeroc_rt_cuda_kernels STATIC
  KernelsAttention.cu
  KernelsCommon.cu
  KernelsFlashAttention.cu
  KernelsGeneric.cu
  KernelsLlama.cu
  KernelsLoss.cu
  KernelsMatmul.cu
  KernelsNorm.cu
  KernelsOptimizer.cu
  KernelsShape.cu
  $<TARGET_OBJECTS:zeroc_rt_common>
  ../Common/StepGuard.cpp
)
# The CUDA kernels do not honour --skip-nonfinite's guard (the norm stays on
# the device); the executables refuse the flag (Common/StepGuard.h).
set_source_files_properties(../Common/StepGuard.cpp PROPERTIES
  COMPILE_DEFINITIONS ZEROC_STEP_GUARD_SKIP=0)
# -no-compress: the device code stays readable without cuobjdump (the
# tests list the kernels of an executable, test/Target/Cuda), as zeroc
# also builds the generated code.
set_target_properties(zeroc_rt_cuda_kernels PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CUDA_SEPARABLE_COMPILATION OFF)
# No --use_fast_math: -inf masks and NaNs keep their IEEE meaning, and
# expf / sqrtf / division stay IEEE-accurate (the CPU runtime is the
# reference at 1e-4 and below).
target_compile_options(zeroc_rt_cuda_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:${ZEROC_WARNING_FLAGS} -O3>
  $<$<COMPILE_LANGUAGE:CUDA>:-O3 --expt-relaxed-constexpr -no-compress
    -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
# The CUDA runtime itself comes with the CUDA link of whoever links this
# (CMAKE_CUDA_RUNTIME_LIBRARY, static by default): naming CUDA::cudart here
# would add the shared one as well, two runtimes in one process.
target_link_libraries(zeroc_rt_cuda_kernels PUBLIC CUDA::cublasLt)
