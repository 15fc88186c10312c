# RUN: %python %s %zeroc_build/bin
"""Unit tests of the PyTorch importer's ATen op table (issue 31's models).

Each model of Inputs/aten_models.py (and the GPT and MLP models of
Inputs/torch_models.py) is imported; its IR must verify (zeroc-opt) and
compute the module's loss: the IR evaluated in float64
(Inputs/train_ir_eval.py) from the exported weights on fixed inputs equals
the module's own loss in float64 to 1e-9 relative; the fast ops the
compiler's train-raise pass makes of the written-out attention and
cross-entropy are checked on ``zeroc-opt --train-raise``. The in-place models
(``+=`` on an alias, ``masked_fill_``, ``mul_`` on a view, in-place
activations) are the ones where a translation that ignores aliasing
computes another loss. Errors name the ATen op, the module path and the
user's source line; every op of the table is documented in
docs/importer.md.

Runs under lit or directly: ``python3 test/python/importer_aten_unit.py [BIN_DIR]``.
"""

import copy
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

import aten_models  # noqa: E402
from importer_checks import ImporterChecks  # noqa: E402
import torch_models  # noqa: E402
import train_ir_eval  # noqa: E402
from zeroc import importer  # noqa: E402
from zeroc.importer import ImporterError, aten  # noqa: E402

BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
B, T, V = 2, 16, 256
def inputs(seed=1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, V, (B, T), generator=g), torch.randint(0, V, (B, T), generator=g))


