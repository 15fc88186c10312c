"""Checks zeroc-run's results on the tiny GPT-2 (gpt2-tiny.test).

usage: gpt2_check.py forward RUN.json
       gpt2_check.py steps FORWARD.json STEP.json
       gpt2_check.py data-parallel GLOBAL.json RANKS.json
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402


def loss_of(path, step=0):
    return evalref.load_run(path)["steps"][step]["results"][0][0]


def main():
    if sys.argv[1] == "forward":
        loss = loss_of(sys.argv[2])
        if not abs(loss - math.log(65)) < 0.05:
            sys.exit("forward loss %r is not near ln(65) = %r" % (loss, math.log(65)))
        print("forward loss %.6f is within 0.05 of ln(65)" % loss)
        return
    if sys.argv[1] == "data-parallel":
        loss = loss_of(sys.argv[2])
        local = evalref.load_run(sys.argv[3])["steps"][0]["results"]
        mean = sum(rank[0] for rank in local) / len(local)
        if not abs(mean - loss) <= 1e-12 * abs(loss):
            sys.exit("mean local loss %r differs from the global %r" % (mean, loss))
        print("the mean of %d local losses is the global loss" % len(local))
        return
    forward = loss_of(sys.argv[2])
    run = evalref.load_run(sys.argv[3])
    losses = [s["results"][0][0] for s in run["steps"]]
    if losses[0] != forward:
        sys.exit("step 0 loss %r differs from the forward loss %r" % (losses[0], forward))
    if not all(b < a for a, b in zip(losses, losses[1:])):
        sys.exit("losses do not decrease: %r" % losses)
    print("step losses %s start at the forward loss and decrease"
          % ", ".join("%.4f" % x for x in losses))


if __name__ == "__main__":
    main()
