# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --zeroc-opt %zeroc_build/bin/zeroc-opt --zeroc-run %zeroc_build/bin/zeroc-run --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: evaluator: llama stage 3 N=2: full and selective give the losses and gradient norms of none, bit for bit
# CHECK: gpt2 stage 0: full and selective give the losses of none, bit for bit
# CHECK: gpt2 stage 3: full and selective give the losses of none, bit for bit
# CHECK: llama stage 0: full and selective give the losses of none, bit for bit
# CHECK: llama stage 3: full and selective give the losses of none, bit for bit
# CHECK: gpt2 bf16 stage 0 full: measured equals the report
# CHECK: rematerialization keeps the losses; measured peaks equal the report
"""Rematerialization changes memory, not the numbers.

The tiny GPT-2 of executables.py and a tiny Llama with dropout (p = 0.1
after every attention and MLP, so recomputed dropouts must draw the
forward's masks) are compiled with --remat=none, full and selective at ZeRO
stages 0 and 3 on 2 ranks (each executable once) and trained for 4 AdamW
steps with clipping under mpirun:

* the per-step losses of full and selective equal none's bit for bit (the
  clones compute the same ops on the same operands, in fp32);
* every per-category peak the runtime measures on rank 0 (parameters to
  activations) equals the static memory report of the same program, and
  the activation peak drops: full < selective < none;
* the reference evaluator gives the same results (losses and gradient
  norms) for the Llama at stage 3 with each policy;
* in bf16 (GPT-2, stage 0, full) the measured peaks equal the report too;
  there the losses are not compared bit for bit (a clone with one reader is
  fused into its loop, where the forward value was rounded to bf16).

The IR of each policy is checked in test/Transforms/Remat.
"""
import argparse
import json
import os
import subprocess
import sys

GPT2 = ["--n-layer", "2", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
        "--block-size", "7", "--batch-size", "12", "--lr", "0.003", "--grad-clip", "0.5"]
LLAMA = ["--n-layer=2", "--dim=40", "--n-head=4", "--n-kv-head=2", "--ffn-dim=76",
         "--vocab-size=256", "--block-size=13", "--batch-size=12", "--grad-clip=1.0",
         "--lr=3e-3", "--dropout=0.1", "--dropout-seed=7"]
STEPS = 4
RANKS = 2
POLICIES = ("none", "full", "selective")


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--zeroc", "--zeroc-opt", "--zeroc-run", "--src", "--work", "--mpirun"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    work = args.work
    # Open MPI's session folder under this test's own TMPDIR.
    mpirun = ["env", f"TMPDIR={work}", *args.mpirun.split()]
    data = os.path.join(args.src, "data", "tinyshakespeare.txt")
    models = {}
    for name, module, sizes in (("gpt2", "zeroc.models.gpt2", GPT2),
                                ("llama", "zeroc.models.llama", LLAMA)):
        models[name] = os.path.join(work, f"{name}.mlir")
        subprocess.run([sys.executable, "-m", module, *sizes, "-o", models[name]], check=True)
    failures = []

    # The reference evaluator.
    results = {}
    for policy in POLICIES:
        step = os.path.join(work, f"llama-eval-{policy}.mlir")
        subprocess.run([args.zeroc_opt, models["llama"],
                        f"--train-pipeline=stage=3 world-size={RANKS} remat={policy}",
                        "-o", step], check=True)
        run = subprocess.run([args.zeroc_run, step, "--ranks", str(RANKS), "--steps",
                              str(STEPS), "--seed", "3"], check=True, capture_output=True,
                             text=True)
        results[policy] = [s["results"] for s in json.loads(run.stdout)["steps"]]
    if all(results[p] == results["none"] for p in POLICIES):
        print(f"evaluator: llama stage 3 N={RANKS}: full and selective give the losses and "
              "gradient norms of none, bit for bit")
    else:
        failures.append(f"evaluator: {results}")

    def train(name, stage, policy, extra=()):
        """Compiles and runs one executable: its losses, measured peaks and report."""
        exe = os.path.join(work, f"{name}-s{stage}-{policy}{''.join(extra)}")
        flags = [f"--zero-stage={stage}", f"--world-size={RANKS}", f"--remat={policy}",
                 *extra]
        subprocess.run([args.zeroc, models[name], *flags, "-o", exe], check=True)
        report = json.loads(subprocess.run(
            [args.zeroc, models[name], *flags, "--emit=memory-report"], check=True,
            capture_output=True, text=True).stdout)
        log = exe + ".jsonl"
        subprocess.run(mpirun + ["-np", str(RANKS), exe, "--data", data, "--data-format=text",
                                 "--steps", str(STEPS), "--seed", "5", "--log-json", log,
                                 "--quiet"], check=True, stdout=subprocess.DEVNULL)
        records = [json.loads(line) for line in open(log)]
        losses = [r["loss"] for r in records if "loss" in r]
        measured = next(r for r in records if r.get("summary"))["ranks"][0]["peak_bytes"]
        static = {**report["per_rank_bytes"], **report["transient_bytes"]}
        tag = f"{name} stage {stage} {policy}{' ' + ' '.join(extra) if extra else ''}"
        for key, value in measured.items():
            if value != static[key]:
                failures.append(f"{tag}: measured {key} {value} != report {static[key]}")
        if len(losses) != STEPS:
            failures.append(f"{tag}: {len(losses)} losses")
        return losses, measured["activations"], static["activations"]

    for name in ("gpt2", "llama"):
        for stage in (0, 3):
            runs = {policy: train(name, stage, policy) for policy in POLICIES}
            losses = {policy: run[0] for policy, run in runs.items()}
            figures = ", ".join(f"{policy} {run[1]}" for policy, run in runs.items())
            if all(losses[p] == losses["none"] for p in POLICIES):
                print(f"{name} stage {stage}: full and selective give the losses of none, "
                      f"bit for bit; measured activation peaks (bytes): {figures}")
            else:
                failures.append(f"{name} stage {stage}: losses {losses}")
            peaks = [runs[p][1] for p in ("full", "selective", "none")]
            if not peaks[0] < peaks[1] < peaks[2]:
                failures.append(f"{name} stage {stage}: activation peaks {figures} are not "
                                "full < selective < none")

    count = len(failures)
    train("gpt2", 0, "full", ("--precision=bf16",))
    if len(failures) == count:
        print("gpt2 bf16 stage 0 full: measured equals the report")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("rematerialization keeps the losses; measured peaks equal the report")


if __name__ == "__main__":
    main()
