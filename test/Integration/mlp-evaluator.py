# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --bin %zeroc_build/bin --src %zeroc_src --work %t --mpirun "%mpirun"
"""A model that is not a GPT compiles, trains, and matches the evaluator.

examples/mlp.mlir (an MLP language model with ReLU and cross-entropy) is
compiled for ZeRO stage 2 on 2 ranks and trained for 3 steps on a token file
under mpirun. The reference evaluator (zeroc-run) runs the single-rank,
unpartitioned training step of the same model on the same batches (the
executable's sampling formula, zeroc.data.sample_batch), from the same
seed-derived initial weights, chaining its state from step to step. Losses and the final
weights must agree within 1e-5.
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun", required=True)
    args = parser.parse_args()
    model = os.path.join(args.src, "examples", "mlp.mlir")

    # Token data below the vocabulary: tinyshakespeare's bytes modulo 37.
    text = open(os.path.join(args.src, "data", "tinyshakespeare.txt"), "rb").read()[:20000]
    tokens = [b % VOCAB for b in text]
    token_file = os.path.join(args.work, "tokens.bin")
    data.write_tokens(token_file, tokens)

    # The executable: stage 2 on 2 ranks.
    exe = os.path.join(args.work, "mlp")
    subprocess.run([os.path.join(args.bin, "zeroc"), model, "--zero-stage=2",
                    "--world-size=2", "-o", exe], check=True)
    log = os.path.join(args.work, "mlp.jsonl")
    saved = os.path.join(args.work, "saved")
    subprocess.run(args.mpirun.split() + ["-np", "2", exe, "--data", token_file,
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
    print("the MLP executable matches the reference evaluator")


if __name__ == "__main__":
    main()
