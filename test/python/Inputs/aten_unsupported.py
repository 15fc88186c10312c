import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.sin(self.fc(x))


class Sin(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.block = Block()
        self.head = nn.Linear(8, 16)

    def forward(self, idx, targets):
        return F.cross_entropy(self.head(self.block(self.emb(idx))).view(-1, 16), targets.view(-1))


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, idx, targets):
        x = self.emb(idx)
        if x.mean() > 0:
            x = x * 2
        return F.cross_entropy(self.head(x).view(-1, 16), targets.view(-1))


class NonZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = x[torch.nonzero(x[..., 0] > 0, as_tuple=True)]
        return F.cross_entropy(self.head(x), targets.view(-1)[: x.shape[0]])
