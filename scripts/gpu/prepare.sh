#!/usr/bin/env bash
# Prepares the GPU check, on the development machine (no GPU needed), after
# zeroc is built in build/: writes a bundle folder (default build/gpu-bundle,
# under 60 MiB) that scripts/gpu/run.sh runs on the GPU machine, which has
# the CUDA driver and PyTorch but no MLIR, no MPI and no internet:
#
#   - tokens: data/tinyshakespeare.txt, byte level, as uint16 (the
#     executables' --data format; ids < 256 fit every vocabulary here);
#   - the builder's tiny GPT-2 compiled with `zeroc --target=cuda` for ZeRO
#     stages 0-3 in fp32 and stages 0 and 3 in bf16, world size 1;
#   - random weights of larger magnitude for it (tiny/init.safetensors);
#   - the same models compiled for the CPU (--target=cpu, world size 1) and
#     run here under `mpirun -np 1` on the same tokens, once from the seed
#     and once from tiny/init.safetensors: their per-step losses
#     (--log-json) are the reference the GPU must match;
#   - GPT-2 124M (block 1024, batch 16) compiled for --target=cuda, bf16,
#     stage 0, world size 1, for the benchmark;
#   - the CUDA kernel unit tests (build/bin/zeroc-rt-cuda-kernel-tests) when
#     they are built; run.sh, gpucheck.py and benchmarks/gpu_torch.py in
#     tools/; a manifest.json describing all of it.
#
#   scripts/gpu/prepare.sh [--out DIR] [--tiny-steps N] [--bench-batch B]
#       [--bench-steps N] [--cuda-arch LIST] [--bench-preset 124M|tiny]
#       [--gpu-target cuda|cpu] [--no-bench]
#
# --gpu-target=cpu makes a test bundle whose "GPU" executables are CPU ones
# (so that run.sh can be exercised on a machine without a GPU; see
# scripts/gpu/selftest.sh); their flags are the reference's, so the tiny
# model's reference executables are copied rather than compiled twice.
# Environment: ZEROC (the driver, default build/bin/zeroc), ZEROC_CXX
# (--cxx for the CPU compiles), ZEROC_NVCC (--nvcc for the CUDA ones),
# ZEROC_CUDA_KERNEL_TESTS (the kernel unit tests' binary, default
# build/bin/zeroc-rt-cuda-kernel-tests). See docs/cuda-benchmark.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

out=build/gpu-bundle
work=
tiny_steps=20
seed=1337
bench_preset=124M
bench_batch=16
bench_block=1024
bench_steps=30
bench_warmup=5
gpu_target=cuda
cuda_arch=${ZEROC_CUDA_ARCH:-sm_90}
bench=1
max_mib=60

die() { echo "prepare.sh: error: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --work) work=$2; shift 2 ;;
    --work=*) work=${1#*=}; shift ;;
    --tiny-steps) tiny_steps=$2; shift 2 ;;
    --tiny-steps=*) tiny_steps=${1#*=}; shift ;;
    --bench-preset) bench_preset=$2; shift 2 ;;
    --bench-preset=*) bench_preset=${1#*=}; shift ;;
    --bench-batch) bench_batch=$2; shift 2 ;;
    --bench-batch=*) bench_batch=${1#*=}; shift ;;
    --bench-block) bench_block=$2; shift 2 ;;
    --bench-block=*) bench_block=${1#*=}; shift ;;
    --bench-steps) bench_steps=$2; shift 2 ;;
    --bench-steps=*) bench_steps=${1#*=}; shift ;;
    --cuda-arch) cuda_arch=$2; shift 2 ;;
    --cuda-arch=*) cuda_arch=${1#*=}; shift ;;
    --gpu-target) gpu_target=$2; shift 2 ;;
    --gpu-target=*) gpu_target=${1#*=}; shift ;;
    --no-bench) bench=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$gpu_target" in cuda|cpu) ;; *) die "--gpu-target must be cuda or cpu" ;; esac
case "$bench_preset" in 124M|tiny) ;; *) die "--bench-preset must be 124M or tiny" ;; esac
[ -n "$work" ] || work=${out%/}-work

