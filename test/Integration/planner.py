# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: stage 0 does not fit the budget: every stage-0 candidate's peak is above it
# CHECK: zeroc picked ZeRO stage {{[123]}}, --remat={{none|selective|full}}
# CHECK: measured peak_total_bytes {{[0-9]+}} <= budget {{[0-9]+}}: equals the plan's peak and the report's
# CHECK: the executable the planner picked trains within the budget
"""An executable compiled with --memory-budget stays within the budget.

The tiny GPT-2 of remat.py on 2 ranks: the planner's candidates (from
--emit=plan-json at a budget everything fits) give the smallest peak of a
stage-0 candidate; one byte less forces sharding. `zeroc --memory-budget=B
-o EXE` compiles the candidate it picks (stderr names it); trained for 3
AdamW steps under mpirun, rank 0's measured peak (peak_total_bytes: the
high-water mark of every zrt_alloc'ated byte together) is at most B, and
equals the picked candidate's peak in the plan and the peak_bytes_per_rank
of --emit=memory-report for the picked stage, policy and bucket size; every
category's measured peak equals that report's too.
"""
import argparse
import json
import os
import re
import subprocess
import sys

GPT2 = ["--n-layer", "2", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
        "--block-size", "7", "--batch-size", "12", "--lr", "0.003", "--grad-clip", "0.5"]
RANKS = 2
STEPS = 3


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--zeroc", "--src", "--work", "--mpirun"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    work = args.work
    mpirun = ["env", f"TMPDIR={work}", *args.mpirun.split()]
    data = os.path.join(args.src, "data", "tinyshakespeare.txt")
    model = os.path.join(work, "gpt2.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *GPT2, "-o", model], check=True)
    failures = []

    plan = json.loads(subprocess.run(
        [args.zeroc, model, f"--world-size={RANKS}", "--memory-budget=1GiB", "--emit=plan-json"],
        check=True, capture_output=True, text=True).stdout)
    stage0 = [c["peak_bytes_per_rank"] for c in plan["candidates"] if c["stage"] == 0]
    budget = min(stage0) - 1
    fitting = [c for c in plan["candidates"] if c["peak_bytes_per_rank"] <= budget]
    if not fitting:
        sys.exit(f"no candidate fits {budget} bytes: {plan}")
    print("stage 0 does not fit the budget: every stage-0 candidate's peak is above it")

    exe = os.path.join(work, "gpt2-planned")
    compiled = subprocess.run([args.zeroc, model, f"--world-size={RANKS}",
                               f"--memory-budget={budget}", "-o", exe],
                              check=True, capture_output=True, text=True)
    match = re.search(r"ZeRO stage (\d), --remat=(\w+), 1 micro-batch, ([0-9.]+ \w+) buckets",
                      compiled.stderr)
    if not match:
        sys.exit(f"zeroc did not name the candidate it compiled: {compiled.stderr!r}")
    stage, remat = int(match.group(1)), match.group(2)
    print(f"zeroc picked {match.group(0)}")
    picked = [c for c in plan["candidates"] if c["stage"] == stage and c["remat"] == remat
              and c["peak_bytes_per_rank"] <= budget]
    if stage == 0 or not picked:
        failures.append(f"the pick (stage {stage}, {remat}) does not fit {budget}")
    # The rule prefers the largest bucket among equals.
    picked.sort(key=lambda c: -c["bucket_bytes"])
    bucket = picked[0]["bucket_bytes"] if picked else 0
    planned_peak = picked[0]["peak_bytes_per_rank"] if picked else None

    report = json.loads(subprocess.run(
        [args.zeroc, model, f"--world-size={RANKS}", f"--zero-stage={stage}", f"--remat={remat}",
         f"--bucket-bytes={bucket}", "--emit=memory-report"],
        check=True, capture_output=True, text=True).stdout)

    log = exe + ".jsonl"
    subprocess.run(mpirun + ["-np", str(RANKS), exe, "--data", data, "--data-format=text",
                             "--steps", str(STEPS), "--seed", "5", "--log-json", log, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(log)]
    rank0 = next(r for r in records if r.get("summary"))["ranks"][0]
    measured = rank0["peak_total_bytes"]
    if measured > budget:
        failures.append(f"measured peak {measured} > budget {budget}")
    if measured != planned_peak or measured != report["peak_bytes_per_rank"]:
        failures.append(f"measured peak {measured}, plan {planned_peak}, "
                        f"report {report['peak_bytes_per_rank']}")
    static = {**report["per_rank_bytes"], **report["transient_bytes"]}
    for key, value in rank0["peak_bytes"].items():
        if value != static[key]:
            failures.append(f"measured {key} {value} != report {static[key]}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"measured peak_total_bytes {measured} <= budget {budget}: equals the plan's peak "
          "and the report's")
    print("the executable the planner picked trains within the budget")


if __name__ == "__main__":
    main()
