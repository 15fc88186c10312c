"""Prints, for each of STEPS steps of importer_train.py's batches (4 rows
of 16 on byte-level tinyshakespeare), how many targets equal IGNORE in each
half of the batch (rank 0's and rank 1's rows on 2 ranks), then
"uneven" when some step's halves differ.

Usage: ignored_per_rank.py TEXT IGNORE STEPS
"""
import sys

from zeroc import data


def main():
    text, ignore, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tokens = data.read_tokens(text, "text")
    uneven = False
    for step in range(steps):
        _, targets = data.sample_batch(tokens, step, 4, 16)
        halves = [sum(row.count(ignore) for row in targets[:2]),
                  sum(row.count(ignore) for row in targets[2:])]
        print(f"step {step}: ignored targets on rank 0 and rank 1: {halves}")
        uneven |= halves[0] != halves[1]
    print("uneven" if uneven else "even")


if __name__ == "__main__":
    main()
