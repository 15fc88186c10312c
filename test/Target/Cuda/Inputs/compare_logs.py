#!/usr/bin/env python3
"""Compares the per-step loss and gradient norm (and any evaluations' val_loss)
of two --log-json files.

Usage: compare_logs.py GOT.jsonl REFERENCE.jsonl RTOL
Prints the largest relative differences; exits 1 when a step differs by
more than RTOL (relative), or the files do not have the same steps.
"""

import json
import math
import sys


def steps(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {r["step"]: r for r in records if "loss" in r and "step" in r}


def evals(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {r["step"]: r["val_loss"] for r in records if "val_loss" in r}


def main():
    got, ref, rtol = steps(sys.argv[1]), steps(sys.argv[2]), float(sys.argv[3])
    got_evals, ref_evals = evals(sys.argv[1]), evals(sys.argv[2])
    if sorted(got_evals) != sorted(ref_evals):
        sys.exit("evaluations differ: steps %s vs %s" % (sorted(got_evals), sorted(ref_evals)))
    for step, value in ref_evals.items():
        if got_evals[step] is None or abs(got_evals[step] - value) > rtol * abs(value):
            sys.exit("step %d: val_loss %r vs reference %r" % (step, got_evals[step], value))
    if not ref or sorted(got) != sorted(ref):
        sys.exit("steps differ: %s vs %s" % (sorted(got), sorted(ref)))
    worst = {"loss": 0.0, "grad_norm": 0.0}
    for step in sorted(ref):
        for key in worst:
            a, b = got[step][key], ref[step][key]
            if a is None or b is None or not math.isfinite(a):
                sys.exit("step %d: %s is %s, reference %s" % (step, key, a, b))
            diff = abs(a - b) / max(abs(b), 1e-12)
            worst[key] = max(worst[key], diff)
            if diff > rtol:
                sys.exit("step %d: %s %r vs reference %r: relative difference "
                         "%.2e over %.0e" % (step, key, a, b, diff, rtol))
    print("%d steps and %d evaluations agree: loss within %.1e, grad norm within "
          "%.1e (rtol %.0e)" % (len(ref), len(ref_evals), worst["loss"],
                                worst["grad_norm"], rtol))


if __name__ == "__main__":
    main()
