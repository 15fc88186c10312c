#!/usr/bin/env python3
"""Draws one step of a --trace file as a timeline (docs/images/trace-stage3.png).

    /usr/bin/python3 docs/plot_trace.py run.json [--step S] [-o out.png]

For each rank, three rows: compute (each op, coloured by phase: forward,
backward, optimizer), communication (each collective from start to
completion, in as many lanes as are in flight at once, coloured by kind)
and waits (the compute stream stalled for a collective). The same picture
as ui.perfetto.dev draws from the JSON, without a browser. Needs matplotlib
(Debian's python3-matplotlib for /usr/bin/python3).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from zeroc import trace as traces  # noqa: E402

PHASE_COLOURS = {"forward": "#4C72B0", "backward": "#DD8452", "optimizer": "#55A868"}
COLLECTIVE_COLOURS = {"all_gather": "#8172B3", "reduce_scatter": "#C44E52",
                      "all_reduce": "#937860"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--step", type=int, help="the step to draw (default: the first traced)")
    parser.add_argument("-o", "--output", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "images", "trace-stage3.png"))
    parser.add_argument("--dpi", type=int, default=80)
    parser.add_argument("--title")
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    data = traces.load(args.trace)
    spans = traces._spans(data["traceEvents"])
    other = data.get("otherData", {})
    step = args.step if args.step is not None else other.get("first_step")
    if step is None:
        step = min(e.get("args", {}).get("step", 0) for *_, e in spans)
    ranks = sorted({pid for pid, *_ in spans})
    start = {pid: b for pid, tid, b, e, ev in spans
             if tid == traces.STEP_TRACK and ev.get("args", {}).get("step") == step}
    origin = min(start.values()) if start else 0.0

    rows = []  # (label, y)
    fig_height = 0.9 + 0.55 * len(ranks) * 3
    fig, ax = plt.subplots(figsize=(12, fig_height))
    y = 0.0
    for pid in reversed(ranks):
        mine = [(tid, (b - origin) / 1e3, (e - origin) / 1e3, ev) for p, tid, b, e, ev in spans
                if p == pid and ev.get("args", {}).get("step") == step]
        waits = [m for m in mine if m[0] == traces.WAIT_TRACK]
        comm = sorted([m for m in mine if m[0] == traces.COMM_TRACK], key=lambda m: m[1])
        compute = [m for m in mine if m[0] == traces.COMPUTE_TRACK]
        # Waits.
        for _, b, e, ev in waits:
            ax.broken_barh([(b, max(e - b, 1e-4))], (y + 0.1, 0.8), color="#B0B0B0")
        rows.append((f"rank {pid} waits", y + 0.5))
        y += 1
        # Collectives in lanes.
        lanes: list[float] = []
        placed = []
        for _, b, e, ev in comm:
            lane = next((i for i, end in enumerate(lanes) if end <= b), None)
            if lane is None:
                lane = len(lanes)
                lanes.append(e)
            lanes[lane] = e
            placed.append((lane, b, e, ev))
        height = max(len(lanes), 1)
        for lane, b, e, ev in placed:
            kind = ev.get("args", {}).get("collective_kind", "all_reduce")
            ax.broken_barh([(b, max(e - b, 1e-4))],
                           (y + 0.1 + lane / height * 0.9, 0.9 / height * 0.9),
                           facecolor=COLLECTIVE_COLOURS.get(kind, "#999999"),
                           edgecolor="white", linewidth=0.6)
        rows.append((f"rank {pid} comm", y + 0.5))
        y += 1
        for _, b, e, ev in compute:
            phase = ev.get("args", {}).get("phase", "forward")
            ax.broken_barh([(b, max(e - b, 1e-4))], (y + 0.1, 0.8),
                           facecolor=PHASE_COLOURS.get(phase, "#999999"), edgecolor="white",
                           linewidth=0.3)
        rows.append((f"rank {pid} compute", y + 0.5))
        y += 1.4
    ax.set_yticks([r[1] for r in rows])
    ax.set_yticklabels([r[0] for r in rows])
    ax.set_xlabel("ms from the start of the step")
    ax.set_xlim(left=0)
    stage = other.get("zero_stage")
    ax.set_title(args.title or f"{other.get('model', 'model')}: ZeRO stage {stage}, "
                 f"{len(ranks)} ranks, step {step} (--trace, {other.get('clock', 'host')} clock)")
    legend = [Patch(color=c, label=p) for p, c in PHASE_COLOURS.items()]
    legend += [Patch(color=c, label=k.replace("_", "-")) for k, c in COLLECTIVE_COLOURS.items()]
    legend.append(Patch(color="#B0B0B0", label="wait"))
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=7,
              frameon=False)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    fig.savefig(args.output, dpi=args.dpi)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
