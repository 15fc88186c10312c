#!/usr/bin/python3
"""Training throughput of zeroc's CPU executables against PyTorch DDP.

The same GPT-2 trained on 2 ranks on this machine, in the same run, at two
sizes: the default small one (4 layers, n_embd 128, 4 heads, block 64,
global batch 16: framework overhead is much of a step) and a larger one
where the GEMMs dominate (--large: 6 layers, n_embd 384, 6 heads, block
128, global batch 8), byte-level tinyshakespeare. Each size runs PyTorch
DistributedDataParallel with the gloo backend, then zeroc's executable for
ZeRO stages 0-3, both with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set to
--threads. Prints tokens/s (median of the timed steps after warm-up),
zeroc's speed-up over DDP, each stage against stage 0, and the GEMM-bound
limit: the step's GEMM FLOPs per rank (6 x tokens x matmul weights, plus
the causal attention's 6 x layers x block x n_embd per token) at the
single-core sgemm rate measured here, through ctypes, on the OpenBLAS
zeroc links (the fastest of 15 runs of each of the model's GEMM shapes, one
thread): "x bound" is the step time over that limit (1.00 would be GEMMs
alone). "x cold" is the same against the rate with the operands evicted
from the caches before each call (a 64 MiB copy), as the kernels between
two GEMMs of a step evict them (docs/benchmarks.md, "Where the stage-0
step goes against the GEMM bound").

    /usr/bin/python3 benchmarks/cpu_ddp.py [--steps 30] [--ranks 2]
        [--large 6,384,6,128,8 | --large none] [--trace] [--rounds R]

--rounds R runs the four ZeRO stages R times, in reverse order every other
round, and reports each stage's median over all its rounds' timed steps:
on a machine whose speed drifts during the run, the last stage run is
otherwise the one that pays for it.

Before the peers, two lines give one rank's share of the work without
communication: the model at one rank's batch compiled for 1 rank, run
alone, then as many copies side by side as there are ranks (sharing the
memory bandwidth and the last-level cache as the ranks do). Against the
bound they separate what a rank's kernels cost from what the collectives
and the second rank add (docs/benchmarks.md, "The floor on this machine").

--trace traces the timed steps of every zeroc run (of the first copy of
the no-communication lines) and prints, from the trace summary (python3 -m
zeroc trace-summary): the exposed communication as a share of the step, the
step's GEMM kernels against the bound (zrt_matmul spans, which include the
collectives' progress polls between GEMM tiles), and the time of all its
other kernels.

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


def zeroc_build(cfg, ranks, stage, work, zeroc):
    """The executable of the model at `cfg` (global batch cfg["batch"]) for
    `ranks` ranks at ZeRO `stage`."""
    model = os.path.join(work, f"gpt2-b{cfg['batch']}.mlir")
    if not os.path.exists(model):
        subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--n-layer", str(cfg["n_layer"]),
                        "--n-head", str(cfg["n_head"]), "--n-embd", str(cfg["n_embd"]),
                        "--vocab-size", "256", "--block-size", str(cfg["block"]),
                        "--batch-size", str(cfg["batch"]), "--grad-clip", "1.0", "-o", model],
                       check=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    exe = os.path.join(work, f"gpt2-b{cfg['batch']}-n{ranks}-s{stage}")
    subprocess.run([zeroc, model, f"--zero-stage={stage}", f"--world-size={ranks}", "-o", exe],
                   check=True)
    return exe


def step_times(records):
    """The step times (s) of an executable's --log-json records."""
    return [r["ms"] / 1000 for r in records if "loss" in r]


