#!/usr/bin/env python3
"""PyTorch peer of zeroc's CUDA executables: GPT-2 training throughput.

A self-contained nanoGPT-style GPT-2 with the architecture that
python/zeroc/models/gpt2.py writes as `train` IR: learned position
embeddings, pre-LayerNorm blocks (eps 1e-5), biases on every Linear and
LayerNorm, GELU with the tanh approximation, causal attention, the lm_head
tied to the token embedding, no dropout. Initialization as the builder's:
normal(0, 0.02), the residual projections (c_proj) 0.02/sqrt(2 n_layer),
biases zero, LayerNorm weights one. AdamW (fused when this PyTorch has it
and the device is CUDA) with weight decay on the parameters of rank >= 2
only, global gradient-norm clipping, bf16 autocast, and
F.scaled_dot_product_attention(is_causal=True) (flash attention on a GPU)
where this PyTorch has it.

The data is read as zeroc's executables read it (docs/executable.md): raw
uint16 tokens, sequence i of step s starting at ((s*G + i)*T) mod (L-T-1)
with G the global batch, targets the next tokens. Without --data the
tokens are random.

    python3 benchmarks/gpu_torch.py --steps 30 --batch 16 --block-size 1024
    python3 benchmarks/gpu_torch.py --steps 30 --compile --json torch.json
    /usr/bin/python3 benchmarks/gpu_torch.py --device cpu --tiny --steps 3

Every step is timed on the host around the whole step with the device
synchronized at its end (the loss is read back each step, as zeroc's
executables do); ms/step is the median of the steps after --warmup.
Model FLOPs utilisation uses nanoGPT's / PaLM's count: flops per token
= 6 N + 12 n_layer n_embd T, with N the parameters without the position
embedding, against --peak-flops (989e12: dense bf16 of an H100/H200 SXM).

Runs on PyTorch 1.13 too (CPU, for testing): without
scaled_dot_product_attention it computes attention explicitly, without
torch.compile --compile is refused, without fused AdamW it uses the
default implementation.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The builder's presets (python/zeroc/models/gpt2.py): 124M is OpenAI's
# smallest GPT-2, tiny the test model. `batch` is the global batch.
PRESETS = {
    "124M": dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, block_size=1024, batch=16),
    "tiny": dict(n_layer=2, n_head=3, n_embd=48, vocab_size=256, block_size=17, batch=12),
}
HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")
HAVE_COMPILE = hasattr(torch, "compile")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, use_sdpa: bool):
        super().__init__()
        self.n_head, self.n_embd, self.use_sdpa = n_head, n_embd, use_sdpa
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        if not use_sdpa:
            mask = torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))
            self.register_buffer("mask", mask.view(1, 1, block_size, block_size),
                                 persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        H = self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, H, C // H).transpose(1, 2)
        k = k.view(B, T, H, C // H).transpose(1, 2)
        v = v.view(B, T, H, C // H).transpose(1, 2)
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
            att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd: int):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, use_sdpa: bool):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, eps=1e-5)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, use_sdpa)
        self.ln_2 = nn.LayerNorm(n_embd, eps=1e-5)
        self.mlp = MLP(n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, n_layer: int, n_head: int, n_embd: int, vocab_size: int,
                 block_size: int, use_sdpa: bool):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, use_sdpa)
                             for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd, eps=1e-5),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied
        proj_std = 0.02 / math.sqrt(2 * n_layer)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, proj_std)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
            elif p.dim() >= 2:  # wte, wpe, c_attn, c_fc
                nn.init.normal_(p, 0.0, 0.02)
            else:  # LayerNorm weights
                nn.init.ones_(p)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))


def parameter_count(cfg: dict) -> int:
    """The trainable scalars, lm_head tied (124,439,808 for the 124M preset)."""
    C, L = cfg["n_embd"], cfg["n_layer"]
    return (cfg["vocab_size"] + cfg["block_size"]) * C + L * (12 * C * C + 13 * C) + 2 * C


def flops_per_token(cfg: dict) -> int:
    """nanoGPT's estimate_mfu (PaLM appendix B): 6 N + 12 L H Q T, N without wpe."""
    n = parameter_count(cfg) - cfg["block_size"] * cfg["n_embd"]
    return 6 * n + 12 * cfg["n_layer"] * cfg["n_embd"] * cfg["block_size"]