zeroc=${ZEROC:-build/bin/zeroc}
[ -x "$zeroc" ] || die "$zeroc is missing: build zeroc first (cmake --build --preset default)"
python=python3
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
command -v mpirun >/dev/null || die "mpirun is missing: the CPU reference runs need OpenMPI"
cpu_flags=(--target=cpu)
[ -n "${ZEROC_CXX:-}" ] && cpu_flags+=("--cxx=$ZEROC_CXX")

# What the driver offers: --target=<cpu|cuda> once the CUDA backend is in.
help=$("$zeroc" --help 2>&1 || true)
target_line=$(grep -E -- '^[[:space:]]+--target=' <<<"$help" | head -1 || true)
gpu_flags=("--target=$gpu_target")
if [ "$gpu_target" = cuda ]; then
  if ! grep -E -- '--target=<[^>]*cuda' <<<"$target_line" >/dev/null; then
    echo "prepare.sh: error: $zeroc has no CUDA target; its --help offers:" >&2
    echo "  ${target_line:-(no --target option)}" >&2
    echo "  Build zeroc with the CUDA backend (nvcc found by CMake), or make a test" >&2
    echo "  bundle of CPU executables with --gpu-target=cpu." >&2
    exit 1
  fi
  [ -n "${ZEROC_NVCC:-}" ] && gpu_flags+=("--nvcc=$ZEROC_NVCC")
  if grep -qE -- '^[[:space:]]+--cuda-arch=' <<<"$help"; then
    gpu_flags+=("--cuda-arch=$cuda_arch")
  else
    echo "prepare.sh: note: $zeroc has no --cuda-arch option; compiling for its default"
    cuda_arch=
  fi
else
  cuda_arch=
  [ -n "${ZEROC_CXX:-}" ] && gpu_flags+=("--cxx=$ZEROC_CXX")
fi

mpirun=(mpirun -np 1 --oversubscribe --bind-to none -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)

compile() { # LABEL OUTPUT FLAGS... (the model and the flags)
  local label=$1 output=$2; shift 2
  local t0=$SECONDS
  if ! "$zeroc" "$@" -o "$output" >"$work/compile.log" 2>&1; then
    echo "prepare.sh: error: compiling $label failed:" >&2
    echo "  $zeroc $* -o $output" >&2
    sed 's/^/  | /' "$work/compile.log" | head -60 >&2
    exit 1
  fi
  echo "   $label: $(basename "$output") ($(( SECONDS - t0 )) s, $(du -h "$output" | cut -f1))"
}

echo "== gpu bundle: $out (GPU executables: --target=$gpu_target${cuda_arch:+ --cuda-arch=$cuda_arch})"
rm -rf "$out" "$work"
mkdir -p "$out"/{data,tiny/ref,bench,bin,lib,tools} "$work/cpu"

echo "== tokens: data/tinyshakespeare.txt, byte level"
"$python" -m zeroc data data/tinyshakespeare.txt -o "$out/data/tinyshakespeare.bin"

echo "== tiny GPT-2: $tiny_steps steps, seed $seed, fp32 stages 0-3 and bf16 stages 0, 3"
# The builder's tiny preset, with clipping and a cosine schedule with warm-up
# so that the GPU's gradient norm and learning-rate schedule are checked too.
"$python" -m zeroc.models.gpt2 --preset tiny --grad-clip 1.0 --lr-schedule cosine \
  --warmup 5 --max-steps "$tiny_steps" --min-lr 6e-5 -o "$out/tiny/gpt2-tiny.mlir"
