#!/usr/bin/python3
"""Gradient accumulation's throughput and exposed communication on the CPU.

The small GPT-2 of cpu_ddp.py (4 layers, n_embd 128, 4 heads, block 64,
global batch 16, byte-level tinyshakespeare, AdamW with clipping) on 2
ranks, compiled for ZeRO stages 0 and 2 (and 3) with --grad-accum K = 1, 2
and 4: the same global batch per step, split into K micro-batches of
16 / (2 K) sequences per rank. For each executable: tokens/s (median of the
timed steps after warm-up, from --log-json), and from a --trace of steps
1..3 (python3 -m zeroc trace-summary) the communication in flight and the
part of it the step waited for (exposed), per step.

    nice /usr/bin/python3 benchmarks/grad_accum.py [--steps 20] [--stages 0,2,3]

Not a test: figures depend on the machine. docs/benchmarks.md records them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--stages", default="0,2,3")
    parser.add_argument("--ks", default="1,2,4")
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python"), "OMP_NUM_THREADS": "1"}
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    mpirun = ["mpirun", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    batch, block = 16, 64
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "gpt2.mlir")
        subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--n-layer", "4",
                        "--n-head", "4", "--n-embd", "128", "--vocab-size", "256",
                        "--block-size", str(block), "--batch-size", str(batch),
                        "--grad-clip", "1.0", "-o", model], check=True, env=env)
        print(f"GPT-2 4 layers, n_embd 128, block {block}, global batch {batch}; "
              f"{args.ranks} ranks x 1 thread; median of steps {args.warmup}..{args.steps - 1}")
        print(f"{'stage':>5} {'K':>2} {'tokens/s':>9} {'comm ms':>8} {'exposed ms':>10} "
              f"{'bytes/step':>10}")
        for stage in (int(s) for s in args.stages.split(",")):
            for k in (int(k) for k in args.ks.split(",")):
                exe = os.path.join(work, f"gpt2-s{stage}-k{k}")
                flags = [f"--zero-stage={stage}", f"--world-size={args.ranks}",
                         f"--grad-accum={k}"]
                subprocess.run([args.zeroc, model, *flags, "-o", exe], check=True)
                log, trace = exe + ".jsonl", exe + ".trace.json"
                subprocess.run(mpirun + ["-np", str(args.ranks), exe, "--data", data,
                                         "--data-format=text", "--steps", str(args.steps),
                                         "--log-json", log, "--trace", trace, "--quiet"],
                               check=True, env=env, stdout=subprocess.DEVNULL)
                records = [json.loads(line) for line in open(log)]
                times = [r["ms"] / 1000 for r in records if "loss" in r]
                sent = next(r for r in records if r.get("summary"))["ranks"][0]["bytes_sent"]
                summary = json.loads(subprocess.run(
                    [sys.executable, "-m", "zeroc", "trace-summary", "--json", trace],
                    check=True, capture_output=True, text=True, env=env).stdout)
                s = next(iter(summary.values()))
                rate = batch * block / statistics.median(times[args.warmup:])
                print(f"{stage:>5} {k:>2} {rate:>9,.0f} {s['comm_in_flight_ms']:>8.2f} "
                      f"{s['exposed_comm_ms']:>10.2f} {sent / args.steps:>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
