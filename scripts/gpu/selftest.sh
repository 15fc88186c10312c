#!/usr/bin/env bash
# Tests the GPU check's own scripts on a machine without a GPU (about 3
# minutes on 2 cores), after zeroc is built in build/:
#
#   1. benchmarks/gpu_torch.py runs on the CPU (PyTorch 1.13 of /usr/bin/python3);
#   2. prepare.sh makes a test bundle whose "GPU" executables are CPU ones
#      (--gpu-target=cpu, the benchmark model tiny);
#   3. gpu_torch.py is the same model as zeroc's: from the same weights, its
#      fp32 per-step losses and gradient norms match a zeroc CPU executable's;
#   4. run.sh passes on the test bundle, with stand-ins for the CUDA kernel
#      unit tests and for NVIDIA's pip libraries (the LD_LIBRARY_PATH search);
#   5. the report's ratio to torch.compile and its targets (a torch.compile
#      result stood in for by the eager one);
#   6. run.sh fails, naming each, on a wrong precision, a crash, a hang, a
#      non-finite loss (ZEROC_GPU_EXE_DIR) and a failed kernel unit test.
#
#   scripts/gpu/selftest.sh [WORKDIR]     (default build/gpu-selftest)
#
# ZEROC and ZEROC_CXX are passed on to prepare.sh (see there).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-build/gpu-selftest}
work=$(realpath -m "$work")
py=${ZEROC_GPU_PYTHON:-/usr/bin/python3}
zeroc=${ZEROC:-build/bin/zeroc}
cxx=()
[ -n "${ZEROC_CXX:-}" ] && cxx=("--cxx=$ZEROC_CXX")
export PYTHONPATH=$PWD/python
checks=0
ok() { checks=$((checks + 1)); echo "ok $checks - $*"; }
die() { echo "not ok - $*" >&2; exit 1; }
"$py" -c 'import torch' 2>/dev/null || die "$py has no torch (Debian's python3-torch)"

rm -rf "$work"
mkdir -p "$work"

echo "== 1. gpu_torch.py on the CPU"
"$py" benchmarks/gpu_torch.py --device cpu --tiny --steps 3 --json "$work/torch-tiny.json"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["steps"]==3 and r["finite"] and r["tokens_per_s"]>0' "$work/torch-tiny.json"
ok "gpu_torch.py --device cpu --tiny --steps 3"

