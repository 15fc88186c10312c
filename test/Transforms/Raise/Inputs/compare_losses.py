"""Compares the per-step losses of two zeroc-run outputs (JSON).

Usage: compare_losses.py [--rank0] A.json B.json [RTOL]. Prints one line
per step and exits 1 when a loss of some rank differs by more than RTOL
(relative, default 1e-5) or when the runs have different steps or ranks.
With --rank0, only rank 0's losses are compared (runs on different world
sizes, every rank of which reports the global loss).
"""
import json
import sys


def losses(path):
    with open(path) as f:
        run = json.load(f)
    return [[ranks[0] for ranks in step["results"]] for step in run["steps"]]


def main():
    args = sys.argv[1:]
    rank0 = "--rank0" in args
    args = [arg for arg in args if arg != "--rank0"]
    a, b = losses(args[0]), losses(args[1])
    if rank0:
        a, b = [x[:1] for x in a], [y[:1] for y in b]
    rtol = float(args[2]) if len(args) > 2 else 1e-5
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b)):
        print("different steps or ranks: %d and %d steps" % (len(a), len(b)))
        return 1
    ok = True
    for step, (x, y) in enumerate(zip(a, b)):
        worst = max(abs(p - q) / max(abs(p), abs(q), 1e-30) for p, q in zip(x, y))
        good = worst <= rtol
        ok = ok and good
        print("step %d: loss %.6f and %.6f %s" % (step, x[0], y[0], "agree" if good else "DIFFER (rel %.3g)" % worst))
    if a[0][0] == a[-1][0]:
        print("the loss did not change: nothing was trained")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
