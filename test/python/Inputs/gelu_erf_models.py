"""GELU in both erf forms for importer_aten_gelu_erf.test: nn.GELU() (one
aten.gelu, train.gelu erf) and the same written out as
0.5 * h * (1 + torch.erf(h / math.sqrt(2))) (aten.mul, aten.div, aten.erf,
aten.add: generic ops that train-raise turns into train.gelu erf)."""
import math, torch, torch.nn as nn, torch.nn.functional as F
class ErfGelu(nn.Module):
    def __init__(self, vocab_size=32, n=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n); self.fc = nn.Linear(n, 4 * n); self.proj = nn.Linear(4 * n, n)
        self.act = nn.GELU(); self.head = nn.Linear(n, vocab_size)
    def forward(self, idx, targets=None):
        x = self.wte(idx)
        h = self.fc(x)
        h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
        x = x + self.proj(h)
        x = self.act(x)
        logits = self.head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
