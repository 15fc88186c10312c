#!/usr/bin/env bash
# The GPU check, on the GPU machine (one NVIDIA H200; CUDA driver, nvcc,
# python3 with PyTorch and NVIDIA's pip libraries; no MLIR, no MPI, no
# internet), from the repository root of a copy of the working tree with the
# bundle of scripts/gpu/prepare.sh carried along:
#
#   scripts/gpu/run.sh [BUNDLE] [--peak-flops X] [--bench-steps N]
#                      [--no-torch] [--no-compile] [--budget SECONDS]
#
# BUNDLE defaults to build/gpu-bundle. In about 5 minutes at most it
#   1. puts NVIDIA's pip libraries (cuBLAS, NCCL, the CUDA runtime, ...) and
#      /usr/local/cuda/lib64 on LD_LIBRARY_PATH, prints nvidia-smi;
#   2. lists the executables' GPU code with cuobjdump (not fatal);
#   3. runs the CUDA kernel unit tests, if the bundle has them;
#   4. runs each tiny GPT-2 executable (ZeRO stages 0-3 fp32, 0 and 3 bf16)
#      and compares its per-step losses with the CPU executables' (fp32:
#      1e-4 relative per step, bf16: 2e-2);
#   5. benchmarks the GPT-2 124M executable (bf16, stage 0), then PyTorch
#      (benchmarks/gpu_torch.py, same model, eager and torch.compile);
#   6. prints one table (ms/step, tokens/s, MFU, ratio to torch.compile,
#      with the targets >= 1.15x torch.compile and >= 50% MFU: met or not,
#      not a failure) and writes results.json, results.md, run.log and
#      logs.tar.gz to $OUT if set, else to build/gpu-results.
# Exits non-zero if anything failed (a wrong loss, a crash, a timeout, a
# missing library, a failed PyTorch run); everything is printed.
#
# Environment: ZEROC_GPU_BUNDLE (the bundle), ZEROC_GPU_EXE_DIR (run the
# executables of this folder, found by file name, instead of the bundle's:
# for testing the script with CPU executables), ZEROC_GPU_PYTHON (default
# python3), ZEROC_GPU_BUDGET_S (default 280), ZEROC_GPU_TINY_TIMEOUT (seconds
# per tiny run, default 30). See docs/cuda-benchmark.md.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=${ZEROC_GPU_BUNDLE:-}
peak_flops=989e12
bench_steps=
torch_runs=1
compile_run=1
budget=${ZEROC_GPU_BUDGET_S:-280}
while [ $# -gt 0 ]; do
  case "$1" in
    --peak-flops) peak_flops=$2; shift 2 ;;
    --peak-flops=*) peak_flops=${1#*=}; shift ;;
    --bench-steps) bench_steps=$2; shift 2 ;;
    --bench-steps=*) bench_steps=${1#*=}; shift ;;
    --budget) budget=$2; shift 2 ;;
    --budget=*) budget=${1#*=}; shift ;;
    --no-torch) torch_runs=0; shift ;;
    --no-compile) compile_run=0; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) bundle=$1; shift ;;
  esac
done
if [ -z "$bundle" ]; then
  if [ -f "$here/../manifest.json" ]; then bundle=$here/..   # run.sh of the bundle's tools/
  else bundle=build/gpu-bundle; fi
fi
if ! abs=$(cd "$bundle" 2>/dev/null && pwd); then
  echo "run.sh: error: no bundle folder $bundle: run scripts/gpu/prepare.sh on the development machine and carry build/gpu-bundle" >&2
  exit 1
fi
bundle=$abs
manifest=$bundle/manifest.json
[ -f "$manifest" ] || { echo "run.sh: error: $manifest is missing (not a bundle of prepare.sh)" >&2; exit 1; }

