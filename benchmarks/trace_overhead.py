#!/usr/bin/env python3
"""What --trace costs: step times with tracing off, on, and without hooks.

    python3 benchmarks/trace_overhead.py [--baseline-zeroc /path/to/zeroc] [--rounds 5]
                                          [--steps 20] [--stage 3] [--ranks 2]

The CPU benchmark model of docs/benchmarks.md (GPT-2, 4 layers, n_embd 128,
4 heads, block 64, global batch 16) is compiled once; it runs `--rounds`
times with tracing off and on (--trace over every step but the first), the
runs interleaved so that the machine's other load hits both alike, each
under `nice mpirun` with one OpenMP thread per rank. With
--baseline-zeroc (a zeroc built without the trace hook, e.g. from the
commit before it), a third executable without any hook shows what the
predictable flag costs when tracing is off. Prints the median step time of
each (steps 2 to the end, every round) and the overheads.
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
CONFIG = ["--n-layer", "4", "--n-head", "4", "--n-embd", "128", "--vocab-size", "256",
          "--block-size", "64", "--batch-size", "16", "--grad-clip", "1.0"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--baseline-zeroc", help="a zeroc without the trace hook")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--stage", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args()
    mpirun = shutil.which("mpirun")
    work = tempfile.mkdtemp(prefix="zeroc-trace-overhead-")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    model = os.path.join(work, "gpt2.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *CONFIG, "-o", model], check=True,
                   env=env)
    flags = [f"--zero-stage={args.stage}", f"--world-size={args.ranks}"]
    exes = {"hooks, tracing off": os.path.join(work, "traced")}
    subprocess.run([args.zeroc, model, *flags, "-o", exes["hooks, tracing off"]], check=True)
    if args.baseline_zeroc:
        exes["no hooks"] = os.path.join(work, "baseline")
        subprocess.run([args.baseline_zeroc, model, *flags, "-o", exes["no hooks"]], check=True)
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    variants = list(exes.items()) + [("hooks, tracing on", exes["hooks, tracing off"])]
    times = {name: [] for name, _ in variants}
    for round_ in range(args.rounds):
        for name, exe in variants:
            log = os.path.join(work, "log.jsonl")
            command = ["nice", mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to",
                       "none", "-x", "OMP_NUM_THREADS=1", "-np", str(args.ranks), exe, "--data",
                       data, "--data-format=text", "--steps", str(args.steps), "--quiet",
                       "--log-json", log]
            if name == "hooks, tracing on":
                command += ["--trace", os.path.join(work, "trace.json"), "--trace-steps",
                            f"1:{args.steps}"]
            subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
            times[name] += [json.loads(l)["ms"] for l in open(log) if '"loss"' in l][2:]
        print(f"round {round_ + 1}: " + ", ".join(
            f"{name} {statistics.median(t):.2f} ms" for name, t in times.items()), flush=True)
    medians = {name: statistics.median(t) for name, t in times.items()}
    print()
    for name, ms in medians.items():
        print(f"{name:<20} median step {ms:8.3f} ms over {len(times[name])} steps")
    off = medians["hooks, tracing off"]
    print(f"tracing on vs off: {100 * (medians['hooks, tracing on'] / off - 1):+.2f}%")
    if "no hooks" in medians:
        print(f"hooks off vs no hooks: {100 * (off / medians['no hooks'] - 1):+.2f}%")
    size = os.path.getsize(os.path.join(work, "trace.json"))
    print(f"trace of {args.steps - 1} steps: {size / 2**20:.1f} MiB")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
