# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --bin %zeroc_build/bin --src %zeroc_src --work %t --mpirun "%mpirun"
"""The generic ops of issue 31 compile for the CPU, train, and match the evaluator.

Inputs/math-ops-model.mlir uses every op of TrainMathOps.td (exp, log, tanh,
neg, rsqrt, pow, compare, select, tril, triu, constant) in its forward, and
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
import struct
import subprocess

from zeroc import checkpoint, data, weights

STEPS, BATCH, BLOCK, VOCAB, SEED = 3, 4, 6, 23, 3


def read_f32_safetensors(path):
    """The F32 tensors of `path` as lists of floats."""
    tensors, _ = weights.load(path)
    return {name: list(struct.unpack(f"<{raw.numel}f", raw.data))
            for name, raw in tensors.items() if raw.dtype == "F32"}


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
    step_mlir = os.path.join(args.work, "step.mlir")
    subprocess.run([os.path.join(args.bin, "zeroc-opt"), model, "--train-autodiff",
                    "--train-optimizer", "-o", step_mlir], check=True)
    state = None
    eval_losses = []
    for step in range(STEPS):
        x, y = data.sample_batch(tokens, step, BATCH, BLOCK)
        xs, ys = sum(x, []), sum(y, [])
        inputs = os.path.join(args.work, f"inputs{step}.safetensors")
        weights.save(inputs, {
            "arg0": weights.RawTensor("I32", (BATCH, BLOCK), struct.pack(f"<{len(xs)}i", *xs)),
            "arg1": weights.RawTensor("I32", (BATCH, BLOCK), struct.pack(f"<{len(ys)}i", *ys)),
            "arg2": weights.RawTensor("I64", (), struct.pack("<q", step)),
        })
        out_state = os.path.join(args.work, f"state{step}.safetensors")
        command = [os.path.join(args.bin, "zeroc-run"), step_mlir, "--inputs", inputs,
                   "--seed", str(SEED), "--save-state", out_state]
        if state:
            command += ["--init", state]
        result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                           text=True).stdout)
        eval_losses.append(result["steps"][0]["results"][0][0])
        state = out_state

    failures = []
    for step, (a, b) in enumerate(zip(exe_losses, eval_losses)):
        print(f"step {step}: executable {a:.7f}  evaluator {b:.7f}")
        if abs(a - b) > 1e-5 * abs(b):
            failures.append(f"step {step}: loss {a} vs {b}")
    exported = os.path.join(args.work, "exported.safetensors")
    checkpoint.export(saved, exported)
    final_exe = read_f32_safetensors(exported)
    final_eval = read_f32_safetensors(state)
    worst = 0.0
    for name, values in final_exe.items():
        reference = final_eval[name]
        worst = max(worst, max(abs(x - y) for x, y in zip(values, reference)))
    print(f"largest weight difference after {STEPS} steps: {worst:.2e}")
    if worst > 1e-5 or len(exe_losses) != STEPS:
        failures.append(f"weights differ by {worst}")
    if failures:
        raise SystemExit("\n".join(failures))
    print("the math-ops executable matches the reference evaluator")


if __name__ == "__main__":
    main()
