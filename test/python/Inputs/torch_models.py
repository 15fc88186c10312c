"""Plain-PyTorch language models for the importer's tests.

* `GPT`: nanoGPT's GPT-2 (learned positions, pre-LayerNorm blocks, causal
  self-attention, GELU MLP, final LayerNorm, lm_head tied to the token
  embedding, no dropout) with nanoGPT's initialization; the model of
  test/Integration/pytorch-gpt2.py too. `gelu="tanh"` writes it plainly
  (torch.tril in forward, F.gelu(approximate="tanh"), nn.LayerNorm, a
  loss-only forward);
  `gelu="erf"` as nanoGPT's model.py itself does (a registered tril buffer
  sliced to T, ``1.0 / math.sqrt(k.size(-1))``, its own LayerNorm on
  F.layer_norm, nn.GELU(), nn.Dropout(0.0), forward(idx, targets=None)
  returning (logits, loss)).
* `MLPLM`: embedding -> Linear -> ReLU -> Linear -> cross-entropy (with
  `flatten`, on the [B*T, C] rows).

`adamw_losses` is PyTorch's side of the tests that train a model both with
zeroc's executables and with PyTorch and compare the losses.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from zeroc import data


class LayerNorm(nn.Module):
    """nanoGPT's LayerNorm with an optional bias."""

    def __init__(self, ndim, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class Attention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, nanogpt_style):
        super().__init__()
        self.n_head, self.n_embd = n_head, n_embd
        self.nanogpt_style = nanogpt_style
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        if nanogpt_style:
            self.attn_dropout = nn.Dropout(0.0)
            self.resid_dropout = nn.Dropout(0.0)
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.nanogpt_style:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.n_head))
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd, gelu):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.gelu = gelu
        if gelu == "erf":
            self.act = nn.GELU()

    def forward(self, x):
        h = self.c_fc(x)
        h = F.gelu(h, approximate="tanh") if self.gelu == "tanh" else self.act(h)
        return self.c_proj(h)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, gelu):
        super().__init__()
        norm = nn.LayerNorm if gelu == "tanh" else LayerNorm
        self.ln_1 = norm(n_embd)
        self.attn = Attention(n_embd, n_head, block_size, gelu == "erf")
        self.ln_2 = norm(n_embd)
        self.mlp = MLP(n_embd, gelu)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=256, block_size=16, n_layer=2, n_head=2, n_embd=32,
                 gelu="tanh"):
        super().__init__()
        self.vocab_size, self.gelu = vocab_size, gelu
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, gelu) for _ in range(n_layer)]),
            ln_f=(nn.LayerNorm if gelu == "tanh" else LayerNorm)(n_embd)))
        if gelu == "erf":
            self.transformer.drop = nn.Dropout(0.0)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # nanoGPT ties this way round
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))
            elif p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif "ln_" in name and name.endswith("weight"):
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        if self.gelu == "erf":
            x = self.transformer.drop(x)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        if self.gelu == "erf":
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss
        return F.cross_entropy(logits.view(-1, self.vocab_size), targets.view(-1))


class MLPLM(nn.Module):
    """`flatten` runs the layers on [B*T, C] rows, as MLP code often does."""

    def __init__(self, vocab_size=256, n_embd=16, hidden=48, flatten=False):
        super().__init__()
        self.flatten = flatten
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.fc1 = nn.Linear(n_embd, hidden)
        self.fc2 = nn.Linear(hidden, vocab_size)

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        if self.flatten:
            x = x.view(-1, x.size(-1))
        h = F.relu(self.fc1(x))
        logits = self.fc2(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def loss_of(output):
    """The loss of a forward's output (a loss, or nanoGPT's (logits, loss))."""
    return output[1] if isinstance(output, tuple) else output


def adamw_losses(model, tokens, steps, batch_size, block_size, *, lr, betas, eps,
                 weight_decay, clip):
    """Trains `model` for `steps` steps on the executable's batches of
    `tokens` (zeroc.data.sample_batch) with AdamW, weight decay on the
    parameters of rank >= 2, and global gradient-norm clipping at `clip`;
    returns each step's loss."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=betas, eps=eps)
    losses = []
    for step in range(steps):
        x, y = data.sample_batch(tokens, step, batch_size, block_size)
        loss = loss_of(model(torch.tensor(x), torch.tensor(y)))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
    return losses
