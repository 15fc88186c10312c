# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun"
"""--trace on real MPI processes: a valid trace-event file whose collectives
are the report's.

A small GPT-2 is compiled for ZeRO stage 3 on 2 ranks with small buckets
(several all-gathers and reduce-scatters in flight) and trained for 4 steps
with --trace --trace-steps 1:3. The trace is checked against the
trace-event format by this script, not by zeroc's own reader:

- every event is metadata (M), a begin or end (B/E) on a track, or an
  asynchronous begin or end (b/e) of a collective; every B has its E on the
  same track and every b its e, none ends before it begins, timestamps
  never go back on a track;
- each rank is a process with steps 1 and 2, compute ops named after their
  op and layer (the attention's c_attn matmul of block 0 in forward and
  backward), waits and collectives;
- the collectives of each rank and step, in order, are the static report's
  (kind and whole buffer), their bytes are the ring accounting of that
  buffer, and they add up to what the runtime counted (bytes_sent of the
  run's summary, per step).

`python3 -m zeroc trace-summary` then reads it. A run without --trace writes
nothing; bad --trace flags are errors that name the flag; --help lists
them.
"""
import json
import os
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import harness  # noqa: E402

CONFIG = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--vocab-size", "256",
          "--block-size", "16", "--batch-size", "8", "--grad-clip", "1.0"]
KINDS = {"all_reduce": 2, "reduce_scatter": 1, "all_gather": 1}


def ring_bytes(kind, elements, ranks, element_bytes):
    numerator = KINDS[kind] * (ranks - 1) * elements
    return (2 * numerator + ranks) // (2 * ranks) * element_bytes


def validate(events, failures):
    """The trace-event format: tracks, pairs, monotonic timestamps."""
    stacks = defaultdict(list)
    last_ts = defaultdict(lambda: float("-inf"))
    open_async = {}
    spans = []
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph == "M":
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)):
            failures.append(f"event {i} has no timestamp: {e}")
            continue
        if ph in ("B", "E"):
            track = (e["pid"], e["tid"])
            if ts < last_ts[track]:
                failures.append(f"event {i}: time goes back on track {track}: {ts} < {last_ts[track]}")
            last_ts[track] = ts
            if ph == "B":
                stacks[track].append(e)
            elif not stacks[track]:
                failures.append(f"event {i}: an E without a B on track {track}")
            else:
                begin = stacks[track].pop()
                spans.append((e["pid"], e["tid"], begin["ts"], ts, begin))
        elif ph in ("b", "e"):
            key = (e["pid"], e.get("cat"), e.get("id"))
            if ph == "b":
                if key in open_async:
                    failures.append(f"event {i}: async id {key} begun twice")
                open_async[key] = e
            else:
                begin = open_async.pop(key, None)
                if begin is None:
                    failures.append(f"event {i}: an async e without its b: {key}")
                elif ts < begin["ts"]:
                    failures.append(f"event {i}: async {key} ends before it begins")
                else:
                    spans.append((e["pid"], "comm", begin["ts"], ts, begin))
        else:
            failures.append(f"event {i}: unexpected phase {ph!r}")
    for track, stack in stacks.items():
        if stack:
            failures.append(f"track {track}: {len(stack)} B without E")
    if open_async:
        failures.append(f"{len(open_async)} async b without e")
    return spans


