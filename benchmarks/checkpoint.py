#!/usr/bin/python3
"""Checkpoint save and load of GPT-2 124M (fp32 AdamW) at N = 1, 2, 4 ranks:
time, throughput against the disk's `dd` figure, and each rank's peak memory
while saving and loading, from the executables' --log-json records.

    /usr/bin/python3 benchmarks/checkpoint.py [--repeat 3] [--work DIR]

Each configuration saves the initial state (--steps 0 --save: the same bytes
as after any step) `--repeat` times into a fresh directory and loads it back
(--resume --steps 0) as often; the table gives the medians. Loads read a
checkpoint just written, from the page cache. `dd` writes 1 GiB of zeros
with conv=fsync into the same directory. Run it alone, with nice.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = ((1, 0), (2, 3), (4, 3), (4, 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--work", help="directory for the checkpoints (default: a temporary "
                                       "one); it decides the disk that is measured")
    args = parser.parse_args()
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "OMP_NUM_THREADS=1"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}
    work = args.work or tempfile.mkdtemp(prefix="zeroc-checkpoint-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        model = os.path.join(work, "gpt2.mlir")
        subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--preset", "124M",
                        "--vocab-size", "256", "--block-size", "64", "--batch-size", "4",
                        "-o", model], check=True, env=env)

        dd = []
        for _ in range(2):
            out = subprocess.run(["dd", "if=/dev/zero", f"of={os.path.join(work, 'dd.bin')}",
                                  "bs=16M", "count=64", "conv=fsync"],
                                 capture_output=True, text=True, check=True).stderr
            seconds = float(re.search(r"copied, ([0-9.]+) s", out).group(1))
            dd.append(64 * 16 * 2**20 / seconds / 1e6)
            os.remove(os.path.join(work, "dd.bin"))
        print(f"dd (1 GiB, bs=16M, conv=fsync): {max(dd):.0f} MB/s")

        rows = []
        for ranks, stage in CONFIGS:
            exe = os.path.join(work, f"gpt2-n{ranks}-s{stage}")
            subprocess.run([args.zeroc, model, f"--zero-stage={stage}", f"--world-size={ranks}",
                            "-o", exe], check=True)
            saves, loads, summary = [], [], None
            ck = os.path.join(work, f"ck-n{ranks}-s{stage}")
            for i in range(args.repeat):
                shutil.rmtree(ck, ignore_errors=True)
                log = os.path.join(work, f"save-{ranks}-{stage}-{i}.jsonl")
                subprocess.run(mpirun + ["-np", str(ranks), exe, "--data", data,
                                         "--data-format=text", "--steps", "0", "--save", ck,
                                         "--log-json", log, "--quiet"], check=True)
                records = [json.loads(line) for line in open(log)]
                saves.append(next(r for r in records if r.get("checkpoint") == "saved"))
                summary = next(r for r in records if r.get("summary"))
            for i in range(args.repeat):
                log = os.path.join(work, f"load-{ranks}-{stage}-{i}.jsonl")
                subprocess.run(mpirun + ["-np", str(ranks), exe, "--data", data,
                                         "--data-format=text", "--steps", "0", "--resume", ck,
                                         "--log-json", log, "--quiet"], check=True)
                loads.append(next(json.loads(line) for line in open(log)
                                  if '"checkpoint"' in line))
            state = max(sum(r["peak_bytes"][k] for k in
                            ("parameters", "gradients", "optimizer_states"))
                        for r in summary["ranks"])
            rows.append({
                "ranks": ranks, "stage": stage, "bytes": saves[0]["bytes"], "state": state,
                "save_s": statistics.median(s["seconds"] for s in saves),
                "save_mbs": statistics.median(s["mb_per_s"] for s in saves),
                "save_peak": max(max(s["peak_extra_bytes"]) for s in saves),
                "load_s": statistics.median(l["seconds"] for l in loads),
                "load_peak": max(max(l["peak_extra_bytes"]) for l in loads),
                "staging": saves[0]["staging_bytes"]})
            shutil.rmtree(ck, ignore_errors=True)

        print()
        print("| N | stage | checkpoint | state per rank | save | save MB/s | vs dd | "
              "peak growth saving | load | peak growth loading |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['ranks']} | {r['stage']} | {r['bytes'] / 1e6:,.0f} MB | "
                  f"{r['state'] / 1e6:,.0f} MB | {r['save_s']:.2f} s | {r['save_mbs']:.0f} | "
                  f"{r['save_mbs'] / max(dd):.0%} | {r['save_peak'] / 2**20:.1f} MiB | "
                  f"{r['load_s']:.2f} s | {r['load_peak'] / 2**20:.1f} MiB |")
        print(f"\n(staging buffer {rows[0]['staging'] >> 20} MiB; peak growth: the largest "
              "rank's VmHWM during the save or load over its resident set before it)")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