def trace_summary(path):
    """zeroc.trace's per-rank, per-step means of the trace at `path`."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from zeroc import trace as zeroc_trace
    return zeroc_trace.summarize(zeroc_trace.load(path))


def zeroc_run(cfg, data, steps, ranks, stage, work, zeroc, mpirun, trace_steps=None):
    exe = zeroc_build(cfg, ranks, stage, work, zeroc)
    log = exe + ".jsonl"
    env = {**os.environ, **thread_env(cfg["threads"])}
    trace = []
    if trace_steps:
        trace = ["--trace", exe + ".trace.json", "--trace-steps", trace_steps]
    subprocess.run(mpirun + ["-np", str(ranks), exe, "--data", data, "--data-format=text",
                             "--steps", str(steps), "--log-json", log, "--quiet"] + trace,
                   check=True, env=env)
    records = [json.loads(l) for l in open(log)]
    core = next((r["blas_core"] for r in records if "blas_core" in r), "?")
    summary = trace_summary(exe + ".trace.json") if trace_steps else None
    return step_times(records), core, summary


def zeroc_alone(cfg, data, steps, ranks, work, zeroc, copies, trace_steps=None):
    """Step times of one rank's share of the work without communication: the
    model at one rank's batch, compiled for 1 rank, run as `copies`
    independent processes at once (1: a rank alone on the machine; `ranks`:
    as many as the distributed run has, sharing the memory bandwidth and
    the last-level cache as its ranks do). Returns the slowest copy's, and
    with `trace_steps` the trace summary of the first copy."""
    exe = zeroc_build({**cfg, "batch": cfg["batch"] // ranks}, 1, 0, work, zeroc)
    env = {**os.environ, **thread_env(cfg["threads"])}
    logs = [f"{exe}.copy{i}.jsonl" for i in range(copies)]
    trace = exe + ".copy0.trace.json"
    procs = [subprocess.Popen([exe, "--data", data, "--data-format=text", "--steps", str(steps),
                               "--log-json", log, "--quiet"]
                              + (["--trace", trace, "--trace-steps", trace_steps]
                                 if trace_steps and i == 0 else []),
                              env=env, stdout=subprocess.DEVNULL)
             for i, log in enumerate(logs)]
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit(f"cpu_ddp.py: {exe} exited with {proc.returncode}")
    times = max((step_times(map(json.loads, open(log))) for log in logs), key=statistics.median)
    return times, trace_summary(trace) if trace_steps else None


def mean_summary(summaries):
    """The figures gemm_share and the exposed share read, averaged over the
    rounds' trace summaries."""
    def mean(values):
        values = list(values)
        return sum(values) / len(values)
    return {
        "step_ms": mean(s["step_ms"] for s in summaries),
        "exposed_comm_ms": mean(s["exposed_comm_ms"] for s in summaries),
        "compute_ms": mean(s["compute_ms"] for s in summaries),
        "compute_ms_by_kind": {"matmul": mean(s["compute_ms_by_kind"].get("matmul", 0.0)
                                              for s in summaries)},
    }


def gemm_share(summary, bound):
    """The traced step's GEMM kernels (zrt_matmul spans: OpenBLAS's packing
    and kernel, and the collectives' progress polls between its tiles)
    against the bound, and the rest of its kernels in ms."""
    gemm = summary["compute_ms_by_kind"].get("matmul", 0.0)
    return (f"  GEMMs {gemm / (bound * 1e3):4.2f}x bound, other kernels "
            f"{summary['compute_ms'] - gemm:4.1f} ms")


GEMM_RATE = r"""
import ctypes, ctypes.util, sys, time
blas = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1:]]
best = cold = 0.0
sweep, sink = ctypes.create_string_buffer(64 << 20), ctypes.create_string_buffer(64 << 20)
for m, n, k in shapes:
    a = (ctypes.c_float * (m * k))(*[(i % 7) * 0.125 for i in range(m * k)])
    b = (ctypes.c_float * (k * n))(*[(i % 5) * 0.25 for i in range(k * n)])
    c = (ctypes.c_float * (m * n))()
    p = ctypes.addressof
    # cblas_sgemm(RowMajor=101, NoTrans=111, NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
    blas.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p,
        ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_int]
    for _ in range(15):
        start = time.perf_counter()
        blas.cblas_sgemm(101, 111, 111, m, n, k, 1.0, p(a), k, p(b), n, 0.0, p(c), n)
        best = max(best, 2.0 * m * n * k / (time.perf_counter() - start))
    for _ in range(15):
        # Cold: reading 64 MiB first evicts the operands from every cache,
        # as the kernels between two GEMMs of a training step do (a memset
        # would not: glibc's large memset stores around the caches).
        ctypes.memmove(sink, sweep, len(sweep))
        start = time.perf_counter()
        blas.cblas_sgemm(101, 111, 111, m, n, k, 1.0, p(a), k, p(b), n, 0.0, p(c), n)
        cold = max(cold, 2.0 * m * n * k / (time.perf_counter() - start))
print(best, cold)
"""


