# -*- Python -*-
# lit configuration of zeroc's regression suite.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ZEROC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "__pycache__"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zeroc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%zeroc_src", config.zeroc_src_root))
config.substitutions.append(("%zeroc_build", config.zeroc_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The Python package under test, run with the system interpreter; `import
# zeroc` must work without PyTorch.
python = shutil.which("python3", path="/usr/bin") or "python3"
config.substitutions.append(("%python", python))
config.environment["PYTHONPATH"] = os.path.join(config.zeroc_src_root, "python")
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.zeroc_tools_dir, config.llvm_tools_dir]
tools = ["zeroc", "zeroc-opt", "zeroc-run", "FileCheck", "not", "count", "split-file",
         "zeroc-rt-kernel-tests"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# The CUDA runtime's kernels on the CPU emulation of CUDA (docs/cuda.md):
# its archives on x86-64 (cuda-emulation), the whole conformance suite on it
# outside the sanitizer build (cuda-emulation-suite).
if os.path.exists(os.path.join(config.zeroc_obj_root, "lib", "libzeroc_cuda_emulation.a")):
    config.available_features.add("cuda-emulation")
    # Compiling a (deliberately broken) copy of a CUDA runtime file for the
    # emulation: %cuda_emu_cxx FILE.cpp ... %cuda_emu_libs; with the
    # sanitizers in their build.
    emu_cxx = (config.zeroc_generated_cxx if config.zeroc_sanitize
               else shutil.which("g++") or "c++")
    config.substitutions.append(("%cuda_emu_cxx", " ".join([
        emu_cxx, "-std=c++17", "-O1", "-w", "-rdynamic",
        "-I" + os.path.join(config.zeroc_src_root, "lib", "Runtime", "CudaEmulation", "include"),
        "-I" + os.path.join(config.zeroc_src_root, "lib", "Runtime", "Cuda"),
        "-I" + os.path.join(config.zeroc_src_root, "include")])))
    config.substitutions.append(("%cuda_emu_libs", " ".join([
        os.path.join(config.zeroc_obj_root, "lib", "libzeroc_rt_cuda_emu_kernels.a"),
        os.path.join(config.zeroc_obj_root, "lib", "libzeroc_cuda_emulation.a"),
        "-ldl"])))
    config.substitutions.append(("%cuda_emu_rewrite", python + " " + os.path.join(
        config.zeroc_src_root, "lib", "Runtime", "CudaEmulation", "rewrite.py")))
# The whole CUDA runtime on the emulation (libzeroc_rt_cuda_emu.a, with
# NCCL over the MPI facade): generated CUDA programs link
# %cuda_emu_runtime_libs; multi-rank ones load the build's libzeroc_mpi.so.
if os.path.exists(os.path.join(config.zeroc_obj_root, "lib", "libzeroc_rt_cuda_emu.a")):
    config.available_features.add("cuda-emulation-runtime")
    config.substitutions.append(("%cuda_emu_runtime_libs", " ".join([
        os.path.join(config.zeroc_obj_root, "lib", "libzeroc_rt_cuda_emu.a"),
        os.path.join(config.zeroc_obj_root, "lib", "libzeroc_cuda_emulation.a"),
        "-ldl", "-lpthread"])))
    config.substitutions.append(("%zeroc_mpi_shim", os.path.join(
        config.zeroc_obj_root, "lib", "libzeroc_mpi.so")))
if os.path.exists(os.path.join(config.zeroc_tools_dir, "zeroc-rt-cuda-emu-kernel-tests")):
    config.available_features.add("cuda-emulation-suite")
    llvm_config.add_tool_substitutions(["zeroc-rt-cuda-emu-kernel-tests"], tool_dirs)

# MPI programs (the CPU runtime's executables): `%mpirun -np N EXE ...` runs
# as root in containers, oversubscribes the cores and keeps OpenMP at one
# thread per rank so that the suite stays fast. `%mpicxx` compiles a program
# against the runtime archive. Tests that need them say `REQUIRES: mpi`.
mpirun = shutil.which("mpirun")
mpicxx = shutil.which("mpicxx")
if mpirun and mpicxx:
    config.available_features.add("mpi")
config.environment["OMP_NUM_THREADS"] = "1"
# A sanitizer build (the `sanitize` preset, docs/reliability.md): every
# report fails its test; MPI programs skip leak checking (Open MPI's own
# allocations are not ours), and compile with the build's wrapper, so that
# test programs link the instrumented runtime as generated code does.
mpirun_env = " -x OMP_NUM_THREADS=1"
if config.zeroc_sanitize:
    config.available_features.add("asan")
    # Leak checking is on (the default) for the compiler's tools; the MPI
    # programs turn it off themselves (lib/Runtime/Cpu/Timeout.cpp).
    config.environment["ASAN_OPTIONS"] = "abort_on_error=1"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:abort_on_error=1"
    mpirun_env += " -x ASAN_OPTIONS -x UBSAN_OPTIONS"
    mpicxx = config.zeroc_generated_cxx
# The CPU kernels are compiled for AVX-512, AVX2 and the baseline and picked
# at load time (GCC's target_clones, ZRT_HOT in KernelsCommon.h) when GCC
# builds them for x86-64; the tests that inspect the clones in the library
# say `REQUIRES: target-clones` (the sanitizer build uses clang: no clones).
if config.cxx_compiler_id == "GNU" and config.host_processor in ("x86_64", "AMD64"):
    config.available_features.add("target-clones")
# Tests that make device nodes (mknod) need root.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")
if config.zeroc_fuzzers:
    config.available_features.add("fuzzers")
    # The smoke run's length per fuzz target (test/Fuzz), in seconds.
    config.substitutions.append(
        ("%fuzz_seconds", os.environ.get("ZEROC_FUZZ_SECONDS", "25")))
else:
    config.excludes.append("Fuzz")
# Through Inputs/mpi/mpirun, which gives each invocation an Open MPI session
# directory of its own (concurrent tests share lit's TMPDIR) and execs the
# real mpirun, named by ZEROC_REAL_MPIRUN.
config.environment["ZEROC_REAL_MPIRUN"] = mpirun or "mpirun"
config.substitutions.append(
    ("%mpirun", os.path.join(config.test_source_root, "Inputs", "mpi", "mpirun")
     + " --allow-run-as-root --oversubscribe --bind-to none" + mpirun_env))
config.substitutions.append(("%mpicxx", mpicxx or "mpicxx"))
config.substitutions.append(
    ("%zeroc_rt_cpu", os.path.join(config.zeroc_obj_root, "lib", "libzeroc_rt_cpu.a")))

# The CUDA backend: executables compile and link on any machine with the
# CUDA toolkit (no GPU needed). Tests that build them say `REQUIRES: cuda`;
# `%nvcc` compiles generated CUDA source, `%fatbin_kernels` lists the
# kernels in a binary's device code (cuobjdump is not installed here).
if config.zeroc_enable_cuda:
    config.available_features.add("cuda")
config.substitutions.append(("%nvcc", config.cuda_compiler or "nvcc"))
config.substitutions.append(
    ("%fatbin_kernels", python + " " + os.path.join(
        config.zeroc_src_root, "test", "Target", "Cuda", "Inputs",
        "fatbin_kernels.py")))
