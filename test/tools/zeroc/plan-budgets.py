# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --model %zeroc_src/examples/gpt2-tiny.mlir | FileCheck %s
#
# CHECK: 24 candidates: each one's peak, model states, transient peak and bytes sent equal --emit=memory-report's for its flags
# CHECK: candidate step times equal --emit=perf-model-json's
# CHECK: budgets {{.*}}: each pick fits, is the rule's, and its --memory-budget report equals the plan
"""The planner's figures are the memory report's, and its picks follow the rule.

On the hand-written tiny GPT-2 at N = 2:

* every candidate of --emit=plan-json (4 stages x 3 policies x 2 bucket
  sizes) has the peak_bytes_per_rank, model states, transient peak and
  communication bytes of `zeroc --emit=memory-report` run with that
  candidate's --zero-stage, --remat and --bucket-bytes: the planner's
  shared pipeline sections compile the same program as the whole pipeline;
* with --machine=cpu, a candidate's step time is --emit=perf-model-json's;
* for budgets at every distinct peak and one byte below it, the pick fits,
  is the one the rule (docs/planner.md) picks from the figures, computed
  here independently, and `--memory-budget=B --emit=memory-report` (the
  driver compiling the pick) reports the picked peak, at most B.
"""
import argparse
import json
import subprocess
import sys

RANKS = 2
COST = {"none": 0, "selective": 1, "full": 2}


def run(zeroc, model, *flags):
    out = subprocess.run([zeroc, model, f"--world-size={RANKS}", *flags], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def rule(candidates):
    """The picking rule of docs/planner.md, from the figures alone."""
    fits = [c for c in candidates if c["fits"]]
    if not fits:
        return None
    least = min(c["comm_bytes_per_step"] for c in fits)
    near = [c for c in fits if c["comm_bytes_per_step"] <= least + least // 1000]
    return min(near, key=lambda c: (COST[c["remat"]], c["micro_batches"], -c["bucket_bytes"],
                                    c["stage"], c["comm_bytes_per_step"]))


def flags_of(c):
    return [f"--zero-stage={c['stage']}", f"--remat={c['remat']}",
            f"--bucket-bytes={c['bucket_bytes']}"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeroc", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    failures = []

    plan = run(args.zeroc, args.model, "--memory-budget=1GiB", "--emit=plan-json")
    candidates = plan["candidates"]
    if len(candidates) != 24:
        failures.append(f"{len(candidates)} candidates, expected 24")
    for c in candidates:
        report = run(args.zeroc, args.model, *flags_of(c), "--emit=memory-report")
        expected = {
            "peak_bytes_per_rank": report["peak_bytes_per_rank"],
            "model_state_bytes": report["per_rank_bytes"]["model_states"],
            "transient_peak_bytes": report["transient_bytes"]["peak"],
            "comm_bytes_per_step": report["communication_per_rank_per_step"]["bytes"],
        }
        for key, value in expected.items():
            if c[key] != value:
                failures.append(f"{flags_of(c)}: plan {key} {c[key]}, report {value}")
    print(f"{len(candidates)} candidates: each one's peak, model states, transient peak and "
          "bytes sent equal --emit=memory-report's for its flags")

    timed = run(args.zeroc, args.model, "--memory-budget=1GiB", "--machine=cpu",
                "--zero-stage=3", "--emit=plan-json")
    for c in timed["candidates"][::2]:
        model = run(args.zeroc, args.model, *flags_of(c), "--emit=perf-model-json",
                    "--machine=cpu")
        seconds = model["predictions"][0]["step_seconds"]
        if abs(c["step_seconds"] - seconds) > 1e-12 * seconds:
            failures.append(f"{flags_of(c)}: plan step {c['step_seconds']}, model {seconds}")
    print("candidate step times equal --emit=perf-model-json's")

    peaks = sorted({c["peak_bytes_per_rank"] for c in candidates})
    budgets = sorted({b for p in peaks[::2] for b in (p - 1, p)})
    for budget in budgets:
        out = subprocess.run([args.zeroc, args.model, f"--world-size={RANKS}",
                              f"--memory-budget={budget}", "--emit=plan-json"],
                             capture_output=True, text=True)
        figures = [{**c, "fits": c["peak_bytes_per_rank"] <= budget} for c in candidates]
        expected = rule(figures)
        if expected is None:
            if out.returncode == 0 or "no candidate fits" not in out.stderr:
                failures.append(f"budget {budget}: nothing fits, zeroc said {out.stderr!r}")
            continue
        if out.returncode != 0:
            failures.append(f"budget {budget}: {out.stderr}")
            continue
        got = json.loads(out.stdout)
        picked = got["candidates"][got["picked"]]
        if picked["peak_bytes_per_rank"] > budget or picked != expected:
            failures.append(f"budget {budget}: picked {picked}, the rule picks {expected}")
        report = run(args.zeroc, args.model, f"--memory-budget={budget}", "--emit=memory-report")
        if report["peak_bytes_per_rank"] != picked["peak_bytes_per_rank"] or \
                report["stage"] != picked["stage"]:
            failures.append(f"budget {budget}: --memory-budget's report {report['stage']} "
                            f"{report['peak_bytes_per_rank']}, plan {picked}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"budgets {budgets}: each pick fits, is the rule's, and its --memory-budget report "
          "equals the plan")


if __name__ == "__main__":
    main()
