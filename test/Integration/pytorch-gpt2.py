# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun"
"""A GPT-2 trained by zeroc's executables and by PyTorch give the same losses.

The model is nanoGPT's GPT-2 in plain PyTorch (Debian's python3-torch, run on
the CPU): the importer tests' GPT of test/python/Inputs/torch_models.py,
gelu="tanh", built for zeroc by its model builder with the same sizes. Both
start from the same weights (drawn by PyTorch with nanoGPT's initialization,
saved as safetensors and passed with --init), read the same byte-level batches
of tinyshakespeare with the executable's sampling formula
(zeroc.data.sample_batch), and take 10 AdamW steps with gradient clipping. The
per-step losses must agree within 1e-4 relative for ZeRO stage 0 on one rank
and stage 3 on two ranks, and the weights of the checkpoint the executable
saves, exported (python3 -m zeroc checkpoint export), load into the PyTorch
model with strict load_state_dict.
"""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python", "Inputs"))
import torch_models  # noqa: E402
from zeroc import data, weights  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402

N_LAYER, N_HEAD, N_EMBD, VOCAB, BLOCK, BATCH = 2, 2, 32, 256, 16, 4
LR, BETAS, EPS, WD, CLIP, STEPS = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0, 10


def gpt():
    """nanoGPT's GPT-2 at this test's sizes."""
    return torch_models.GPT(vocab_size=VOCAB, block_size=BLOCK, n_layer=N_LAYER,
                            n_head=N_HEAD, n_embd=N_EMBD, gelu="tanh")


def main():
    args = harness.parse_args(tools=("--zeroc",))

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = gpt()
    init = os.path.join(args.work, "init.safetensors")
    weights.save_state_dict(init, {n: p for n, p in model.state_dict().items()
                                   if n != "lm_head.weight"}, dtype=torch.float32)
    text = os.path.join(args.src, "data", "tinyshakespeare.txt")
    tokens = data.read_tokens(text, "text")
    reference = torch_models.adamw_losses(model, tokens, STEPS, BATCH, BLOCK, lr=LR,
                                          betas=BETAS, eps=EPS, weight_decay=WD, clip=CLIP)

    mlir = os.path.join(args.work, "gpt2.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--n-layer", str(N_LAYER),
                    "--n-head", str(N_HEAD), "--n-embd", str(N_EMBD),
                    "--vocab-size", str(VOCAB), "--block-size", str(BLOCK),
                    "--batch-size", str(BATCH), "--lr", str(LR), "--beta1", str(BETAS[0]),
                    "--beta2", str(BETAS[1]), "--eps", str(EPS), "--weight-decay", str(WD),
                    "--grad-clip", str(CLIP), "-o", mlir], check=True)
    failures = []
    for stage, ranks in ((0, 1), (3, 2)):
        exe = os.path.join(args.work, f"gpt2-s{stage}-n{ranks}")
        subprocess.run([args.zeroc, mlir, f"--zero-stage={stage}", f"--world-size={ranks}",
                        "-o", exe], check=True)
        log = exe + ".jsonl"
        save = exe + ".saved"
        command = args.mpirun.split() + ["-np", str(ranks), exe, "--data", text,
                                         "--data-format=text", "--init", init,
                                         "--steps", str(STEPS), "--log-json", log,
                                         "--save", save, "--quiet"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        steps = [json.loads(line) for line in open(log) if '"loss"' in line]
        losses = [s["loss"] for s in steps]
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(f"stage {stage}, {ranks} rank(s): worst relative loss difference {worst:.2e}")
        for s, (a, b) in enumerate(zip(losses, reference)):
            print(f"  step {s}: zeroc {a:.6f}  pytorch {b:.6f}")
        if len(losses) != STEPS or worst > 1e-4:
            failures.append(f"stage {stage} N={ranks}: losses differ by {worst:.2e}")
        # The saved weights, exported, load into nanoGPT's model, strictly.
        exported = exe + ".safetensors"
        subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export", save,
                        "-o", exported], check=True, stdout=subprocess.DEVNULL)
        saved = weights.load_state_dict(exported)
        for name, tensor in saved.items():
            assert tensor.dtype == torch.float32, (name, tensor.dtype)
        check = gpt()
        check.load_state_dict(saved, strict=True)
    harness.finish(failures, "zeroc matches PyTorch")


if __name__ == "__main__":
    main()
