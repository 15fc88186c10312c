# RUN: %python %s %zeroc_build/bin
"""Unit tests of the PyTorch importer (zeroc.importer) on small modules.

Each module's forward(tokens, targets) returns a loss. The importer's IR
(a functionalized ATen graph translated op by op) is checked for the ops it
should use, and, where a fast op is expected, for what the compiler's
train-raise pass makes of it (zeroc-opt --train-raise); it is verified by
zeroc-opt and evaluated by the reference evaluator (zeroc-run --fp64) from
the exported weights on fixed inputs: its loss must equal PyTorch's (the
module in float64) to 1e-9 relative. Meta's complex rotary embeddings must
import to exactly the ops of the real interleaved form. Errors must name the
ATen op, the module path and the user's source line.

Runs under lit or directly: ``python3 test/python/importer_unit.py [BIN_DIR]``.
"""

import json
import math
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from zeroc import importer, ir, weights  # noqa: E402
from zeroc.importer import ImporterError  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "python" / "Inputs"))
from importer_checks import ImporterChecks, line_of as line_in, run  # noqa: E402

BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
V, B, T, C = 11, 2, 5, 8


def line_of(marker):
    """The line number of this file's line that contains `marker`."""
    return line_in(__file__, marker)


def inputs(b=B, t=T, v=V, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, v, (b, t), generator=g)
    y = torch.randint(0, v, (b, t), generator=g)
    return x, y


# The modules. Each is small and exercises a few mappings.

class MLPLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.fc1 = nn.Linear(C, 12)
        self.fc2 = nn.Linear(12, V, bias=False)
        self.act = nn.ReLU()

    def forward(self, idx, targets):
        h = self.act(self.fc1(self.emb(idx)))
        return F.cross_entropy(self.fc2(h).view(-1, V), targets.view(-1))


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.erf = nn.GELU()
        self.tanh = nn.GELU(approximate="tanh")
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = self.erf(x) + self.tanh(x) + F.gelu(x) + F.gelu(x, approximate="tanh")
        x = F.relu(x) + torch.relu(x) + x.relu()
        logits = self.head(x)
        return F.cross_entropy(logits.view(B * T, V), targets.view(B * T))


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.ln = nn.LayerNorm(C, eps=1e-6)
        self.plain = nn.LayerNorm(C, elementwise_affine=False)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.ln(self.emb(idx))
        x = self.plain(x * 3.0) + F.layer_norm(x, (C,))
        # LayerNorm by hand: mean, var, rsqrt.
        mu = x.mean(dim=-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        x = (x - mu) * torch.rsqrt(var + 1e-5) + x.sum(-1, keepdim=True) / torch.sqrt(var + 1.0)
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class Arithmetic(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.emb2 = nn.Embedding(V, C)
        self.scale = nn.Parameter(torch.rand(C) + 0.5)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x, y = self.emb(idx), self.emb2(idx)
        a = (x + 1.5) * 2 - 0.25 / (x * x + 1.0)
        b = 3 - y / 4 + (-x) - (2.0 + y)
        c = a * b / (b * b + 1) - x ** 2 + torch.sqrt(y * y + 1) * self.scale
        d = torch.add(c, x) + torch.mul(y, 0.5) + c.sub(x).div(2.0) + 1 / (x * x + 2)
        return F.cross_entropy(self.head(d).view(-1, V), targets.view(-1))


class Shapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 2 * C)
        self.w = nn.Parameter(torch.randn(C, C) * 0.3)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)                              # [B, T, 2C]
        a, b = x.split(C, dim=-1)                      # 2 x [B, T, C]
        p, q = torch.chunk(x, 2, dim=2)
        y = torch.cat([a + q, b - p], dim=-1)          # [B, T, 2C]
        y4 = y.view(B, T, 2, C).permute(0, 2, 1, 3)    # [B, 2, T, C]
        y = y4.transpose(1, 2).contiguous().reshape(B, T, 2 * C)  # y again
        u, v = y.chunk(2, -1)
        m = u @ self.w.t() + torch.matmul(v, self.w.T)  # x @ W^T, folded
        s = torch.matmul(m, m.transpose(-2, -1))       # [B, T, T]
        s = s.softmax(dim=-1) @ v                      # [B, T, C]
        e = s.unsqueeze(1).expand(B, 3, T, C).sum(1) + self.w.mean(0).expand_as(s)
        f = e.flatten(0, 1).view(B, T, C).squeeze() + y4.permute(1, 0, 2, 3).sum(0)
        return F.cross_entropy(self.head(f).reshape(-1, V), targets.reshape(-1))


