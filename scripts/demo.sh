#!/usr/bin/env bash
# The main job, end to end on a fresh machine: installs and builds what is
# missing, writes a small GPT-2 with the model builder, compiles it with
# ZeRO stage 3 for 4 CPU ranks, trains it on the embedded tinyshakespeare
# (byte level) with a progress line per step, prints the per-rank memory of
# stages 0-3 side by side, and samples text from the saved weights.
#
#   scripts/demo.sh [--steps N]       (default 600; ZEROC_DEMO_STEPS too)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/demo.sh [--steps N]   (N a positive integer; default 600)" >&2; exit 2; }
steps=${ZEROC_DEMO_STEPS:-600}
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) [ $# -ge 2 ] || usage; steps=$2; shift 2 ;;
    --steps=*) steps=${1#--steps=}; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/demo.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
case "$steps" in
  ''|*[!0-9]*|0) echo "scripts/demo.sh: --steps must be a positive integer, got '$steps'" >&2; exit 2 ;;
esac
# The learning rate warms up over 30 steps; a shorter run warms up over
# half of its steps (the schedule needs max steps past the warmup).
warmup=30
if [ "$steps" -le 30 ]; then warmup=$((steps / 2)); fi
ranks=4
stage=3

echo "== zeroc demo: building (the first run installs packages and compiles zeroc: a few minutes)"
# Only what the demo runs: the zeroc driver and the CPU runtime.
scripts/build.sh --no-torch --target zeroc >/dev/null

out=build/demo
mkdir -p "$out"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
export PYTHONPATH=$PWD/python

echo "== the model: GPT-2 with 4 layers, 4 heads, n_embd 128, block 64, global batch 16, bytes (vocabulary 256)"
"$python" -m zeroc.models.gpt2 --n-layer 4 --n-head 4 --n-embd 128 --vocab-size 256 \
  --block-size 64 --batch-size 16 --lr 2e-3 --lr-schedule cosine --warmup "$warmup" \
  --max-steps "$steps" --min-lr 2e-4 --weight-decay 0.1 --grad-clip 1.0 -o "$out/gpt2.mlir"

echo "== per-rank memory for N = $ranks ranks, ZeRO stages 0-3 (the ZeRO paper's Figure 1 for this model)"
for s in 0 1 2 3; do
  build/bin/zeroc "$out/gpt2.mlir" --zero-stage=$s --world-size=$ranks \
    --emit=memory-report -o "$out/report-stage$s.json"
done
"$python" scripts/demo_report.py memory "$out"/report-stage{0,1,2,3}.json

echo "== compiling for ZeRO stage $stage on $ranks ranks"
build/bin/zeroc "$out/gpt2.mlir" --zero-stage=$stage --world-size=$ranks -o "$out/gpt2" --timings

mpirun=(mpirun -np "$ranks" --oversubscribe --bind-to none -x OMP_NUM_THREADS=1)
if [ "$(id -u)" -eq 0 ]; then mpirun+=(--allow-run-as-root); fi

echo "== training $steps steps on data/tinyshakespeare.txt ($ranks ranks on $(nproc) cores)"
rm -rf "$out/checkpoint"
"${mpirun[@]}" "$out/gpt2" --data data/tinyshakespeare.txt --data-format=text \
  --steps "$steps" --seed 1337 --log-json "$out/train.jsonl" --save "$out/checkpoint"

"$python" scripts/demo_report.py loss data/tinyshakespeare.txt "$out/train.jsonl" \
  "$out"/report-stage{0,1,2,3}.json --plot "$out/demo.png"

echo "== sampling 300 bytes from the saved weights (temperature 0.8)"
"${mpirun[@]}" "$out/gpt2" --init "$out/checkpoint" \
  --sample 300 --prompt "ROMEO:" --temperature 0.8 --seed 7
