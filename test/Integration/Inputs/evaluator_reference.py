"""The reference evaluator (zeroc-run) as the oracle of an executable trained
on a token file: mlp-evaluator.py, math-ops-evaluator.py and generic-ops.py.

The evaluator runs the unpartitioned training step of the model one batch at
a time, on the executable's batches (zeroc.data.sample_batch) from the same
seed-derived initial weights, chaining its state from step to step; the
executable's losses and final weights must agree with it within 1e-5.
"""
import json
import os
import struct
import subprocess

from zeroc import checkpoint, data, weights


def read_f32_safetensors(path):
    """The F32 tensors of `path` as lists of floats."""
    tensors, _ = weights.load(path)
    return {name: list(struct.unpack(f"<{raw.numel}f", raw.data))
            for name, raw in tensors.items() if raw.dtype == "F32"}


def evaluator_losses(bin_dir, model, work, tokens, steps, batch, block, seed):
    """The evaluator's loss of each step and the safetensors file of its
    state after the last one."""
    step_mlir = os.path.join(work, "step.mlir")
    subprocess.run([os.path.join(bin_dir, "zeroc-opt"), model, "--train-autodiff",
                    "--train-optimizer", "-o", step_mlir], check=True)
    state = None
    losses = []
    for step in range(steps):
        x, y = data.sample_batch(tokens, step, batch, block)
        xs, ys = sum(x, []), sum(y, [])
        inputs = os.path.join(work, f"inputs{step}.safetensors")
        weights.save(inputs, {
            "arg0": weights.RawTensor("I32", (batch, block), struct.pack(f"<{len(xs)}i", *xs)),
            "arg1": weights.RawTensor("I32", (batch, block), struct.pack(f"<{len(ys)}i", *ys)),
            "arg2": weights.RawTensor("I64", (), struct.pack("<q", step)),
        })
        out_state = os.path.join(work, f"state{step}.safetensors")
        command = [os.path.join(bin_dir, "zeroc-run"), step_mlir, "--inputs", inputs,
                   "--seed", str(seed), "--save-state", out_state]
        if state:
            command += ["--init", state]
        result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                           text=True).stdout)
        losses.append(result["steps"][0]["results"][0][0])
        state = out_state
    return losses, state


def compare(exe_losses, eval_losses, saved, state, work, steps):
    """Prints the per-step losses and the largest final weight difference
    between the executable (its --save checkpoint `saved`) and the evaluator
    (its `state`); returns a message per disagreement beyond 1e-5."""
    failures = []
    for step, (a, b) in enumerate(zip(exe_losses, eval_losses)):
        print(f"step {step}: executable {a:.7f}  evaluator {b:.7f}")
        if abs(a - b) > 1e-5 * abs(b):
            failures.append(f"step {step}: loss {a} vs {b}")
    exported = os.path.join(work, "exported.safetensors")
    checkpoint.export(saved, exported)
    final_exe = read_f32_safetensors(exported)
    final_eval = read_f32_safetensors(state)
    worst = 0.0
    for name, values in final_exe.items():
        reference = final_eval[name]
        worst = max(worst, max(abs(x - y) for x, y in zip(values, reference)))
    print(f"largest weight difference after {steps} steps: {worst:.2e}")
    if worst > 1e-5 or len(exe_losses) != steps:
        failures.append(f"weights differ by {worst}")
    return failures