# The seed's initialization (std 0.02, zero biases) leaves a small model
# near its linear regime, where the loss hardly depends on the blocks; the
# second run of each case starts from weights of std 0.2 and biases and
# LayerNorm gains perturbed by 0.1, so that GELU, softmax and LayerNorm
# matter (docs/cuda-benchmark.md).
"$python" scripts/gpu/gpucheck.py init tiny --std 0.2 --bias-std 0.1 --seed 1 -o "$out/tiny/init.safetensors"
cases=("0 fp32" "1 fp32" "2 fp32" "3 fp32" "0 bf16" "3 bf16")
for c in "${cases[@]}"; do
  read -r stage prec <<<"$c"
  name=stage$stage-$prec
  flags=("$out/tiny/gpt2-tiny.mlir" --zero-stage=$stage --world-size=1 --precision=$prec)
  compile "CPU $name" "$work/cpu/$name" "${cpu_flags[@]}" "${flags[@]}"
  if [ "${gpu_flags[*]}" = "${cpu_flags[*]}" ]; then
    cp "$work/cpu/$name" "$out/tiny/$name"
    echo "   GPU ($gpu_target) $name: the CPU executable (same flags)"
  else
    compile "GPU ($gpu_target) $name" "$out/tiny/$name" "${gpu_flags[@]}" "${flags[@]}"
  fi
  for run in "$name" "$name-init"; do
    init=()
    [ "$run" = "$name" ] || init=(--init "$out/tiny/init.safetensors")
    if ! "${mpirun[@]}" "$work/cpu/$name" --data "$out/data/tinyshakespeare.bin" \
        --steps "$tiny_steps" --seed $seed "${init[@]}" --log-json "$out/tiny/ref/$run.jsonl" \
        --quiet >"$work/cpu/$run.out" 2>&1; then
      cat "$work/cpu/$run.out" >&2
      die "the CPU reference run $run failed"
    fi
    echo "   CPU reference $run: $("$python" scripts/gpu/gpucheck.py summary "$out/tiny/ref/$run.jsonl")"
  done
done

bench_exe=
if [ $bench = 1 ]; then
  echo "== benchmark: GPT-2 $bench_preset, bf16, ZeRO stage 0, world size 1"
  if [ "$bench_preset" = 124M ]; then
    size_flags=(--preset 124M --block-size "$bench_block" --batch-size "$bench_batch")
  else
    size_flags=(--preset tiny)
  fi
  "$python" -m zeroc.models.gpt2 "${size_flags[@]}" --grad-clip 1.0 -o "$out/bench/gpt2-$bench_preset.mlir"
  bench_exe=bench/gpt2-$bench_preset-bf16-stage0
  compile "GPU ($gpu_target) gpt2-$bench_preset" "$out/$bench_exe" "${gpu_flags[@]}" \
    "$out/bench/gpt2-$bench_preset.mlir" --zero-stage=0 --world-size=1 --precision=bf16
fi

kernel_tests=
kt=${ZEROC_CUDA_KERNEL_TESTS:-build/bin/zeroc-rt-cuda-kernel-tests}
if [ -x "$kt" ]; then
  cp "$kt" "$out/bin/zeroc-rt-cuda-kernel-tests"
  kernel_tests=bin/zeroc-rt-cuda-kernel-tests
  echo "== CUDA kernel unit tests: $kt"
else
  echo "== no $kt: the bundle has no kernel unit tests"
fi

# Shared libraries the GPU executables need beyond the C/C++ runtime and
# CUDA's own (which the GPU machine has, from its driver and pip packages):
# run.sh puts lib/ on the library path only if a library is missing there.
echo "== fallback shared libraries (lib/)"
libs_bytes=0
while read -r lib; do
  [ -n "$lib" ] || continue
  base=$(basename "$lib")
  case "$base" in
    ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*) continue ;;
    libcuda.so*|libcudart*|libcublas*|libnccl*|libnvidia*|libnvJitLink*|libnvrtc*|libcudnn*|libcufft*|libcurand*|libcusparse*|libcusolver*) continue ;;
  esac
  [ -e "$out/lib/$base" ] && continue
  size=$(stat -L -c %s "$lib")
  if [ $(( libs_bytes + size )) -gt $(( 16 * 1024 * 1024 )) ]; then
    echo "   skipped $base ($(( size / 1024 )) KiB: over the 16 MiB for libraries)"
    continue
  fi
  cp -L "$lib" "$out/lib/$base"
  libs_bytes=$(( libs_bytes + size ))
  echo "   $base ($(( size / 1024 )) KiB)"
