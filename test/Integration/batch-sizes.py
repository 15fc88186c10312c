# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: N = 1: --micro-batch-size=2 on the batch-4 model = the batch-2 model: same program, same losses
# CHECK: N = 2: --micro-batch-size=2 on the batch-4 model = the batch-4 model: same program, same losses
# CHECK: N = 3: --micro-batch-size=2 on the batch-4 model = the batch-6 model: same program, same losses
# CHECK: N = 4: --micro-batch-size=2 on the batch-4 model = the batch-8 model: same program, same losses
# CHECK: N = 2, --global-batch-size=12 --grad-accum=2 on the batch-4 model = the batch-12 model with --grad-accum=2: same losses
# CHECK: one model file trains for any world size
"""zeroc --micro-batch-size and --global-batch-size make the model file's
batch a default.

A tiny GPT-2 built with --batch-size 4 is compiled with --micro-batch-size=2
for N = 1, 2, 3 and 4 ranks (global batch 2N; before the flag, N = 3 could
not split the batch of 4). Each must equal the model rebuilt with
--batch-size 2N and compiled for N ranks: the same per-rank program
(--emit=mlir, text identical) and, as executables under mpirun from the same
seed and data, the same per-step losses (to 1e-6 relative). Then
--global-batch-size=12 --grad-accum=2 on 2 ranks (a micro-batch of 3
sequences derived) trains as the model rebuilt with --batch-size 12 and
--grad-accum=2.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402

STEPS = 3
SIZES = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8"]


def build(args, batch):
    return harness.build_model(args, f"gpt2-b{batch}", "zeroc.models.gpt2",
                               [*SIZES, "--batch-size", str(batch)])


def per_rank_program(args, model, flags):
    run = subprocess.run([args.zeroc, model, *flags, "--emit=mlir"], check=True,
                         capture_output=True, text=True)
    return run.stdout


def losses(args, model, flags, ranks, tag):
    exe = os.path.join(args.work, tag)
    subprocess.run([args.zeroc, model, *flags, "-o", exe], check=True)
    log = exe + ".jsonl"
    subprocess.run(harness.mpirun(args) + ["-np", str(ranks), exe, "--data",
                                           harness.text_data(args), "--data-format=text",
                                           "--steps", str(STEPS), "--log-json", log,
                                           "--quiet"], check=True)
    return [json.loads(line)["loss"] for line in open(log) if '"loss"' in line]


def main():
    args = harness.parse_args(tools=("--zeroc",))
    failures = []
    model = build(args, 4)
    for ranks in (1, 2, 3, 4):
        batch = 2 * ranks
        rebuilt = build(args, batch) if batch != 4 else model
        flags = [f"--world-size={ranks}", "--zero-stage=2" if ranks > 1 else "--zero-stage=0"]
        mine = per_rank_program(args, model, [*flags, "--micro-batch-size=2"])
        theirs = per_rank_program(args, rebuilt, flags)
        if mine != theirs:
            failures.append(f"N = {ranks}: the per-rank programs differ")
        a = losses(args, model, [*flags, "--micro-batch-size=2"], ranks, f"micro-n{ranks}")
        b = losses(args, rebuilt, flags, ranks, f"rebuilt-n{ranks}")
        if len(a) != STEPS or len(b) != STEPS or harness.worst(a, b) > 1e-6:
            failures.append(f"N = {ranks}: losses {a} != {b}")
        else:
            print(f"N = {ranks}: --micro-batch-size=2 on the batch-4 model = the batch-{batch} "
                  f"model: same program, same losses")
    rebuilt = build(args, 12)
    a = losses(args, model, ["--world-size=2", "--global-batch-size=12", "--grad-accum=2"], 2,
               "global-n2")
    b = losses(args, rebuilt, ["--world-size=2", "--grad-accum=2"], 2, "rebuilt12-n2")
    if len(a) != STEPS or harness.worst(a, b) > 1e-6:
        failures.append(f"--global-batch-size=12: losses {a} != {b}")
    else:
        print("N = 2, --global-batch-size=12 --grad-accum=2 on the batch-4 model = the batch-12 "
              "model with --grad-accum=2: same losses")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("one model file trains for any world size")


if __name__ == "__main__":
    main()
