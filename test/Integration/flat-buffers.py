# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
"""Executables in Megatron's flat layout (stages 1-3, the default).

A tiny GPT-2 (sizes that divide by neither 3 nor 2: every bucket's shard
cuts members and pads) is compiled at stages 1 and 2 in the default flat
layout for 2 and 3 ranks in fp32 (two of those in bf16, one with two
micro-batches), and at stage 3 for 3 ranks in fp32 and 2 ranks in bf16
(stage 3 with micro-batches: grad-accum.py), and trained for 4 AdamW steps with
gradient clipping. Against the per-tensor layout of the same stage and
world size (--flat-buffers=false; independent code: per-tensor shards,
packs and unpacks):

- the flat executable has the per-bucket buffers and calls
  zrt_adamw_buffer;
- the per-step losses agree within 1e-5 relative in fp32 and 1e-3 in bf16
  (only the order of sums differs: one squared norm per bucket shard
  instead of per tensor);
- every memory category's measured peak equals --emit=memory-report;
- a checkpoint saved by the flat layout after 2 steps resumes in the
  per-tensor layout (and the other way round) with the losses of the
  uninterrupted run: checkpoints hold the logical per-parameter tensors.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402

CONFIG = ["--n-layer", "2", "--n-head", "2", "--n-embd", "20", "--vocab-size", "256",
          "--block-size", "7", "--batch-size", "6", "--lr", "0.003", "--grad-clip", "0.5"]
STEPS = 4


def main():
    args = harness.parse_args(tools=("--zeroc",))
    model = harness.build_model(args, "gpt2", "zeroc.models.gpt2", CONFIG)
    failures = []
    configs = [("fp32", 1e-5, s, n, 1) for s in (1, 2) for n in (2, 3)]
    configs += [("bf16", 1e-3, 1, 2, 1), ("bf16", 1e-3, 2, 3, 1)]
    # Two micro-batches: each one's bucket summed into the sharded buffer.
    configs += [("fp32", 1e-5, 2, 3, 2)]
    # Stage 3: the sharded parameter buffers gathered whole per bucket.
    configs += [("fp32", 1e-5, 3, 3, 1), ("bf16", 1e-3, 3, 2, 1)]
    for precision, tol, stage, ranks, accum in configs:
                tag = f"{precision}-s{stage}-n{ranks}" + (f"-k{accum}" if accum > 1 else "")
                base = [f"--zero-stage={stage}", f"--world-size={ranks}",
                        f"--precision={precision}", f"--grad-accum={accum}"]
                runs = {}
                for layout, flags in (("tensor", base + ["--flat-buffers=false"]), ("flat", base)):
                    exe = os.path.join(args.work, f"{tag}-{layout}")
                    report = harness.compile_executable(args, model, flags, exe)
                    records = harness.train(args, exe, ranks, STEPS)
                    runs[layout] = (exe, harness.losses(records))
                    failures += harness.peak_mismatches(records, report, f"{tag} {layout}")
                # The flat executable is the flat layout: its buffers and
                # one update per bucket shard.
                source = subprocess.run(
                    [args.zeroc, model, *base, "--emit=source"],
                    check=True, capture_output=True, text=True).stdout
                if '"zero.flat0.params"' not in source or "zrt_adamw_buffer(" not in source:
                    failures.append(f"{tag}: the default did not write the flat layout")
                err = harness.worst(runs["flat"][1], runs["tensor"][1])
                if not err <= tol:
                    failures.append(f"{tag}: flat losses {runs['flat'][1]} differ from "
                                    f"the per-tensor layout's {runs['tensor'][1]} by {err:.3g}")
                print(f"{tag}: flat losses within {err:.2g} of the per-tensor layout")
                if precision != "fp32" or ranks != 3 or accum > 1:
                    continue
                # Checkpoints cross layouts: 2 steps saved, resumed in the other.
                for saver, loader in (("flat", "tensor"), ("tensor", "flat")):
                    ckpt = os.path.join(args.work, f"{tag}-{saver}.ckpt")
                    harness.train(args, runs[saver][0], ranks, 2, extra=("--save", ckpt))
                    resumed = harness.losses(harness.train(
                        args, runs[loader][0], ranks, STEPS, extra=("--resume", ckpt)))
                    err = harness.worst(resumed, runs[loader][1][2:])
                    if not err <= tol:
                        failures.append(f"{tag}: saved by {saver}, resumed by {loader}: "
                                        f"{resumed} vs {runs[loader][1][2:]}")
                    print(f"{tag}: saved by the {saver} layout, resumed by the {loader} "
                          f"layout within {err:.2g}")
    harness.finish(failures, f"flat buffers: {len(configs)} configurations train as the per-tensor "
                   "layout, measured peaks equal the report, checkpoints cross layouts")


if __name__ == "__main__":
    main()

# CHECK: fp32-s1-n2: flat losses within
# CHECK: fp32-s1-n3: saved by the flat layout, resumed by the tensor layout
# CHECK: fp32-s2-n3: saved by the tensor layout, resumed by the flat layout
# CHECK: bf16-s2-n3: flat losses within
# CHECK: fp32-s2-n3-k2: flat losses within
# CHECK: fp32-s3-n3: flat losses within
# CHECK: fp32-s3-n3: saved by the flat layout, resumed by the tensor layout
# CHECK: fp32-s3-n3: saved by the tensor layout, resumed by the flat layout
# CHECK: bf16-s3-n2: flat losses within
# CHECK: flat buffers: 9 configurations train as the per-tensor layout, measured peaks equal the report, checkpoints cross layouts
