"""Compares the emulated CUDA's counts (ZC_EMU_STATS=1) of a 1-step and a
3-step run: the events the runtime creates must not grow with the steps,
the NCCL calls must grow threefold, and nothing may be left queued on the
communication stream at exit (every collective was waited for).

    compare_stats.py STATS_1_STEP STATS_3_STEPS
"""

import re
import sys

LINE = re.compile(r"emulated CUDA: (\d+) events created, (\d+) NCCL calls, (\d+) operations left")


def read(path):
    rows = [tuple(map(int, m.groups())) for m in map(LINE.search, open(path)) if m]
    if not rows:
        sys.exit(f"compare_stats: {path}: no 'emulated CUDA:' line")
    return rows


def main():
    one, three = read(sys.argv[1]), read(sys.argv[2])
    if len(one) != len(three):
        sys.exit(f"compare_stats: {len(one)} ranks against {len(three)}")
    for (e1, n1, q1), (e3, n3, q3) in zip(sorted(one), sorted(three)):
        if e1 != e3:
            sys.exit(f"compare_stats: {e1} events after 1 step, {e3} after 3: events are made per step")
        if n1 == 0 or n3 != 3 * n1:
            sys.exit(f"compare_stats: {n1} NCCL calls in 1 step, {n3} in 3")
        if q1 or q3:
            sys.exit(f"compare_stats: {q1} and {q3} operations never ran on the communication stream")
    print("events: the same after 1 and 3 steps; NCCL calls: 3 times as many; none left")


if __name__ == "__main__":
    main()