class CausalAttention(nn.Module):
    """nanoGPT's attention pattern, with a mask buffer; `causal` off gives
    plain softmax attention."""

    def __init__(self, causal=True, h=2):
        super().__init__()
        self.causal, self.h = causal, h
        self.emb = nn.Embedding(V, C)
        self.pos = nn.Embedding(T, C)
        self.qkv = nn.Linear(C, 3 * C)
        self.head = nn.Linear(C, V)
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))

    def forward(self, idx, targets=None):
        b, t = idx.size()
        x = self.emb(idx) + self.pos(torch.arange(t))
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (z.view(b, t, self.h, C // self.h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.causal:
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, C)
        logits = self.head(y)
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)


class PlainAttention(CausalAttention):
    def __init__(self):
        super().__init__(causal=False)


class UnfusedCausal(nn.Module):
    """A causal mask between ops that are not an attention: causal_mask."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, T)
        self.head = nn.Linear(T, V)

    def forward(self, idx, targets):
        s = self.emb(idx) * 2.0                                   # [B, T, T]
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        p = s.masked_fill(~mask, float("-inf")).softmax(-1)
        return F.cross_entropy(self.head(p + s).view(-1, V), targets.view(-1))


class Tied(nn.Module):
    """An lm_head tied to the embedding, used as a module and through F.linear."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.lm_head.weight = self.wte.weight
        self.unused = nn.Linear(3, 3)

    def forward(self, idx, targets):
        x = self.wte(idx)
        logits = self.lm_head(x) + F.linear(x * 0.5, self.wte.weight)
        return nn.CrossEntropyLoss()(logits.view(-1, V), targets.view(-1))


class TiedHeadFirst(nn.Module):
    """The lm_head registered before the embedding: still declared as the
    embedding's weight."""

    def __init__(self):
        super().__init__()
        self.lm_head = nn.Linear(C, V, bias=False)
        self.wte = nn.Embedding(V, C)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        return F.cross_entropy(self.lm_head(self.wte(idx)).view(-1, V), targets.view(-1))