def gemm_rate(cfg, ranks):
    """Single-thread sgemm FLOP/s of the OpenBLAS zeroc links, on the
    model's linear-layer shapes (rows: one rank's tokens), in a child with
    the benchmark's thread variables (read when OpenBLAS loads): the best
    rate with the operands in cache (hot) and out of it (cold)."""
    rows = cfg["batch"] * cfg["block"] // ranks
    c = cfg["n_embd"]
    shapes = [f"{rows}x{3 * c}x{c}", f"{rows}x{4 * c}x{c}", f"{rows}x{c}x{4 * c}"]
    env = {**os.environ, **thread_env(1)}
    out = subprocess.run([sys.executable, "-c", GEMM_RATE] + shapes, check=True, env=env,
                         capture_output=True, text=True).stdout
    hot, cold = (float(v) for v in out.split()[-2:])
    return hot, cold


def step_gemm_flops(cfg, ranks):
    """GEMM FLOPs of one rank's training step: forward and backward (3x the
    forward's 2 FLOPs per multiply-add) of the linear layers (12 n_embd^2
    weights a layer) and the tied lm_head (256 x n_embd), plus the causal
    attention (q k^T and p v: block x n_embd / 2 multiply-adds each per
    token and layer on average)."""
    c, layers, t = cfg["n_embd"], cfg["n_layer"], cfg["block"]
    weights = 12 * layers * c * c + 256 * c
    tokens = cfg["batch"] * t // ranks
    return tokens * (6 * weights + 6 * layers * t * c)


