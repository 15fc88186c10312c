import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, idx, targets):
        h = torch.tanh(self.emb(idx))
        return F.cross_entropy(self.head(h).view(-1, 16), targets.view(-1))
