#!/usr/bin/env python3
"""The GPU check's bookkeeping: the bundle's manifest, loss comparisons and
the benchmark report. Standard library only (the GPU machine's python3 has
numpy and torch, but nothing here needs them).

    gpucheck.py cases MANIFEST                  # one tab-separated line per tiny case
    gpucheck.py get MANIFEST KEY[.KEY...]       # one value of the manifest
    gpucheck.py summary LOG.jsonl               # steps and first/last loss of a log
    gpucheck.py compare --name N --ref REF.jsonl --got GOT.jsonl --rtol R [--results F]
    gpucheck.py report --manifest M --out DIR [--zeroc LOG] [--torch-eager J] ...

Used by scripts/gpu/prepare.sh (which writes the manifest) and
scripts/gpu/run.sh; docs/cuda-benchmark.md describes the check.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys

TARGET_RATIO = 1.15  # zeroc tokens/s over torch.compile's
TARGET_MFU = 0.50


# --- logs --------------------------------------------------------------------


def read_log(path: str) -> tuple[list[dict], dict | None]:
    """The training steps (lines with a loss) and the summary of a --log-json file."""
    steps, summary = [], None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise SystemExit(f"gpucheck: {path}:{number}: not JSON: {error}")
            if record.get("summary"):
                summary = record
            elif "loss" in record:
                steps.append(record)
    return steps, summary


def finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def rel_diff(ref: float, got: float) -> float:
    return abs(got - ref) / max(abs(ref), 1e-12)


# --- the model's arithmetic --------------------------------------------------


def parameter_count(cfg: dict) -> int:
    """Trainable scalars of the builder's GPT-2 (lm_head tied)."""
    C, L = cfg["n_embd"], cfg["n_layer"]
    return (cfg["vocab_size"] + cfg["block_size"]) * C + L * (12 * C * C + 13 * C) + 2 * C


def flops_per_token(cfg: dict) -> int:
    """nanoGPT's estimate_mfu (PaLM appendix B): 6 N + 12 L H Q T, N without wpe."""
    n = parameter_count(cfg) - cfg["block_size"] * cfg["n_embd"]
    return 6 * n + 12 * cfg["n_layer"] * cfg["n_embd"] * cfg["block_size"]


# --- commands ----------------------------------------------------------------


