# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun"
"""Sharded executables on real MPI processes give the single-rank losses.

A tiny GPT-2 with sizes that do not divide by 3 or 4 (n_embd 20, block 7)
is compiled for every ZeRO stage 0-3 and world size 1-4 (each executable
once) and trained for 10 AdamW steps with gradient clipping on byte-level
tinyshakespeare, under mpirun. Every run must reproduce the per-step losses
of the single-rank stage-0 run within 1e-5 relative (the global batch is the
same on every world size; only the order of floating-point sums differs).

Each run's measured figures (from the runtime's allocator accounting and the
counts it passes to MPI) are compared with the static memory report of the
same program: model-state bytes per rank equal it, the bytes sent per step
equal it, and the transient peaks stay within it: gathered parameters in
stage 3, gradient buckets in flight in stage 2.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402

STEPS = 10
CONFIG = ["--n-layer", "2", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
          "--block-size", "7", "--batch-size", "12", "--lr", "0.003",
          "--grad-clip", "0.5"]


def main():
    args = harness.parse_args(tools=("--zeroc",))
    data = os.path.join(args.src, "data", "tinyshakespeare.txt")
    model = os.path.join(args.work, "gpt2.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *CONFIG, "-o", model],
                   check=True)

    failures = []
    reference = None
    for stage in (0, 1, 2, 3):
        for ranks in (1, 2, 3, 4):
            tag = f"stage {stage}, {ranks} rank(s)"
            exe = os.path.join(args.work, f"gpt2-s{stage}-n{ranks}")
            # A small bucket, so that several buckets (and stage-3 groups)
            # are in flight and the bounds below mean something.
            common = [f"--zero-stage={stage}", f"--world-size={ranks}",
                      "--bucket-bytes=4096"]
            subprocess.run([args.zeroc, model, *common, "-o", exe], check=True)
            report = json.loads(subprocess.run(
                [args.zeroc, model, *common, "--emit=memory-report"], check=True,
                capture_output=True, text=True).stdout)
            log = exe + ".jsonl"
            subprocess.run(args.mpirun.split() + ["-np", str(ranks), exe, "--data", data,
                                                  "--data-format=text", "--steps", str(STEPS),
                                                  "--seed", "5", "--log-json", log, "--quiet"],
                           check=True, stdout=subprocess.DEVNULL)
            lines = [json.loads(line) for line in open(log)]
            losses = [l["loss"] for l in lines if "loss" in l]
            summary = next(l for l in lines if l.get("summary"))
            if reference is None:
                reference = losses
            worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
            clipped = lines[0]["grad_norm"] > 0.5
            print(f"{tag}: worst relative loss difference {worst:.1e}"
                  f" (step 0 grad norm {lines[0]['grad_norm']:.3f}, clipping "
                  f"{'active' if clipped else 'inactive'})")
            if len(losses) != STEPS or worst > 1e-5:
                failures.append(f"{tag}: losses {losses} vs {reference}")
            if not clipped:
                failures.append(f"{tag}: clipping was not active")

            # Measured against the static report, rank 0.
            measured = summary["ranks"][0]
            peak = measured["peak_bytes"]
            static = report["per_rank_bytes"]
            for key in ("parameters", "gradients", "optimizer_states"):
                if peak[key] != static[key]:
                    failures.append(f"{tag}: measured {key} {peak[key]} != report {static[key]}")
            sent = measured["bytes_sent"] / STEPS
            expected = report["communication_per_rank_per_step"]["bytes"]
            if abs(sent - expected) > 16 * len(report["collectives"]):
                failures.append(f"{tag}: sent {sent} bytes per step, report {expected}")
            transient = report["transient_bytes"]
            if stage == 3 and peak["gathered_parameters"] > transient["gathered_parameters"]:
                failures.append(f"{tag}: gathered {peak['gathered_parameters']} > report "
                                f"{transient['gathered_parameters']}")
            if stage == 2:
                bound = static["gradients"] + transient["gradient_buckets"]
                if peak["gradients"] + peak["gradient_buckets"] > bound:
                    failures.append(f"{tag}: gradients + buckets in flight "
                                    f"{peak['gradients'] + peak['gradient_buckets']} > {bound}")
    harness.finish(failures, f"16 executables reproduce the single-rank losses over {STEPS} steps")


if __name__ == "__main__":
    main()
