#!/usr/bin/env python3
"""The performance model against published training runs.

    python3 benchmarks/published.py [--zeroc build/bin/zeroc] [--markdown]

Each row builds the published configuration with zeroc's model builders,
compiles it for the published ZeRO stage and GPU count (`zeroc
--emit=perf-model-json --machine=PRESET`, one machine file per GPU kind, the
same for every row), and sets the predicted throughput next to the
published one. docs/performance-model.md explains each configuration and
cites each figure.

The Llama rows need the Llama builder (`python3 -m zeroc.models.llama`,
RMSNorm, rotary embeddings, grouped-query attention, SwiGLU); until it exists
they print as "not run". Large per-GPU batches stand in for gradient
accumulation, which zeroc does not have yet: the same FLOPs and the same
gradient traffic per step, but not the same memory (the "fits" column).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, builder arguments (global batch at `ranks_compiled`), stage, ranks to
# compile for, ranks predicted (derived with --sweep when they differ),
# machine, published figure, unit, source.
ROWS = [
    dict(name="llm.c GPT-2 124M, 8x A100 80GB",
         builder=["zeroc.models.gpt2", "--preset", "124M", "--dtype", "bf16",
                  "--batch-size", str(8 * 64)],
         stage=1, ranks=8, machine="a100-sxm-ib", published=1.75e6, unit="tokens/s",
         source="llm.c discussion #481"),
    dict(name="llm.c GPT-2 1558M, 8x H100 80GB",
         builder=["zeroc.models.gpt2", "--preset", "1558M", "--dtype", "bf16",
                  "--batch-size", str(8 * 128)],
         stage=1, ranks=8, machine="h100-sxm-ib", published=2.8, unit="s/step",
         source="llm.c discussion #677"),
    dict(name="ZeRO: DP baseline, GPT-2 1.5B, 128x V100",
         builder=["zeroc.models.gpt2", "--preset", "1558M", "--dtype", "bf16",
                  "--batch-size", str(8 * 2)],
         stage=0, ranks=8, predict=128, machine="v100-dgx2", published=20,
         unit="TFLOP/s/GPU (at most)", source="ZeRO paper, Sec. 10.5 / Fig. 4"),
    dict(name="ZeRO-DP P_os+g, 13B, 128x V100",
         builder=["zeroc.models.gpt2", "--n-layer", "40", "--n-head", "40", "--n-embd", "5120",
                  "--vocab-size", "50257", "--block-size", "1024", "--dtype", "bf16",
                  "--batch-size", str(8 * 8)],
         stage=2, ranks=8, predict=128, machine="v100-dgx2", published=40,
         unit="TFLOP/s/GPU (at least)", source="ZeRO paper, Sec. 10.5 / Fig. 4"),
    dict(name="torchtitan Llama 3.1 8B FSDP, 8x H100",
         builder=["zeroc.models.llama", "--preset", "8B", "--dtype", "bf16",
                  "--block-size", "8192", "--batch-size", str(8 * 2)],
         stage=3, ranks=8, machine="h100-sxm-ib", published=5762, unit="tokens/s/GPU",
         source="torchtitan docs/performance.md", llama=True),
    dict(name="torchtitan Llama 3.1 8B FSDP, 128x H100",
         builder=["zeroc.models.llama", "--preset", "8B", "--dtype", "bf16",
                  "--block-size", "8192", "--batch-size", str(8 * 2)],
         stage=3, ranks=8, predict=128, machine="h100-sxm-ib", published=5605,
         unit="tokens/s/GPU", source="torchtitan docs/performance.md", llama=True),
    dict(name="torchtitan Llama 3 8B FSDP, 64x A100",
         builder=["zeroc.models.llama", "--preset", "8B", "--dtype", "bf16",
                  "--block-size", "8192", "--batch-size", str(8 * 1)],
         stage=3, ranks=8, predict=64, machine="a100-sxm-ib", published=2973,
         unit="tokens/s/GPU", source="torchtitan docs/performance.md", llama=True),
]


def number(value: float) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"


def figure(prediction: dict, unit: str) -> float:
    if unit == "tokens/s":
        return prediction["tokens_per_second"]
    if unit == "tokens/s/GPU":
        return prediction["tokens_per_second_per_device"]
    if unit == "s/step":
        return prediction["step_seconds"]
    return prediction["model_flops"] / prediction["step_seconds"] / 1e12


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    have_llama = importlib.util.find_spec("zeroc.models.llama") is not None
    lines = []
    with tempfile.TemporaryDirectory(prefix="zeroc-published-") as work:
        for row in ROWS:
            if row.get("llama") and not have_llama:
                lines.append((row, None, "not run: needs python3 -m zeroc.models.llama"))
                continue
            model = os.path.join(work, "model.mlir")
            subprocess.run([sys.executable, "-m", *row["builder"], "-o", model], check=True,
                           env=env)
            predict = row.get("predict", row["ranks"])
            command = [args.zeroc, model, f"--zero-stage={row['stage']}",
                       f"--world-size={row['ranks']}", "--emit=perf-model-json",
                       f"--machine={row['machine']}"]
            if predict != row["ranks"]:
                command.append("--sweep")
            out = json.loads(subprocess.run(command, check=True, capture_output=True,
                                            text=True).stdout)
            prediction = next(p for p in out["predictions"] if p["world_size"] == predict)
            lines.append((row, prediction, ""))
    if args.markdown:
        print("| run | stage | GPUs | published | predicted | error | MFU | exposed comm | "
              "peak memory | source |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for row, p, note in lines:
        predict = row.get("predict", row["ranks"])
        if p is None:
            text = (f"| {row['name']} | {row['stage']} | {predict} | {number(row['published'])} "
                    f"{row['unit']} | {note} | | | | | {row['source']} |") if args.markdown else \
                f"{row['name']:<42} {note}"
            print(text)
            continue
        got = figure(p, row["unit"])
        error = got / row["published"] - 1
        fits = "fits" if p["fits"] else "does not fit"
        memory = f"{p['peak_memory_bytes'] / 2**30:.1f} GiB ({fits})"
        if args.markdown:
            print(f"| {row['name']} | {row['stage']} | {predict} | {number(row['published'])} "
                  f"{row['unit']} | {number(got)} | {100 * error:+.1f}% | {100 * p['mfu']:.1f}% | "
                  f"{p['exposed_comm_seconds'] * 1e3:.1f} ms | {memory} | {row['source']} |")
        else:
            print(f"{row['name']:<42} stage {row['stage']} N={predict:<4} published "
                  f"{number(row['published']):>10} {row['unit']:<22} predicted {number(got):>10} "
                  f"({100 * error:+.1f}%), MFU {100 * p['mfu']:.1f}%, exposed "
                  f"{p['exposed_comm_seconds'] * 1e3:.1f} ms, {memory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
