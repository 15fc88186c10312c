# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --work %t | FileCheck %s
#
# CHECK: 3GiB: refused below the stage-3 peak of [[PEAK:[0-9.]+ GiB]] (ZeRO stage 3, --remat=full, 8 micro-batches, 25.00 MiB buckets); fits at --world-size=16
# CHECK: the smallest candidate's peak equals --emit=memory-report's
# CHECK: 5GiB: picks ZeRO stage 3, --remat=full, 2 micro-batches; its --grad-accum=2 report fits
# CHECK: 80GiB: picks ZeRO stage 2, --remat=none
"""The planner on GPT-2 1.5B (bf16, N = 8, 8 sequences of 1024 tokens per rank).

* 3 GiB is below every candidate's peak (with full rematerialization,
  the policy of the smallest), stage 3's with 8 micro-batches the
  smallest: zeroc refuses with that peak, the budget it needs and the
  world size (16) at which it fits, exit status 1 and the plan on stderr
  only; the refused plan's smallest peak equals the peak_bytes_per_rank of
  --emit=memory-report for the same flags.
* 5 GiB fits nothing at one micro-batch: the planner's search over
  micro-batch counts finds stage 3 with full rematerialization and 2
  micro-batches (the least sent among those that fit), and
  --emit=memory-report with those flags and --grad-accum=2 confirms the
  peak, under the budget.
* 80 GiB fits every candidate: the pick is stage 2 without recomputation
  (at 25 MiB buckets: every stage and policy; at the same traffic the rule
  prefers stage 2, then 1, then 0).

The module is built here (GPT-2 1558M preset, global batch 64): building
is cheap; the plans compile 16, 46 and 12 candidates (about 30 s of CPU).
"""
import argparse
import json
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeroc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    model = os.path.join(args.work, "g1558.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--preset", "1558M", "--dtype",
                    "bf16", "--batch-size", "64", "-o", model], check=True)
    flags = [args.zeroc, model, "--world-size=8"]
    failures = []

    out = os.path.join(args.work, "plan.json")
    refused = subprocess.run(flags + ["--memory-budget=3GiB", "--remat=full",
                                      "--bucket-bytes=26214400", "--emit=plan-json", "-o", out],
                             capture_output=True, text=True)
    first, _, rest = refused.stderr.partition("\n")
    match = re.fullmatch(
        r"zeroc: error: --memory-budget=3GiB: no candidate fits a budget of 3\.00 GiB per rank: "
        r"the smallest peak is ([0-9.]+ GiB) \((ZeRO stage 3, --remat=full, 8 micro-batches, "
        r"25\.00 MiB buckets)\) at --world-size=8; it fits with --memory-budget=[0-9.]+GiB or "
        r"more, or at --world-size=16 \(peak [0-9.]+ GiB\)", first)
    if refused.returncode != 1 or not match or os.path.exists(out):
        sys.exit(f"refusal: status {refused.returncode}, {refused.stderr[:600]!r}")
    plan = json.loads(rest)
    smallest = plan["candidates"][plan["smallest"]]
    stage3 = [c["peak_bytes_per_rank"] for c in plan["candidates"] if c["stage"] == 3]
    if plan["picked"] is not None or min(stage3) != smallest["peak_bytes_per_rank"] or \
            smallest["peak_bytes_per_rank"] <= 3 << 30 or plan.get("fit_world_size") != 16:
        failures.append(f"refused plan: {plan}")
    print(f"3GiB: refused below the stage-3 peak of {match.group(1)} ({match.group(2)}); "
          "fits at --world-size=16")

    report = json.loads(subprocess.run(
        flags + ["--zero-stage=3", "--remat=full", "--grad-accum=8", "--emit=memory-report"],
        check=True, capture_output=True, text=True).stdout)
    if report["peak_bytes_per_rank"] != smallest["peak_bytes_per_rank"] or \
            report["communication_per_rank_per_step"]["bytes"] != smallest["comm_bytes_per_step"]:
        failures.append(f"report {report['peak_bytes_per_rank']}, plan {smallest}")
    print("the smallest candidate's peak equals --emit=memory-report's")

    # 5 GiB: nothing fits at one micro-batch; the search over counts does.
    plan = json.loads(subprocess.run(
        flags + ["--memory-budget=5GiB", "--bucket-bytes=26214400", "--emit=plan-json"],
        check=True, capture_output=True, text=True).stdout)
    picked = plan["candidates"][plan["picked"]]
    ones = [c for c in plan["candidates"] if c["micro_batches"] == 1]
    report = json.loads(subprocess.run(
        flags + [f"--zero-stage={picked['stage']}", f"--remat={picked['remat']}",
                 f"--grad-accum={picked['micro_batches']}", "--emit=memory-report"],
        check=True, capture_output=True, text=True).stdout)
    if (picked["stage"], picked["remat"], picked["micro_batches"]) != (3, "full", 2) or \
            any(c["fits"] for c in ones) or \
            report["peak_bytes_per_rank"] != picked["peak_bytes_per_rank"] or \
            report["peak_bytes_per_rank"] > 5 << 30:
        failures.append(f"5GiB: picked {picked}, report {report['peak_bytes_per_rank']}")
    print(f"5GiB: picks ZeRO stage {picked['stage']}, --remat={picked['remat']}, "
          f"{picked['micro_batches']} micro-batches; its --grad-accum=2 report fits")

    # Every stage and policy at 25 MiB buckets (12 candidates, to halve the
    # time; the bucket dimension is tested on the tiny model).
    generous = subprocess.run(flags + ["--memory-budget=80GiB", "--bucket-bytes=26214400",
                                       "--emit=plan"], check=True,
                              capture_output=True, text=True).stdout
    picked = re.search(r"^picked \(\*\): (ZeRO stage \d, --remat=\w+)", generous, re.M)
    if not picked or picked.group(1) != "ZeRO stage 2, --remat=none":
        failures.append(f"80GiB: {generous}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"80GiB: picks {picked.group(1)}")


if __name__ == "__main__":
    main()
