# RUN: %python %s %zeroc_build/bin
"""Unit tests of the PyTorch importer on everyday styles it once rejected or
trained wrongly (Inputs/everyday_models.py).

Each model is imported; its IR must verify (zeroc-opt) and compute the
module's loss: the IR evaluated in float64 (Inputs/train_ir_eval.py) from
the exported weights on fixed inputs equals the module's own loss in
float64 to 1e-9 relative. Activations, clamps, norms and padding are
written with train.compare and train.select (checked in the IR); masks of
the token ids computed before the loss are look-ups in a vector of the
ids' bound; a frozen parameter (requires_grad=False) is a constant, not a
declared parameter; activation checkpointing runs inline. What stays
unsupported is an error naming the ATen op and the user's line.
(importer_aten_train_everyday.test trains some of them against PyTorch:
the gradients.)

Runs under lit or directly: ``python3 test/python/importer_everyday_unit.py [BIN_DIR]``.
"""

import re
import sys
import unittest
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "python" / "Inputs"))

import everyday_models  # noqa: E402
from importer_checks import ImporterChecks  # noqa: E402
import train_ir_eval  # noqa: E402

BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
B, T, V = 2, 16, 256


def inputs(seed=1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, V, (B, T), generator=g), torch.randint(0, V, (B, T), generator=g))


# Modules for the errors.

