#!/usr/bin/python3
"""The memory-budget planner's table as a figure, for docs/guide.md.

    /usr/bin/python3 docs/plot_plan.py PLAN.json [-o docs/images/plan-gpt2-1558m.png]
        [--budgets 16 24 40 80] [--dpi 80]

PLAN.json is `zeroc MODEL --world-size=N --memory-budget=B --emit=plan-json`
(benchmarks/planner.py --json-dir writes the guide's). One group of bars
per ZeRO stage, one bar per --remat policy (the largest bucket size of
each): the persistent model states of one rank, and hatched on top the
transient peak of the step, both read from the plan as printed; the
horizontal lines are the budgets (GiB), each labelled with the candidate
the planner's rule (docs/planner.md) picks under it.

Standard library and matplotlib only.
"""
import argparse
import json
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_plan.py: needs matplotlib (Debian: apt-get install python3-matplotlib, "
             "then run this script with /usr/bin/python3)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POLICIES = (("none", "#4c72b0"), ("selective", "#55a868"), ("full", "#c44e52"))
COST = {"none": 0, "selective": 1, "full": 2}
GIB = 1 << 30


def pick(candidates, budget):
    """The planner's rule on the plan's figures (docs/planner.md)."""
    fits = [c for c in candidates if c["peak_bytes_per_rank"] <= budget]
    if not fits:
        return None
    least = min(c["comm_bytes_per_step"] for c in fits)
    near = [c for c in fits if c["comm_bytes_per_step"] <= least + least // 1000]
    return min(near, key=lambda c: (COST[c["remat"]], c["micro_batches"], -c["bucket_bytes"],
                                    c["stage"], c["comm_bytes_per_step"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plan", help="zeroc --emit=plan-json output")
    parser.add_argument("-o", "--output", default="docs/images/plan-gpt2-1558m.png")
    parser.add_argument("--budgets", type=float, nargs="+", default=[16, 24, 40, 80])
    parser.add_argument("--dpi", type=int, default=80)
    args = parser.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    if "candidates" not in plan:
        sys.exit(f"plot_plan.py: {args.plan}: not a zeroc plan (no 'candidates')")
    rows = {}
    for c in plan["candidates"]:
        key = (c["stage"], c["remat"])
        if key not in rows or c["bucket_bytes"] > rows[key]["bucket_bytes"]:
            rows[key] = c
    stages = sorted({s for s, _ in rows})
    fig, ax = plt.subplots(figsize=(8.4, 5.0))
    width = 0.26
    for i, (policy, color) in enumerate(POLICIES):
        xs, states, transient = [], [], []
        for x, stage in enumerate(stages):
            c = rows.get((stage, policy))
            if c is None:
                continue
            xs.append(x + (i - 1) * width)
            states.append(c["model_state_bytes"] / GIB)
            transient.append(c["transient_peak_bytes"] / GIB)
        ax.bar(xs, states, width, color=color, label=f"--remat={policy}: model states")
        ax.bar(xs, transient, width, bottom=states, color="white", edgecolor=color,
               hatch="//", label=f"--remat={policy}: transient peak")
        for x, s, t in zip(xs, states, transient):
            ax.annotate(f"{s + t:.1f}", (x, s + t), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 1), textcoords="offset points")
    top = max(c["peak_bytes_per_rank"] for c in rows.values()) / GIB
    for budget in args.budgets:
        chosen = pick(list(plan["candidates"]), budget * GIB)
        label = (f"{budget:g} GiB: stage {chosen['stage']}, {chosen['remat']}" if chosen
                 else f"{budget:g} GiB: nothing fits")
        ax.axhline(budget, color="#555555", linestyle="--", linewidth=0.8)
        ax.text(1.01, budget, label, ha="left", va="center", fontsize=7, color="#333333",
                transform=ax.get_yaxis_transform())
        top = max(top, budget)
    ax.set_xticks(range(len(stages)))
    ax.set_xticklabels([f"stage {s}" for s in stages])
    ax.set_ylabel("GiB per rank")
    ax.set_ylim(0, top * 1.12)
    ax.set_title(f"Ψ = {plan['parameters']:,} parameters, {plan['precision']}, "
                 f"N = {plan['world_size']}: peak per rank by stage and --remat,\n"
                 "and the planner's pick under each budget (dashed)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=args.dpi)
    plt.close(fig)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
