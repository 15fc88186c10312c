"""Inputs and PyTorch's losses for ignore-index-all-ignored.test.

Usage: all_ignored.py DIR [NAME RUN.json...]. Writes DIR/all.safetensors (every target of the
batch of Inputs/ignore-index.mlir is the ignored class 0) and
DIR/half.safetensors (every target of rank 0's half, the first 4 samples,
is 0; rank 1's are not) with the step argument 0, DIR/init.safetensors
(the parameters w and b), and prints PyTorch 1.13's mean cross-entropy
(ignore_index 0, label smoothing 0.1) of the model's logits x @ w^T + b on
both batches: NaN (0 / 0) for the first, a number for the second. With
NAME and zeroc-run outputs (JSON, one step), also compares each run's loss
on every rank with PyTorch's on batch NAME: both NaN, or within 1e-5
(relative); prints "agree" or "DIFFER" per run and exits 1 on a
difference.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

from zeroc import weights


def main():
    out = sys.argv[1]
    reference = {}
    torch.manual_seed(0)
    x = torch.randn(8, 2, 3)
    w, b = torch.randn(3, 3) * 0.5, torch.randn(3) * 0.1
    weights.save_state_dict(os.path.join(out, "init.safetensors"), {"w": w, "b": b})
    half = torch.tensor([[0, 0]] * 4 + [[1, 2], [2, 0], [1, 1], [2, 2]], dtype=torch.int32)
    for name, y in (("all", torch.zeros(8, 2, dtype=torch.int32)), ("half", half)):
        weights.save_state_dict(os.path.join(out, f"{name}.safetensors"),
                                {"arg0": x, "arg1": y, "arg2": torch.tensor(0)})
        logits = x @ w.T + b
        loss = F.cross_entropy(logits.reshape(-1, 3), y.reshape(-1).long(), ignore_index=0,
                               label_smoothing=0.1)
        print(f"pytorch {name}: {loss.item():.6f}")
        reference[name] = loss.item()
    ok = True
    if len(sys.argv) > 2:
        want = reference[sys.argv[2]]
        for path in sys.argv[3:]:
            with open(path) as f:
                results = json.load(f)["steps"][0]["results"]
            got = [float(rank[0]) for rank in results]  # "nan" for NaN
            good = all(math.isnan(g) if math.isnan(want) else
                       abs(g - want) <= 1e-5 * abs(want) for g in got)
            ok = ok and good
            print(f"{path}: {got} and pytorch {want}: {'agree' if good else 'DIFFER'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
