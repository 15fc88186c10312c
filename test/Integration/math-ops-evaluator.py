# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --bin %zeroc_build/bin --src %zeroc_src --work %t --mpirun "%mpirun"
"""The generic ops of issue 31 compile for the CPU, train, and match the evaluator.

Inputs/math-ops-model.mlir uses every op of TrainMathOps.td (exp, log, tanh,
neg, rsqrt, erf, pow, compare, select, tril, triu, constant) in its forward, and
so, through train-autodiff, their derivatives in its backward. It is compiled
for the CPU back end (ZeRO stage 0, 1 rank: the fused loops print the scalar
formulas, tril/triu and the constants are generated loops) and trained for 3
steps on a token file. The reference evaluator (zeroc-run) runs the
unpartitioned training step of the same model on the same batches (the
executable's sampling formula, zeroc.data.sample_batch), from the same
seed-derived initial weights, chaining its state from step to step. Losses
and the final weights must agree within 1e-5.
"""
import argparse
import json
import os
import subprocess
import sys

from zeroc import data

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import evaluator_reference  # noqa: E402

STEPS, BATCH, BLOCK, VOCAB, SEED = 3, 4, 6, 23, 3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun", required=True)
    args = parser.parse_args()
    model = os.path.join(args.src, "test", "Integration", "Inputs", "math-ops-model.mlir")

    # Token data below the vocabulary: tinyshakespeare's bytes modulo 23.
    text = open(os.path.join(args.src, "data", "tinyshakespeare.txt"), "rb").read()[:20000]
    tokens = [b % VOCAB for b in text]
    token_file = os.path.join(args.work, "tokens.bin")
    data.write_tokens(token_file, tokens)

    # The executable: stage 0 on 1 rank.
    exe = os.path.join(args.work, "math-ops")
    subprocess.run([os.path.join(args.bin, "zeroc"), model, "--zero-stage=0",
                    "--world-size=1", "-o", exe], check=True)
    log = os.path.join(args.work, "math-ops.jsonl")
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
    if failures:
        raise SystemExit("\n".join(failures))
    print("the math-ops executable matches the reference evaluator")


if __name__ == "__main__":
    main()
