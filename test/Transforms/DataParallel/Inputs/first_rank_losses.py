"""Compares rank 0's per-step losses of two zeroc-run outputs (JSON), which
may have run on different numbers of simulated ranks (every rank returns
the global mean loss).

Usage: first_rank_losses.py A.json B.json [RTOL]. Prints one line per step
and exits 1 when a loss differs by more than RTOL (relative, default 1e-5),
when the step counts differ, or when the loss never changed.
"""
import json
import sys


def losses(path):
    with open(path) as f:
        run = json.load(f)
    return [step["results"][0][0] for step in run["steps"]]


def main():
    a, b = losses(sys.argv[1]), losses(sys.argv[2])
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    if len(a) != len(b):
        print("different steps: %d and %d" % (len(a), len(b)))
        return 1
    ok = True
    for step, (x, y) in enumerate(zip(a, b)):
        worst = abs(x - y) / max(abs(x), abs(y), 1e-30)
        good = worst <= rtol
        ok = ok and good
        print("step %d: loss %.6f and %.6f %s" % (step, x, y,
                                                  "agree" if good else "DIFFER (rel %.3g)" % worst))
    if a[0] == a[-1]:
        print("the loss did not change: nothing was trained")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
