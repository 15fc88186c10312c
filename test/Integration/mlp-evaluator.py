# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --bin %zeroc_build/bin --src %zeroc_src --work %t --mpirun "%mpirun"
"""A model that is not a GPT compiles, trains, and matches the evaluator.

examples/mlp.mlir (an MLP language model with ReLU and cross-entropy) is
compiled for ZeRO stage 2 on 2 ranks and trained for 3 steps on a token file
under mpirun. The reference evaluator (zeroc-run) runs the single-rank,
unpartitioned training step of the same model on the same batches (the
executable's sampling formula, recomputed here), from the same seed-derived
initial weights, chaining its state from step to step. Losses and the final
weights must agree within 1e-5.
"""
import argparse
import json
import os
import struct
import subprocess

STEPS, BATCH, BLOCK, VOCAB, SEED = 3, 6, 5, 37, 3


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_f32_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        out[name] = list(struct.unpack(f"<{(end - begin) // 4}f", data[begin:end]))
    return out


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
    data = os.path.join(args.work, "tokens.bin")
    with open(data, "wb") as f:
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))

    # The executable: stage 2 on 2 ranks.
    exe = os.path.join(args.work, "mlp")
    subprocess.run([os.path.join(args.bin, "zeroc"), model, "--zero-stage=2",
                    "--world-size=2", "-o", exe], check=True)
    log = os.path.join(args.work, "mlp.jsonl")
    saved = os.path.join(args.work, "saved")
    subprocess.run(args.mpirun.split() + ["-np", "2", exe, "--data", data, "--steps", str(STEPS),
                                          "--seed", str(SEED), "--log-json", log, "--save", saved,
                                          "--quiet"], check=True, stdout=subprocess.DEVNULL)
    exe_losses = [json.loads(l)["loss"] for l in open(log) if '"loss"' in l]

    # The evaluator: the unpartitioned step, one batch at a time.
    step_mlir = os.path.join(args.work, "step.mlir")
    subprocess.run([os.path.join(args.bin, "zeroc-opt"), model, "--train-autodiff",
                    "--train-optimizer", "-o", step_mlir], check=True)
    state = None
    eval_losses = []
    for step in range(STEPS):
        xs, ys = [], []
        for i in range(BATCH):
            start = ((step * BATCH + i) * BLOCK) % (len(tokens) - BLOCK - 1)
            xs += tokens[start:start + BLOCK]
            ys += tokens[start + 1:start + BLOCK + 1]
        inputs = os.path.join(args.work, f"inputs{step}.safetensors")
        write_safetensors(inputs, {
            "arg0": ("I32", [BATCH, BLOCK], struct.pack(f"<{len(xs)}i", *xs)),
            "arg1": ("I32", [BATCH, BLOCK], struct.pack(f"<{len(ys)}i", *ys)),
            "arg2": ("I64", [], struct.pack("<q", step)),
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
    final_exe = read_f32_safetensors(os.path.join(saved, "model.safetensors"))
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
    print("the MLP executable matches the reference evaluator")


if __name__ == "__main__":
    main()
