#!/usr/bin/env python3
"""The performance model on this machine: predicted against measured steps.

    python3 benchmarks/perf_model_cpu.py [--steps 14] [--ranks 1 2 4] [--stages 0 1 2 3]
                                          [--machine cpu] [--kinds]

The small GPT-2 of docs/benchmarks.md (4 layers, n_embd 128, 4 heads, block
64, vocabulary 256, global batch 16, fp32 AdamW with clipping) is compiled
for each ZeRO stage and world size, trained under `nice mpirun` with one
OpenMP thread per rank on byte-level tinyshakespeare, and its median step
time (steps 2 to the end, rank 0's log) is set against the step time
`zeroc --emit=perf-model --machine=cpu` predicts for the same compiled
program. More ranks than the machine's 2 cores share them (the preset says
nodes = 1). With --kinds, a traced step of each 1-rank run is compared op
kind by op kind (python3 -m zeroc trace-summary against the model's
compute_seconds_by_kind). docs/performance-model.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from zeroc import trace as traces  # noqa: E402

CONFIG = ["--n-layer", "4", "--n-head", "4", "--n-embd", "128", "--vocab-size", "256",
          "--block-size", "64", "--batch-size", "16", "--grad-clip", "1.0"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--stages", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--machine", default="cpu")
    parser.add_argument("--kinds", action="store_true",
                        help="also compare a traced 1-rank step by op kind")
    parser.add_argument("--work", help="keep the executables and logs here")
    args = parser.parse_args()
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("error: mpirun is not on PATH", file=sys.stderr)
        return 1
    work = args.work or tempfile.mkdtemp(prefix="zeroc-perf-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    model = os.path.join(work, "gpt2.mlir")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *CONFIG, "-o", model],
                   check=True, env=env)
    rows = []
    for stage in args.stages:
        for ranks in args.ranks:
            flags = [f"--zero-stage={stage}", f"--world-size={ranks}"]
            exe = os.path.join(work, f"gpt2-s{stage}-n{ranks}")
            subprocess.run([args.zeroc, model, *flags, "-o", exe], check=True)
            predicted = json.loads(subprocess.run(
                [args.zeroc, model, *flags, "--emit=perf-model-json", f"--machine={args.machine}"],
                check=True, capture_output=True, text=True).stdout)["predictions"][0]
            log = exe + ".jsonl"
            command = ["nice", mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to",
                       "none", "-x", "OMP_NUM_THREADS=1", "-np", str(ranks), exe, "--data", data,
                       "--data-format=text", "--steps", str(args.steps), "--quiet",
                       "--log-json", log]
            trace_path = exe + ".trace.json"
            if args.kinds and ranks == 1:
                command += ["--trace", trace_path, "--trace-steps", f"2:{args.steps}"]
            subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
            ms = [json.loads(l)["ms"] for l in open(log) if '"loss"' in l][2:]
            measured = statistics.median(ms)
            row = {"stage": stage, "ranks": ranks, "measured_ms": measured,
                   "predicted_ms": predicted["step_seconds"] * 1e3,
                   "predicted_exposed_ms": predicted["exposed_comm_seconds"] * 1e3}
            row["error"] = row["predicted_ms"] / measured - 1
            rows.append(row)
            print(f"stage {stage}, {ranks} rank(s): measured {measured:8.2f} ms, predicted "
                  f"{row['predicted_ms']:8.2f} ms ({100 * row['error']:+.1f}%)", flush=True)
            if args.kinds and ranks == 1:
                summary = traces.summarize(traces.load(trace_path))
                kinds = predicted["compute_seconds_by_kind"]
                print(f"  {'op kind':<22} {'measured ms':>12} {'predicted ms':>13}")
                for kind, value in sorted(summary["compute_ms_by_kind"].items(),
                                          key=lambda kv: -kv[1])[:14]:
                    print(f"  {kind:<22} {value:>12.3f} {kinds.get(kind, 0) * 1e3:>13.3f}")
    print()
    print("| stage | ranks | measured ms | predicted ms | error |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['stage']} | {r['ranks']} | {r['measured_ms']:.2f} | {r['predicted_ms']:.2f} | "
              f"{100 * r['error']:+.1f}% |")
    errors = [abs(r["error"]) for r in rows]
    print(f"\nmean absolute error {100 * statistics.mean(errors):.1f}%, "
          f"worst {100 * max(errors):.1f}% ({len(rows)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