def main():
    args = harness.parse_args(tools=("--zeroc",))
    data = os.path.join(args.src, "data", "tinyshakespeare.txt")
    model = os.path.join(args.work, "gpt2.mlir")
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *CONFIG, "-o", model], check=True)
    common = ["--zero-stage=3", "--world-size=2", "--bucket-bytes=8192"]
    exe = os.path.join(args.work, "gpt2")
    subprocess.run([args.zeroc, model, *common, "-o", exe], check=True)
    report = json.loads(subprocess.run([args.zeroc, model, *common, "--emit=memory-report"],
                                       check=True, capture_output=True, text=True).stdout)
    mpirun = args.mpirun.split() + ["-np", "2", exe, "--data", data, "--data-format=text",
                                    "--steps", "4", "--quiet"]
    trace_path = os.path.join(args.work, "trace.json")
    log = os.path.join(args.work, "log.jsonl")
    subprocess.run(mpirun + ["--trace", trace_path, "--trace-steps", "1:3", "--log-json", log],
                   check=True)
    failures = []
    trace = json.load(open(trace_path))
    events = trace["traceEvents"]
    spans = validate(events, failures)
    other = trace["otherData"]
    if (other["world_size"], other["zero_stage"], other["first_step"], other["last_step"]) != (2, 3, 1, 2):
        failures.append(f"otherData {other}")

    names = {(e.get("pid"), e["args"]["name"]) for e in events
             if e.get("ph") == "M" and e.get("name") in ("process_name", "thread_name")}
    for rank in (0, 1):
        for name in (f"rank {rank}", "steps", "compute", "waits"):
            if (rank, name) not in names:
                failures.append(f"rank {rank}: no track named {name!r}")
        steps = sorted(b["args"]["step"] for pid, tid, _, _, b in spans if pid == rank and tid == 0)
        if steps != [1, 2]:
            failures.append(f"rank {rank}: steps {steps}, expected [1, 2]")
        compute = {(b["name"], b["args"]["phase"]) for pid, tid, _, _, b in spans
                   if pid == rank and tid == 1}
        for want in [("matmul transformer.h.0.attn.c_attn", "forward"),
                     ("matmul transformer.h.0.attn.c_attn", "backward"),
                     ("layernorm transformer.h.1.ln_2", "forward"),
                     ("adamw_update transformer.h.0.mlp.c_fc", "optimizer")]:
            if want not in compute:
                failures.append(f"rank {rank}: no compute op {want}")
        if not any(pid == rank and tid == 3 for pid, tid, *_ in spans):
            failures.append(f"rank {rank}: no wait")

    # The collectives against the static report.
    collectives = report["collectives"]
    summary = next(json.loads(line) for line in open(log) if '"summary"' in line)
    for rank in (0, 1):
        per_step_runtime = summary["ranks"][rank]["bytes_sent"] / 4
        for step in (1, 2):
            mine = sorted((b["args"] for pid, tid, _, _, b in spans
                           if pid == rank and tid == "comm" and b["args"]["step"] == step),
                          key=lambda a: a["collective"])
            if len(mine) != len(collectives):
                failures.append(f"rank {rank} step {step}: {len(mine)} collectives, report "
                                f"{len(collectives)}")
                continue
            total = 0
            for a, c in zip(mine, collectives):
                element_bytes = 2 if report["precision"] == "bf16" else 4
                want = ring_bytes(c["op"], c["buffer_elements"], c["ranks"], element_bytes)
                if (a["collective_kind"], a["elements"], a["bytes"]) != (c["op"], c["buffer_elements"], want):
                    failures.append(f"rank {rank} step {step} collective {a['collective']}: "
                                    f"{a['collective_kind']} {a['elements']} elements {a['bytes']} B,"
                                    f" report {c['op']} {c['buffer_elements']} -> {want} B")
                total += a["bytes"]
            if total != per_step_runtime:
                failures.append(f"rank {rank} step {step}: {total} B in the trace, the runtime "
                                f"counted {per_step_runtime} per step")
    n_comm = sum(1 for s in spans if s[1] == "comm")
    print(f"trace: {len(events)} events, {n_comm} collectives over 2 ranks and 2 steps, "
          f"{len(collectives)} per rank and step as in the report")

    result = subprocess.run([sys.executable, "-m", "zeroc", "trace-summary", trace_path],
                            capture_output=True, text=True)
    print(result.stdout)
    for want in ("ZeRO stage 3, 2 rank(s), steps 1-2", "compute per rank and step, by op kind:",
                 "matmul", "overlap", "exposed by phase: forward"):
        if want not in result.stdout:
            failures.append(f"trace-summary: no {want!r} in its output")
    if result.returncode != 0:
        failures.append(f"trace-summary failed: {result.stderr}")

    # Without --trace nothing is written; bad flags name themselves.
    quiet = os.path.join(args.work, "none.json")
    subprocess.run(mpirun, check=True)
    if os.path.exists(quiet):
        failures.append("a run without --trace wrote a trace")
    for flags, message in [
            (["--trace", trace_path + "2", "--trace-steps", "3:1"],
             "--trace-steps: '3:1' is not A:B with 0 <= A < B"),
            (["--trace", trace_path + "2", "--trace-steps", "2:9"],
             "--trace-steps 2:9: this run trains steps 0 to 3"),
            (["--trace-steps", "1:2"], "--trace-steps needs --trace PATH"),
            (["--trace", os.path.join(args.work, "no", "such", "dir.json")],
             "--trace: " + os.path.join(args.work, "no", "such", "dir.json") + ": cannot create")]:
        result = subprocess.run(mpirun + flags, capture_output=True, text=True)
        if result.returncode == 0 or message not in result.stderr:
            failures.append(f"{flags}: status {result.returncode}, stderr {result.stderr!r}")
    usage = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
    for flag in ("--trace PATH", "--trace-steps A:B"):
        if flag not in usage:
            failures.append(f"--help does not list {flag}")
    if os.path.exists(trace_path + "2"):
        failures.append("a failed run left a trace")
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
