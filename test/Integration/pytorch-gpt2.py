# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun"
"""A GPT-2 trained by zeroc's executables and by PyTorch give the same losses.

The model is nanoGPT's GPT-2, written below in plain PyTorch (Debian's
python3-torch, run on the CPU) and built for zeroc by its model builder with
the same sizes. Both start from the same weights (drawn by PyTorch with nanoGPT's
initialization, saved as safetensors and passed with --init), read the same byte-level batches of
tinyshakespeare with the executable's sampling formula, and take 10 AdamW
steps with gradient clipping. The per-step losses must agree within 1e-4
relative for ZeRO stage 0 on one rank and stage 3 on two ranks, and the
weights the executable saves load into the PyTorch model with strict
load_state_dict.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

N_LAYER, N_HEAD, N_EMBD, VOCAB, BLOCK, BATCH = 2, 2, 32, 256, 16, 4
LR, BETAS, EPS, WD, CLIP, STEPS = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0, 10


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
        self.c_proj = nn.Linear(N_EMBD, N_EMBD)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
        heads = lambda y: y.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // N_HEAD))
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
        self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD)
        self.attn = Attention()
        self.ln_2 = nn.LayerNorm(N_EMBD)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, N_EMBD),
            wpe=nn.Embedding(BLOCK, N_EMBD),
            h=nn.ModuleList([Block() for _ in range(N_LAYER)]),
            ln_f=nn.LayerNorm(N_EMBD)))
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
        self.lm_head.weight = self.transformer.wte.weight
        # nanoGPT's initialization.
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * N_LAYER))
            elif p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif "ln_" in name and name.endswith("weight"):
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1])
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def save_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, tensor in tensors.items():
        data = tensor.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=np.float32).reshape(info["shape"])
        out[name] = torch.from_numpy(array.copy())
    return out


def batch(tokens, step):
    """The executable's sampling: sequence i of step s starts at
    ((s*G + i)*T) mod (L - T - 1); targets are the next T tokens."""
    length = len(tokens)
    xs, ys = [], []
    for i in range(BATCH):
        start = ((step * BATCH + i) * BLOCK) % (length - BLOCK - 1)
        xs.append(tokens[start:start + BLOCK])
        ys.append(tokens[start + 1:start + BLOCK + 1])
    return torch.tensor(np.array(xs), dtype=torch.long), torch.tensor(np.array(ys), dtype=torch.long)


def pytorch_losses(model, tokens):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS)
    losses = []
    for step in range(STEPS):
        x, y = batch(tokens, step)
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeroc", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun", required=True)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT()
    init = os.path.join(args.work, "init.safetensors")
    save_safetensors(init, {n: p for n, p in model.state_dict().items()
                            if n != "lm_head.weight"})
    data = os.path.join(args.src, "data", "tinyshakespeare.txt")
    tokens = np.frombuffer(open(data, "rb").read(), dtype=np.uint8).astype(np.int64)
    reference = pytorch_losses(model, tokens)

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
        command = args.mpirun.split() + ["-np", str(ranks), exe, "--data", data,
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
        # The saved weights load into nanoGPT's model, strictly.
        saved = load_safetensors(os.path.join(save, "model.safetensors"))
        check = GPT()
        check.load_state_dict(saved, strict=True)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("zeroc matches PyTorch")


if __name__ == "__main__":
    main()