echo "== 2. prepare.sh --gpu-target=cpu --bench-preset tiny"
scripts/gpu/prepare.sh --gpu-target=cpu --bench-preset tiny --out "$work/bundle" --work "$work/prepare"
bundle=$work/bundle
[ -f "$bundle/manifest.json" ] && [ -f "$bundle/tiny/init.safetensors" ] || die "no bundle"
n=$(ls "$bundle"/tiny/ref/*.jsonl | wc -l)
[ "$n" -eq 12 ] || die "12 reference logs expected, found $n"
ok "prepare.sh made a test bundle with 12 reference logs"

echo "== 3. gpu_torch.py and zeroc: same weights, same losses"
python3 -m zeroc.models.gpt2 --preset tiny --grad-clip 1.0 -o "$work/const.mlir"
"$zeroc" "$work/const.mlir" --target=cpu "${cxx[@]}" -o "$work/const"
"$work/const" --data "$bundle/data/tinyshakespeare.bin" --steps 20 \
  --init "$bundle/tiny/init.safetensors" --log-json "$work/const-zeroc.jsonl" --quiet
"$py" benchmarks/gpu_torch.py --device cpu --tiny --dtype fp32 --steps 20 --quiet \
  --data "$bundle/data/tinyshakespeare.bin" --init "$bundle/tiny/init.safetensors" \
  --log-json "$work/const-torch.jsonl"
python3 scripts/gpu/gpucheck.py compare --name "zeroc CPU vs gpu_torch.py CPU, fp32" \
  --ref "$work/const-zeroc.jsonl" --got "$work/const-torch.jsonl" --rtol 1e-5 \
  --ref-label "zeroc" --got-label "torch" || die "gpu_torch.py differs from zeroc"
ok "gpu_torch.py matches zeroc's executable within 1e-5 over 20 steps"

echo "== 4. run.sh on the test bundle"
cat >"$bundle/bin/zeroc-rt-cuda-kernel-tests" <<'EOF'
#!/bin/sh
echo "zeroc-rt-cuda-kernel-tests (stand-in)"
echo "PASS matmul: max rel err 1e-7"
echo "PASS layernorm: max rel err 2e-7"
echo "cuda kernel tests: 2 checks, 2 passed, 0 failed"
EOF
chmod +x "$bundle/bin/zeroc-rt-cuda-kernel-tests"
python3 - "$bundle/manifest.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["kernel_tests"] = "bin/zeroc-rt-cuda-kernel-tests"
json.dump(m, open(sys.argv[1], "w"), indent=1)
EOF
mkdir -p "$work/site/nvidia/cublas/lib" "$work/site/nvidia/cu13/lib"
touch "$work/site/nvidia/cublas/lib/libcublas.so.13" "$work/site/nvidia/cu13/lib/libnccl.so.2"
status=0
PYTHONPATH=$work/site ZEROC_GPU_PYTHON=$py OUT=$work/results \
  scripts/gpu/run.sh "$bundle" --no-compile >"$work/run-pass.log" 2>&1 || status=$?
cat "$work/run-pass.log"
[ $status -eq 0 ] || die "run.sh failed on the test bundle (exit $status)"
grep -q '^GPU CHECK: PASS' "$work/run-pass.log" || die "no PASS line"
[ "$(grep -c '^| stage.* | pass |$' "$work/results/results.md")" -eq 12 ] || die "12 passing cases expected"
grep -q "nvidia/cublas/lib" "$work/run-pass.log" && grep -q "nvidia/cu13/lib" "$work/run-pass.log" \
  || die "the pip libraries were not put on LD_LIBRARY_PATH"
grep -q 'kernel unit tests: pass (2 PASS, 0 FAIL' "$work/run-pass.log" || die "kernel tests not run"
for f in results.json results.md run.log logs.tar.gz; do
  [ -s "$work/results/$f" ] || die "run.sh wrote no $f"
done
ok "run.sh passes on the test bundle and writes results.{json,md}, run.log, logs.tar.gz"

echo "== 5. the report against torch.compile"
tar -xzf "$work/results/logs.tar.gz" -C "$work"
sed 's/"impl": "torch-eager"/"impl": "torch-compile"/' "$work/logs/torch-eager.json" >"$work/fake-compile.json"
python3 scripts/gpu/gpucheck.py report --manifest "$bundle/manifest.json" --out "$work/report" \
  --zeroc "$work/logs/zeroc-bench.jsonl" --torch-eager "$work/logs/torch-eager.json" \
  --torch-compile "$work/fake-compile.json" --peak-flops 1e9 >"$work/report.log"
cat "$work/report.log"
python3 - "$work/report/results.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = {x["impl"]: x for x in r["benchmark"]}
z, c = rows["zeroc"], rows["torch-compile"]
assert abs(z["vs_torch_compile"] - z["tokens_per_s"] / c["tokens_per_s"]) < 1e-9
assert abs(c["vs_torch_compile"] - 1.0) < 1e-12
t = r["targets"]
assert t["ratio_vs_torch_compile"]["met"] == (z["vs_torch_compile"] >= 1.15)
assert t["mfu"]["met"] == (z["mfu"] >= 0.5) and z["mfu"] > 0
EOF
grep -q 'Targets: zeroc tokens/s >= 1.15x torch.compile: \*\*\(met\|not met\)\*\*' "$work/report.log" \
  || die "no targets line"
ok "the report's ratio to torch.compile, MFU and targets"

echo "== 6. run.sh fails on bad executables"
fake=$work/fake
mkdir -p "$fake"
cp "$bundle/tiny/stage0-bf16" "$fake/stage0-fp32"          # bf16 arithmetic where fp32 is expected
printf '#!/bin/sh\nkill -SEGV $$\n' >"$fake/stage1-fp32"      # a crash
# a hang (once: from --init it runs the bundle's good executable, so that
# the check waits for one timeout, not two)
printf '#!/bin/sh\ncase " $* " in *" --init "*) exec "%s" "$@" ;; esac\nsleep 60\n' \
  "$bundle/tiny/stage2-fp32" >"$fake/stage2-fp32"
cat >"$fake/stage3-fp32" <<'EOF'
#!/usr/bin/env python3
import json, sys
a = sys.argv
with open(a[a.index("--log-json") + 1], "w") as f:
    for s in range(int(a[a.index("--steps") + 1])):
        f.write(json.dumps({"step": s, "loss": None if s == 5 else 5.5, "grad_norm": 1.0, "ms": 1.0}) + "\n")
EOF
chmod +x "$fake"/*
echo 'echo "FAIL softmax: max rel err 3e-2"' >>"$bundle/bin/zeroc-rt-cuda-kernel-tests"
status=0
ZEROC_GPU_EXE_DIR=$fake ZEROC_GPU_TINY_TIMEOUT=10 ZEROC_GPU_PYTHON=$py OUT=$work/results-bad \
  scripts/gpu/run.sh "$bundle" --no-torch >"$work/run-fail.log" 2>&1 || status=$?
sed -n '/^GPU CHECK/,$p' "$work/run-fail.log"
[ $status -eq 1 ] || die "run.sh should exit 1 on bad executables, got $status"
for pattern in 'stage0-fp32: loss rel diff' 'stage0-fp32-init: loss rel diff' \
    'stage1-fp32: the executable failed: segmentation fault' \
    'stage2-fp32: the executable failed: timed out' \
    'stage3-fp32: step 5: the loss is not finite' 'kernel unit tests: 1 FAIL line(s), 2 PASS, exit 0'; do
  grep -q -- "^  - $pattern" "$work/run-fail.log" || die "run.sh did not report: $pattern"
done
for good in stage0-bf16 stage2-fp32-init; do
  if grep -q -- "^  - $good" "$work/run-fail.log"; then die "the good $good was reported"; fi
done
ok "run.sh exits 1 and names the wrong precision, the crash, the hang, the NaN and the kernel test"

echo "selftest: $checks checks passed"