py=${ZEROC_GPU_PYTHON:-python3}
check=$here/gpucheck.py
[ -f "$check" ] || check=$bundle/tools/gpucheck.py
torch_bench=$here/../../benchmarks/gpu_torch.py
[ -f "$torch_bench" ] || torch_bench=$bundle/tools/gpu_torch.py

# Results: $OUT (the device tool brings back at most 8 files), else build/gpu-results.
results=${OUT:-$PWD/build/gpu-results}
mkdir -p "$results"
scratch=$(mktemp -d /tmp/zeroc-gpu.XXXXXX)
logs=$scratch/logs
mkdir -p "$logs"
failures=$scratch/failures
: >"$failures"
exec 3>&1 4>&2
exec > >(tee "$results/run.log") 2>&1
tee_pid=$!

start=$SECONDS
fail() { echo "FAIL: $*"; echo "$*" >>"$failures"; }
left() { echo $(( budget - (SECONDS - start) )); }
# limit WANT [RESERVE]: seconds for the next command, leaving RESERVE (default 15) for the rest.
limit() { local l=$(( $(left) - ${2:-15} )); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
section() { echo; echo "== [$(( SECONDS - start ))s] $*"; }
get() { "$py" "$check" get "$manifest" "$1"; }
explain_rc() { # RC: a word on how a program ended
  case "$1" in
    0) echo "ok" ;;
    124|137) echo "timed out" ;;
    132) echo "illegal instruction (SIGILL): compiled for another CPU (-march=native on the development machine?)" ;;
    134) echo "aborted (SIGABRT)" ;;
    135) echo "bus error (SIGBUS)" ;;
    139) echo "segmentation fault (SIGSEGV)" ;;
    127) echo "not found / a shared library is missing" ;;
    *) echo "exit status $1" ;;
  esac
}

target=$(get gpu_target)
on_gpu=1
[ "$target" = cuda ] || on_gpu=0
echo "zeroc GPU check: bundle $bundle (zeroc $(get git), target $target), budget ${budget}s"
[ $on_gpu = 1 ] || echo "TEST MODE: the bundle's executables are for --target=$target, not a GPU; PyTorch runs on the CPU"
exe_dir=${ZEROC_GPU_EXE_DIR:-}
[ -n "$exe_dir" ] && echo "ZEROC_GPU_EXE_DIR=$exe_dir: executables found there by name replace the bundle's"
exe_path() { # the bundle-relative path of an executable -> the file to run
  if [ -n "$exe_dir" ] && [ -x "$exe_dir/$(basename "$1")" ]; then echo "$exe_dir/$(basename "$1")"
  else echo "$bundle/$1"; fi
}

section "environment"
uname -a
echo "python: $(command -v "$py") ($("$py" --version 2>&1))"
nvlibs=$("$py" - <<'EOF' 2>/dev/null
import os
try:
    import nvidia
except ImportError:
    raise SystemExit
dirs = []
for base in sorted(set(getattr(nvidia, "__path__", []))):
    for top, subdirs, files in os.walk(base):
        depth = top[len(base):].count(os.sep)
        if depth >= 3:
            subdirs[:] = []
        if os.path.basename(top) in ("lib", "lib64") and any(".so" in f for f in files):
            dirs.append(top)
print(":".join(sorted(dirs)))
EOF
)
ld=${nvlibs}
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [ -d "$d" ] && ld=${ld:+$ld:}$d
done
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu/nvidia; do
    [ -e "$d/libcuda.so.1" ] && ld=${ld:+$ld:}$d
  done
fi
export LD_LIBRARY_PATH=${ld}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tr ':' '\n' | sed '2,$s/^/    /'
device_name=cpu
if command -v nvidia-smi >/dev/null; then
  nvidia-smi || { [ $on_gpu = 1 ] && fail "nvidia-smi failed"; }
  device_name=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
  [ -n "$device_name" ] || device_name=unknown
elif [ $on_gpu = 1 ]; then
  fail "nvidia-smi is missing: no NVIDIA driver on this machine?"
