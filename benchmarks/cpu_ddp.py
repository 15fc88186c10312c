#!/usr/bin/python3
"""Training throughput of zeroc's CPU executables against PyTorch DDP.

The same GPT-2 (default: 4 layers, n_embd 128, 4 heads, block 64, global
batch 16, byte-level tinyshakespeare) trained on 2 ranks on this machine, in
the same run: PyTorch DistributedDataParallel with the gloo backend, then
zeroc's executable for ZeRO stages 0-3, both with OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS set to --threads. Prints tokens/s (median of the
timed steps after warm-up) and zeroc's speed-up over DDP.

    /usr/bin/python3 benchmarks/cpu_ddp.py [--steps 30] [--ranks 2]

Not a test: figures depend on the machine. docs/benchmarks.md records them.
The last line names the OpenBLAS kernels zeroc's runs used (the summary's
blas_core) and OPENBLAS_CORETYPE, which, when the environment sets it,
overrides OpenBLAS's own pick for both PyTorch and zeroc.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def torch_worker(rank, world, cfg, data_path, steps, result_path):
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(cfg["threads"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    C, H, T, V, L = cfg["n_embd"], cfg["n_head"], cfg["block"], 256, cfg["n_layer"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
            q, k, v = (y.view(b, t, H, C // H).transpose(1, 2) for y in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
            att = att.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
            y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, C)
            x = x + self.attn_proj(y)
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            self.h = nn.ModuleList([Block() for _ in range(L)])
            self.ln_f = nn.LayerNorm(C)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for block in self.h:
                x = block(x)
            logits = self.ln_f(x) @ self.wte.weight.t()
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(GPT())
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    tokens = np.frombuffer(open(data_path, "rb").read(), dtype=np.uint8).astype(np.int64)
    G, per = cfg["batch"], cfg["batch"] // world
    times = []
    for step in range(steps):
        xs, ys = [], []
        for i in range(rank * per, (rank + 1) * per):
            s = ((step * G + i) * T) % (len(tokens) - T - 1)
            xs.append(tokens[s:s + T])
            ys.append(tokens[s + 1:s + T + 1])
        x, y = torch.tensor(np.array(xs)), torch.tensor(np.array(ys))
        start = time.perf_counter()
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dist.barrier()
        times.append(time.perf_counter() - start)
    if rank == 0:
        json.dump({"times": times}, open(result_path, "w"))
    dist.destroy_process_group()


def thread_env(threads):
    """The thread counts both peers run with. OpenBLAS (Debian's pthread
    build, which PyTorch and zeroc both load) starts one thread per core
    unless told otherwise, and torch.set_num_threads does not reach it: two
    ranks would run four BLAS threads on two cores."""
    return {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}


def pytorch_ddp(cfg, data, steps, ranks, work):
    import torch.multiprocessing as mp
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    # Read by OpenBLAS when the spawned workers load it.
    os.environ.update(thread_env(cfg["threads"]))
    result = os.path.join(work, "ddp.json")
    mp.spawn(torch_worker, args=(ranks, cfg, data, steps, result), nprocs=ranks, join=True)
    return json.load(open(result))["times"]


def zeroc_run(cfg, data, steps, ranks, stage, work, zeroc, mpirun):
    model = os.path.join(work, "gpt2.mlir")
    if not os.path.exists(model):
        subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--n-layer", str(cfg["n_layer"]),
                        "--n-head", str(cfg["n_head"]), "--n-embd", str(cfg["n_embd"]),
                        "--vocab-size", "256", "--block-size", str(cfg["block"]),
                        "--batch-size", str(cfg["batch"]), "--grad-clip", "1.0", "-o", model],
                       check=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    exe = os.path.join(work, f"gpt2-s{stage}")
    subprocess.run([zeroc, model, f"--zero-stage={stage}", f"--world-size={ranks}", "-o", exe],
                   check=True)
    log = exe + ".jsonl"
    env = {**os.environ, **thread_env(cfg["threads"])}
    subprocess.run(mpirun + ["-np", str(ranks), exe, "--data", data, "--data-format=text",
                             "--steps", str(steps), "--log-json", log, "--quiet"],
                   check=True, env=env)
    records = [json.loads(l) for l in open(log)]
    core = next((r["blas_core"] for r in records if "blas_core" in r), "?")
    return [r["ms"] / 1000 for r in records if "loss" in r], core


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--n-layer", type=int, default=4)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-embd", type=int, default=128)
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per rank (default 1: 2 ranks on 2 cores)")
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    args = parser.parse_args()
    cfg = {"n_layer": args.n_layer, "n_head": args.n_head, "n_embd": args.n_embd,
           "block": args.block, "batch": args.batch, "threads": args.threads}
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    mpirun = ["mpirun", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    tokens_per_step = args.batch * args.block

    def rate(times):
        return tokens_per_step / statistics.median(times[args.warmup:])

    with tempfile.TemporaryDirectory() as work:
        print(f"GPT-2 {args.n_layer} layers, n_embd {args.n_embd}, {args.n_head} heads, "
              f"block {args.block}, global batch {args.batch}; {args.ranks} ranks x "
              f"{args.threads} thread(s); median of steps {args.warmup}..{args.steps - 1}")
        ddp = rate(pytorch_ddp(cfg, data, args.steps, args.ranks, work))
        print(f"  PyTorch DDP (gloo)   {ddp:10,.0f} tokens/s")
        cores = set()
        for stage in range(4):
            times, core = zeroc_run(cfg, data, args.steps, args.ranks, stage, work, args.zeroc,
                                    mpirun)
            cores.add(core)
            z = rate(times)
            print(f"  zeroc ZeRO stage {stage}   {z:10,.0f} tokens/s   {z / ddp:5.2f}x DDP")
        print(f"  OpenBLAS kernels (zeroc): {', '.join(sorted(cores))}; OPENBLAS_CORETYPE "
              f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}")


if __name__ == "__main__":
    main()
