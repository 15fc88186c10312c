"""Tiny language models written in everyday PyTorch styles, for the ATen
importer (python3 -m zeroc.importer); none of them imported through the
torch.fx converter of earlier releases.

* `TorchTransformer`: nn.TransformerEncoderLayer (its nn.MultiheadAttention,
  batch_first) with a causal float mask from
  nn.Transformer.generate_square_subsequent_mask, then an
  nn.MultiheadAttention of its own with a boolean causal mask. Their input
  projections have no bias: the k part's gradient is softmax-cancelled
  rounding noise, which AdamW amplifies into weights no two programs agree
  on.
* `EinsumGQA`: attention written with torch.einsum, grouped-query heads
  repeated by Tensor.repeat_interleave (or, with `repeat`, by
  ``[:, :, :, None].expand(...).reshape(...)`` or by indexing with
  ``arange(kv_heads).repeat_interleave(r)``), the mask applied with
  torch.where and torch.full_like(-inf), q/k/v by iterating over chunk().
* `MinGPTNewGELU`: minGPT's NewGELU (torch.pow(x, 3.0), math.sqrt(2/pi))
  and a LayerNorm written with Tensor.var and torch.rsqrt.
* `NLLSmoothing`: log_softmax + nll_loss, plus F.cross_entropy with
  label_smoothing.
* `PaddingIdx`: nn.Embedding with padding_idx (its row gets no gradient).
* `AliasAdd`: ``skip = x; x += self.fc(relu(x)); x = x + skip`` (eager PyTorch's
  ``+=`` changes `skip` too).
* In-place patterns: `MaskedFillInplace` (masked_fill_ of a sliding-window
  causal mask on the scores),
  `MulViewInplace` (mul_ on a slice, a view of the activations),
  `InplaceActivation` (nn.ReLU(inplace=True), F.gelu then x.tanh_()).
* `PermuteQKV`: timm's attention, ``qkv.reshape(B, T, 3, H, hd).permute(2,
  0, 3, 1, 4)`` then ``q, k, v = qkv.unbind(0)`` (the batch moves to axis 1
  and back), with a causal ``masked_fill`` of a registered ``tril`` buffer.
* `AttentionDropout`: dropout on the attention probabilities, in
  nn.MultiheadAttention(dropout=p) (batch_first, a boolean causal mask) and
  in a nanoGPT-style attention written out with F.dropout(att, p).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TorchTransformer(nn.Module):
    def __init__(self, vocab_size=256, d=32, heads=2, block_size=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.pos = nn.Parameter(torch.randn(block_size, d) * 0.02)
        self.layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=64, dropout=0.0,
                                                batch_first=True)
        # (PyTorch 1.13's layer takes no bias flag; its attention's forward
        # takes a missing in_proj_bias.)
        self.layer.self_attn.register_parameter("in_proj_bias", None)
        self.mha = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True, bias=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        x = self.emb(tokens) + self.pos[:t]
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        x = self.layer(x, src_mask=mask)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        y, _ = self.mha(x, x, x, attn_mask=causal, need_weights=False)
        x = self.norm(x + y)
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class EinsumGQA(nn.Module):
    def __init__(self, vocab_size=256, d=32, heads=4, kv_heads=2, repeat="interleave"):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.repeat = repeat
        self.emb = nn.Embedding(vocab_size, d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wkv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, vocab_size, bias=False)

    def forward(self, tokens, targets):
        b, t = tokens.shape
        x = self.emb(tokens)
        q = self.wq(x).view(b, t, self.heads, self.hd)
        k, v = [part.view(b, t, self.kv_heads, self.hd) for part in self.wkv(x).chunk(2, -1)]
        rep = self.heads // self.kv_heads
        if self.repeat == "interleave":
            k = k.repeat_interleave(rep, dim=2)
            v = v.repeat_interleave(rep, dim=2)
        elif self.repeat == "expand":
            k = k[:, :, :, None].expand(b, t, self.kv_heads, rep, self.hd).reshape(
                b, t, self.heads, self.hd)
            v = v[:, :, :, None].expand(b, t, self.kv_heads, rep, self.hd).reshape(
                b, t, self.heads, self.hd)
        else:  # "index"
            index = torch.arange(self.kv_heads).repeat_interleave(rep)
            k, v = k[:, :, index], v[:, :, index]
        att = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(self.hd)
        keep = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = torch.where(keep, att, torch.full_like(att, float("-inf")))
        att = att.softmax(-1)
        y = torch.einsum("bhts,bshd->bthd", att, v).reshape(b, t, -1)
        x = x + self.wo(y)
        logits = self.out(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class NewGELU(nn.Module):
    """minGPT's GELU (identical to OpenAI GPT's)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                           * (x + 0.044715 * torch.pow(x, 3.0))))


class VarLayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class MinGPTNewGELU(nn.Module):
    def __init__(self, vocab_size=256, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.ln1 = VarLayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.act = NewGELU()
        self.proj = nn.Linear(4 * d, d)
        self.ln2 = VarLayerNorm(d)
        self.head = nn.Linear(d, vocab_size, bias=False)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        x = x + self.proj(self.act(self.fc(self.ln1(x))))
        logits = self.head(self.ln2(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class NLLSmoothing(nn.Module):
    def __init__(self, vocab_size=256, d=32, smoothing=0.1):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)
        self.smoothing = smoothing

    def forward(self, tokens, targets):
        h = torch.relu(self.fc(self.emb(tokens)))
        logits = self.head(h).view(-1, self.head.out_features)
        logp = F.log_softmax(logits, dim=-1)
        nll = F.nll_loss(logp, targets.view(-1))
        smooth = F.cross_entropy(logits, targets.view(-1), label_smoothing=self.smoothing)
        return 0.5 * (nll + smooth)


class PaddingIdx(nn.Module):
    def __init__(self, vocab_size=256, d=32, padding_idx=10):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d, padding_idx=padding_idx)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        h = F.gelu(self.fc(self.emb(tokens)))
        logits = self.head(h)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class AliasAdd(nn.Module):
    def __init__(self, vocab_size=256, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens) * 1.0
        skip = x
        # (fc reads relu(x), not x, whose in-place change would break
        # PyTorch's own backward.)
        x += self.fc(torch.relu(x))  # changes skip too: they are the same tensor
        x = x + skip
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class MaskedFillInplace(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        # No bias: a bias on k adds q.b to a whole row of scores, which the
        # softmax cancels, so its gradient is rounding noise (1e-9) that
        # AdamW's normalisation turns into lr-sized steps of either sign on
        # both sides: the weights would differ by 5e-4 with equal losses.
        self.qk = nn.Linear(d, 2 * d, bias=False)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        t = tokens.shape[1]
        x = self.emb(tokens)
        q, k = self.qk(x).split(x.shape[-1], dim=-1)
        att = q @ k.transpose(-2, -1) * x.shape[-1] ** -0.5
        # Causal attention over a window of the last 4 positions.
        mask = torch.ones(t, t).triu(1).bool() | torch.ones(t, t).tril(-4).bool()
        att.masked_fill_(mask, float("-inf"))
        x = x + att.softmax(-1) @ x
        return F.cross_entropy(self.head(x).view(-1, 256), targets.view(-1))


class MulViewInplace(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        h = self.fc(self.emb(tokens))
        half = h[..., : h.shape[-1] // 2]  # a view of h
        half.mul_(2.0)  # so h changes too
        h[:, :, -1:].mul_(torch.sigmoid(h[:, :, :1]))
        return F.cross_entropy(self.head(h).view(-1, 256), targets.view(-1))


class InplaceActivation(nn.Module):
    def __init__(self, vocab_size=256, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(2 * d, d)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        h = self.act(self.fc1(x))
        y = self.fc2(h)
        y.tanh_()
        x = x + y
        return F.cross_entropy(self.head(x).view(-1, 256), targets.view(-1))


class AttentionDropout(nn.Module):
    def __init__(self, vocab_size=256, d=16, heads=2, p=0.1):
        super().__init__()
        self.heads, self.p = heads, p
        self.emb = nn.Embedding(vocab_size, d)
        self.mha = nn.MultiheadAttention(d, heads, dropout=p, batch_first=True, bias=False)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        b, t = tokens.shape
        x = self.emb(tokens)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        y, _ = self.mha(x, x, x, attn_mask=causal, need_weights=False)
        x = x + y
        q, k, v = self.qkv(x).split(x.shape[-1], dim=2)
        q, k, v = [z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(causal, float("-inf"))
        att = F.dropout(F.softmax(att, dim=-1), p=self.p, training=self.training)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, -1))
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class ComputedIds(nn.Module):
    """Tables indexed by ids computed at run time: the previous token's id (a
    bigram feature, a slice of the tokens) as ``self.prev[ids]``, the tokens
    as ``index_select`` along dimension 1 of a table stored transposed, and a
    rank-3 table indexed by the tokens themselves."""

    def __init__(self, vocab_size=256, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.prev = nn.Parameter(torch.randn(vocab_size, d) * 0.5)
        self.cols = nn.Parameter(torch.randn(d, vocab_size) * 0.5)
        self.heads = nn.Parameter(torch.randn(vocab_size, 2, d // 2) * 0.5)
        self.head = nn.Linear(d, vocab_size)

    def forward(self, tokens, targets):
        b, t = tokens.shape
        x = self.emb(tokens)
        x = x + self.cols.index_select(1, tokens.reshape(-1)).t().reshape(b, t, -1)
        x = x + self.heads[tokens].reshape(b, t, -1)
        # Each position from the second on adds its previous token's row.
        x = x[:, 1:] + self.prev[tokens[:, :-1]]
        logits = self.head(torch.tanh(x))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets[:, 1:].reshape(-1))


class PermuteQKV(nn.Module):
    """timm's Attention (ViT) made causal: one qkv projection permuted to
    [3, B, H, T, hd], unbound along its first axis, the causal mask a
    registered tril buffer applied with masked_fill."""

    def __init__(self, vocab_size=256, d=32, heads=4, block=16):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.emb = nn.Embedding(vocab_size, d)
        # No qkv bias: its k part's gradient is softmax-cancelled rounding
        # noise (as in TorchTransformer), which AdamW amplifies.
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)
        self.register_buffer("bias", torch.tril(torch.ones(block, block)))

    def forward(self, tokens, targets):
        b, t = tokens.shape
        x = self.emb(tokens)
        qkv = self.qkv(x).reshape(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        att = (q @ k.transpose(-2, -1)) * self.hd ** -0.5
        att = att.masked_fill(self.bias[:t, :t] == 0, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.proj(y)
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
