# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --bin %zeroc_build/bin --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
# CHECK: step 0: executable
# CHECK: step 2: executable
# CHECK: the generic-ops executable matches the reference evaluator
"""A model written with the generic ops compiles for the CPU, trains, and
matches the evaluator.

Inputs/generic-model.mlir uses every op of TrainGenericOps.td as an ATen
import writes them: train.embedding with padding_idx, a layer norm from
train.mean and train.var, train.amax (a max-pool over time) and the loss as
-mean(gather(log_softmax(logits), targets)). It is compiled with zeroc for
one rank and trained for 3 steps on a token file; the reference evaluator
(zeroc-run) runs the unpartitioned training step of the same model on the
same batches (zeroc.data.sample_batch) from the same seed-derived weights.
Losses and final weights must agree within 1e-5 (relative for the losses),
and the generated C++ must call the generic kernels.
"""
import argparse
import json
import os
import subprocess
import sys

from zeroc import data

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import evaluator_reference  # noqa: E402

STEPS, BATCH, BLOCK, VOCAB, SEED = 3, 6, 5, 37, 3
KERNELS = ("zrt_reduce_var(", "zrt_reduce_max(", "zrt_reduce_max_grad(",
           "zrt_log_softmax(", "zrt_gather(", "zrt_gather_grad(",
           "zrt_embedding_grad(")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun", required=True)
    args = parser.parse_args()
    model = os.path.join(args.src, "test", "Integration", "Inputs",
                         "generic-model.mlir")

    # Token data below the vocabulary (0, the padding row, included).
    text = open(os.path.join(args.src, "data", "tinyshakespeare.txt"), "rb").read()[:20000]
    tokens = [b % VOCAB for b in text]
    token_file = os.path.join(args.work, "tokens.bin")
    data.write_tokens(token_file, tokens)

    # The generated C++ calls the generic kernels (--raise=false: train-raise
    # would turn the written-out loss and norm into the fast ops).
    source = os.path.join(args.work, "generic.cpp")
    subprocess.run([os.path.join(args.bin, "zeroc"), model, "--raise=false",
                    "--emit=source", "-o", source], check=True)
    text = open(source).read()
    missing = [k for k in KERNELS if k not in text]
    if missing:
        raise SystemExit(f"the generated C++ does not call {missing}")

    # The executable, on one rank.
    exe = os.path.join(args.work, "generic")
    subprocess.run([os.path.join(args.bin, "zeroc"), model, "--raise=false",
                    "-o", exe], check=True)
    log = os.path.join(args.work, "generic.jsonl")
    saved = os.path.join(args.work, "saved")
    subprocess.run(args.mpirun.split() + ["-np", "1", exe, "--data", token_file,
                                          "--steps", str(STEPS), "--seed", str(SEED),
                                          "--log-json", log, "--save", saved, "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    exe_losses = [json.loads(l)["loss"] for l in open(log) if '"loss"' in l]

    # The evaluator: the unpartitioned step, one batch at a time.
    eval_losses, state = evaluator_reference.evaluator_losses(
        args.bin, model, args.work, tokens, STEPS, BATCH, BLOCK, SEED)
    failures = evaluator_reference.compare(exe_losses, eval_losses, saved, state,
                                           args.work, STEPS)
    padded = sum(sum(data.sample_batch(tokens, step, BATCH, BLOCK)[0], []).count(0)
                 for step in range(STEPS))
    print(f"padding tokens in the batches: {padded}")
    if failures:
        raise SystemExit("\n".join(failures))
    print("the generic-ops executable matches the reference evaluator")


if __name__ == "__main__":
    main()