def load_manifest(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def cmd_cases(args) -> int:
    m = load_manifest(args.manifest)
    tiny = m["tiny"]
    for case in tiny["cases"]:
        print("\t".join(str(x) for x in (case["name"], case["exe"], case["ref"],
                                          case["precision"], case["rtol"], tiny["steps"],
                                          tiny["seed"], case.get("init") or "-")))
    return 0


def cmd_get(args) -> int:
    value = load_manifest(args.manifest)
    for key in args.key.split("."):
        if isinstance(value, dict) and key in value:
            value = value[key]
        else:
            print(f"gpucheck: {args.manifest} has no {args.key}", file=sys.stderr)
            return 1
    print(json.dumps(value) if isinstance(value, (dict, list)) else
          ("" if value is None else value))
    return 0


def cmd_init(args) -> int:
    """Writes random weights of larger magnitude than the builder's
    initialization for the --init runs: with std 0.02 weights and zero
    biases the loss of a small model hardly depends on its blocks (GELU is
    near linear, attention near uniform), so a kernel bug there would not
    show in the losses. Needs python/zeroc (the development machine)."""
    import random
    import struct
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    from zeroc import weights
    from zeroc.models import gpt2
    if args.config in gpt2.PRESETS:
        config = gpt2.GPT2Config.preset(args.config)
    else:
        with open(args.config) as f:
            c = json.load(f)
        config = gpt2.GPT2Config(n_layer=c["n_layer"], n_head=c["n_head"], n_embd=c["n_embd"],
                                 vocab_size=c["vocab_size"], block_size=c["block_size"],
                                 batch_size=c["batch"])
    rng = random.Random(args.seed)
    tensors = {}
    for p in gpt2.parameters(config):
        n = 1
        for d in p.type.shape:
            n *= d
        if p.init == "normal":      # weights and embeddings
            values = [rng.gauss(0.0, args.std) for _ in range(n)]
        elif p.init == "ones":      # LayerNorm gains
            values = [1.0 + rng.gauss(0.0, args.bias_std) for _ in range(n)]
        else:                       # biases
            values = [rng.gauss(0.0, args.bias_std) for _ in range(n)]
        tensors[p.name] = weights.RawTensor("F32", p.type.shape, struct.pack(f"<{n}f", *values))
    weights.save(args.output, tensors, {"format": "pt", "producer": "scripts/gpu/gpucheck.py init"})
    return 0


def cmd_summary(args) -> int:
    steps, _ = read_log(args.log)
    if not steps:
        print("no steps")
        return 1
    print(f"{len(steps)} steps, loss {steps[0]['loss']:.4f} -> {steps[-1]['loss']:.4f}")
    return 0


def compare(name: str, ref_path: str, got_path: str, rtol: float,
            gn_rtol: float | None = None) -> dict:
    """Compares the per-step losses of two logs, and their gradient norms
    within gn_rtol (default 10 rtol: rounding moves the norm, a sum of
    squares over every gradient, more than the loss); the result as a dict."""
    gn_rtol = 10 * rtol if gn_rtol is None else gn_rtol
    result = {"name": name, "rtol": rtol, "grad_norm_rtol": gn_rtol, "ok": False,
              "steps": 0, "max_rel_diff": None,
              "worst_step": None, "max_grad_norm_rel_diff": None, "median_ms": None,
              "error": None}
    try:
        ref, _ = read_log(ref_path)
        got, summary = read_log(got_path)
    except OSError as error:
        result["error"] = f"cannot read {error.filename}: {error.strerror}"
        return result
    result["steps"] = len(got)
    if not ref:
        result["error"] = f"the reference {ref_path} has no steps"
        return result
    if len(got) != len(ref):
        result["error"] = f"{len(got)} step(s) logged, the reference has {len(ref)}"
    rows, worst, worst_step, worst_gn = [], 0.0, None, 0.0
    for r, g in zip(ref, got):
        if r.get("step") != g.get("step"):
            result["error"] = f"step numbers differ: {r.get('step')} vs {g.get('step')}"
            break
        if not finite(g.get("loss")):
            result["error"] = f"step {g.get('step')}: the loss is not finite " \
                              f"({json.dumps(g.get('loss'))})"
            d = math.inf
        else:
            d = rel_diff(r["loss"], g["loss"])
        if worst_step is None or d > worst:
            worst, worst_step = d, g.get("step")
        gn = None
        if finite(r.get("grad_norm")) and finite(g.get("grad_norm")):
            gn = rel_diff(r["grad_norm"], g["grad_norm"])
            worst_gn = max(worst_gn, gn)
        mark = "ok" if d <= rtol else "LOSS OVER"
        if gn is not None and gn > gn_rtol:
            mark = "GRAD NORM OVER" if d <= rtol else "LOSS, GRAD NORM OVER"
        rows.append((g.get("step"), r["loss"], g.get("loss"), d, gn, g.get("ms"), mark))
    result["max_rel_diff"] = worst
    result["worst_step"] = worst_step
    result["max_grad_norm_rel_diff"] = worst_gn
    ms = [g["ms"] for g in got[1:] if finite(g.get("ms"))]
    result["median_ms"] = statistics.median(ms) if ms else None
    if summary:
        result["peak_bytes"] = summary["ranks"][0].get("peak_bytes") if summary.get("ranks") \
            else None
    result["rows"] = rows
    if result["error"] is None:
        over = []
        if worst > rtol:
            over.append(f"loss rel diff {worst:.2e} over {rtol:.0e} (step {worst_step})")
        if worst_gn > gn_rtol:
            over.append(f"grad norm rel diff {worst_gn:.2e} over {gn_rtol:.0e}")
        result["error"] = "; ".join(over) or None
    result["ok"] = result["error"] is None
    return result


def cmd_compare(args) -> int:
    r = compare(args.name, args.ref, args.got, args.rtol, args.grad_norm_rtol)
    rows = r.pop("rows", [])
    print(f"  {'step':>4}  {args.ref_label:>12}  {args.got_label:>12}  {'rel diff':>9}  "
          f"{'gnorm diff':>10}  {'ms':>8}")
    for step, ref, got, d, gn, ms, mark in rows:
        got_s = f"{got:12.7f}" if finite(got) else f"{str(got):>12}"
        gn_s = f"{gn:10.2e}" if gn is not None else f"{'-':>10}"
        ms_s = f"{ms:8.2f}" if finite(ms) else f"{'-':>8}"
        print(f"  {step:>4}  {ref:12.7f}  {got_s}  {d:9.2e}  {gn_s}  {ms_s}  {mark}")
    detail = f"max rel diff {r['max_rel_diff']:.2e}" if r["max_rel_diff"] is not None else ""
    if r["worst_step"] is not None and r["max_rel_diff"]:
        detail += f" (step {r['worst_step']})"
    detail += f", tolerance {r['rtol']:.0e}"
    if r["max_grad_norm_rel_diff"] is not None:
        detail += (f"; grad norm max rel diff {r['max_grad_norm_rel_diff']:.2e}, "
                   f"tolerance {r['grad_norm_rtol']:.0e}")
    print(f"  {len(rows)} step(s), {detail}")
    print(f"PASS {args.name}" if r["ok"] else f"FAIL {args.name}: {r['error']}")
    if args.results:
        with open(args.results, "a") as f:
            f.write(json.dumps(r) + "\n")
    return 0 if r["ok"] else 1


def zeroc_row(path: str, cfg: dict, warmup: int, peak: float) -> dict:
    row = {"impl": "zeroc", "ok": False, "error": None}
    try:
        steps, summary = read_log(path)
    except OSError as error:
        row["error"] = f"no log ({error.strerror})"
        return row
    ms = [s["ms"] for s in steps]
    losses = [s["loss"] for s in steps]
    row["steps"], row["ms"], row["losses"] = len(steps), ms, losses
    if len(steps) <= warmup:
        row["error"] = f"{len(steps)} step(s) logged, need more than the {warmup} warm-up steps"
        return row
    timed = [x for x in ms[warmup:] if finite(x)]
    if not timed:
        row["error"] = "no timed steps"
        return row
    tokens_per_step = cfg["batch"] * cfg["block_size"]
    row["median_ms"] = statistics.median(timed)
    row["tokens_per_s"] = tokens_per_step / (row["median_ms"] / 1e3)
    row["mfu"] = flops_per_token(cfg) * row["tokens_per_s"] / peak
    row["first_steps_s"] = sum(x for x in ms[:warmup] if finite(x)) / 1e3
    if summary and summary.get("ranks"):
        peaks = summary["ranks"][0].get("peak_bytes", {})
        row["peak_memory_bytes"] = sum(v for v in peaks.values() if isinstance(v, int))
    if not all(finite(x) for x in losses):
        row["error"] = "a loss is not finite"
        return row
    row["ok"] = True
    return row


def torch_row(path: str, impl: str) -> dict:
    row = {"impl": impl, "ok": False, "error": None}
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as error:
        row["error"] = f"no result ({error.strerror})"
        return row
    except ValueError as error:
        row["error"] = f"unreadable result: {error}"
        return row
    for key in ("steps", "ms", "losses", "median_ms", "tokens_per_s", "first_steps_s",
                "peak_memory_bytes", "torch", "device", "fused_adamw", "attention"):
        row[key] = data.get(key)
    row["config"] = data.get("config")
    row["ok"] = bool(data.get("finite", True))
    if not row["ok"]:
        row["error"] = "a loss is not finite"
    return row


def fmt(value, spec: str, missing: str = "-") -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec) if finite(value) else missing


