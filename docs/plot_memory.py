#!/usr/bin/python3
"""Plots for docs/guide.md: per-rank memory by ZeRO stage, and a loss curve.

    /usr/bin/python3 docs/plot_memory.py REPORT.json... [-o memory-by-stage.png]
        [--log train.jsonl [--loss-output loss.png] [--text-data FILE]] [--dpi 80]

REPORT.json are `zeroc MODEL --zero-stage=S --world-size=N --emit=memory-report`
outputs (one per stage; reports of another model, world size or precision go
to a panel of their own). Each bar stacks the persistent model states of one
rank (parameters, gradients, optimizer states); the hatched part on top is
the transient peak of the step (gathered parameters, gradient buckets and
activations together). Every figure is read from the reports as printed.

--log is a JSON Lines training log (`--log-json` of a zeroc executable): the
training loss per step, the validation loss if the log has one, and with
--text-data the unigram entropy of that file's bytes (the loss of a model
that ignores context, for byte-level data).

Standard library and matplotlib only.
"""
import argparse
import collections
import json
import math
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_memory.py: needs matplotlib (Debian: apt-get install python3-matplotlib, "
             "then run this script with /usr/bin/python3)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PERSISTENT = (("parameters", "#4c72b0"), ("gradients", "#55a868"),
              ("optimizer_states", "#c44e52"))


def load_reports(paths):
    """Reports grouped by (parameters, world size, precision), stages sorted."""
    groups = collections.OrderedDict()
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        for key in ("parameters", "world_size", "stage", "precision",
                    "per_rank_bytes", "transient_bytes"):
            if key not in report:
                sys.exit(f"plot_memory.py: {path}: not a zeroc memory report (no '{key}')")
        key = (report["parameters"], report["world_size"], report["precision"])
        groups.setdefault(key, []).append(report)
    for reports in groups.values():
        reports.sort(key=lambda r: r["stage"])
    return groups


def unit_for(max_bytes):
    for name, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if max_bytes >= size:
            return name, size
    return "bytes", 1


def plot_memory(groups, output, dpi):
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups) + 2.2, 3.8),
                             squeeze=False)
    for ax, ((psi, n, precision), reports) in zip(axes[0], groups.items()):
        top = max(r["per_rank_bytes"]["model_states"] + r["transient_bytes"]["peak"]
                  for r in reports)
        unit, size = unit_for(top)
        labels = [f"stage {r['stage']}" for r in reports]
        bottom = [0.0] * len(reports)
        for key, color in PERSISTENT:
            values = [r["per_rank_bytes"][key] / size for r in reports]
            ax.bar(labels, values, bottom=bottom, color=color, label=key.replace("_", " "))
            bottom = [b + v for b, v in zip(bottom, values)]
        peaks = [r["transient_bytes"]["peak"] / size for r in reports]
        ax.bar(labels, peaks, bottom=bottom, color="white", edgecolor="#777777",
               hatch="//", label="transient peak")
        for x, (b, p) in enumerate(zip(bottom, peaks)):
            ax.annotate(f"{b:.3g}", (x, b), ha="center", va="bottom", fontsize=8,
                        xytext=(0, 1), textcoords="offset points",
                        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
            ax.annotate(f"{b + p:.3g}", (x, b + p), ha="center", va="bottom", fontsize=8,
                        xytext=(0, 1), textcoords="offset points")
        ax.set_ylabel(f"{unit} per rank")
        ax.set_title(f"Ψ = {psi:,} parameters, {precision}, N = {n} ranks", fontsize=10)
        ax.margins(y=0.08)
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("memory of one rank by ZeRO stage: model states, and with the transient peak",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=dpi)
    plt.close(fig)
    print(f"wrote {output}")


def unigram_entropy(path):
    with open(path, "rb") as f:
        data = f.read()
    counts = collections.Counter(data)
    return -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())


def plot_loss(log, output, text_data, dpi):
    train, val, ranks = [], [], None
    with open(log) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("summary"):
                ranks = len(row.get("ranks", []))
            elif row.get("loss") is not None:
                train.append((row["step"], row["loss"]))
            elif row.get("val_loss") is not None:
                val.append((row["step"], row["val_loss"]))
    if not train:
        sys.exit(f"plot_memory.py: {log}: no training loss in the log")
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(*zip(*train), label="training loss", linewidth=1.2)
    if val:
        ax.plot(*zip(*val), "o-", label="validation loss", markersize=3)
    if text_data:
        h = unigram_entropy(text_data)
        ax.axhline(h, color="gray", linestyle="--", label=f"unigram entropy ({h:.3f})")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats per token)")
    where = f" on {ranks} ranks" if ranks else ""
    ax.set_title(f"training loss{where}: {train[0][1]:.3f} at step {train[0][0]}, "
                 f"{train[-1][1]:.3f} at step {train[-1][0]}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=dpi)
    plt.close(fig)
    print(f"wrote {output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", help="zeroc --emit=memory-report JSON files")
    parser.add_argument("-o", "--output", default="docs/images/memory-by-stage.png")
    parser.add_argument("--log", help="JSON Lines training log (--log-json)")
    parser.add_argument("--loss-output", default="docs/images/loss.png")
    parser.add_argument("--text-data", help="byte-level text data: draw its unigram entropy")
    parser.add_argument("--dpi", type=int, default=80)
    args = parser.parse_args()
    if not args.reports and not args.log:
        parser.error("give memory reports, --log, or both")
    if args.reports:
        plot_memory(load_reports(args.reports), args.output, args.dpi)
    if args.log:
        plot_loss(args.log, args.loss_output, args.text_data, args.dpi)


if __name__ == "__main__":
    main()
