# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --zeroc-opt %zeroc_build/bin/zeroc-opt --zeroc-run %zeroc_build/bin/zeroc-run --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: evaluator: 24 configurations (stages 0-3, 1, 2 and 4 ranks, K = 2 and 4) give the losses of K = 1
# CHECK: evaluator: llama with dropout, stage 3 on 2 ranks: K = 2 and 4 give the losses of K = 1
# CHECK: gpt2 stage 0, 4 rank(s), K = 4: losses of K = 1; bytes sent = report
# CHECK: gpt2 stage 1, 2 rank(s), K = 2: losses of K = 1; bytes sent = report
# CHECK: gpt2 stage 2, 2 rank(s), K = 4: losses of K = 1; bytes sent = report
# CHECK: gpt2 stage 3, 4 rank(s), K = 2: losses of K = 1; bytes sent = report
# CHECK: llama dropout stage 2, 2 rank(s), K = 2: losses of K = 1; bytes sent = report
# CHECK: report: stage 0-1 traffic independent of K, stage 2-3 gradient traffic times K
# CHECK: report: activations {{[0-9]+}} bytes at K = 1, {{[0-9]+}} at K = 4 (stage 2; {{[0-9]+}} with its gradient buckets), plus at most the {{[0-9]+}}-byte running sums in stage 0 ({{[0-9]+}})
# CHECK: gradient accumulation keeps the losses of one micro-batch
"""Gradient accumulation (--grad-accum K) changes the schedule, not the numbers.

A tiny GPT-2 (one layer, n_embd 20, block 7; 16 sequences per step, so the
global batch splits over 1, 2 and 4 ranks and then into 1, 2 or 4
micro-batches) takes 10 AdamW steps with gradient clipping (active: the
step-0 norm is above the threshold):

* on the reference evaluator for ZeRO stages 0-3 on 1, 2 and 4 ranks with
  K = 2 and 4 (each partitioned by zeroc-opt --train-pipeline): every
  configuration's per-step losses equal those of K = 1 on one rank within
  1e-5 relative (K micro-batch means, each scaled by 1/K, summed: the same
  mean up to the order of the sums);
* a tiny Llama with dropout (p = 0.1) on the evaluator, stage 3 on 2 ranks:
  K = 2 and 4 give K = 1's losses, so each micro-batch draws the masks of
  the unsplit program (a mask keyed by the micro-batch's local position
  would change them);
* as executables under mpirun, one per stage (compiled once each): the
  losses equal those of the single-rank K = 1 executable within 1e-5, and
  the bytes each rank sends per step (the runtime's count of what it hands
  to MPI) equal the memory report's communication figure for that K, and
  every measured peak (parameters to activations) the report's;
* the report's traffic: stages 0 and 1 send the same bytes for K = 1, 2, 4;
  stages 2 and 3 send K times the reduce-scatters of K = 1 (and stage 3 K
  times the gathers);
* the report's activations: K = 4 keeps one micro-batch's (less than
  K = 1's), and stage 0 adds at most one full-size running sum of the
  gradients (train-fuse-elementwise must not fuse the running sums into
  the last micro-batch's loop, which kept every micro-batch's gradient).

The schedule (one gradient collective per bucket and step in stages 0-1,
one per micro-batch in stages 2-3) is checked in test/Transforms/Accumulate.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import harness  # noqa: E402
from harness import worst  # noqa: E402

STEPS = 10
GPT2 = ["--n-layer", "1", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
        "--block-size", "7", "--batch-size", "16", "--lr", "0.003", "--grad-clip", "0.5"]
LLAMA = ["--n-layer=1", "--dim=40", "--n-head=4", "--n-kv-head=2", "--ffn-dim=76",
         "--vocab-size=256", "--block-size=13", "--batch-size=8", "--grad-clip=1.0",
         "--lr=3e-3", "--dropout=0.1", "--dropout-seed=7"]
TOLERANCE = 1e-5


def main():
    args = harness.parse_args()
    work = args.work
    models = {"gpt2": harness.build_model(args, "gpt2", "zeroc.models.gpt2", GPT2),
              "llama": harness.build_model(args, "llama", "zeroc.models.llama", LLAMA)}
    failures = []

    # The reference evaluator: losses per step (rank 0's results).
    def evaluate(name, stage, ranks, k):
        steps = harness.evaluate(
            args, models[name], f"stage={stage} world-size={ranks} grad-accum={k} "
            "bucket-bytes=4096", ranks, STEPS, f"{name}-eval-s{stage}-n{ranks}-k{k}")
        return [s["results"][0] for s in steps]

    reference = evaluate("gpt2", 0, 1, 1)
    if not reference[0][1] > 0.5:
        failures.append(f"evaluator: step-0 gradient norm {reference[0][1]} does not clip")
    count = 0
    for stage in (0, 1, 2, 3):
        for ranks in (1, 2, 4):
            for k in (2, 4):
                results = evaluate("gpt2", stage, ranks, k)
                count += 1
                gap = worst([r[0] for r in results], [r[0] for r in reference])
                if len(results) != STEPS or gap > TOLERANCE:
                    failures.append(f"evaluator stage {stage}, {ranks} rank(s), K = {k}: "
                                    f"worst relative loss difference {gap:.1e}")
    print(f"evaluator: {count} configurations (stages 0-3, 1, 2 and 4 ranks, K = 2 and 4) "
          "give the losses of K = 1")
    dropout = {k: evaluate("llama", 3, 2, k) for k in (1, 2, 4)}
    gaps = [worst([r[0] for r in dropout[k]], [r[0] for r in dropout[1]]) for k in (2, 4)]
    if max(gaps) > TOLERANCE:
        failures.append(f"evaluator: llama with dropout: worst loss differences {gaps}")
    else:
        print("evaluator: llama with dropout, stage 3 on 2 ranks: K = 2 and 4 give the "
              "losses of K = 1")

    def train(name, stage, ranks, k):
        """Compiles and runs one executable: its losses, bytes sent per step, report."""
        exe = os.path.join(work, f"{name}-s{stage}-n{ranks}-k{k}")
        flags = [f"--zero-stage={stage}", f"--world-size={ranks}", f"--grad-accum={k}",
                 "--bucket-bytes=4096"]
        report = harness.compile_executable(args, models[name], flags, exe)
        records = harness.train(args, exe, ranks, STEPS)
        failures.extend(harness.peak_mismatches(
            records, report, f"{name} stage {stage}, {ranks} rank(s), K = {k}"))
        sent = harness.rank0(records)["bytes_sent"] / STEPS
        return (harness.losses(records), sent,
                report["communication_per_rank_per_step"]["bytes"])

    references = {"gpt2": train("gpt2", 0, 1, 1)[0], "llama": train("llama", 0, 1, 1)[0]}
    for name, stage, ranks, k in (("gpt2", 0, 4, 4), ("gpt2", 1, 2, 2), ("gpt2", 2, 2, 4),
                                  ("gpt2", 3, 4, 2), ("llama", 2, 2, 2)):
        losses, sent, expected = train(name, stage, ranks, k)
        tag = (f"{name}{' dropout' if name == 'llama' else ''} stage {stage}, "
               f"{ranks} rank(s), K = {k}")
        gap = worst(losses, references[name])
        if len(losses) != STEPS or gap > TOLERANCE:
            failures.append(f"{tag}: losses {losses} vs {references[name]} ({gap:.1e})")
        elif sent != expected:
            failures.append(f"{tag}: sent {sent} bytes per step, report {expected}")
        else:
            print(f"{tag}: losses of K = 1; bytes sent = report ({expected:.0f} per step), "
                  "measured peaks = report")

    # The report's traffic for each K: bytes per kind of collective.
    def traffic(stage, k):
        report = harness.memory_report(args, models["gpt2"], [
            f"--zero-stage={stage}", "--world-size=4", f"--grad-accum={k}",
            "--bucket-bytes=4096"])
        step = report["communication_per_rank_per_step"]
        return step["bytes"], {kind: step[kind]["bytes"]
                               for kind in ("all_reduce", "reduce_scatter", "all_gather")}

    count = len(failures)
    for stage in (0, 1, 2, 3):
        base, base_kinds = traffic(stage, 1)
        for k in (2, 4):
            total, kinds = traffic(stage, k)
            expected = dict(base_kinds)
            if stage >= 2:
                expected["reduce_scatter"] *= k
            if stage == 3:
                expected["all_gather"] *= k
            if kinds != expected or (stage <= 1 and total != base):
                failures.append(f"report stage {stage} K = {k}: {kinds}, expected {expected}")
    if len(failures) == count:
        print("report: stage 0-1 traffic independent of K, stage 2-3 gradient traffic "
              "times K")

    # Activations: one micro-batch's, plus (stages 0-1) one full-size
    # running sum of the gradients, not one per micro-batch. Stage 2 is the
    # reference: its micro-batch gradients are computed into the bucket's
    # gradient segment (reported as gradient buckets), so one micro-batch's
    # transient is its activations plus its gradient buckets.
    def memory(stage, k):
        return harness.memory_report(args, models["gpt2"], [
            f"--zero-stage={stage}", "--world-size=2", f"--grad-accum={k}",
            "--bucket-bytes=4096"])
    sums = memory(0, 4)["per_rank_bytes"]["gradients"]  # f32: one gradient per parameter
    reports = {(stage, k): memory(stage, k)["transient_bytes"]
               for stage in (0, 2) for k in (1, 4)}
    act = {key: r["activations"] for key, r in reports.items()}
    one = act[(2, 4)] + reports[(2, 4)]["gradient_buckets"]
    if not (act[(2, 4)] < act[(2, 1)] and one < act[(0, 4)] <= one + sums):
        failures.append(f"activations {act}, one micro-batch {one}, gradients {sums}")
    else:
        print(f"report: activations {act[(2, 1)]} bytes at K = 1, {act[(2, 4)]} at K = 4 "
              f"(stage 2; {one} with its gradient buckets), plus at most the "
              f"{sums}-byte running sums in stage 0 ({act[(0, 4)]})")
    harness.finish(failures, "gradient accumulation keeps the losses of one micro-batch")


if __name__ == "__main__":
    main()
