"""``python3 -m zeroc trace-summary TRACE.json [...]``: what a traced step did.

Reads the Chrome / Perfetto trace an executable writes with ``--trace PATH``
(docs/executable.md) and prints, per rank and step on average:

* the step time, and the compute time by op kind (matmul, layernorm, ...);
* the communication: collectives in flight, the time the compute stream
  waited for them (exposed communication) per phase of the step (forward,
  backward, optimizer), and the overlap: the share of the time collectives
  were in flight that the rank did not wait.

With several traces (say one per ZeRO stage) it ends with one line each.
``--json`` prints the same figures as JSON. Standard library only.

    from zeroc import trace
    summary = trace.summarize(trace.load("run.json"))
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

PHASES = ("forward", "backward", "optimizer")
STEP_TRACK, COMPUTE_TRACK, COMM_TRACK, WAIT_TRACK = 0, 1, 2, 3


class TraceError(ValueError):
    """A file that is not a trace zeroc wrote."""


def load(path: str) -> dict:
    """The trace at `path` as a dict with ``traceEvents``."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as error:
        raise TraceError(f"{path}: cannot read: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise TraceError(f"{path}: not JSON: {error}") from None
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TraceError(f"{path}: no traceEvents array (not a trace-event file)")
    return data


def _spans(events: list[dict]):
    """(pid, tid, begin, end, event) of every B/E pair and every b/e pair."""
    open_spans: dict[tuple, list] = defaultdict(list)
    open_async: dict[tuple, dict] = {}
    spans = []
    for event in events:
        ph = event.get("ph")
        key = (event.get("pid"), event.get("tid"))
        if ph == "B":
            open_spans[key].append(event)
        elif ph == "E":
            if not open_spans[key]:
                raise TraceError(f"an end without a begin on track {key} at {event.get('ts')}")
            begin = open_spans[key].pop()
            spans.append((key[0], key[1], float(begin["ts"]), float(event["ts"]), begin))
        elif ph == "X":
            ts = float(event["ts"])
            spans.append((key[0], key[1], ts, ts + float(event.get("dur", 0)), event))
        elif ph == "b":
            open_async[(event.get("pid"), event.get("cat"), event.get("id"))] = event
        elif ph == "e":
            begin = open_async.pop((event.get("pid"), event.get("cat"), event.get("id")), None)
            if begin is None:
                raise TraceError(f"an async end without a begin (id {event.get('id')})")
            spans.append((key[0], COMM_TRACK, float(begin["ts"]), float(event["ts"]), begin))
    return spans


def _union(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of `intervals`."""
    total, end = 0.0, float("-inf")
    for begin, finish in sorted(intervals):
        if finish <= end:
            continue
        total += finish - max(begin, end)
        end = finish
    return total


def summarize(trace: dict) -> dict:
    """Per rank and step means: step, compute by kind, communication, waits."""
    spans = _spans(trace["traceEvents"])
    other = trace.get("otherData", {})
    ranks = sorted({pid for pid, *_ in spans})
    steps_by_rank: dict[int, list] = defaultdict(list)
    for pid, tid, begin, end, event in spans:
        if tid == STEP_TRACK:
            steps_by_rank[pid].append((begin, end, event.get("args", {}).get("step")))
    samples = sum(len(v) for v in steps_by_rank.values()) or 1
    step_times = [end - begin for v in steps_by_rank.values() for begin, end, _ in v]

    compute = defaultdict(float)
    calls = defaultdict(int)
    exposed = defaultdict(float)
    in_flight = defaultdict(list)  # (rank, step) -> intervals
    collectives = defaultdict(int)
    bytes_sent = 0
    for pid, tid, begin, end, event in spans:
        args = event.get("args", {})
        if tid == COMPUTE_TRACK:
            kind = event.get("cat", "?")
            compute[kind] += end - begin
            calls[kind] += 1
        elif tid == WAIT_TRACK:
            exposed[args.get("phase", "?")] += end - begin
        elif tid == COMM_TRACK:
            in_flight[(pid, args.get("step"))].append((begin, end))
            collectives[args.get("collective_kind", "?")] += 1
            bytes_sent += int(args.get("bytes", 0))
    comm_time = sum(_union(v) for v in in_flight.values())
    exposed_total = sum(exposed.values())
    scale = 1e-3 / samples  # microseconds in total -> ms per rank and step
    summary = {
        "model": other.get("model"),
        "zero_stage": other.get("zero_stage"),
        "world_size": other.get("world_size", len(ranks)),
        "ranks_traced": len(ranks),
        "first_step": other.get("first_step"),
        "last_step": other.get("last_step"),
        "clock": other.get("clock"),
        "steps_per_rank": samples / max(len(ranks), 1),
        "step_ms": sum(step_times) / len(step_times) * 1e-3 if step_times else 0.0,
        "slowest_step_ms": max(step_times) * 1e-3 if step_times else 0.0,
        "compute_ms": sum(compute.values()) * scale,
        "compute_ms_by_kind": {k: v * scale for k, v in compute.items()},
        "calls_by_kind": {k: v / samples for k, v in calls.items()},
        "collectives": {k: v / samples for k, v in collectives.items()},
        "bytes_sent": bytes_sent / samples,
        "comm_in_flight_ms": comm_time * scale,
        "exposed_comm_ms": exposed_total * scale,
        "exposed_comm_ms_by_phase": {p: exposed.get(p, 0.0) * scale for p in PHASES},
        "overlap": max(0.0, 1.0 - exposed_total / comm_time) if comm_time > 0 else 1.0,
    }
    return summary


def format_summary(path: str, s: dict) -> str:
    lines = []
    stage = s["zero_stage"]
    steps = (f"steps {s['first_step']}-{s['last_step']}"
             if s["first_step"] is not None else "")
    lines.append(f"{path}: {s['model'] or 'model'}, ZeRO stage {stage}, "
                 f"{s['world_size']} rank(s), {steps} (clock: {s['clock']})")
    lines.append(f"step: {s['step_ms']:.3f} ms (mean over ranks and steps; slowest "
                 f"{s['slowest_step_ms']:.3f} ms)")
    lines.append("")
    lines.append("compute per rank and step, by op kind:")
    lines.append(f"  {'kind':<22} {'ms':>10} {'share':>7} {'calls':>7}")
    total = s["compute_ms"] or 1.0
    for kind, ms in sorted(s["compute_ms_by_kind"].items(), key=lambda kv: -kv[1]):
        lines.append(f"  {kind:<22} {ms:>10.3f} {100 * ms / total:>6.1f}% "
                     f"{s['calls_by_kind'][kind]:>7.1f}")
    lines.append(f"  {'total':<22} {s['compute_ms']:>10.3f}")
    lines.append("")
    kinds = ", ".join(f"{n:g} {k}" for k, n in sorted(s["collectives"].items()))
    lines.append(f"communication per rank and step: {kinds or 'none'}; "
                 f"{s['bytes_sent'] / 2**20:.2f} MiB sent")
    lines.append(f"  in flight {s['comm_in_flight_ms']:.3f} ms, exposed (waiting) "
                 f"{s['exposed_comm_ms']:.3f} ms, overlap {100 * s['overlap']:.1f}%")
    lines.append("  exposed by phase: " + ", ".join(
        f"{p} {s['exposed_comm_ms_by_phase'][p]:.3f} ms" for p in PHASES))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m zeroc trace-summary",
        description="Sum up traces written by an executable's --trace: time by op kind, "
                    "exposed communication per phase of the step, overlap.")
    parser.add_argument("traces", nargs="+", metavar="TRACE.json")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    summaries = []
    for path in args.traces:
        try:
            data = load(path)
            summaries.append((path, summarize(data)))
        except TraceError as error:
            message = str(error)
            if not message.startswith(path):
                message = f"{path}: {message}"
            print(f"python3 -m zeroc trace-summary: error: {message}", file=sys.stderr)
            return 1
    if args.json:
        json.dump({path: s for path, s in summaries}, sys.stdout, indent=2)
        print()
        return 0
    print("\n\n".join(format_summary(path, s) for path, s in summaries))
    if len(summaries) > 1:
        print("\n" + f"{'trace':<32} {'stage':>5} {'ranks':>5} {'step ms':>10} "
              f"{'exposed ms':>11} {'overlap':>8}")
        for path, s in summaries:
            print(f"{path[-32:]:<32} {str(s['zero_stage']):>5} {s['world_size']:>5} "
                  f"{s['step_ms']:>10.3f} {s['exposed_comm_ms']:>11.3f} "
                  f"{100 * s['overlap']:>7.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
