#!/usr/bin/python3
"""The memory-budget planner's figures for docs/benchmarks.md and the guide.

    /usr/bin/python3 benchmarks/planner.py [--machine h100-sxm-ib] [--json-dir DIR]
        [--timing] [--budgets 16 24 40 80]

GPT-2 1.5B (bf16, N = 8, T = 1024, 8 sequences per rank: a global batch of
64): every stage x --remat policy's per-rank peak from the plan (the static
memory report of each candidate's program, 25 MiB buckets, with the
performance model's step on --machine), then the planner's pick for each
budget (GiB). --json-dir keeps the plans' JSON (docs/plot_plan.py draws
them). --timing also times the plan of Llama-3-70B (N = 64) and of a
175B-parameter GPT (N = 64), threads on and off (--mlir-disable-threading):
wall clock and the CPU time of the zeroc process.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1 << 30


def build(module, args, path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, "-m", module, *args, "-o", path], check=True, env=env)


def plan(zeroc, model, ranks, budget, extra=()):
    """The plan as JSON (nothing fitting: the JSON zeroc prints on stderr)."""
    out = subprocess.run([zeroc, model, f"--world-size={ranks}", f"--memory-budget={budget}",
                          "--emit=plan-json", *extra], capture_output=True, text=True)
    text = out.stdout if out.returncode == 0 else out.stderr.partition("\n")[2]
    return json.loads(text), out


def timed(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    parser.add_argument("--machine", default="h100-sxm-ib")
    parser.add_argument("--budgets", type=float, nargs="+", default=[16, 24, 40, 80])
    parser.add_argument("--json-dir")
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "g1558.mlir")
        build("zeroc.models.gpt2", ["--preset", "1558M", "--dtype", "bf16", "--batch-size", "64"],
              model)
        full, _ = plan(args.zeroc, model, 8, "1TiB", ["--bucket-bytes=26214400",
                                                      f"--machine={args.machine}"])
        if args.json_dir:
            os.makedirs(args.json_dir, exist_ok=True)
            with open(os.path.join(args.json_dir, "plan-gpt2-1558m-n8.json"), "w") as f:
                json.dump(full, f, indent=2)
        print(f"GPT-2 1.5B, bf16, N = 8, 8 x 1024 tokens per rank, 25 MiB buckets; "
              f"step on {args.machine}\n")
        print("| stage | `--remat` | model states | transient peak | peak per rank "
              "| sent per step | predicted step | MFU |")
        print("|---|---|---|---|---|---|---|---|")
        for c in full["candidates"]:
            print(f"| {c['stage']} | {c['remat']} | {c['model_state_bytes'] / GIB:.2f} GiB "
                  f"| {c['transient_peak_bytes'] / GIB:.2f} GiB "
                  f"| {c['peak_bytes_per_rank'] / GIB:.2f} GiB "
                  f"| {c['comm_bytes_per_step'] / GIB:.2f} GiB "
                  f"| {c['step_seconds'] * 1e3:.1f} ms | {c['mfu'] * 100:.1f}% |")
        print("\n| budget | picked | peak | sent per step | candidates that fit |")
        print("|---|---|---|---|---|")
        for budget in args.budgets:
            text = f"{budget:g}GiB"
            got, out = plan(args.zeroc, model, 8, text)
            fitting = sum(c["fits"] for c in got["candidates"])
            if got["picked"] is None:
                print(f"| {text} | none: {got['no_fit']} | | | 0 of {len(got['candidates'])} |")
                continue
            c = got["candidates"][got["picked"]]
            micro = c["micro_batches"]
            print(f"| {text} | stage {c['stage']}, `--remat={c['remat']}`, "
                  f"{micro} micro-batch{'' if micro == 1 else 'es'}, "
                  f"{c['bucket_bytes'] >> 20} MiB buckets "
                  f"| {c['peak_bytes_per_rank'] / GIB:.2f} GiB "
                  f"| {c['comm_bytes_per_step'] / GIB:.2f} GiB "
                  f"| {fitting} of {len(got['candidates'])} |")
            if args.json_dir:
                with open(os.path.join(args.json_dir, f"plan-gpt2-1558m-n8-{text}.json"),
                          "w") as f:
                    json.dump(got, f, indent=2)

        if not args.timing:
            return
        l70 = os.path.join(work, "l70.mlir")
        build("zeroc.models.llama", ["--preset", "llama3-70b", "--dtype", "bf16",
                                     "--batch-size", "64"], l70)
        g175 = os.path.join(work, "g175.mlir")
        build("zeroc.models.gpt2", ["--preset", "124M", "--n-layer", "96", "--n-head", "96",
                                    "--n-embd", "12288", "--block-size", "2048",
                                    "--batch-size", "64", "--dtype", "bf16"], g175)
        print("\n| model | N | candidates | threads | wall | CPU |")
        print("|---|---|---|---|---|---|")
        for name, path in (("Llama-3-70B", l70), ("GPT 175B", g175)):
            for threads in ("on", "off"):
                command = [args.zeroc, path, "--world-size=64", "--memory-budget=80GiB",
                           "--emit=plan", "-o", "-"]  # the plan's last line counts the candidates
                if threads == "off":
                    command.append("--mlir-disable-threading")
                wall, cpu, out = timed(command)
                if out.returncode not in (0, 1):
                    sys.exit(out.stderr)
                count = re.search(r"planned (\d+) candidates", out.stdout + out.stderr)
                print(f"| {name} | 64 | {count.group(1) if count else '?'} | {threads} "
                      f"| {wall:.1f} s | {cpu:.1f} s |")


if __name__ == "__main__":
    main()
