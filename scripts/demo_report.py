#!/usr/bin/python3
"""The demo's figures: the memory table of stages 0-3 side by side, and the
loss against the unigram entropy of the data (with an optional plot)."""
import argparse
import collections
import json
import math
import sys


def mib(n):
    return f"{n / 2**20:9.2f}"


def memory(reports):
    rows = [json.load(open(p)) for p in reports]
    n, psi = rows[0]["world_size"], rows[0]["parameters"]
    print(f"  {psi:,} parameters, {rows[0]['precision']}, N = {n} ranks; MiB per rank")
    print("  " + f"{'':22}" + "".join(f"{'stage ' + str(r['stage']):>11}" for r in rows))
    keys = [("parameters", "per_rank_bytes"), ("gradients", "per_rank_bytes"),
            ("optimizer_states", "per_rank_bytes"), ("model_states", "per_rank_bytes"),
            ("gathered_parameters", "transient_bytes"), ("gradient_buckets", "transient_bytes"),
            ("activations", "transient_bytes")]
    for key, group in keys:
        print("  " + f"{key.replace('_', ' '):22}" +
              "".join(f"  {mib(r[group][key])}" for r in rows))
    print("  " + f"{'sent per step':22}" +
          "".join(f"  {mib(r['communication_per_rank_per_step']['bytes'])}" for r in rows))


def unigram_entropy(path):
    data = open(path, "rb").read()
    counts = collections.Counter(data)
    return -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())


def loss(data, log, reports, plot):
    steps = [json.loads(l) for l in open(log) if '"loss"' in l]
    entropy = unigram_entropy(data)
    first, last = steps[0]["loss"], steps[-1]["loss"]
    tail = [s["loss"] for s in steps[-20:]]
    mean_tail = sum(tail) / len(tail)
    print(f"== loss: {first:.3f} at step 0, {last:.3f} at step {steps[-1]['step']} "
          f"(mean of the last {len(tail)}: {mean_tail:.3f} nats/byte)")
    print(f"   unigram entropy of the data: {entropy:.3f} nats/byte -> the model is "
          f"{entropy - mean_tail:.3f} nats/byte below it")
    if plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("   (no matplotlib: no plot)")
            return
        rows = [json.load(open(p)) for p in reports]
        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
        labels = [f"stage {r['stage']}" for r in rows]
        bottom = [0.0] * len(rows)
        for key, color in (("parameters", "#4c72b0"), ("gradients", "#55a868"),
                           ("optimizer_states", "#c44e52")):
            values = [r["per_rank_bytes"][key] / 2**20 for r in rows]
            a.bar(labels, values, bottom=bottom, label=key.replace("_", " "), color=color)
            bottom = [x + y for x, y in zip(bottom, values)]
        a.set_ylabel("MiB per rank")
        a.set_title(f"model states per rank, N = {rows[0]['world_size']}")
        a.legend()
        b.plot([s["step"] for s in steps], [s["loss"] for s in steps], label="training loss")
        b.axhline(entropy, color="gray", linestyle="--", label="unigram entropy")
        b.set_xlabel("step")
        b.set_ylabel("nats per byte")
        b.set_title("loss, ZeRO stage 3")
        b.legend()
        fig.tight_layout()
        fig.savefig(plot, dpi=100)
        print(f"   plot: {plot}")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("memory")
    m.add_argument("reports", nargs="+")
    l = sub.add_parser("loss")
    l.add_argument("data")
    l.add_argument("log")
    l.add_argument("reports", nargs="+")
    l.add_argument("--plot")
    args = parser.parse_args()
    if args.what == "memory":
        memory(args.reports)
    else:
        loss(args.data, args.log, args.reports, args.plot)


if __name__ == "__main__":
    main()