class NLLOfLog(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        probs = F.softmax(self.head(self.emb(idx)), dim=-1).view(-1, V)
        return F.nll_loss(torch.log(probs), targets.view(-1), reduction="sum") / idx.numel()


# Modules for the errors.

class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.sin(self.fc(x))  # unsupported op


class Sin(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.block = Inner()
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        return F.cross_entropy(self.head(self.block(self.emb(idx))).view(-1, V), targets.view(-1))


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        if x.sum() > 0:  # data-dependent branch
            x = x * 2
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class NonZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = x + torch.nonzero(x > 0).shape[0] * 0.0  # nonzero
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class TwoIndexTensors(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(V, V))
        self.head = nn.Linear(1, V)

    def forward(self, idx, targets):
        x = self.table[idx, targets].unsqueeze(-1)  # two index tensors
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)

    def forward(self, idx, targets):
        x = self.emb(idx).detach()  # stop-gradient
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class RunningStat(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.head = nn.Linear(8, V)
        self.register_buffer("count", torch.zeros(1))

    def forward(self, idx, targets):
        self.count += 1  # buffer update
        return F.cross_entropy(self.head(self.emb(idx)).view(-1, V), targets.view(-1))


class AtenImporterTest(ImporterChecks, unittest.TestCase):
    BIN, SOURCE_FILE, BATCH, BLOCK = BIN, __file__, B, T

    def inputs(self):
        return inputs()

    def evaluate(self, result, mlir, init, x, y):
        """The IR's loss by the Python evaluator, in float64."""
        return float(train_ir_eval.evaluate(result.mlir, result.weights, x, y))

    # The models of issue 31.

    def test_torch_transformer(self):
        # The importer writes nll_loss(log_softmax) out; train-raise makes
        # it train.cross_entropy.
        result = self.check(aten_models.TorchTransformer, "train.softmax",
                                  "train.layernorm", "train.log_softmax")
        self.assertIn("train.cross_entropy", self.raised(result, "transformer"))

    def test_einsum_gqa(self):
        # where(tril, att, full_like(att, -inf)): a select of a -inf fill of
        # the scores' shape; each einsum a bmm between rank-5 permutes and
        # reshapes. The kv heads repeated by repeat_interleave, by expand +
        # reshape and by indexing all import to a reshape, broadcast and
        # reshape; train-raise's views make the attention grouped-query
        # train.attention on the 2 unrepeated heads, in all three forms.
        for repeat in ("interleave", "expand", "index"):
            with self.subTest(repeat=repeat):
                result = self.check(lambda: aten_models.EinsumGQA(repeat=repeat),
                                    "train.select", "train.broadcast",
                                    "train.fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>",
                                    name=f"einsum_gqa_{repeat}")
                self.assertIn("tensor<2x16x2x1x8xf32> -> tensor<2x16x2x2x8xf32>", result.mlir)
                self.assertNotIn("train.attention", result.mlir)
                raised = self.raised(result, f"einsum_gqa_{repeat}")
                self.assertRegex(raised, r"train.attention .* causal scale = 0.35355339059327\d* : "
                                 r"\(tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, "
                                 r"tensor<2x2x16x8xf32>\)")
                self.assertNotIn("train.softmax", raised)
                self.assertNotIn("train.broadcast", raised)

    def test_mingpt_newgelu(self):
        self.check(aten_models.MinGPTNewGELU, "train.pow", "by 3.0", "train.tanh", "train.var",
                   "correction = 0", "train.rsqrt")

    def test_nll_label_smoothing(self):
        # Label smoothing's sum of the log-probabilities reads them again;
        # the importer writes it out generically and train-raise makes it
        # train.cross_entropy with label_smoothing
        # (importer_aten_train_nll_smoothing.test).
        self.check(aten_models.NLLSmoothing, "train.log_softmax", "train.sum", "train.gather")

    def test_nll_of_other_log_probabilities(self):
        # nll_loss of anything but a log_softmax: a gather of the targets.
        self.check(NLLOfLog, "train.gather", "train.log ", "dim = 1")

    def test_padding_idx(self):
        self.check(aten_models.PaddingIdx, "padding_idx = 10")

    def test_computed_ids(self):
        # Indices computed at run time (a slice of the tokens, the tokens) gather rows:
        # train.embedding of the table, of its transpose for index_select along
        # dimension 1, of its [V, 2*16] reshape for the rank-3 table.
        result = self.check(aten_models.ComputedIds, "tensor<2x16xi32> -> tensor<2x15xi32>",
                            "tensor<256x2x16xf32> -> tensor<256x32xf32>")
        self.assertEqual(len(re.findall(r"= train.embedding ", result.mlir)), 4)
        self.assertRegex(result.mlir, r"train.embedding %\S+\[%\S+\] : \(tensor<256x32xf32>, "
                                      r"tensor<32xi32>\) -> tensor<32x32xf32>")

    def test_alias_add(self):
        result = self.check(aten_models.AliasAdd)
        torch.manual_seed(0)
        module = aten_models.AliasAdd()
        x, y = inputs()
        # The aliasing matters: `skip` read after `x += fc(x)` is the sum,
        # not the embedding, so both adds take the updated value.
        with torch.no_grad():
            m = copy.deepcopy(module).double()
            e = m.emb(x) * 1.0
            wrong = F.cross_entropy(m.head(e + m.fc(torch.relu(e)) + e).view(-1, V),
                                    y.view(-1)).item()
        ours = float(train_ir_eval.evaluate(result.mlir, result.weights, x, y))
        self.assertGreater(abs(ours - wrong), 1e-3)

    # In-place patterns.

    def test_masked_fill_inplace(self):
        # A sliding-window mask is no causal mask: a select of -inf.
        result = self.check(aten_models.MaskedFillInplace, "train.select",
                                  "train.fill 0xFFF0000000000000")
        self.assertNotRegex(self.raised(result, "window"), r"train.attention .* causal")

    def test_mul_view_inplace(self):
        # mul_ on a slice writes back into the tensor: slices and a concat.
        self.check(aten_models.MulViewInplace, "train.concat", "train.slice")

    def test_inplace_activation(self):
        self.check(aten_models.InplaceActivation, "train.relu", "train.tanh")

    # Today's importer models.

    def test_gpt(self):
        result = self.check(lambda: torch_models.GPT(gelu="tanh"), "transpose_rhs",
                                  "train.gelu", "train.select", name="gpt_tanh")
        raised = self.raised(result, "gpt")
        self.assertEqual(len(re.findall(r"train.attention .* causal", raised)), 2)
        self.assertIn("train.cross_entropy", raised)
        self.assertEqual(result.tied, {"lm_head.weight": "transformer.wte.weight"})
        self.assertEqual(len(re.findall(r"train.read @transformer.wte.weight", result.mlir)), 1)
        self.check(lambda: torch_models.GPT(gelu="erf"), "train.gelu", name="gpt_erf")

    def test_mlp(self):
        self.check(lambda: torch_models.MLPLM(flatten=True), "train.relu", name="mlp")

    # Errors.

    def test_unsupported_op(self):
        message = self.error(Sin, "# unsupported op", "aten.sin.default",
                             "(in module block)", "unsupported ATen op")
        self.assertIn("docs/importer.md", message)

    def test_data_dependent_branch(self):
        self.error(Branch, "# data-dependent branch", "data-dependent branch")

    def test_nonzero(self):
        self.error(NonZero, "# nonzero", "aten.nonzero.default", "data-dependent shape")

    def test_two_index_tensors(self):
        self.error(TwoIndexTensors, "# two index tensors", "aten.index.Tensor",
                   "only with one index tensor")

    def test_detach(self):
        self.error(Detached, "# stop-gradient", "aten.detach.default", "stops its gradient")

    def test_buffer_update(self):
        self.error(RunningStat, "# buffer update", "aten.copy_", "writes into buffer count")

    def test_frontend_name(self):
        # --frontend / frontend= is deprecated: "aten" alone is accepted.
        for name in ("jit", "fx"):
            with self.assertRaises(ImporterError) as caught:
                importer.import_module(Sin(), batch_size=B, block_size=T, frontend=name)
            self.assertIn("the only front end", str(caught.exception))

    # The op table and its documentation.

    def test_table_documented(self):
        docs = (ROOT / "docs" / "importer.md").read_text()
        missing = sorted({str(op).rsplit(".", 1)[0] for op in aten.OP_TABLE
                          if f"`{str(op).rsplit('.', 1)[0]}" not in docs})
        self.assertEqual(missing, [], "ATen ops of the table missing from docs/importer.md")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
