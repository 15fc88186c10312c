# RUN: %python %s %zeroc_build/bin
"""Unit tests of the ATen importer's cross-entropy with an ignore_index
that is a token id (issue 31): nll_loss_forward with ignore_index >= 0
(mean, sum, none), the label-smoothing term's mask (eq / bitwise_not /
index_put / masked_select + mean of the targets), every target ignored.
Each model is imported; its IR must verify (zeroc-opt) and compute the
module's loss in float64 (Inputs/train_ir_eval.py) to 1e-9 relative, and
zeroc-opt --train-raise makes the mean forms train.cross_entropy with the
attributes.

Runs under lit or directly:
``python3 test/python/importer_ignore_index_unit.py [BIN_DIR]``.
"""

import copy
import math
import os
import sys
import tempfile
import unittest
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "python" / "Inputs"))

import train_ir_eval  # noqa: E402
from importer_checks import run  # noqa: E402
from zeroc import importer  # noqa: E402
from zeroc.importer import ImporterError  # noqa: E402

BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
B, T, V = 2, 16, 32
K = 5  # the ignore_index, a token id


class Loss(nn.Module):
    def __init__(self, loss):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)
        self.loss = loss

    def forward(self, tokens, targets):
        logits = self.head(torch.tanh(self.emb(tokens))).view(-1, V)
        return self.loss(logits, targets.view(-1))


def smoothed(logits, t):
    return F.cross_entropy(logits, t, ignore_index=K, label_smoothing=0.2)


def plain(logits, t):
    return F.cross_entropy(logits, t, ignore_index=K)


def summed(logits, t):
    return F.nll_loss(F.log_softmax(logits, -1), t, ignore_index=K, reduction="sum") / 7.0


def unreduced(logits, t):
    return (F.cross_entropy(logits, t, ignore_index=K, reduction="none") ** 2).mean()


def selected_max(logits, t):
    loss = plain(logits, t)
    return loss + torch.masked_select(F.log_softmax(logits, -1).sum(-1), t != K).max()


def compared_first(logits, t):
    return (t != K).float().mean() + plain(logits, t)


class IgnoreIndexTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def targets(self, seed=1):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(0, V, (B, T), generator=g)
        # Targets in [0, 8): about one in eight is K.
        y = torch.randint(0, 8, (B, T), generator=g)
        self.assertTrue(bool((y == K).any()))
        return x, y

    def check(self, loss, name, y=None):
        torch.manual_seed(0)
        module = Loss(loss)
        result = importer.import_module(module, batch_size=B, block_size=T)
        mlir = self.dir / f"{name}.mlir"
        result.write(str(mlir))
        verified = run([str(BIN / "zeroc-opt"), str(mlir), "-o", os.devnull])
        self.assertEqual(verified.returncode, 0, verified.stderr)
        x, y0 = self.targets()
        y = y0 if y is None else y
        ours = float(train_ir_eval.evaluate(result.mlir, result.weights, x, y))
        with torch.no_grad():
            theirs = copy.deepcopy(module).double()(x, y).item()
        if math.isnan(theirs):
            self.assertTrue(math.isnan(ours), f"IR {ours}, torch {theirs}")
        else:
            self.assertLess(abs(ours - theirs), 1e-9 * abs(theirs), f"IR {ours}, torch {theirs}")
        raised = run([str(BIN / "zeroc-opt"), str(mlir), "--train-raise"])
        self.assertEqual(raised.returncode, 0, raised.stderr)
        return result.mlir, raised.stdout

    def test_smoothing_mean(self):
        mlir, raised = self.check(smoothed, "smoothed")
        self.assertNotIn("train.cross_entropy", mlir)
        self.assertIn("train.cross_entropy", raised)
        self.assertIn(f"ignore_index = {K} : i64, label_smoothing = 2.000000e-01 : f64", raised)
        self.assertNotIn("train.log_softmax", raised)

    def test_plain_mean(self):
        _, raised = self.check(plain, "plain")
        self.assertIn(f"{{ignore_index = {K} : i64}}", raised)

    def test_sum_and_none_stay_generic(self):
        # A sum (over a constant) or a function of each position's loss is
        # not a mean: correct through the generic ops, not raised.
        for loss, name in ((summed, "summed"), (unreduced, "unreduced")):
            with self.subTest(name):
                _, raised = self.check(loss, name)
                self.assertNotIn("train.cross_entropy", raised)

    def test_every_target_ignored(self):
        # 0 / 0: NaN, as PyTorch 1.13's mean.
        self.check(smoothed, "all-ignored", y=torch.full((B, T), K))

    def test_compared_before_the_loss(self):
        # The ids compared before the loss's nll_loss: the mask is a look-up
        # in a vector of the ids' bound, the larger of the embedding's rows
        # and the loss's classes (both V here).
        mlir, _ = self.check(compared_first, "compared_first")
        self.assertRegex(mlir, rf"train.gather %\S+\[%\S+\] dim = 0 : \(tensor<{V}xf32>, ")

    def test_errors(self):
        for loss, expected in (
                (selected_max, "aten.max.default: the result's shape depends on the tensor's "
                 "values (data-dependent shape): a masked_select of a computed mask is "
                 "supported only when a mean or a sum reads it"),):
            with self.subTest(loss.__name__):
                torch.manual_seed(0)
                with self.assertRaises(ImporterError) as caught:
                    importer.import_module(Loss(loss), batch_size=B, block_size=T)
                self.assertIn(expected, str(caught.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