fi
command -v nvcc >/dev/null && nvcc --version | tail -1

# The executables and their shared libraries: lib/ of the bundle only if
# something is missing otherwise.
exes=()
while IFS=$'\t' read -r name exe _; do exes+=("$(exe_path "$exe")"); done < <("$py" "$check" cases "$manifest")
bench_rel=$(get bench.exe 2>/dev/null || true)
[ -n "$bench_rel" ] && exes+=("$(exe_path "$bench_rel")")
kt_rel=$(get kernel_tests)
[ -n "$kt_rel" ] && exes+=("$bundle/$kt_rel")
missing_libs() { for e in "${exes[@]}"; do [ -x "$e" ] && ldd "$e" 2>&1 | grep 'not found' | sed "s|^|    $(basename "$e"): |"; done; }
m=$(missing_libs)
if [ -n "$m" ]; then
  echo "missing shared libraries:"; echo "$m"
  echo "adding the bundle's fallback libraries $bundle/lib"
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$bundle/lib
  m=$(missing_libs)
  [ -z "$m" ] || { echo "$m"; fail "shared libraries missing even with the bundle's lib/: $(echo "$m" | awk '{print $2}' | sort -u | tr '\n' ' ')"; }
fi
echo "libraries of $(basename "${exes[-1]}"):"
ldd "${exes[-1]}" 2>&1 | sed 's/^/    /'

if [ $on_gpu = 1 ]; then
  section "GPU code (cuobjdump; informational)"
  cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  probe=${exes[-1]}
  [ -n "$bench_rel" ] && probe=$(exe_path "$bench_rel")
  if [ -x "$cuobjdump" ]; then
    elfs=$("$cuobjdump" --list-elf "$probe" 2>&1)
    echo "$elfs" | head -40
    echo "$elfs" | grep -q 'sm_90' || echo "WARNING: no sm_90 machine code in $(basename "$probe"): the driver compiles PTX at start, if there is any"
    "$cuobjdump" --dump-resource-usage "$probe" 2>&1 | head -120
  else
    echo "no cuobjdump"
  fi
fi

kt_json=
if [ -n "$kt_rel" ]; then
  section "CUDA kernel unit tests ($kt_rel)"
  l=$(limit 90)
  if [ "$l" -lt 10 ]; then
    fail "kernel unit tests: skipped, out of time"
  else
    timeout -k 5 "$l" "$bundle/$kt_rel" </dev/null >"$logs/kernel-tests.out" 2>&1
    rc=$?
    cat "$logs/kernel-tests.out"
    npass=$(grep -c '^PASS' "$logs/kernel-tests.out")
    nfail=$(grep -c '^FAIL' "$logs/kernel-tests.out")
    status=pass
    if [ $rc -ne 0 ] || [ "$nfail" -gt 0 ] || [ "$npass" -eq 0 ]; then
      status=FAIL
      why="exit $rc"
      [ $rc -eq 0 ] || why="$why: $(explain_rc $rc)"
      fail "kernel unit tests: $nfail FAIL line(s), $npass PASS, $why"
    fi
    kt_json="{\"status\": \"$status\", \"pass\": $npass, \"fail\": $nfail, \"rc\": $rc}"
    echo "kernel unit tests: $status ($npass PASS, $nfail FAIL, exit $rc)"
  fi
fi