def parse_size(text):
    """--large's L,C,H,T,B (layers, n_embd, heads, block, global batch)."""
    try:
        layers, embd, heads, block, batch = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--large wants L,C,H,T,B (5 integers) or none, got '{text}'") from None
    return {"n_layer": layers, "n_embd": embd, "n_head": heads, "block": block, "batch": batch}


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
    parser.add_argument("--large", default="6,384,6,128,8",
                        help="the second, GEMM-bound size as layers,n_embd,heads,block,batch "
                             "(default 6,384,6,128,8); 'none' runs the first size only")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per rank (default 1: 2 ranks on 2 cores)")
    parser.add_argument("--trace", action="store_true",
                        help="trace zeroc's timed steps and print the exposed communication, "
                             "the GEMMs against the bound and the other kernels' time")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the four stages this many times, in reverse order every other "
                             "round (0-3, 3-0, ...), and report the median over the rounds' "
                             "steps: sturdier stage ratios on a machine whose speed drifts "
                             "(default 1)")
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.steps <= args.warmup:
        parser.error(f"--steps ({args.steps}) must exceed --warmup ({args.warmup})")
    base = {"n_layer": args.n_layer, "n_head": args.n_head, "n_embd": args.n_embd,
            "block": args.block, "batch": args.batch, "threads": args.threads}
    sizes = [base]
    if args.large != "none":
        try:
            sizes.append({**parse_size(args.large), "threads": args.threads})
        except argparse.ArgumentTypeError as error:
            parser.error(str(error))
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    mpirun = ["mpirun", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    trace_steps = f"{args.warmup}:{args.steps}" if args.trace else None

    cores = set()
    for cfg in sizes:
        tokens_per_step = cfg["batch"] * cfg["block"]

        def median_step(times):
            return statistics.median(times[args.warmup:])

        rate, cold_rate = gemm_rate(cfg, args.ranks)
        bound = step_gemm_flops(cfg, args.ranks) / rate
        cold_bound = step_gemm_flops(cfg, args.ranks) / cold_rate
        with tempfile.TemporaryDirectory() as work:
            print(f"GPT-2 {cfg['n_layer']} layers, n_embd {cfg['n_embd']}, {cfg['n_head']} heads, "
                  f"block {cfg['block']}, global batch {cfg['batch']}; {args.ranks} ranks x "
                  f"{args.threads} thread(s); median of steps {args.warmup}..{args.steps - 1}")
            print(f"  GEMM bound: {step_gemm_flops(cfg, args.ranks) / 1e9:.2f} GFLOP per rank "
                  f"and step at {rate / 1e9:.1f} GFLOP/s (1-thread sgemm) = {bound * 1e3:.1f} ms, "
                  f"{tokens_per_step / bound:,.0f} tokens/s; with the operands in memory, not "
                  f"cache (as in a step): {cold_rate / 1e9:.1f} GFLOP/s = {cold_bound * 1e3:.1f} ms")
            # The same per-rank work without communication: what the step
            # would be if the collectives cost nothing (alone) and if they
            # cost nothing but the ranks still shared the memory (side by
            # side).
            for copies, what in ((1, "1 rank alone"), (args.ranks, f"{args.ranks} x 1 rank")):
                times, summary = zeroc_alone(cfg, data, args.steps, args.ranks, work,
                                             args.zeroc, copies, trace_steps)
                step = median_step(times)
                line = (f"  zeroc, {what}, no communication ({cfg['batch'] // args.ranks} "
                        f"sequences each): {step * 1e3:7.1f} ms  {step / bound:5.2f}x bound "
                        f"({step / cold_bound:4.2f}x cold)")
                if summary:
                    line += gemm_share(summary, bound)
                print(line, flush=True)
            ddp_step = median_step(pytorch_ddp(cfg, data, args.steps, args.ranks, work))
            ddp = tokens_per_step / ddp_step
            print(f"  PyTorch DDP (gloo)   {ddp:10,.0f} tokens/s  {ddp_step * 1e3:7.1f} ms"
                  f"  {ddp_step / bound:5.2f}x bound")
            # Each round runs the four stages, in reverse order every other
            # round, so that a machine drifting over the run does not favour
            # the first stages; a stage's figure is the median of its timed
            # steps over the rounds.
            times = {stage: [] for stage in range(4)}
            summaries = {stage: [] for stage in range(4)}
            for r in range(args.rounds):
                for stage in (range(4) if r % 2 == 0 else reversed(range(4))):
                    run, core, summary = zeroc_run(cfg, data, args.steps, args.ranks, stage,
                                                   work, args.zeroc, mpirun, trace_steps)
                    cores.add(core)
                    times[stage] += run[args.warmup:]
                    if summary:
                        summaries[stage].append(summary)
            stage0 = None
            for stage in range(4):
                step = statistics.median(times[stage])
                z = tokens_per_step / step
                stage0 = stage0 or z
                line = (f"  zeroc ZeRO stage {stage}   {z:10,.0f} tokens/s  {step * 1e3:7.1f} ms"
                        f"  {step / bound:5.2f}x bound ({step / cold_bound:4.2f}x cold)"
                        f"  {z / ddp:5.2f}x DDP"
                        f"  {z / stage0:5.2f}x stage 0")
                if summaries[stage]:
                    summary = mean_summary(summaries[stage])
                    exposed = (summary["exposed_comm_ms"] / summary["step_ms"]
                               if summary["step_ms"] else 0.0)
                    line += f"  exposed comm {100 * exposed:4.1f}%" + gemm_share(summary, bound)
                print(line, flush=True)
    print(f"  OpenBLAS kernels (zeroc): {', '.join(sorted(cores))}; OPENBLAS_CORETYPE "
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}")


if __name__ == "__main__":
    main()
