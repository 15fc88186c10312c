"""Recomputes the results of generic-ops.mlir's functions with PyTorch.

usage: generic_reference.py ENTRY INPUTS.safetensors RUN.json fp64|f32

The forward ops are torch.amax, torch.var, torch.log_softmax and
torch.gather; the derivative helpers are torch.autograd's gradients of those
(and of torch.nn.functional.embedding with padding_idx) for the same
cotangent, in double precision. PyTorch is the reference only.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402


def tensor(arg, dtype=torch.float64):
    _, shape, values = arg
    return torch.tensor(values, dtype=dtype).reshape(shape)


def leaf(arg):
    return tensor(arg).requires_grad_(True)


def expected(entry, args):
    """The flattened results and a note on what the inputs exercise."""
    if entry == "amax_ties":
        a, b, dy = leaf(args[0]), leaf(args[1]), tensor(args[2])
        x = torch.cat([a, a, b], dim=1).detach().requires_grad_(True)
        y = torch.amax(x, dim=1)
        y.backward(dy)
        ties = int(((x == y[:, None]).sum(dim=1) > 1).sum())
        return [y, x.grad], "%d tied maxima" % ties
    if entry == "var":
        x = tensor(args[0])
        return [torch.var(x, dim=(0, 2), unbiased=True),
                torch.var(x, dim=1, unbiased=False)], None
    if entry == "log_softmax":
        return [torch.log_softmax(tensor(args[0]), dim=-1)], None
    if entry == "gather":
        x, dy = leaf(args[0]), tensor(args[2])
        index = tensor(args[1], torch.int64)
        y = torch.gather(x, 1, index)
        y.backward(dy)
        return [y, x.grad], None
    if entry == "embedding_padding":
        ids, dy = tensor(args[0], torch.int64), tensor(args[1])
        weight = torch.zeros(7, 5, dtype=torch.float64, requires_grad=True)
        torch.nn.functional.embedding(ids, weight, padding_idx=2).backward(dy)
        selected = bool((ids == 2).any())
        return [weight.grad], ("padding row selected" if selected
                               else "padding row NOT selected")
    raise SystemExit("unknown entry " + entry)


def main():
    entry, inputs_path, run_path, mode = sys.argv[1:5]
    tensors, _, _ = evalref.read_safetensors(inputs_path)
    args = [tensors["arg%d" % i] for i in range(len(tensors))]
    got = evalref.load_run(run_path)["steps"][0]["results"][0]
    results, note = expected(entry, args)
    want = [v for r in results for v in r.detach().reshape(-1).tolist()]
    if mode == "fp64":
        rtol, atol = 1e-12, 1e-14
    else:  # f32 results of f32 inputs, computed in double and rounded
        rtol, atol = 2.4e-7, 1e-7
    checker = evalref.Checker("%s %s" % (entry, mode), rtol, atol)
    checker.all(entry, got, want)
    if checker.failures:
        checker.finish()  # prints them and exits 1
    print("%s %s: %d values ok%s" % (entry, mode, checker.count,
                                     " (%s)" % note if note else ""))


if __name__ == "__main__":
    main()