class ClassDimLoss(nn.Module):
    """cross_entropy on [B, V, T] logits (PyTorch's class dimension 1)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)
        self.drop = nn.Dropout(0.0)

    def forward(self, idx, targets):
        logits = self.drop(self.head(self.emb(idx)))
        return F.cross_entropy(logits.transpose(1, 2), targets)


class BF16(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx).float().to(torch.bfloat16)
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


# Modules the importer refuses.

class Sin(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = torch.sin(x)  # MARK:sin
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.conv = nn.Conv1d(C, V, 1)

    def forward(self, idx, targets):
        x = self.conv(self.emb(idx).transpose(1, 2))  # MARK:conv
        return F.cross_entropy(x, targets)


class Slice(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)[:, 1:]
        y = targets[:, 1:].reshape(-1)  # MARK:slice
        return F.cross_entropy(self.head(x).reshape(-1, V), y)


class Slices(nn.Module):
    """Slices and indices: a parameter sliced to the sequence (minGPT's
    pos_emb[:, :t, :]), steps, integers, None and ..., halves joined by
    torch.cat, unbind and torch.stack."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.pos = nn.Parameter(torch.randn(1, 2 * T, C))
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx) + self.pos[:, :idx.shape[1], :]
        evens, odds = x[..., ::2], x[:, :, 1::2]
        x = torch.cat((odds * 2.0, evens), dim=-1)
        first = x[:, 0][:, None, :]
        x = x + first
        a, b = x.reshape(B, T, C // 2, 2).unbind(-1)
        x = torch.stack([b, a], dim=-1).flatten(2)
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class LlamaPieces(nn.Module):
    """RMSNorm written out, interleaved rotary embeddings from sliced
    freqs_cos / freqs_sin buffers (reshape to pairs, unbind, stack,
    flatten), grouped-query attention by repeat_kv (1 key/value head for 2
    query heads of 4 features), an additive triu(-inf) mask buffer, SwiGLU with F.silu."""

    def __init__(self, complex_rope=False, rotate_half=False):
        super().__init__()
        self.complex_rope, self.rotate_half = complex_rope, rotate_half
        self.emb = nn.Embedding(V, C)
        self.norm = nn.Parameter(torch.randn(C))
        self.wq = nn.Linear(C, C, bias=False)
        self.wk = nn.Linear(C, C // 2, bias=False)
        self.wv = nn.Linear(C, C // 2, bias=False)
        self.w1 = nn.Linear(C, 3 * C, bias=False)
        self.w3 = nn.Linear(C, 3 * C, bias=False)
        self.w2 = nn.Linear(3 * C, C, bias=False)
        self.head = nn.Linear(C, V, bias=False)
        d = C // 2
        freqs = 1.0 / (500.0 ** (torch.arange(0, d, 2)[: d // 2].float() / d))
        angles = torch.outer(torch.arange(2 * T).float(), freqs)
        self.register_buffer("freqs_cos", torch.cos(angles))
        self.register_buffer("freqs_sin", torch.sin(angles))
        self.register_buffer("freqs_cis", torch.complex(torch.cos(angles), torch.sin(angles)))
        self.register_buffer("mask", torch.full((1, 1, 2 * T, 2 * T), float("-inf")).triu(1))
        with torch.no_grad():
            for w in (self.wq.weight, self.wk.weight):
                w.normal_(0, 1.0)

    def rms(self, x):
        y = x.float()
        return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x)

    def rope(self, x, t):
        if self.complex_rope:
            z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(z * self.freqs_cis[:t][None, :, None, :]).flatten(3) \
                .type_as(x)
        if self.rotate_half:
            cos = torch.cat((self.freqs_cos[:t], self.freqs_cos[:t]), -1)[None, :, None, :]
            sin = torch.cat((self.freqs_sin[:t], self.freqs_sin[:t]), -1)[None, :, None, :]
            half = x.shape[-1] // 2
            rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            return x * cos + rotated * sin
        xr, xi = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
        cos = self.freqs_cos[:t].view(1, t, 1, -1)
        sin = self.freqs_sin[:t].view(1, t, 1, -1)
        return torch.stack([xr * cos - xi * sin, xr * sin + xi * cos], dim=-1).flatten(3) \
            .type_as(x)

    def forward(self, idx, targets):
        b, t = idx.shape
        assert idx.ndim == 2
        h = self.rms(self.emb(idx)) * self.norm
        q = self.rope(self.wq(h).view(b, t, 2, C // 2), t)
        k = self.rope(self.wk(h).view(b, t, 1, C // 2), t)
        v = self.wv(h).view(b, t, 1, C // 2)
        k = k[:, :, :, None, :].expand(b, t, 1, 2, C // 2).reshape(b, t, 2, C // 2)
        v = v[:, :, :, None, :].expand(b, t, 1, 2, C // 2).reshape(b, t, 2, C // 2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        scores = q @ k.transpose(2, 3) / math.sqrt(C // 2) + self.mask[:, :, :t, :t]
        y = (F.softmax(scores.float(), dim=-1).type_as(q) @ v).transpose(1, 2).reshape(b, t, C)
        y = y + self.w2(F.silu(self.w1(y)) * self.w3(y))
        return F.cross_entropy(self.head(y).view(-1, V), targets.view(-1))


class NotRotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)
        self.register_buffer("table", torch.randn(T, C))

    def forward(self, idx, targets):
        x = self.emb(idx) * self.table  # MARK:table
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.drop(self.emb(idx))  # MARK:dropout
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class InplaceDropout(nn.Module):
    """F.dropout(x, inplace=True) whose result is ignored: `x` itself is
    dropped out, as eager PyTorch does."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx) * 1.0
        F.dropout(x, 0.1, True, inplace=True)
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class AntiCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, T)
        self.head = nn.Linear(T, V)

    def forward(self, idx, targets):
        s = self.emb(idx)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool), -1)
        s = s.masked_fill(mask, float("-inf")).softmax(-1)
        return F.cross_entropy(self.head(s).view(-1, V), targets.view(-1))


class ShortPositions(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.pos = nn.Embedding(2 * T, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1]))  # MARK:positions
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class InPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x.mul_(2.0)  # MARK:inplace
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class NoLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)

    def forward(self, idx, targets):
        return self.emb(idx)


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        x = self.emb(idx)
        if x.sum() > 0:  # MARK:control
            x = x * 2
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


class ComplexSquare(nn.Module):
    """A complex tensor multiplied by itself: not the rotation by a constant
    that the importer decomposes."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C)
        self.head = nn.Linear(C, V)

    def forward(self, idx, targets):
        z = torch.view_as_complex(self.emb(idx).reshape(B, T, C // 2, 2))
        x = torch.view_as_real(z * z).flatten(2)  # MARK:complex
        return F.cross_entropy(self.head(x).view(-1, V), targets.view(-1))


def structure(mlir):
    """A hash of the loss's expression: every op, its attributes and types
    and, recursively, its operands' (constants by value); the values'
    names, the order of independent ops and the source locations do not
    count."""
    import hashlib
    body = mlir[mlir.index("train.forward"):]
    signature, loss = {}, None
    for line in body.splitlines():
        line = re.sub(r"\s+loc\(.*\)$", "", line)
        match = re.match(r"\s*(%[\w$.-]+(?:\s*,\s*%[\w$.-]+)*)\s*=\s*(.*)$", line)
        if match is None:
            ret = re.match(r"\s*return\s+(%[\w$.-]+)", line)
            if ret:
                loss = signature[ret.group(1)]
            continue
        rhs = re.sub(r"%[\w$.-]+", lambda u: signature.get(u.group(0), u.group(0)),
                     match.group(2))
        for i, name in enumerate(n.strip() for n in match.group(1).split(",")):
            signature[name] = hashlib.sha1(f"{rhs}#{i}".encode()).hexdigest()
    return loss


class Importer(ImporterChecks, unittest.TestCase):
    BIN, SOURCE_FILE, BATCH, BLOCK = BIN, __file__, B, T

    def imported(self, module, **kwargs):
        torch.manual_seed(0)
        return importer.import_module(module, batch_size=B, block_size=T, **kwargs)

    def inputs(self):
        return inputs()

    def evaluate(self, result, mlir, init, x, y):
        """The IR's loss by the reference evaluator, zeroc-run --fp64."""
        ins = mlir.with_suffix(".inputs.safetensors")
        weights.save(str(ins), {"arg0": weights.tensor_to_raw(x.to(torch.int32)),
                                "arg1": weights.tensor_to_raw(y.to(torch.int32))})
        evaluated = run([str(BIN / "zeroc-run"), str(mlir), "--fp64", "--init", str(init),
                         "--inputs", str(ins)])
        self.assertEqual(evaluated.returncode, 0, evaluated.stderr + result.mlir)
        return json.loads(evaluated.stdout)["steps"][0]["results"][0][0]

    # Mapped ops, checked numerically.

    def test_mlp(self):
        result = self.check(MLPLM, "train.embedding", "transpose_rhs", "train.relu",
                            "train.log_softmax", "train.gather")
        self.assertEqual([p.name for p in result.params],
                         ["emb.weight", "fc1.weight", "fc1.bias", "fc2.weight"])
        self.assertEqual(result.vocab_size, V)
        # The importer writes nll_loss(log_softmax) out; train-raise makes it
        # train.cross_entropy.
        self.assertNotIn("train.cross_entropy", result.mlir)
        raised = self.raised(result, "mlp")
        self.assertIn("train.cross_entropy", raised)
        self.assertNotIn("train.log_softmax", raised)

    def test_activations(self):
        result = self.check(Activations)
        self.assertEqual(result.mlir.count(" erf : "), 2)
        self.assertEqual(result.mlir.count(" tanh : "), 2)
        self.assertEqual(result.mlir.count("train.relu"), 3)

    def test_norms_and_reductions(self):
        result = self.check(Norms, "eps = 1.0e-06", "train.mean", "train.sum", "train.sqrt",
                            "train.rsqrt", "train.fill 1.0 : tensor<8xf32>",
                            "train.fill 0.0 : tensor<8xf32>")
        self.assertEqual(result.mlir.count("train.layernorm"), 3)

    def test_arithmetic(self):
        result = self.check(Arithmetic, "train.scale", "train.sub", "train.div", "train.mul",
                            "train.neg")
        self.assertIn("by 2.0", result.mlir)            # (x + 1.5) * 2
        self.assertIn("by 0.25", result.mlir)           # y / 4
        self.assertNotIn("scale.weight", result.mlir)   # a rank-1 param named scale
        self.assertIn("@scale ", result.mlir)

    def test_shapes(self):
        result = self.check(Shapes, "train.split", "train.concat", "train.transpose",
                            "train.broadcast", "train.softmax")
        # u @ w.t() and v @ w.T are matmuls by the parameter itself, transposed.
        self.assertEqual(len(re.findall(r"train.matmul %\S+, %w transpose_rhs", result.mlir)), 2)

    def test_causal_attention(self):
        result = self.check(CausalAttention, "train.softmax", "train.select")
        # The importer writes the attention out; train-raise recognises the
        # causal mask (a select of -inf by the tril buffer) and the scale.
        raised = self.raised(result, "causal")
        self.assertRegex(raised, r"train.attention .* causal scale = 5.0+e-01")
        for op in ("train.softmax", "train.select"):
            self.assertNotIn(op, raised)
        # wpe(arange(T)) reads the table directly.
        self.assertNotIn("train.embedding %pos", result.mlir)

    def test_plain_attention(self):
        result = self.check(PlainAttention, "train.softmax")
        raised = self.raised(result, "plain")
        self.assertRegex(raised, r"train.attention %\S+, %\S+, %\S+ scale = 5.0+e-01")

    def test_unfused_causal_mask(self):
        # A causal mask between ops that are not an attention stays a select.
        result = self.check(UnfusedCausal, "train.select", "train.softmax")
        self.assertNotIn("train.attention", self.raised(result, "unfused"))

    def test_tied(self):
        result = self.check(Tied)
        self.assertEqual([p.name for p in result.params], ["wte.weight"])
        self.assertEqual(result.tied, {"lm_head.weight": "wte.weight"})
        self.assertEqual(result.unused, ["unused.weight", "unused.bias"])
        self.assertEqual(list(result.weights), ["wte.weight"])
        self.assertEqual(result.mlir.count("train.read"), 1)

    def test_tied_head_first(self):
        result = self.check(TiedHeadFirst)
        self.assertEqual([p.name for p in result.params], ["wte.weight"])
        self.assertEqual(result.tied, {"lm_head.weight": "wte.weight"})

    def test_class_dim_loss(self):
        # nll_loss2d: the gather is along the class dimension 1.
        self.check(ClassDimLoss, "train.log_softmax", "train.gather")

    def test_bf16(self):
        torch.manual_seed(0)
        result = importer.import_module(BF16().to(torch.bfloat16), batch_size=B,
                                        block_size=T)
        self.assertIn("tensor<11x8xbf16>", result.mlir)
        # .float() casts to f32 and .to(torch.bfloat16) back; the loss is f32.
        self.assertIn("train.cast", result.mlir)
        mlir = self.dir / "bf16.mlir"
        result.write(str(mlir))
        self.assertEqual(run([str(BIN / "zeroc-opt"), str(mlir)]).returncode, 0)

    def test_bf16_llama(self):
        # A bf16 Llama imports and verifies: RMSNorm's .float() / .type_as(x)
        # and the softmax over .float() scores are casts.
        torch.manual_seed(0)
        result = importer.import_module(LlamaPieces().to(torch.bfloat16), batch_size=B,
                                        block_size=T)
        self.assertIn("bf16", result.mlir)
        mlir = self.dir / "bf16-llama.mlir"
        result.write(str(mlir))
        self.assertEqual(run([str(BIN / "zeroc-opt"), str(mlir)]).returncode, 0)

    def test_options(self):
        torch.manual_seed(0)
        opt = ir.OptimizerConfig(kind="sgd", lr=0.1, momentum=0.5, grad_clip=1.0)
        result = importer.import_module(MLPLM(), example_inputs=inputs(), optimizer=opt,
                                        model_name="tiny mlp", decay=lambda n, t: False)
        self.assertIn("train.optimizer sgd lr = 0.1 momentum = 0.5 weight_decay = 0.1 "
                      "grad_clip = 1.0", result.mlir)
        self.assertIn('train.model = "tiny_mlp"', result.mlir)
        self.assertIn(f"%idx: tensor<{B}x{T}xi64>", result.mlir)  # int64 example inputs
        self.assertNotIn(" decay", result.mlir)
        default = self.imported(MLPLM())
        self.assertIn("train.param @emb.weight : tensor<11x8xf32> init = normal std = ",
                      default.mlir)
        self.assertRegex(default.mlir, r"@fc1.weight : .* decay\n")
        self.assertRegex(default.mlir, r"@fc1.bias : tensor<12xf32> init = normal std = \S+\n")
        with self.assertRaises(ImporterError) as caught:
            self.imported(MLPLM(), vocab_size=256)
        self.assertIn("vocabulary is 11", str(caught.exception))
        with self.assertRaises(ImporterError) as caught:
            self.imported(MLPLM(), frontend="fx")
        self.assertIn("the only front end", str(caught.exception))

    def test_weights_roundtrip(self):
        torch.manual_seed(0)
        module = Tied()
        result = importer.import_module(module, batch_size=B, block_size=T)
        path = self.dir / "tied.safetensors"
        result.save_weights(str(path))
        loaded = weights.load_state_dict(str(path))
        self.assertEqual(list(loaded), ["wte.weight"])
        self.assertTrue(torch.equal(loaded["wte.weight"], module.wte.weight))
        header, metadata, _ = weights.read_header(str(path))
        self.assertEqual(metadata["producer"], "zeroc.importer")
        self.assertEqual(header["wte.weight"]["dtype"], "F32")
        # save_state_dict writes a tied tensor once, under its first name.
        skipped = weights.save_state_dict(str(path), module.state_dict())
        self.assertEqual(skipped, ["lm_head.weight"])
        bf = {"x": torch.randn(3, 2).to(torch.bfloat16), "i": torch.arange(4)}
        weights.save_state_dict(str(path), bf)
        back = weights.load_state_dict(str(path))
        self.assertTrue(torch.equal(back["x"], bf["x"]) and torch.equal(back["i"], bf["i"]))

    # Errors: the ATen op, the module path and the user's line.

    def test_unsupported_op(self):
        message = self.error(Sin, "MARK:sin", "aten.sin.default", "unsupported ATen op")
        self.assertIn("train dialect has no equivalent", message)

    def test_unsupported_module(self):
        self.error(Conv, "MARK:conv", "aten.convolution.default (in module conv)",
                   "unsupported ATen op")

    def test_slicing_the_ids(self):
        self.check(Slice, "train.slice")

    def test_slices(self):
        result = self.check(Slices, "train.slice", "train.concat")
        self.assertIn("strides = [1, 1, 2]", result.mlir)

    def test_llama_pieces(self):
        imported = {}
        for kwargs in ({}, {"rotate_half": True}, {"complex_rope": True}):
            class Model(LlamaPieces):
                def __init__(self):
                    super().__init__(**kwargs)
            Model.__name__ = "LlamaPieces" + "".join(kwargs)
            result = self.check(Model, "train.silu", tol=1e-8)
            imported[Model.__name__] = result
            raised = self.raised(result, Model.__name__)
            # RMSNorm written out and the attention (an additive triu(-inf)
            # mask) are raised by the compiler; repeat_kv's expand + reshape
            # of the key/value head stays before it.
            self.assertIn("train.rmsnorm", raised)
            self.assertRegex(raised, r"train.attention .* causal scale = 5.0+e-01 : "
                             rf"\(tensor<{B}x2x{T}x4xf32>, tensor<{B}x2x{T}x4xf32>")
            self.assertIn("train.cross_entropy", raised)
        # Meta's complex rotation (view_as_complex, a complex buffer,
        # view_as_real) is decomposed into exactly the ops of the real
        # interleaved form: the same expression, constants included.
        complex_ = imported["LlamaPiecescomplex_rope"].mlir
        self.assertNotIn("complex<", complex_)
        self.assertEqual(structure(complex_), structure(imported["LlamaPieces"].mlir))
        self.assertNotEqual(structure(imported["LlamaPiecesrotate_half"].mlir),
                            structure(imported["LlamaPieces"].mlir))

    def test_other_complex_use(self):
        self.error(ComplexSquare, "MARK:complex", "aten.mul.Tensor",
                   "complex tensors are supported only as view_as_complex(x) multiplied by a "
                   "constant complex tensor")

    def test_dropout(self):
        torch.manual_seed(0)
        result = importer.import_module(Dropout(), batch_size=B, block_size=T)
        # nn.Dropout is train.dropout (a new mask every step), not a draw
        # frozen at trace time.
        self.assertRegex(result.mlir, rf"train.dropout %embedding p = 0.1 seed = 0 : "
                                      rf"tensor<{B}x{T}x{C}xf32>")
        # Evaluation (the forward function, no step) is the identity: the loss
        # is PyTorch's in eval mode.
        self.check(Dropout, "train.dropout", eval_mode=True)

    def test_inplace_dropout(self):
        # The in-place form changes `x` even when its result is unused: the
        # head reads the dropped-out values, never the undropped ones.
        result = importer.import_module(InplaceDropout(), batch_size=B, block_size=T)
        self.assertEqual(result.mlir.count("train.dropout"), 1)
        self.assertRegex(result.mlir, r"train.dropout [^\n]*p = 0.1")

    def test_not_rotary(self):
        # A constant table multiplied in is a multiplication by a constant.
        self.check(NotRotary, "train.constant")

    def test_non_causal_mask(self):
        # A mask that is not causal is a select; the attention pattern is
        # not there to raise.
        result = self.check(AntiCausal, "train.select")
        self.assertNotIn("train.attention", self.raised(result, "anticausal"))

    def test_short_positions(self):
        result = self.check(ShortPositions, "train.slice")
        self.assertIn(f"train.slice %pos.weight offsets = [0, 0] strides = [1, 1] : "
                      f"tensor<{2 * T}x{C}xf32> -> tensor<{T}x{C}xf32>", result.mlir)

    def test_in_place(self):
        # x.mul_(2.0): functionalized, a multiplication whose result x holds.
        self.check(InPlace, "by 2.0")

    def test_no_loss(self):
        self.error(NoLoss, None, "forward must return one scalar loss")

    def test_data_dependent_control_flow(self):
        self.error(DataDependent, "MARK:control", "a data-dependent branch")


class LoadModule(unittest.TestCase):
    def test_load(self):
        module = importer.load_module(f"{__file__}:MLPLM")
        self.assertEqual(type(module).__name__, "MLPLM")
        with self.assertRaises(ImporterError) as caught:
            importer.load_module(f"{__file__}:Nope")
        self.assertIn("has no 'Nope' (its nn.Modules: ", str(caught.exception))
        with self.assertRaises(ImporterError) as caught:
            importer.load_module(f"{__file__}:MLPLM", {"width": 3})
        self.assertIn("MLPLM(width=3) failed: TypeError", str(caught.exception))
        with self.assertRaises(ImporterError) as caught:
            importer.load_module("missing.py:M")
        self.assertIn("missing.py: no such file", str(caught.exception))
        with self.assertRaises(ImporterError):
            importer.load_module(__file__)


class ImportCLI(unittest.TestCase):
    def test_cli_error_exit_status(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.mlir")
            bad = run([sys.executable, "-m", "zeroc.importer", f"{__file__}:Sin",
                       "--batch-size", "2", "--block-size", "5", "-o", out], env=env)
            self.assertEqual(bad.returncode, 1)
            self.assertIn(f"{__file__}:{line_of('MARK:sin')}: error: aten.sin.default: "
                          "unsupported ATen op", bad.stderr)
            self.assertFalse(os.path.exists(out))
            usage = run([sys.executable, "-m", "zeroc.importer", f"{__file__}:MLPLM",
                         "-o", out], env=env)
            self.assertEqual(usage.returncode, 2)
            self.assertIn("--batch-size", usage.stderr)
            ok = run([sys.executable, "-m", "zeroc.importer", f"{__file__}:MLPLM",
                      "--batch-size", "2", "--block-size", "5", "--vocab-size", "11",
                      "--optimizer", "sgd", "--lr", "0.05", "-o", out, "--weights",
                      os.path.join(tmp, "w.safetensors")], env=env)
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertIn("train.optimizer sgd lr = 0.05", Path(out).read_text())
            self.assertEqual(list(weights.load_state_dict(os.path.join(tmp, "w.safetensors"))),
                             ["emb.weight", "fc1.weight", "fc1.bias", "fc2.weight"])

    def test_load_weights(self):
        torch.manual_seed(1)
        source = Tied()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "w.safetensors")
            importer.import_module(source, batch_size=B, block_size=T).save_weights(path)
            state = weights.load_state_dict(path)
            state.update({k: v for k, v in source.state_dict().items() if "unused" in k})
            target = Tied()
            importer.load_weights(target, state)  # lm_head.weight is wte.weight's
            self.assertTrue(torch.equal(target.lm_head.weight, source.wte.weight))
            with self.assertRaises(ImporterError) as caught:
                importer.load_weights(target, {"wte.weight": state["wte.weight"]}, "w")
            self.assertIn("w: Error(s) in loading state_dict", str(caught.exception))
            self.assertIn("unused.weight", str(caught.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
