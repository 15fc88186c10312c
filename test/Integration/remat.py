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
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import harness  # noqa: E402

GPT2 = ["--n-layer", "2", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
        "--block-size", "7", "--batch-size", "12", "--lr", "0.003", "--grad-clip", "0.5"]
LLAMA = ["--n-layer=2", "--dim=40", "--n-head=4", "--n-kv-head=2", "--ffn-dim=76",
         "--vocab-size=256", "--block-size=13", "--batch-size=12", "--grad-clip=1.0",
         "--lr=3e-3", "--dropout=0.1", "--dropout-seed=7"]
STEPS = 4
RANKS = 2
POLICIES = ("none", "full", "selective")


def main():
    args = harness.parse_args()
    work = args.work
    models = {"gpt2": harness.build_model(args, "gpt2", "zeroc.models.gpt2", GPT2),
              "llama": harness.build_model(args, "llama", "zeroc.models.llama", LLAMA)}
    failures = []

    # The reference evaluator.
    results = {}
    for policy in POLICIES:
        steps = harness.evaluate(args, models["llama"],
                                 f"stage=3 world-size={RANKS} remat={policy}", RANKS, STEPS,
                                 f"llama-eval-{policy}")
        results[policy] = [s["results"] for s in steps]
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
        report = harness.compile_executable(args, models[name], flags, exe)
        records = harness.train(args, exe, RANKS, STEPS)
        losses = harness.losses(records)
        measured = harness.rank0(records)["peak_bytes"]
        static = {**report["per_rank_bytes"], **report["transient_bytes"]}
        tag = f"{name} stage {stage} {policy}{' ' + ' '.join(extra) if extra else ''}"
        failures.extend(harness.peak_mismatches(records, report, tag))
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
    harness.finish(failures,
                   "rematerialization keeps the losses; measured peaks equal the report")


if __name__ == "__main__":
    main()
