#!/usr/bin/env python3
"""The performance model against published training runs.

    python3 benchmarks/published.py [--zeroc build/bin/zeroc] [--markdown]

Each row builds the published configuration with zeroc's model builders,
compiles it for the published ZeRO stage and GPU count (`zeroc
--emit=perf-model-json --machine=PRESET`, one machine file per GPU kind, the
same for every row), and sets the predicted throughput next to the
published one. docs/performance-model.md explains each configuration and
cites each figure.

Large per-GPU batches stand in for gradient accumulation, which zeroc does
not have yet: the same FLOPs and the same gradient traffic per step, but not
the same memory (the "fits" column).

The torchtitan rows ran with torchtitan's per-op selective activation
checkpointing. They are compiled with `--remat=selective` (zeroc keeps the
outputs of matrix products and attention, recomputes norms, rotary
embeddings and elementwise ops in the backward), which is torchtitan's
policy but for one thing: torchtitan also recomputes every second matrix
product of a layer. Next to the prediction, `+ 2nd-product recompute` adds
the time the model gives those products, op by op from the same compiled
step: in each layer the k, o and up projections (one of the two
k/v-sized, one of the two dim x dim, one of the three MLP products). That
column is an estimate beside a compiled program, not a compiled program.

The H100 rows run on `h100-hbm2e-500w-ib`, the part torchtitan's H100 runs
used (96 GB HBM2e, 500 W), not the 80 GB 700 W SXM5 of the llm.c row.
The eager rows (torchtitan without torch.compile) are the issue's; the
torch.compile rows of the same tables, whose elementwise kernels are fused
as zeroc's are, are set beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# torchtitan's Llama 3 8B (the Llama 3.1 8B has the same shapes), built as its
# llama3_8b.toml trains it; the batch is added per row.
LLAMA_8B = ["zeroc.models.llama", "--preset", "llama3-8b", "--dtype", "bf16",
            "--block-size", "8192", "--lr", "3e-4", "--eps", "1e-8", "--weight-decay", "0.1",
            "--grad-clip", "1.0"]
LLAMA_8B_LAYERS = 32
# torchtitan's per-op selective checkpointing, compiled as zeroc's nearest
# policy; the products it also recomputes are estimated (sac_products).
LLAMA_SAC = dict(flags=["--remat=selective"], recompute="torchtitan-sac-op")
H100_TITAN = "h100-hbm2e-500w-ib"
TITAN_H100 = "torchtitan benchmarks/llama3_h100_202412_torchtitan.md"

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
    # torchtitan's Llama 3 8B recipe (torchtitan/models/llama3/train_configs/
    # llama3_8b.toml): AdamW lr 3e-4, eps 1e-8, weight decay 0.1, gradient
    # clipping at 1.0, sequences of 8192, bf16 compute on fp32 parameters.
    dict(name="torchtitan Llama 3.1 8B FSDP, 8x H100",
         builder=LLAMA_8B + ["--batch-size", str(8 * 2)],
         stage=3, ranks=8, machine=H100_TITAN, published=5762, unit="tokens/s/GPU",
         source=TITAN_H100 + ", Table 1", **LLAMA_SAC),
    dict(name="torchtitan Llama 3.1 8B FSDP, 128x H100",
         builder=LLAMA_8B + ["--batch-size", str(8 * 2)],
         stage=3, ranks=8, predict=128, machine=H100_TITAN, published=5605,
         unit="tokens/s/GPU", source=TITAN_H100 + ", Table 3", **LLAMA_SAC),
    dict(name="torchtitan Llama 3 8B FSDP, 64x A100",
         builder=LLAMA_8B + ["--batch-size", str(8 * 1)],
         stage=3, ranks=8, predict=64, machine="a100-sxm-ib", published=2973,
         unit="tokens/s/GPU", source="torchtitan docs/performance.md", **LLAMA_SAC),
    # The same H100 runs with torch.compile (Tables 1 and 3, second rows).
    dict(name="(torch.compile) Llama 3.1 8B FSDP, 8x H100",
         builder=LLAMA_8B + ["--batch-size", str(8 * 2)],
         stage=3, ranks=8, machine=H100_TITAN, published=6667, unit="tokens/s/GPU",
         source=TITAN_H100 + ", Table 1", **LLAMA_SAC),
    dict(name="(torch.compile) Llama 3.1 8B FSDP, 128x H100",
         builder=LLAMA_8B + ["--batch-size", str(8 * 2)],
         stage=3, ranks=8, predict=128, machine=H100_TITAN, published=6514,
         unit="tokens/s/GPU", source=TITAN_H100 + ", Table 3", **LLAMA_SAC),
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


def sac_products_seconds(prediction: dict, layers: int) -> float:
    """The matrix products torchtitan's selective (per-op) checkpointing
    computes again in the backward and zeroc's `--remat=selective` keeps,
    timed as the model times them in `prediction` (one configuration's
    ops): in each layer every second product of the forward (its policy
    saves the outputs of the others and of attention). zeroc's policy
    already recomputes the memory-bound ops the torchtitan policy does
    (norms, rotary embeddings, SiLU, products, residual adds)."""
    seconds = 0.0
    # The layers' products, grouped by their FLOPs: 2 per layer of k/v size
    # (k, v) and of dim x dim (q, o), 3 of the MLP's size (gate, up, down);
    # the output layer is alone in its group and not in a layer.
    groups: dict[float, list[float]] = {}
    for op in prediction["ops"]:
        if op["phase"] == "forward" and op["kind"] == "matmul":
            groups.setdefault(op["flops"], []).append(op["end"] - op["start"])
    for spans in groups.values():
        per_layer = len(spans) / layers
        if per_layer in (2, 3):  # one product of each group is recomputed
            seconds += sum(spans) / per_layer
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    lines = []
    with tempfile.TemporaryDirectory(prefix="zeroc-published-") as work:
        for row in ROWS:
            model = os.path.join(work, "model.mlir")
            subprocess.run([sys.executable, "-m", *row["builder"], "-o", model], check=True,
                           env=env)
            predict = row.get("predict", row["ranks"])
            command = [args.zeroc, model, f"--zero-stage={row['stage']}",
                       f"--world-size={row['ranks']}", "--emit=perf-model-json",
                       f"--machine={row['machine']}", *row.get("flags", [])]

            def run(extra: list[str]) -> dict:
                return json.loads(subprocess.run(command + extra, check=True,
                                                 capture_output=True, text=True).stdout)

            out = run(["--sweep"] if predict != row["ranks"] else [])
            prediction = next(p for p in out["predictions"] if p["world_size"] == predict)
            recompute = None
            if row.get("recompute") == "torchtitan-sac-op":
                # The layers' forward ops run on whole (gathered) parameters
                # and this rank's batch: their time does not depend on N.
                ops = out if predict == row["ranks"] else run([])
                recompute = sac_products_seconds(ops["predictions"][0], LLAMA_8B_LAYERS)
            lines.append((row, prediction, recompute))
    if args.markdown:
        print("| run | stage | GPUs | published | predicted | error | + 2nd-product recompute (estimate) "
              "| MFU | exposed comm | peak memory | source |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row, p, recompute in lines:
        predict = row.get("predict", row["ranks"])
        got = figure(p, row["unit"])
        error = got / row["published"] - 1
        fits = "fits" if p["fits"] else "does not fit"
        memory = f"{p['peak_memory_bytes'] / 2**30:.1f} GiB ({fits})"
        extra = ""
        if recompute is not None:
            step = p["step_seconds"] + recompute
            with_sac = figure(dict(p, step_seconds=step,
                                   tokens_per_second=p["tokens_per_second"] * p["step_seconds"] / step,
                                   tokens_per_second_per_device=p["tokens_per_second_per_device"]
                                   * p["step_seconds"] / step), row["unit"])
            extra = (f"{number(with_sac)} ({100 * (with_sac / row['published'] - 1):+.1f}%, "
                     f"+{recompute * 1e3:.0f} ms)")
        if args.markdown:
            print(f"| {row['name']} | {row['stage']} | {predict} | {number(row['published'])} "
                  f"{row['unit']} | {number(got)} | {100 * error:+.1f}% | {extra} | "
                  f"{100 * p['mfu']:.1f}% | {p['exposed_comm_seconds'] * 1e3:.1f} ms | {memory} | "
                  f"{row['source']} |")
        else:
            print(f"{row['name']:<42} stage {row['stage']} N={predict:<4} published "
                  f"{number(row['published']):>10} {row['unit']:<22} predicted {number(got):>10} "
                  f"({100 * error:+.1f}%), MFU {100 * p['mfu']:.1f}%, exposed "
                  f"{p['exposed_comm_seconds'] * 1e3:.1f} ms, {memory}"
                  + (f"; + 2nd-product recompute {extra}" if extra else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