section "tiny GPT-2: per-step losses against the CPU reference"
data=$bundle/$(get data)
tiny_results=$scratch/tiny.jsonl
: >"$tiny_results"
while IFS=$'\t' read -r name exe ref prec rtol steps seed init; do
  run_exe=$(exe_path "$exe")
  init_args=()
  [ "$init" = - ] || init_args=(--init "$bundle/$init")
  echo
  echo "-- $name ($prec, tolerance $rtol): $run_exe --steps $steps --seed $seed ${init_args[*]}"
  l=$(limit "${ZEROC_GPU_TINY_TIMEOUT:-30}" 60)
  if [ "$l" -lt 2 ]; then
    fail "$name: skipped, out of time"; continue
  fi
  t0=$SECONDS
  timeout -k 5 "$l" "$run_exe" --data "$data" --steps "$steps" --seed "$seed" "${init_args[@]}" \
    --log-json "$logs/$name.jsonl" --quiet </dev/null >"$logs/$name.out" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 30 "$logs/$name.out"
    fail "$name: the executable failed: $(explain_rc $rc)"
    echo "{\"name\": \"$name\", \"rtol\": $rtol, \"ok\": false, \"steps\": 0, \"max_rel_diff\": null, \"error\": \"$(explain_rc $rc)\"}" >>"$tiny_results"
    continue
  fi
  [ -s "$logs/$name.out" ] && sed 's/^/   | /' "$logs/$name.out"
  echo "   ran in $(( SECONDS - t0 ))s"
  verdict=$("$py" "$check" compare --name "$name" --ref "$bundle/$ref" --got "$logs/$name.jsonl" \
    --rtol "$rtol" --results "$tiny_results")
  rc=$?
  echo "$verdict"
  [ $rc -eq 0 ] || fail "$(tail -n 1 <<<"$verdict" | sed 's/^FAIL //')"
done < <("$py" "$check" cases "$manifest")

