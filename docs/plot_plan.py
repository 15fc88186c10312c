#!/usr/bin/python3
"""The memory-budget planner's table as a figure, for docs/guide.md.

    /usr/bin/python3 docs/plot_plan.py PLAN.json [BUDGET_PLAN.json ...]
        [-o docs/images/plan-gpt2-1558m.png] [--dpi 80]

Each PLAN.json is `zeroc MODEL --world-size=N --memory-budget=B
--emit=plan-json` (benchmarks/planner.py --json-dir writes the guide's:
plan-gpt2-1558m-n8-{16,24,40,80}GiB.json). The first plan's one-micro-batch
candidates are the bars: one group per ZeRO stage, one bar per --remat
policy (the largest bucket size of each), the persistent model states of
one rank and hatched on top the transient peak of the step, both read from
the plan as printed. Each plan's budget is a horizontal line labelled with
the candidate zeroc picked under it (`picked`; the rule is the planner's,
docs/planner.md, and is not decided again here).

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
GIB = 1 << 30


def describe(plan):
    """The label of a plan's budget line: what zeroc picked under it."""
    budget = plan["budget_bytes"] / GIB
    if plan.get("picked") is None:
        return f"{budget:g} GiB: nothing fits"
    c = plan["candidates"][plan["picked"]]
    micro = c["micro_batches"]
    more = f", {micro} micro-batches" if micro > 1 else ""
    return f"{budget:g} GiB: stage {c['stage']}, {c['remat']}{more}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plans", nargs="+", metavar="PLAN.json",
                        help="zeroc --emit=plan-json output, one per budget")
    parser.add_argument("-o", "--output", default="docs/images/plan-gpt2-1558m.png")
    parser.add_argument("--dpi", type=int, default=80)
    args = parser.parse_args()
    plans = []
    for path in args.plans:
        try:
            with open(path) as f:
                got = json.load(f)
        except (OSError, ValueError) as error:
            sys.exit(f"plot_plan.py: {path}: {error}")
        if not isinstance(got, dict) or "candidates" not in got or "budget_bytes" not in got:
            sys.exit(f"plot_plan.py: {path}: not a zeroc plan (no 'candidates' or 'budget_bytes')")
        plans.append(got)
    plan = plans[0]
    rows = {}
    for c in plan["candidates"]:
        if c["micro_batches"] != 1:
            continue
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
    for budget_plan in plans:
        budget = budget_plan["budget_bytes"] / GIB
        ax.axhline(budget, color="#555555", linestyle="--", linewidth=0.8)
        ax.text(1.01, budget, describe(budget_plan), ha="left", va="center", fontsize=7,
                color="#333333", transform=ax.get_yaxis_transform())
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
