#!/usr/bin/python3
"""Per-rank peak memory of model states at N ranks for ZeRO stages 0-3,
measured by the executables' allocator accounting, next to the static
report (zeroc --emit=memory-report) of the same program.

    /usr/bin/python3 benchmarks/memory.py [--ranks 4] [--steps 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    args = parser.parse_args()
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "OMP_NUM_THREADS=1"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    keys = ["parameters", "gradients", "optimizer_states"]
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "gpt2.mlir")
        subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--n-layer", "4",
                        "--n-head", "4", "--n-embd", "128", "--vocab-size", "256",
                        "--block-size", "64", "--batch-size", "16", "-o", model],
                       check=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
        print(f"GPT-2 4 layers, n_embd 128, fp32 AdamW, N = {args.ranks}: rank 0's peak KiB, "
              "measured / report")
        print(f"{'stage':>5} " + " ".join(f"{k.replace('_', ' '):>24}" for k in keys) +
              f" {'gathered params':>24} {'buckets':>24}")
        for stage in range(4):
            opts = [f"--zero-stage={stage}", f"--world-size={args.ranks}"]
            exe = os.path.join(work, f"s{stage}")
            subprocess.run([args.zeroc, model, *opts, "-o", exe], check=True)
            report = json.loads(subprocess.run([args.zeroc, model, *opts, "--emit=memory-report"],
                                               check=True, capture_output=True, text=True).stdout)
            log = exe + ".jsonl"
            subprocess.run(mpirun + ["-np", str(args.ranks), exe, "--data", data,
                                     "--data-format=text", "--steps", str(args.steps),
                                     "--log-json", log, "--quiet"], check=True)
            summary = [json.loads(l) for l in open(log) if '"summary"' in l][0]
            peak = summary["ranks"][0]["peak_bytes"]
            cells = [f"{peak[k] / 1024:10.1f} / {report['per_rank_bytes'][k] / 1024:10.1f}" for k in keys]
            cells.append(f"{peak['gathered_parameters'] / 1024:10.1f} / "
                         f"{report['transient_bytes']['gathered_parameters'] / 1024:10.1f}")
            cells.append(f"{peak['gradient_buckets'] / 1024:10.1f} / "
                         f"{report['transient_bytes']['gradient_buckets'] / 1024:10.1f}")
            print(f"{stage:>5} " + " ".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