def load_tokens(path: str | None, vocab: int, block: int, seed: int) -> torch.Tensor:
    if path is None:
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, vocab, (max(1 << 20, 4 * block),), generator=g, dtype=torch.int64)
    size = os.path.getsize(path)
    if size % 2:
        raise SystemExit(f"gpu_torch.py: {path}: not a whole number of uint16 tokens")
    try:
        import numpy as np
        ids = torch.from_numpy(np.fromfile(path, dtype="<u2").astype(np.int64))
    except ImportError:
        from array import array
        a = array("H")
        with open(path, "rb") as f:
            a.frombytes(f.read())
        if sys.byteorder != "little":
            a.byteswap()
        ids = torch.tensor(a.tolist(), dtype=torch.int64)
    if ids.numel() < block + 2:
        raise SystemExit(f"gpu_torch.py: {path}: {ids.numel()} tokens, fewer than block + 2")
    top = int(ids.max())
    if top >= vocab:
        raise SystemExit(f"gpu_torch.py: {path}: token id {top} is not below the vocabulary {vocab}")
    return ids


def load_safetensors(path: str) -> dict:
    """Reads a safetensors file (F32, BF16 or F64 tensors) with the standard library."""
    dtypes = {"F32": torch.float32, "BF16": torch.bfloat16, "F64": torch.float64}
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    data = bytearray(blob[8 + n:])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in dtypes:
            raise SystemExit(f"gpu_torch.py: {path}: {name} is {info['dtype']}")
        begin, end = info["data_offsets"]
        t = torch.frombuffer(data[begin:end], dtype=dtypes[info["dtype"]]) if end > begin \
            else torch.empty(0, dtype=dtypes[info["dtype"]])
        tensors[name] = t.reshape(info["shape"]).float()
    return tensors


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--preset", choices=PRESETS, default="124M",
                   help="model sizes to start from (default: 124M)")
    p.add_argument("--tiny", action="store_true", help="the same as --preset tiny")
    for flag in ("--n-layer", "--n-head", "--n-embd", "--vocab-size", "--block-size", "--batch"):
        p.add_argument(flag, type=int, help="overrides the preset")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16",
                   help="bf16 autocast with fp32 weights (default) or plain fp32")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--compile-mode", default=None,
                   help="torch.compile mode (default: PyTorch's default)")
    p.add_argument("--attention", choices=("auto", "sdpa", "manual"), default="auto",
                   help="scaled_dot_product_attention where available (auto), or explicit")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int,
                   help="first steps left out of the median (default: 5, fewer on short runs)")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--grad-clip", type=float, default=1.0, help="0 = off")
    p.add_argument("--data", help="uint16 token file (default: random tokens)")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--init", metavar="W.safetensors",
                   help="start from these weights (e.g. a zeroc executable's --save "
                        "model.safetensors) instead of the seed")
    p.add_argument("--threads", type=int, help="torch.set_num_threads (CPU)")
    p.add_argument("--peak-flops", type=float, default=989e12,
                   help="peak FLOP/s for the MFU (default 989e12: dense bf16, H100/H200 SXM)")
    p.add_argument("--json", help="write the result as JSON to this file")
    p.add_argument("--log-json", help="write one JSON line per step, as zeroc's executables "
                                      "do (step, loss, grad_norm, ms, tokens_per_s)")
    p.add_argument("--quiet", action="store_true", help="no line per step")
    args = p.parse_args(argv)

    preset = "tiny" if args.tiny else args.preset
    cfg = dict(PRESETS[preset])
    for key, value in (("n_layer", args.n_layer), ("n_head", args.n_head),
                       ("n_embd", args.n_embd), ("vocab_size", args.vocab_size),
                       ("block_size", args.block_size), ("batch", args.batch)):
        if value is not None:
            cfg[key] = value
    if cfg["n_embd"] % cfg["n_head"]:
        p.error("n_embd must be divisible by n_head")
    if args.warmup is None:
        args.warmup = min(5, (args.steps - 1) // 2)
    if args.steps < 1 or args.warmup < 0 or args.steps <= args.warmup:
        p.error(f"--steps ({args.steps}) must be larger than --warmup ({args.warmup})")
    if args.compile and not HAVE_COMPILE:
        p.error(f"torch {torch.__version__} has no torch.compile (PyTorch 2.0 or later)")
    use_sdpa = HAVE_SDPA if args.attention == "auto" else args.attention == "sdpa"
    if use_sdpa and not HAVE_SDPA:
        p.error(f"torch {torch.__version__} has no F.scaled_dot_product_attention")

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda and not torch.cuda.is_available():
        print("gpu_torch.py: error: CUDA is not available to this PyTorch", file=sys.stderr)
        return 1
    if args.threads:
        torch.set_num_threads(args.threads)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(args.seed)

    B, T, V = cfg["batch"], cfg["block_size"], cfg["vocab_size"]
    tokens = load_tokens(args.data, V, T, args.seed).to(device)
    span = tokens.numel() - T - 1
    arange_t = torch.arange(T, device=device)

    def batch(step: int):
        offsets = torch.tensor([((step * B + i) * T) % span for i in range(B)],
                               dtype=torch.int64)
        idx = offsets.to(device).unsqueeze(1) + arange_t
        return tokens[idx], tokens[idx + 1]

    model = GPT(cfg["n_layer"], cfg["n_head"], cfg["n_embd"], V, T, use_sdpa).to(device)
    n_params = sum(q.numel() for q in model.parameters())
    if args.init:
        state = load_safetensors(args.init)
        state.setdefault("lm_head.weight", state.get("transformer.wte.weight"))
        with torch.no_grad():
            model.load_state_dict(state, strict=True)
    assert n_params == parameter_count(cfg), (n_params, parameter_count(cfg))

    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    opt_kwargs = dict(lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps)
    fused = cuda and "fused" in inspect.signature(torch.optim.AdamW).parameters
    if fused:
        opt_kwargs["fused"] = True
    optimizer = torch.optim.AdamW(groups, **opt_kwargs)

    step_model = model
    if args.compile:
        kwargs = {"mode": args.compile_mode} if args.compile_mode else {}
        step_model = torch.compile(model, **kwargs)

    if args.dtype == "bf16":
        autocast = lambda: torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    else:
        import contextlib
        autocast = contextlib.nullcontext

    def sync():
        if cuda:
            torch.cuda.synchronize(device)

    mode = "torch.compile" if args.compile else "eager"
    tokens_per_step = B * T
    fpt = flops_per_token(cfg)
    name = torch.cuda.get_device_name(device) if cuda else "cpu"
    print(f"gpu_torch.py: PyTorch {torch.__version__} {mode} on {name}: GPT-2 "
          f"{cfg['n_layer']} layers, {cfg['n_head']} heads, n_embd {cfg['n_embd']}, "
          f"vocab {V}, block {T}, batch {B} ({tokens_per_step:,} tokens/step), "
          f"{n_params:,} parameters, {args.dtype}, attention "
          f"{'sdpa' if use_sdpa else 'manual'}, AdamW{' fused' if fused else ''}", flush=True)

    losses, times = [], []
    log = open(args.log_json, "w") if args.log_json else None
    sync()
    for step in range(args.steps):
        t0 = time.perf_counter()
        x, y = batch(step)
        with autocast():
            loss = step_model(x, y)
        loss.backward()
        norm = None
        if args.grad_clip > 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = loss.item()
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        losses.append(loss_value)
        times.append(ms)
        if log:
            record = {"step": step, "loss": loss_value if math.isfinite(loss_value) else None,
                      "lr": args.lr,
                      "grad_norm": float(norm) if norm is not None else None,
                      "ms": round(ms, 3), "tokens_per_s": round(tokens_per_step / ms * 1e3, 1)}
            log.write(json.dumps(record) + "\n")
        if not args.quiet:
            gn = f" | grad norm {float(norm):.4f}" if norm is not None else ""
            print(f"step {step}/{args.steps} | loss {loss_value:.4f}{gn} | {ms:.1f} ms | "
                  f"{tokens_per_step / ms * 1e3:,.0f} tok/s", flush=True)

    if log:
        log.close()
    timed = times[args.warmup:]
    median_ms = statistics.median(timed)
    tokens_per_s = tokens_per_step / (median_ms / 1e3)
    mfu = fpt * tokens_per_s / args.peak_flops
    finite = all(math.isfinite(v) for v in losses)
    result = {
        "impl": "torch-compile" if args.compile else "torch-eager",
        "torch": torch.__version__,
        "device": name,
        "config": cfg,
        "dtype": args.dtype,
        "attention": "sdpa" if use_sdpa else "manual",
        "fused_adamw": fused,
        "parameters": n_params,
        "tokens_per_step": tokens_per_step,
        "flops_per_token": fpt,
        "peak_flops": args.peak_flops,
        "steps": args.steps,
        "warmup": args.warmup,
        "ms": times,
        "losses": losses,
        "median_ms": median_ms,
        "tokens_per_s": tokens_per_s,
        "mfu": mfu,
        "first_steps_s": sum(times[:args.warmup]) / 1e3,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if cuda else None,
        "finite": finite,
    }
    print(f"gpu_torch.py: {mode}: median {median_ms:.2f} ms/step over steps "
          f"{args.warmup}..{args.steps - 1}, {tokens_per_s:,.0f} tokens/s, MFU "
          f"{100 * mfu:.1f}% of {args.peak_flops / 1e12:.0f} TFLOP/s; warm-up steps took "
          f"{result['first_steps_s']:.1f} s; loss {losses[0]:.4f} -> {losses[-1]:.4f}",
          flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if not finite:
        print("gpu_torch.py: error: a loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
