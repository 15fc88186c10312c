"""A model that imports but does not split across ranks: its softmax
normalizes over the batch axis (importer_locations.test)."""
import torch.nn as nn
import torch.nn.functional as F


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return x * self.fc(x).softmax(0)


class BatchSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.mix = Mixer()
        self.head = nn.Linear(8, 16)

    def forward(self, idx, targets):
        x = self.emb(idx)
        x = self.mix(x)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, 16), targets.view(-1))