done < <(for exe in "$out"/tiny/stage* ${bench_exe:+"$out/$bench_exe"} ${kernel_tests:+"$out/$kernel_tests"}; do
           ldd "$exe" 2>/dev/null | awk '/=> \// { print $3 }'
         done | sort -u)
if grep -q 'not found' <(for exe in "$out"/tiny/stage* ${bench_exe:+"$out/$bench_exe"}; do ldd "$exe" 2>&1; done); then
  echo "prepare.sh: warning: a GPU executable has an unresolved library here too (ldd: not found)"
fi

echo "== tools and manifest"
cp scripts/gpu/run.sh scripts/gpu/gpucheck.py benchmarks/gpu_torch.py "$out/tools/"
git_rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
"$python" - "$out" "$gpu_target" "$cuda_arch" "$tiny_steps" "$seed" "$bench" "$bench_preset" \
  "$bench_batch" "$bench_block" "$bench_steps" "$bench_warmup" "$kernel_tests" "$git_rev" \
  "$zeroc" "${cases[@]}" <<'EOF'
import datetime, json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
from zeroc.models import gpt2
(out, target, arch, tiny_steps, seed, bench, preset, batch, block, bsteps, bwarm, ktests, rev,
 zeroc), cases = sys.argv[1:15], sys.argv[15:]
rtol = {"fp32": 1e-4, "bf16": 2e-2}

def config(c):
    return {"n_layer": c.n_layer, "n_head": c.n_head, "n_embd": c.n_embd,
            "vocab_size": c.vocab_size, "block_size": c.block_size, "batch": c.batch_size}

manifest = {
    "format": 1,
    "created": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
    "git": rev, "zeroc": zeroc, "gpu_target": target, "cuda_arch": arch or None,
    "data": "data/tinyshakespeare.bin",
    "tolerances": rtol,
    "tiny": {"model": "tiny/gpt2-tiny.mlir", "config": config(gpt2.GPT2Config.preset("tiny")),
             "steps": int(tiny_steps), "seed": int(seed), "cases": []},
    "bench": None,
    "kernel_tests": ktests or None,
}
for c in cases:
    stage, prec = c.split()
    name = f"stage{stage}-{prec}"
    for run, init in ((name, None), (name + "-init", "tiny/init.safetensors")):
        manifest["tiny"]["cases"].append({
            "name": run, "stage": int(stage), "precision": prec, "exe": f"tiny/{name}",
            "ref": f"tiny/ref/{run}.jsonl", "init": init, "rtol": rtol[prec]})
if bench == "1":
    cfg = (gpt2.GPT2Config.preset("124M", batch_size=int(batch), block_size=int(block))
           if preset == "124M" else gpt2.GPT2Config.preset("tiny"))
    manifest["bench"] = {
        "model": f"bench/gpt2-{preset}.mlir", "exe": f"bench/gpt2-{preset}-bf16-stage0",
        "preset": preset, "config": config(cfg), "parameters": gpt2.parameter_count(cfg),
        "precision": "bf16", "stage": 0, "world_size": 1, "steps": int(bsteps),
        "warmup": int(bwarm), "seed": int(seed), "lr": 6e-4, "weight_decay": 0.1,
        "grad_clip": 1.0}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
EOF
cat >"$out/README.txt" <<EOF
zeroc GPU check bundle, made by scripts/gpu/prepare.sh at $git_rev.
On the GPU machine, from the repository root with this folder at $out:
    scripts/gpu/run.sh $out
See docs/cuda-benchmark.md and manifest.json.
EOF

bytes=$(du -sb "$out" | cut -f1)
echo "== bundle: $out, $(( bytes / 1024 / 1024 )) MiB"
du -sh "$out"/* | sed 's/^/   /'
if [ "$bytes" -ge $(( max_mib * 1024 * 1024 )) ]; then
  die "the bundle is $(( bytes / 1024 / 1024 )) MiB, over the ${max_mib} MiB that can travel"
fi
echo "prepare.sh: done. On the GPU machine: scripts/gpu/run.sh $out"