def cmd_report(args) -> int:
    m = load_manifest(args.manifest)
    bench = m.get("bench") or {}
    cfg = bench.get("config")
    warmup = args.warmup if args.warmup is not None else bench.get("warmup", 5)
    correctness = []
    if args.tiny_results and os.path.exists(args.tiny_results):
        with open(args.tiny_results) as f:
            correctness = [json.loads(line) for line in f if line.strip()]
    failures = []
    if args.failures and os.path.exists(args.failures):
        with open(args.failures) as f:
            failures = [line.rstrip("\n") for line in f if line.strip()]
    kernel_tests = json.loads(args.kernel_tests) if args.kernel_tests else None

    notes = dict(n.split("=", 1) for n in args.note or [])
    rows = []
    if cfg:
        labels = {"zeroc": f"zeroc ({m.get('gpu_target', 'cuda')}, ZeRO-{bench.get('stage', 0)}, "
                           f"{bench.get('precision', 'bf16')})",
                  "torch-eager": "PyTorch eager", "torch-compile": "PyTorch torch.compile"}
        labels["zeroc-flash"] = labels["zeroc"] + " + ZEROC_FLASH_ATTENTION=1"
        impls = [("zeroc", args.zeroc)]
        # The fused attention kernel is opt-in until validated: its row is
        # shown when it ran, and its failure is a note, not a failure.
        if args.zeroc_flash or "zeroc-flash" in notes:
            impls.append(("zeroc-flash", args.zeroc_flash))
        impls += [("torch-eager", args.torch_eager), ("torch-compile", args.torch_compile)]
        for impl, path in impls:
            if path is None:
                row = {"impl": impl, "ok": False, "error": notes.get(impl, "not run")}
            elif impl in ("zeroc", "zeroc-flash"):
                row = zeroc_row(path, cfg, warmup, args.peak_flops)
                row["impl"] = impl
            else:
                row = torch_row(path, impl)
                if row["ok"] and row.get("config") and row["config"] != cfg:
                    row["ok"], row["error"] = False, f"other config {row['config']}"
                if row.get("tokens_per_s"):
                    row["mfu"] = flops_per_token(cfg) * row["tokens_per_s"] / args.peak_flops
            if path is not None and not row["ok"] and impl in notes:
                row["error"] = f"{notes[impl]}; {row['error']}"
            row["label"] = labels[impl]
            rows.append(row)
        by = {r["impl"]: r for r in rows}
        for key, impl in (("vs_torch_compile", "torch-compile"), ("vs_torch_eager", "torch-eager")):
            base = by[impl].get("tokens_per_s") if by[impl]["ok"] else None
            for r in rows:
                if base and r["ok"] and r.get("tokens_per_s"):
                    r[key] = r["tokens_per_s"] / base

    # A run that finished but whose figures are unusable (a non-finite loss,
    # too few steps, another config) is a failure too; run.sh sees it in
    # the failures file.
    paths = {"zeroc": args.zeroc, "zeroc-flash": args.zeroc_flash,
             "torch-eager": args.torch_eager, "torch-compile": args.torch_compile}
    for r in rows:
        if r["impl"] == "zeroc-flash":
            continue
        if paths[r["impl"]] is not None and not r["ok"] and r["impl"] not in notes:
            failures.append(f"{r['label']}: {r['error']}")
            if args.failures:
                with open(args.failures, "a") as f:
                    f.write(failures[-1] + "\n")

    z = next((r for r in rows if r["impl"] == "zeroc"), {})
    targets = {
        "ratio_vs_torch_compile": {"target": TARGET_RATIO, "value": z.get("vs_torch_compile"),
                                   "met": (z.get("vs_torch_compile") or 0) >= TARGET_RATIO
                                   if z.get("vs_torch_compile") is not None else None},
        "mfu": {"target": TARGET_MFU, "value": z.get("mfu"),
                "met": (z.get("mfu") or 0) >= TARGET_MFU if z.get("mfu") is not None else None},
    }

    lines = []
    lines.append(f"# zeroc GPU check, {args.date or datetime.datetime.utcnow().isoformat()}Z")
    lines.append("")
    lines.append(f"Device: {args.device or 'unknown'}. Bundle: zeroc {m.get('git', '?')}, "
                 f"target {m.get('gpu_target')}"
                 + (f", {m['cuda_arch']}" if m.get("cuda_arch") else "") + ".")
    lines.append("")
    if kernel_tests is not None:
        lines.append("## CUDA kernel unit tests")
        lines.append("")
        lines.append(f"{kernel_tests.get('status')}: {kernel_tests.get('pass', 0)} PASS, "
                     f"{kernel_tests.get('fail', 0)} FAIL lines, exit {kernel_tests.get('rc')}")
        lines.append("")
    if correctness:
        tiny = m["tiny"]
        c = tiny["config"]
        lines.append("## Per-step losses against the CPU executables")
        lines.append("")
        lines.append(f"GPT-2 {c['n_layer']} layers, n_embd {c['n_embd']}, {c['n_head']} heads, "
                     f"vocab {c['vocab_size']}, block {c['block_size']}, batch {c['batch']}; "
                     f"{tiny['steps']} steps, seed {tiny['seed']}, world size 1.")
        lines.append("")
        lines.append("| case | steps | max rel. loss diff | tolerance | max rel. grad-norm diff "
                     "| GPU ms/step | result |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in correctness:
            lines.append(f"| {r['name']} | {r['steps']} | {fmt(r['max_rel_diff'], '.2e')} "
                         f"| {r['rtol']:.0e} | {fmt(r.get('max_grad_norm_rel_diff'), '.2e')} "
                         f"| {fmt(r.get('median_ms'), '.2f')} | "
                         f"{'pass' if r['ok'] else 'FAIL' + (': ' + r['error'] if r.get('error') else '')} |")
        lines.append("")
    if cfg:
        lines.append("## Training throughput")
        lines.append("")
        lines.append(f"GPT-2 {cfg['n_layer']} layers, n_embd {cfg['n_embd']}, {cfg['n_head']} "
                     f"heads, vocab {cfg['vocab_size']} ({parameter_count(cfg):,} parameters), "
                     f"block {cfg['block_size']}, batch {cfg['batch']} "
                     f"({cfg['batch'] * cfg['block_size']:,} tokens/step), bf16, AdamW with "
                     f"gradient clipping, 1 device. ms/step: the median of the steps after "
                     f"the first {warmup}; MFU = (6 N + 12 L C T) tokens/s / "
                     f"{args.peak_flops / 1e12:.0f} TFLOP/s "
                     f"({flops_per_token(cfg) / 1e6:,.1f} MFLOP/token, N without the position "
                     f"embedding). Peak memory: zeroc's zrt_alloc accounting (parameters, "
                     f"gradients, optimizer states, buffers, activations), PyTorch's "
                     f"max_memory_allocated.")
        lines.append("")
        lines.append("| implementation | ms/step | tokens/s | MFU | vs torch.compile | vs eager "
                     "| peak memory GiB | warm-up s | loss first -> last | note |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            losses = r.get("losses") or []
            loss = f"{losses[0]:.3f} -> {losses[-1]:.3f}" if losses and finite(losses[0]) \
                and finite(losses[-1]) else "-"
            mem = r.get("peak_memory_bytes")
            ratio, ratio_e = r.get("vs_torch_compile"), r.get("vs_torch_eager")
            lines.append(
                f"| {r['label']} | {fmt(r.get('median_ms'), '.2f')} "
                f"| {fmt(r.get('tokens_per_s'), ',.0f')} "
                f"| {fmt(100 * r['mfu'] if finite(r.get('mfu')) else None, '.1f')}"
                f"{'%' if finite(r.get('mfu')) else ''} "
                f"| {fmt(ratio, '.2f')}{'x' if finite(ratio) else ''} "
                f"| {fmt(ratio_e, '.2f')}{'x' if finite(ratio_e) else ''} "
                f"| {fmt(mem / 2**30 if finite(mem) else None, '.2f')} "
                f"| {fmt(r.get('first_steps_s'), '.1f')} | {loss} "
                f"| {r['error'] or ''} |")
        lines.append("")
        t = targets
        def verdict(entry):
            return "n/a" if entry["met"] is None else ("met" if entry["met"] else "not met")
        rv, mv = t["ratio_vs_torch_compile"]["value"], t["mfu"]["value"]
        rv_s = f"{rv:.2f}x" if finite(rv) else "no torch.compile figure"
        mv_s = f"{100 * mv:.1f}%" if finite(mv) else "no zeroc figure"
        lines.append(f"Targets: zeroc tokens/s >= {TARGET_RATIO:.2f}x torch.compile: "
                     f"**{verdict(t['ratio_vs_torch_compile'])}** ({rv_s}); "
                     f"zeroc MFU >= {100 * TARGET_MFU:.0f}%: **{verdict(t['mfu'])}** ({mv_s}). "
                     f"Targets are reported, not enforced: missing them is not a failure.")
        lines.append("")
    lines.append("## Failures")
    lines.append("")
    lines.extend([f"- {f}" for f in failures] or ["none"])
    text = "\n".join(lines) + "\n"
    print(text)

    os.makedirs(args.out, exist_ok=True)
    result = {"date": args.date, "device": args.device, "manifest": m,
              "kernel_tests": kernel_tests,
              "correctness": correctness, "benchmark": rows, "targets": targets,
              "peak_flops": args.peak_flops, "warmup": warmup, "failures": failures,
              "passed": not failures}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="gpucheck.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cases")
    c.add_argument("manifest")
    c.set_defaults(run=cmd_cases)
    g = sub.add_parser("get")
    g.add_argument("manifest")
    g.add_argument("key")
    g.set_defaults(run=cmd_get)
    c = sub.add_parser("init")
    c.add_argument("config", help="a preset of the builder (tiny, 124M, ...) or a JSON file: "
                                  "n_layer, n_head, n_embd, vocab_size, block_size, batch")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--std", type=float, default=0.2)
    c.add_argument("--bias-std", type=float, default=0.1)
    c.add_argument("--seed", type=int, default=1)
    c.set_defaults(run=cmd_init)
    c = sub.add_parser("summary")
    c.add_argument("log")
    c.set_defaults(run=cmd_summary)
    c = sub.add_parser("compare")
    c.add_argument("--name", required=True)
    c.add_argument("--ref", required=True)
    c.add_argument("--got", required=True)
    c.add_argument("--rtol", type=float, required=True)
    c.add_argument("--grad-norm-rtol", type=float,
                   help="tolerance of the gradient norms (default: 10 --rtol)")
    c.add_argument("--results", help="append the result as a JSON line here")
    c.add_argument("--ref-label", default="CPU loss")
    c.add_argument("--got-label", default="GPU loss")
    c.set_defaults(run=cmd_compare)
    r = sub.add_parser("report")
    r.add_argument("--manifest", required=True)
    r.add_argument("--out", required=True, help="folder for results.json and results.md")
    r.add_argument("--zeroc", help="the zeroc benchmark's --log-json file")
    r.add_argument("--zeroc-flash", help="the same with ZEROC_FLASH_ATTENTION=1 (opt-in kernel)")
    r.add_argument("--torch-eager", help="gpu_torch.py --json file")
    r.add_argument("--torch-compile", help="gpu_torch.py --compile --json file")
    r.add_argument("--note", action="append", metavar="IMPL=TEXT",
                   help="why IMPL (zeroc, torch-eager, torch-compile) failed or did not run")
    r.add_argument("--tiny-results", help="the JSON lines of `compare --results`")
    r.add_argument("--kernel-tests", help="JSON: status, pass, fail, rc")
    r.add_argument("--failures", help="file with one failure per line")
    r.add_argument("--peak-flops", type=float, default=989e12)
    r.add_argument("--warmup", type=int)
    r.add_argument("--device")
    r.add_argument("--date")
    r.set_defaults(run=cmd_report)
    args = p.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
