"""A model whose output layer is tied to its embedding under names of its
own (``head.weight`` is ``tok.weight``), for tied_export.py."""

import torch.nn as nn
import torch.nn.functional as F


class TiedCustom(nn.Module):
    def __init__(self, vocab_size=64, n_embd=16):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.mix = nn.Linear(n_embd, n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.tok.weight
        nn.init.normal_(self.tok.weight, 0.0, 0.2)

    def forward(self, tokens, targets):
        x = self.tok(tokens)
        x = x + F.relu(self.mix(x))
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
