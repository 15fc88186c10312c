# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --zeroc-opt %zeroc_build/bin/zeroc-opt --zeroc-run %zeroc_build/bin/zeroc-run --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: evaluator: 16 configurations
# CHECK: dropout changes the losses
# CHECK: executables: stage 0 on 1, stage 2 on 2, stage 3 on 4 ranks
# CHECK: evaluation runs without dropout
# CHECK: sampling runs without dropout
# CHECK: dropout keeps the invariant
"""Dropout keeps "any stage, any world size, the losses of one rank".

A tiny Llama (the builder's, with dropout p = 0.1 after every attention and
MLP; 12 sequences, so the global batch splits over 1-4 ranks) takes 5 AdamW
steps:

* on the reference evaluator for ZeRO stages 0-3 on 1-4 ranks, each
  partitioned by zeroc-opt --train-pipeline: every configuration's per-step
  losses equal those of stage 0 on one rank to 1e-6 relative (f32
  reassociation); the same model without dropout gives losses that differ
  by more than 1e-3, so the masks are on and are the same everywhere (a
  mask that depended on the rank or the local batch would change them);
* as executables under mpirun (stage 0 on 1 rank, stage 2 on 2, stage 3 on
  4), which must agree with each other to 1e-5, and whose measured peak
  bytes per category (parameters to activations) equal the static memory
  report's;
* evaluation (--eval-every) runs the forward function without dropout: the
  step-0 validation loss of the dropout model equals the p = 0 model's;
* sampling (--sample) runs @logits without dropout: both models write the
  same text from the same weights.

The kept fraction and the 1/(1-p) scaling are checked statistically by
zeroc-rt-kernel-tests (test/Runtime/Kernels) and the mask against a Python
Philox-4x32-10 by test/Evaluator/llama-ops.mlir; gradients by finite
differences with the mask fixed in test/Transforms/Autodiff/gradcheck-llama.mlir.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import harness  # noqa: E402
from harness import mpirun, worst  # noqa: E402

SIZES = ["--n-layer=2", "--dim=40", "--n-head=4", "--n-kv-head=2", "--ffn-dim=76",
         "--vocab-size=256", "--block-size=13", "--batch-size=12", "--grad-clip=1.0",
         "--lr=3e-3"]
STEPS = 5


def main():
    args = harness.parse_args()
    work = args.work
    models = {name: harness.build_model(args, name, "zeroc.models.llama", [*SIZES, *extra])
              for name, extra in (("dropout", ["--dropout=0.1", "--dropout-seed=7"]),
                                  ("plain", []))}
    failures = []

    def evaluate(mlir, stage, ranks):
        steps = harness.evaluate(args, mlir, f"stage={stage} world-size={ranks}", ranks,
                                 STEPS, f"{os.path.basename(mlir)}-s{stage}-n{ranks}")
        # Every rank reports the global mean loss.
        return [[s["results"][r][0] for s in steps] for r in range(ranks)]

    reference = evaluate(models["dropout"], 0, 1)[0]
    spread = 0.0
    for stage in range(4):
        for ranks in range(1, 5):
            for r, losses in enumerate(evaluate(models["dropout"], stage, ranks)):
                w = worst(losses, reference)
                spread = max(spread, w)
                if w > 1e-6:
                    failures.append(f"evaluator stage {stage} N={ranks} rank {r}: losses "
                                    f"differ from one rank's by {w:.2e}")
    print(f"evaluator: 16 configurations (stages 0-3, 1-4 ranks) give the single-rank "
          f"losses to {spread:.2e}")
    plain = evaluate(models["plain"], 0, 1)[0]
    changed = worst(plain, reference)
    print(f"dropout changes the losses by {changed:.2e} (relative) over {STEPS} steps")
    if changed < 1e-3:
        failures.append(f"dropout p = 0.1 changes the losses by only {changed:.2e}")

    # Executables under mpirun.
    text = harness.text_data(args)
    logs = []
    for stage, ranks in ((0, 1), (2, 2), (3, 4)):
        exe = os.path.join(work, f"dropout-s{stage}-n{ranks}")
        # The new ops have their place in the static memory report: every
        # category the runtime measured on rank 0 equals it.
        report = harness.compile_executable(
            args, models["dropout"], [f"--zero-stage={stage}", f"--world-size={ranks}"], exe)
        records = harness.train(args, exe, ranks, STEPS,
                                extra=["--save", exe + ".saved"] if ranks == 1 else [])
        logs.append(harness.losses(records))
        failures.extend(harness.peak_mismatches(records, report, f"stage {stage} N={ranks}"))
    w = max(worst(losses, logs[0]) for losses in logs[1:])
    print(f"executables: stage 0 on 1, stage 2 on 2, stage 3 on 4 ranks agree to {w:.2e}")
    if w > 1e-5 or any(len(losses) != STEPS for losses in logs):
        failures.append(f"executables differ by {w:.2e}")

    # Evaluation and sampling: no dropout.
    val = {}
    for name in ("dropout", "plain"):
        exe = os.path.join(work, f"{name}-eval")
        subprocess.run([args.zeroc, models[name], "-o", exe], check=True)
        records = harness.train(args, exe, 1, 1,
                                extra=["--eval-every", "1", "--val-data", text])
        val[name] = [r["val_loss"] for r in records if "val_loss" in r][0]
    print(f"evaluation runs without dropout: step-0 validation loss {val['dropout']:.6f} "
          f"(p = 0.1) and {val['plain']:.6f} (p = 0)")
    if abs(val["dropout"] - val["plain"]) > 1e-6 * abs(val["plain"]):
        failures.append("the validation loss depends on dropout")
    saved = os.path.join(work, "dropout-s0-n1.saved")  # --init DIR: its weights
    samples = []
    for name in ("dropout", "plain"):
        run = subprocess.run(mpirun(args) + ["-np", "1", os.path.join(work, f"{name}-eval"),
                                             "--init", saved, "--sample", "30", "--seed",
                                             "2", "--prompt", "ROMEO:"],
                             check=True, capture_output=True)
        samples.append(run.stdout)
    print(f"sampling runs without dropout: {len(samples[0])} bytes, "
          f"{'the same' if samples[0] == samples[1] else 'DIFFERENT'} text")
    if samples[0] != samples[1] or len(samples[0]) < 20:
        failures.append("sampling depends on dropout")
    harness.finish(failures, "dropout keeps the invariant")


if __name__ == "__main__":
    main()
