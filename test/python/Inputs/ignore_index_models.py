"""A model whose loss is F.cross_entropy with an ignore_index that is a real
token id and label smoothing (issue 31).

* `IgnoreIndexSmoothing`: embedding, a ReLU layer, a head;
  F.cross_entropy(logits, targets, ignore_index=32, label_smoothing=0.1).
  On byte-level text 32 is the space, about one target in six, spread
  unevenly over a batch's rows: two ranks hold different numbers of
  ignored targets (ignored_per_rank.py prints them).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class IgnoreIndexSmoothing(nn.Module):
    def __init__(self, vocab_size=256, d=32, ignore_index=32, smoothing=0.1):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.fc = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab_size)
        self.ignore_index = ignore_index
        self.smoothing = smoothing

    def forward(self, tokens, targets):
        h = torch.relu(self.fc(self.emb(tokens)))
        logits = self.head(h).view(-1, self.head.out_features)
        return F.cross_entropy(logits, targets.view(-1), ignore_index=self.ignore_index,
                               label_smoothing=self.smoothing)
