#!/usr/bin/env bash
# Installs every system package zeroc needs to build, test and run, with
# apt-get. Idempotent: when everything is there it returns in a second.
#
#   scripts/setup.sh            everything (the test suite compares with PyTorch
#                               and runs a sanitizer build with clang)
#   scripts/setup.sh --no-torch everything but PyTorch and clang (enough for
#                               the demo)
set -euo pipefail
with_torch=1
if [ "${1:-}" = "--no-torch" ]; then with_torch=0; fi

packages=(
  # build
  cmake ninja-build g++ make
  # MLIR/LLVM 22 (Debian's build: libMLIR.so, mlir-tblgen, lit, FileCheck)
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # the test suite's lit runs with the system Python
  python3
  # CPU backend: MPI collectives and OpenBLAS GEMMs
  openmpi-bin libopenmpi-dev libopenblas-dev
  # the demo and the docs plot with matplotlib
  python3-matplotlib
)
# the tests compare against PyTorch (a reference, never a dependency of the
# compiler) and the importer imports from it
if [ "$with_torch" -eq 1 ]; then packages+=(python3-torch); fi
# the suite's sanitizer build and fuzz smoke run (the `sanitize` preset,
# docs/reliability.md): clang with its sanitizer and libFuzzer runtimes and
# its OpenMP
if [ "$with_torch" -eq 1 ]; then packages+=(clang-19 libclang-rt-19-dev libomp-19-dev); fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
