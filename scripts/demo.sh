#!/usr/bin/env bash
# The main job on the default model and data: installs and builds what is
# missing, writes a tiny GPT-2 with the model builder, runs it through the
# pipeline that exists today (autodiff, optimizer expansion) and prints the
# resulting training step.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null

out=build/demo
mkdir -p "$out"
python=/usr/bin/python3
[ -x "$python" ] || python=python3

echo "== zeroc demo: the tiny GPT-2 preset (2 layers, 3 heads, n_embd 48, vocab 256, block 17, batch 12)"
PYTHONPATH=python "$python" -m zeroc.models.gpt2 --preset tiny --grad-clip 1.0 -o "$out/gpt2-tiny.mlir"
echo "   model:         $out/gpt2-tiny.mlir ($(grep -c 'train.param' "$out/gpt2-tiny.mlir") parameter tensors)"

build/bin/zeroc-opt "$out/gpt2-tiny.mlir" --train-autodiff --train-optimizer \
  -o "$out/gpt2-tiny.step.mlir"
echo "   training step: $out/gpt2-tiny.step.mlir"
echo
cat "$out/gpt2-tiny.step.mlir"