zeroc_log= zeroc_flash_log= eager_json= compile_json=
notes=()
bench_cfg=$(get bench.config 2>/dev/null || true)
if [ -n "$bench_rel" ] && [ -n "$bench_cfg" ]; then
  bsteps=${bench_steps:-$(get bench.steps)}
  warmup=$(get bench.warmup)
  [ "$bsteps" -gt "$warmup" ] || warmup=$(( bsteps / 3 ))
  cfgval() { "$py" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$bench_cfg" "$1"; }
  size_args=(--n-layer "$(cfgval n_layer)" --n-head "$(cfgval n_head)" --n-embd "$(cfgval n_embd)"
             --vocab-size "$(cfgval vocab_size)" --block-size "$(cfgval block_size)" --batch "$(cfgval batch)")
  bexe=$(exe_path "$bench_rel")

  section "benchmark: zeroc $(basename "$bexe"), $bsteps steps"
  l=$(limit 150 60)
  if [ "$l" -lt 10 ]; then
    fail "zeroc benchmark: skipped, out of time"; notes+=(--note "zeroc=skipped, out of time")
  else
    timeout -k 5 "$l" "$bexe" --data "$data" --steps "$bsteps" --seed "$(get bench.seed)" \
      --log-json "$logs/zeroc-bench.jsonl" </dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
      fail "zeroc benchmark: $(explain_rc $rc)"; notes+=(--note "zeroc=$(explain_rc $rc)")
    fi
    [ -f "$logs/zeroc-bench.jsonl" ] && zeroc_log=$logs/zeroc-bench.jsonl
  fi

  # The fused attention kernel is opt-in until validated on a GPU: the same
  # benchmark with it, reported on its own row; a failure is only a note.
  if [ $on_gpu = 1 ]; then
    section "benchmark: zeroc with ZEROC_FLASH_ATTENTION=1"
    l=$(limit 60 150)
    if [ "$l" -lt 10 ]; then
      notes+=(--note "zeroc-flash=skipped, out of time")
    else
      ZEROC_FLASH_ATTENTION=1 timeout -k 5 "$l" "$bexe" --data "$data" --steps "$bsteps" \
        --seed "$(get bench.seed)" --log-json "$logs/zeroc-bench-flash.jsonl" </dev/null
      rc=$?
      if [ $rc -ne 0 ]; then
        echo "(not a failure: the fused attention is opt-in) $(explain_rc $rc)"
        notes+=(--note "zeroc-flash=$(explain_rc $rc)")
      elif [ -f "$logs/zeroc-bench-flash.jsonl" ]; then
        zeroc_flash_log=$logs/zeroc-bench-flash.jsonl
      fi
    fi
  fi

  device=cuda
  [ $on_gpu = 1 ] || device=cpu
  torch_common=(--device "$device" "${size_args[@]}" --dtype bf16 --steps "$bsteps" --warmup "$warmup"
                --data "$data" --seed "$(get bench.seed)" --lr "$(get bench.lr)"
                --weight-decay "$(get bench.weight_decay)" --grad-clip "$(get bench.grad_clip)"
                --peak-flops "$peak_flops")
  if [ $torch_runs = 1 ]; then
    section "benchmark: PyTorch eager ($torch_bench)"
    l=$(limit 120 45)
    if [ "$l" -lt 20 ]; then
      fail "PyTorch eager: skipped, out of time"; notes+=(--note "torch-eager=skipped, out of time")
    else
      PYTHONUNBUFFERED=1 timeout -k 5 "$l" "$py" "$torch_bench" "${torch_common[@]}" \
        --json "$logs/torch-eager.json" </dev/null
      rc=$?
      [ $rc -eq 0 ] || { fail "PyTorch eager: $(explain_rc $rc)"; notes+=(--note "torch-eager=$(explain_rc $rc)"); }
      [ -f "$logs/torch-eager.json" ] && eager_json=$logs/torch-eager.json
    fi
    if [ $compile_run = 1 ]; then
      section "benchmark: PyTorch torch.compile"
      l=$(limit 210 10)
      if [ "$l" -lt 45 ]; then
        fail "PyTorch torch.compile: skipped, out of time (${l}s left)"
        notes+=(--note "torch-compile=skipped, out of time")
      else
        PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=$scratch/inductor timeout -k 5 "$l" \
          "$py" "$torch_bench" "${torch_common[@]}" --compile --json "$logs/torch-compile.json" </dev/null
        rc=$?
        [ $rc -eq 0 ] || { fail "PyTorch torch.compile: $(explain_rc $rc)"; notes+=(--note "torch-compile=$(explain_rc $rc)"); }
        [ -f "$logs/torch-compile.json" ] && compile_json=$logs/torch-compile.json
      fi
    else
      notes+=(--note "torch-compile=not run (--no-compile)")
    fi
  else
    notes+=(--note "torch-eager=not run (--no-torch)" --note "torch-compile=not run (--no-torch)")
  fi
else
  echo "(the bundle has no benchmark executable)"
fi

section "report"
report=("$py" "$check" report --manifest "$manifest" --out "$results" --peak-flops "$peak_flops"
        --tiny-results "$tiny_results" --failures "$failures" --device "$device_name"
        --date "$(date -u +%Y-%m-%dT%H:%M:%S)")
[ -n "$zeroc_log" ] && report+=(--zeroc "$zeroc_log")
[ -n "${zeroc_flash_log:-}" ] && report+=(--zeroc-flash "$zeroc_flash_log")
[ -n "$eager_json" ] && report+=(--torch-eager "$eager_json")
[ -n "$compile_json" ] && report+=(--torch-compile "$compile_json")
[ -n "$kt_json" ] && report+=(--kernel-tests "$kt_json")
[ -n "${warmup:-}" ] && report+=(--warmup "$warmup")
"${report[@]}" "${notes[@]}" || fail "the report failed"

tar -czf "$results/logs.tar.gz" -C "$scratch" logs
echo "results: $results (results.md, results.json, run.log, logs.tar.gz); $(( SECONDS - start ))s"
status=0
if [ -s "$failures" ]; then
  echo "GPU CHECK: FAIL ($(wc -l <"$failures") failure(s)):"
  sed 's/^/  - /' "$failures"
  status=1
else
  echo "GPU CHECK: PASS"
fi
exec 1>&3 2>&4
wait "$tee_pid" 2>/dev/null
rm -rf "$scratch"
exit $status