class Flip(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx).flip(1)  # reversed positions
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class ArgMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = x + x.max(-1, keepdim=True)[1] * 0.1  # the indices of max
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class ScalarParam(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.alpha = nn.Parameter(torch.tensor(0.5))
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = x + self.alpha * torch.tanh(x)  # a 0-dimensional parameter
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class NoGradScale(nn.Module):
    def __init__(self, stop=True):
        super().__init__()
        self.stop = stop
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        with torch.no_grad():
            mask = (x > 0).float()  # no gradient either way
            if self.stop:
                scale = x.norm(dim=-1, keepdim=True)  # a stop-gradient
        x = x * (1.0 + mask)
        if self.stop:
            x = x / scale
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class DataOfParameter(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)
        self.register_buffer("scale", torch.rand(8))

    def forward(self, idx, targets):
        x = self.emb(idx) * self.scale.data  # a buffer's: no gradient anyway
        x = x / self.head.weight.data.norm()  # no gradient through .data
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class EverydayImporterTest(ImporterChecks, unittest.TestCase):
    BIN, SOURCE_FILE, BATCH, BLOCK = BIN, __file__, B, T

    def inputs(self):
        return inputs()

    def evaluate(self, result, mlir, init, x, y):
        return float(train_ir_eval.evaluate(result.mlir, result.weights, x, y))

    def test_activations(self):
        # Each was an unsupported ATen op (leaky_relu, softplus, mish, elu,
        # hardswish, glu, log_sigmoid_forward, prelu, threshold, clamp,
        # maximum, abs, sign, expm1, logaddexp, ...).
        # (glu is a split and a sigmoid; abs x * sign(x), sign (x > 0) - (x < 0).)
        expected = {"glu": "train.split", "abs_sign": "train.compare"}
        for act in everyday_models.ACTIVATIONS:
            with self.subTest(act=act):
                self.check(lambda: everyday_models.Activation(act),
                           expected.get(act, "train.select"), name=f"act_{act}")

    def test_softplus_threshold(self):
        # beta * x > threshold is x itself; under it log(1 + exp(beta * x)) / beta
        # of a safe input (0 where the select discards it).
        result = self.check(lambda: everyday_models.Activation("softplus"),
                            "train.fill 1.0", "by 2.0", "by 0.5", name="softplus")
        self.assertRegex(result.mlir, r"train.compare %\S+, %\S+ gt")

    def test_normalized(self):
        # The padding row is zero: its norm is 0 (the root taken of 1 there).
        result = self.check(everyday_models.Normalized, "train.sqrt", "train.amax",
                            "by 2.0")
        x, y = inputs()
        x[0, :4] = 32  # padding ids: zero vectors normalized
        self.assertTrue(torch.isfinite(train_ir_eval.evaluate(result.mlir, result.weights,
                                                              x, y)))

    def test_time_shift(self):
        # The ZeroPad2d's -1 is a slice, its 1 a concat of a fill; the
        # cumsum a matmul by a triu of ones; the integer arange a constant
        # of the float type.
        self.check(everyday_models.TimeShift, "train.concat", "train.triu",
                   "train.fill 0.1 : tensor<2x16x2xf32>", "train.amax")

    def test_padding_mask(self):
        x, _ = inputs()
        pad = int(x[0, 3])  # present in the inputs
        result = self.check(lambda: everyday_models.PaddingMask(pad), "train.gather",
                            "train.select")
        # The ids' bound (V) sizes the look-up vector of the mask.
        self.assertRegex(result.mlir, rf"train.gather %\S+\[%\S+\] dim = 0 : "
                                      rf"\(tensor<{V}xf32>, tensor<{B * T}xi32>\)")

    def test_frozen(self):
        # from_pretrained(freeze=True): a constant, neither declared nor
        # exported (it was trained).
        result = self.check(everyday_models.Frozen)
        self.assertEqual(result.frozen, ["emb.weight"])
        self.assertNotIn("emb.weight", result.weights)
        self.assertNotIn("@emb.weight", result.mlir)
        self.assertEqual([p.name for p in result.params],
                         ["fc.weight", "fc.bias", "head.weight", "head.bias"])
        self.assertEqual(result.unused, [])

    def test_checkpointed(self):
        result = self.check(everyday_models.Checkpointed, "train.gelu")
        self.assertEqual(len(result.params), 11)

    def test_penalty_over_parameters(self):
        # self.parameters() in the forward reads the traced parameters: the
        # penalty of each is computed from its train.read (it was a constant
        # of the trace, its gradient lost), and `p.requires_grad` is the
        # module's (the frozen table's is False: no penalty).
        result = self.check(everyday_models.Penalty)
        for name in ("emb.weight", "fc.weight", "fc.bias", "head.weight", "head.bias"):
            self.assertRegex(result.mlir, rf"train.pow %{re.escape(name)} by 2.0")
        self.assertEqual(len(re.findall(r"= train.pow ", result.mlir)), 5)
        self.assertEqual(result.frozen, ["frozen.weight"])

    def test_ids_as_numbers(self):
        # Ids converted to floats, compared with lt and with each other (ge), and
        # F.one_hot (a data-dependent branch in PyTorch 1.13): float ids,
        # a look-up in the vector 0 .. V-1. var_mean and std_mean with
        # unbiased=False and keepdim (PyTorch decomposes them into prims).
        result = self.check(everyday_models.IdsAsNumbers, "train.var", "correction = 0",
                            "correction = 1", " lt :", " ge :", " eq :")
        self.assertRegex(result.mlir, rf"train.gather %\S+\[%\S+\] dim = 0 : "
                                      rf"\(tensor<{V}xf32>, tensor<{B * T}xi32>\)")

    def test_styles(self):
        # Styles that imported already. (logits.float() makes the float64
        # reference's loss float32: 1e-6.)
        result = self.check(everyday_models.Styles, "train.select", "train.concat",
                            "train.layernorm", tol=1e-6)
        self.assertEqual(result.tied, {"head.weight": "emb.weight"})

    def test_no_grad_mask(self):
        # A mask of comparisons computed under torch.no_grad() has no
        # gradient in PyTorch or in the IR: fine.
        self.check(lambda: NoGradScale(stop=False), "train.compare", name="no_grad_mask")

    # Errors.

    def test_data_of_parameter(self):
        # x.data is x without its gradient: traced as a detach (imported as
        # the parameter itself before: a gradient PyTorch does not have).
        self.error(DataOfParameter, "# no gradient through .data", "aten.detach.default",
                   "detach() (or .data) of a value computed from the parameters")

    def test_no_grad_value_read(self):
        # A value with a gradient computed under torch.no_grad() and read by
        # an op with one: PyTorch stops the gradient there (it was imported
        # as if the block were not there: other gradients).
        self.error(NoGradScale, "# a stop-gradient", "aten.div.Tensor",
                   "computes under torch.no_grad() from values with a gradient")

    def test_unsupported_op(self):
        self.error(Flip, "# reversed positions", "aten.flip.default", "unsupported ATen op")

    def test_max_indices(self):
        self.error(ArgMax, "# the indices of max", "the indices of max(dim)",
                   "not supported")

    def test_scalar_parameter(self):
        # A 0-dimensional parameter (nn.Parameter(torch.tensor(0.5))) is a
        # train.param of type tensor<f32>, read and broadcast like any other
        # (importer_aten_train_everyday.test trains two of them).
        result = self.check(ScalarParam, "train.param @alpha : tensor<f32>",
                            "train.read @alpha : tensor<f32>", name="scalar_param")
        self.assertEqual([p.type.shape for p in result.params if p.name == "alpha"], [()])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
