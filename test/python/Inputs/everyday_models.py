"""Tiny language models in everyday PyTorch styles that the ATen importer
once rejected or trained wrongly (test/python/importer_everyday_unit.py,
importer_aten_train_everyday.test).

* `Activation(act)`: an MLP block whose activation is one of `ACTIVATIONS`
  (F.leaky_relu, F.softplus with beta/threshold, F.mish, F.elu, F.selu,
  F.celu, F.hardswish, F.hardsigmoid, F.glu, F.logsigmoid, nn.PReLU,
  F.threshold, torch.clamp and its one-sided forms, F.relu6,
  torch.maximum/minimum, abs, sign, expm1/log1p, logaddexp); the
  pre-activations are scaled so that every branch is taken.
* `Normalized`: F.normalize, x.norm(dim=-1, keepdim=True),
  torch.linalg.vector_norm(ord=1) and a max-norm, of embeddings whose
  padding row is zero (a zero vector's norm: gradient 0, as PyTorch).
* `TimeShift`: RWKV's token shift nn.ZeroPad2d((0, 0, 1, -1)) (a negative
  pad), F.pad of the features, the causal running mean torch.cumsum(x, 1) /
  torch.arange(1, T + 1) (an integer constant divides a float value), max
  and min pooling (x.max(-1, keepdim=True).values), torch.roll, x.repeat,
  torch.lerp, torch.addcmul.
* `PaddingMask(pad)`: masks computed from the token ids before the loss:
  attention scores of padding keys masked with ``tokens == pad``, the loss
  averaged over ``targets != pad`` positions, a ``(x > 0).float().detach()``
  gate.
* `Frozen`: nn.Embedding.from_pretrained (freeze=True: requires_grad=False),
  a constant, not a trained parameter.
* `Checkpointed`: torch.utils.checkpoint.checkpoint of each block, reentrant
  and not.
* `Penalty`: an L2 penalty over ``self.parameters()`` that require a
  gradient added to the loss (PyTorch 1.13's functional_call left
  parameters() to the module's own tensors: the penalty was a constant, its
  gradient lost; and the traced inputs require no gradient), a frozen table
  left out.
* `IdsAsNumbers`: the ids as numbers: a feature ``tokens.float() / V``, a
  mask ``tokens < 100``, ``(tokens >= targets).long()``, and a loss written
  with F.one_hot(targets, V); a LayerNorm written with torch.var_mean and an
  RMS scale with torch.std_mean.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

ACTIVATIONS = {
    "leaky_relu": lambda m, x: F.leaky_relu(x, 0.1),
    "softplus": lambda m, x: F.softplus(x, beta=2.0, threshold=1.0),
    "mish": lambda m, x: F.mish(x),
    "elu": lambda m, x: F.elu(x, alpha=0.7),
    "selu": lambda m, x: F.selu(x),
    "celu": lambda m, x: F.celu(x, alpha=0.5),
    "hardswish": lambda m, x: F.hardswish(x),
    "hardsigmoid": lambda m, x: nn.Hardsigmoid()(x),
    "glu": lambda m, x: F.glu(torch.cat([x, x * 0.5 + 1], -1)),
    "logsigmoid": lambda m, x: F.logsigmoid(x),
    "prelu": lambda m, x: m.prelu(x.transpose(1, 2)).transpose(1, 2),
    "threshold": lambda m, x: F.threshold(x, 0.5, -1.0),
    "clamp": lambda m, x: torch.clamp(x, -0.5, 0.5) + x.clamp(min=-1.0) * x.clamp(max=1.5),
    "relu6": lambda m, x: F.relu6(x * 3),
    "maximum": lambda m, x: torch.maximum(x, -x * 0.5)
    + torch.minimum(x, torch.tensor(0.25)),
    "abs_sign": lambda m, x: x.abs() + torch.sign(x) * 0.5,
    "expm1_log1p": lambda m, x: torch.expm1(x.clamp(max=2.0)) + torch.log1p(x.abs()),
    "logaddexp": lambda m, x: torch.logaddexp(x, -x * 2),
}


class Activation(nn.Module):
    def __init__(self, act="leaky_relu", vocab_size=256, d=16):
        super().__init__()
        self.act = act
        self.emb = nn.Embedding(vocab_size, d)
        self.fc1 = nn.Linear(d, d)
        self.prelu = nn.PReLU(d, init=0.2)
        self.fc2 = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        # Pre-activations of either sign, some beyond every threshold.
        h = ACTIVATIONS[self.act](self, 3.0 * self.fc1(x))
        x = x + self.fc2(h)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class Normalized(nn.Module):
    def __init__(self, vocab_size=256, d=16, padding_idx=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d, padding_idx=padding_idx)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        u = F.normalize(x, dim=-1)  # the padding row: a zero vector
        y = self.fc(u)
        y = y / y.norm(dim=-1, keepdim=True)
        y = y + x / (torch.linalg.vector_norm(x, ord=1, dim=-1, keepdim=True) + 1.0)
        y = y * (1.0 + x.norm(p=float("inf"), dim=-1, keepdim=True))
        logits = self.head(y)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class TimeShift(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.mix = nn.Parameter(torch.rand(d))
        self.fc = nn.Linear(d, d - 4)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        x = self.emb(tokens)
        prev = self.shift(x)  # x[:, t - 1] at t, zeros at 0
        x = torch.lerp(x, prev, self.mix)
        x = x + F.pad(self.fc(x), (2, 2), value=0.1)
        mean = torch.cumsum(x, 1) / torch.arange(1, t + 1)[:, None]
        x = torch.addcmul(x, mean, torch.roll(x, 1, 2), value=0.5)
        x = x - x.max(-1, keepdim=True).values + x.min(-1)[0].unsqueeze(-1) * 0.5
        x = x + x[..., :4].repeat(1, 1, 4) * 0.1
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class PaddingMask(nn.Module):
    def __init__(self, pad=32, vocab_size=256, d=16):
        super().__init__()
        self.pad = pad
        self.emb = nn.Embedding(vocab_size, d)
        self.qk = nn.Linear(d, 2 * d, bias=False)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        keys = tokens == self.pad  # a padding mask, before the loss
        x = self.emb(tokens)
        q, k = self.qk(x).chunk(2, dim=-1)
        s = q @ k.transpose(-2, -1) * x.shape[-1] ** -0.5
        s = s.masked_fill(keys[:, None, :], -1e9)
        x = x + s.softmax(-1) @ x
        x = x * (1.0 + (x > 0).float().detach())
        logits = self.head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               reduction="none")
        keep = (targets != self.pad).float().view(-1)
        return (loss * keep).sum() / keep.sum()


class Frozen(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        table = torch.randn(vocab_size, d) * 0.5
        self.emb = nn.Embedding.from_pretrained(table)  # freeze=True
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        x = x + self.fc(torch.tanh(x))
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.proj(F.gelu(self.fc(x)))


class Checkpointed(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.blocks = nn.ModuleList([Block(d), Block(d)])
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        x = checkpoint(self.blocks[0], x)
        x = checkpoint(self.blocks[1], x, use_reentrant=False)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class Penalty(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.frozen = nn.Embedding.from_pretrained(torch.randn(vocab_size, d))
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens) + self.frozen(tokens)
        logits = self.head(x + self.fc(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return loss + 1e-3 * sum(p.pow(2).sum() for p in self.parameters() if p.requires_grad)


class IdsAsNumbers(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.w = nn.Parameter(torch.randn(d))
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        v = self.head.out_features
        x = self.emb(tokens) + (tokens.float() / v)[..., None] * self.w
        x = x * (1.0 + (tokens < 100).float()[..., None]
                 + 0.5 * (tokens >= targets).long()[..., None])
        var, mean = torch.var_mean(x, -1, unbiased=False, keepdim=True)
        x = (x - mean) * torch.rsqrt(var + 1e-5)
        std, _ = torch.std_mean(self.fc(x), dim=-1, keepdim=True)
        x = x / (std + 1.0)
        logp = F.log_softmax(self.head(x), dim=-1)
        return -(F.one_hot(targets, v).float() * logp).sum(-1).mean()


class Styles(nn.Module):
    """Everyday styles that imported already (kept so they keep
    importing): nn.ModuleDict and nn.ParameterList, nn.LayerNorm without
    affine, chunk(3), an ALiBi bias from a registered buffer added with
    torch.baddbmm, torch.where(mask, scores, float("-inf")), a learned token
    concatenated in front, flatten/unflatten, torch.stack, nn.Identity,
    F.dropout(x, p, self.training) with p = 0, a tied head assigned in
    __init__, logits.float()."""

    def __init__(self, vocab_size=256, d=16, block=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.layers = nn.ModuleDict({"qkv": nn.Linear(d, 3 * d, bias=False),
                                     "out": nn.Linear(d, d), "skip": nn.Identity()})
        self.gains = nn.ParameterList([nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))])
        self.norm = nn.LayerNorm(d, elementwise_affine=False)
        self.start = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        pos = torch.arange(block + 1)
        self.register_buffer("alibi", -0.5 * (pos[None, :] - pos[:, None]).abs().float())
        self.head = nn.Linear(d, vocab_size, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, tokens, targets):
        b, t = tokens.shape
        x = self.emb(tokens)
        x = torch.cat([self.start.expand(b, -1, -1), x], dim=1)  # [B, T + 1, C]
        q, k, v = self.layers["qkv"](self.norm(x)).chunk(3, dim=-1)
        scores = torch.baddbmm(self.alibi[:t + 1, :t + 1].expand(b, -1, -1), q,
                               k.transpose(1, 2), alpha=x.shape[-1] ** -0.5)
        keep = torch.ones(t + 1, t + 1, dtype=torch.bool).tril()
        scores = torch.where(keep, scores, float("-inf"))
        att = F.dropout(scores.softmax(-1), 0.0, self.training)
        y = self.layers["out"](torch.bmm(att, v).flatten(0, 1)).unflatten(0, (b, t + 1))
        x = self.layers["skip"](x) + torch.stack([y, y * 0.5]).sum(0)
        x = x[:, 1:] * self.gains[0] + self.gains[1]
        logits = self.head(x).float()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class Everyday(nn.Module):
    """For training (importer_aten_train_everyday.test): the gradients of
    the piecewise activations (both sides of each threshold), of F.normalize
    of the zero padding row (spaces in the text), of a negative pad, of a
    mask of the ids, of a frozen table and of an L2 penalty over
    self.fc2.parameters()."""

    def __init__(self, vocab_size=256, d=16, pad=32):
        super().__init__()
        self.pad = pad
        self.emb = nn.Embedding(vocab_size, d, padding_idx=pad)
        self.frozen = nn.Embedding.from_pretrained(torch.randn(vocab_size, d) * 0.5)
        self.shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.qk = nn.Linear(d, 2 * d, bias=False)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = F.normalize(self.emb(tokens), dim=-1) + self.frozen(tokens)
        x = x + 0.5 * self.shift(x)
        q, k = self.qk(x).chunk(2, dim=-1)
        s = (q @ k.transpose(-2, -1)).masked_fill((tokens == self.pad)[:, None, :], -1e9)
        x = x + s.softmax(-1) @ x
        h = 3.0 * self.fc1(x)
        h = F.leaky_relu(h, 0.1) + F.softplus(h, beta=2.0, threshold=1.0) + F.elu(h) \
            - 0.5 * F.mish(h) + torch.clamp(h, -0.5, 0.5) + F.hardswish(h) \
            + 0.3 * F.logsigmoid(h) + 0.2 * h.abs()
        x = x + self.fc2(h)
        logits = self.head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        # An L2 penalty over the module's parameters() (frozen ones left out).
        penalty = sum(p.pow(2).sum() for p in self.fc2.parameters() if p.requires_grad)
        return loss + 1e-2 * penalty


class ScalarParams(nn.Module):
    """For training: 0-dimensional parameters (a learned gate on the
    residual branch, a learned temperature of the logits), declared as
    nn.Parameter(torch.tensor(x)), as ReZero and CLIP write them."""

    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc = nn.Linear(d, d)
        self.gate = nn.Parameter(torch.tensor(0.5))
        self.temperature = nn.Parameter(torch.tensor(1.5))
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        x = x + self.gate * torch.tanh(self.fc(x))
        logits = self.head(x) * self.temperature
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
